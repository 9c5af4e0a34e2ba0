// Why: reconciliation may only believe "that charge never happened" once its last attempt can no
// longer be processed, so an unknown record keeps what that takes: how many attempts were sent,
// when the last one started, and the settle window of the limits that produced the unknown. The
// stores (in-memory and shared) call this one function when they park a key, so they agree.

/**
 * @internal What an unknown record keeps for reconciliation, from the failure and the run's options:
 * `attempts` and `lastAttemptAt` from the error (OutcomeUnknownError carries them) or from
 * `options.progress` (an object the caller updates as attempts start, as chargeCustomer does);
 * `settleAfterMs` from the error or `options.settleAfterMs`. Without a last-attempt time, the moment
 * the failure was seen (`completedAt`) stands in: later than any attempt's start, so never early.
 * @returns {{ attempts?: number, lastAttemptAt: number, settleAfterMs?: number, endpoint?: string }}
 */
export function unknownMeta(error, options, completedAt) {
  const e = error !== null && typeof error === 'object' ? error : {};
  const progress = options !== null && typeof options === 'object' && options.progress !== null && typeof options.progress === 'object' ? options.progress : {};
  const pick = (...values) => values.find((v) => typeof v === 'number' && Number.isFinite(v));
  const meta = { lastAttemptAt: pick(safeGet(e, 'lastAttemptAt'), progress.lastAttemptAt) ?? completedAt };
  const attempts = pick(safeGet(e, 'attempts'), progress.attempts);
  if (attempts !== undefined) meta.attempts = attempts;
  const settleAfterMs = pick(safeGet(e, 'settleAfterMs'), options?.settleAfterMs);
  if (settleAfterMs !== undefined && settleAfterMs >= 0) meta.settleAfterMs = settleAfterMs;
  // Where the charge may have been processed (the checkout client's endpoint): reconciliation
  // re-sends there only, never to another endpoint that would charge it again.
  const endpoint = safeGet(e, 'endpoint');
  if (typeof endpoint === 'string' && endpoint.length > 0 && endpoint.length <= 2048) meta.endpoint = endpoint;
  return meta;
}

/**
 * @internal The text a store keeps of a failure: `String(error)`, or its tag when that throws (a
 * null-prototype object, a throwing `toString`), or `[object Unreadable]` when even that throws (a
 * revoked Proxy). It runs before the record is completed, so it must never throw: a throw here
 * left the key in flight for good.
 */
export function errorText(error) {
  try {
    return String(error);
  } catch {
    try {
      return Object.prototype.toString.call(error);
    } catch {
      return '[object Unreadable]'; // a revoked Proxy: even its tag cannot be read
    }
  }
}

/**
 * @internal The message of a failure a store or a driver reports (its `message`, else the value as
 * text), never throwing: errorText's rules when reading it throws.
 */
export function messageOf(error) {
  const message = safeGet(error !== null && typeof error === 'object' ? error : {}, 'message');
  return errorText(message ?? error);
}

/** A property of a user's error, or undefined when reading it throws (a hostile getter or Proxy). */
function safeGet(object, name) {
  try {
    return object[name];
  } catch {
    return undefined;
  }
}
