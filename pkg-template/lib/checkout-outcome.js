// Why: what a checkout answers (succeeded, declined, unknown, unavailable, or a programming error) is a
// function of what the gateway and the network said and of the charge's history — nothing else. The
// mapping lives here as pure functions (no I/O; the time is passed in), so every branch is checked
// without a server, and the client (checkout.js) only sends and stores.

import { CircuitOpenError, IdempotencyKeyReuseError, OfflineError, OutcomeUnknownError, SteadfastError, fieldOf, isInstance, named } from './errors.js';
import { VERDICT, retryAfterMsOf, statusOf } from './classify.js';
import { provablyNotSent } from './fetch.js';

/** What `retryAfterMs` says when nothing but the network itself failed (offline, refused): a hint, not a server's word. */
export const UNAVAILABLE_RETRY_MS = 1_000;

/** The gateway answered with something a correct client never causes (400, 401, 404, …). */
export const CheckoutRequestError = /* @__PURE__ */ named(
  class CheckoutRequestError extends SteadfastError {
    constructor(status, body, why) {
      super(`Checkout request rejected with HTTP ${status}${why === undefined ? '' : `: ${why}`}`, 'CHECKOUT_REJECTED');
      this.status = status;
      this.body = body;
    }
  },
  'CheckoutRequestError',
);

/**
 * A charge that may have been processed at `endpoint` is not re-sent: that URL is neither this
 * client's `endpoint` nor its `secondaryEndpoint` (compared as URLs), and sending it to another
 * gateway could charge it a second time. Reconcile it with a client for that endpoint, or by lookup.
 */
export const UnknownEndpointError = /* @__PURE__ */ named(
  class UnknownEndpointError extends SteadfastError {
    constructor(key, endpoint, endpoints) {
      super(
        `Idempotency key ${key} may have been processed at ${endpoint}, which is not one of this client's endpoints (${endpoints.join(', ')}): not re-sent elsewhere`,
        'UNKNOWN_ENDPOINT',
      );
      this.key = key;
      this.endpoint = endpoint;
      this.endpoints = endpoints;
    }
  },
  'UnknownEndpointError',
);

/** @internal A decline travels through the store as a definitive failure (frees the key). */
export class Declined extends Error {
  constructor(reason) {
    super(reason);
    this.reason = reason;
  }
}

/**
 * @internal Provably nothing was sent; travels through the store as a definitive failure (frees
 * the key). No `cause` on purpose: a nested ECONNREFUSED would read as transient to the store.
 */
export class Unavailable extends Error {
  constructor(reason, retryAfterMs) {
    super(`nothing was sent: ${reason}`);
    this.reason = reason;
    this.retryAfterMs = retryAfterMs;
  }
}

/** @internal The JSON of a body text, or undefined. */
export function parseBody(text) {
  if (typeof text !== 'string' || text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A 2xx body's charge reference: a non-empty string or a finite number in `reference` (or `id`), as text; else undefined. */
function referenceOf(data) {
  if (data === null || typeof data !== 'object') return undefined;
  const ref = data.reference ?? data.id;
  if (typeof ref === 'string' && ref !== '') return ref;
  return typeof ref === 'number' && Number.isFinite(ref) ? String(ref) : undefined;
}

/** A decline's reason: `decline_code`, else `code`, else 'declined'. */
function declineReason(err) {
  return String(err.decline_code ?? err.code ?? 'declined');
}

/** The Retry-After of a Response (or an error carrying one) in ms at `now`, by the core's parser; undefined when none. */
function retryAfterOf(answer, now) {
  const ms = retryAfterMsOf(answer, now);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * @internal Why nothing was processed, from what the call met (the history said "not processed"):
 * an Unavailable with its reason and hint, or undefined when nothing was sent and it is not the
 * network (a programming error: bad URL, bad option). `maybeSent`: some attempt was answered.
 */
export function unavailableFor(e, maybeSent, now) {
  if (isInstance(e, CircuitOpenError)) return new Unavailable('circuit-open', e.retryAfterMs);
  // A budget refusal or a deadline after attempts that never left: classify what those met.
  const met = fieldOf(e, 'code') === 'RETRY_BUDGET_EXHAUSTED' || fieldOf(e, 'code') === 'DEADLINE_EXCEEDED' ? fieldOf(e, 'cause') : e;
  if (isInstance(met, OfflineError)) return new Unavailable('offline', UNAVAILABLE_RETRY_MS);
  if (statusOf(met) === 429) return new Unavailable('rate-limited', retryAfterOf(met, now) ?? UNAVAILABLE_RETRY_MS);
  if (provablyNotSent(met)) return new Unavailable('connection-refused', UNAVAILABLE_RETRY_MS);
  if (isInstance(met, CircuitOpenError)) return new Unavailable('circuit-open', met.retryAfterMs);
  // Not processed, yet answered: only a 429 says that.
  if (maybeSent) return new Unavailable('rate-limited', UNAVAILABLE_RETRY_MS);
  return undefined;
}

/**
 * @internal The checkout outcome of an HTTP answer, judged with the charge's whole `verdict`
 * (core::history): `{ outcome }` (succeeded), `{ unknown: true }` (an earlier attempt may have been
 * processed: this answer says nothing about it), or `{ error }` to travel through the store
 * (Declined, Unavailable, IdempotencyKeyReuseError, CheckoutRequestError). `response` needs `ok`,
 * `status`, `type` and `headers`; `data` is its parsed body; `replayed`: the dialect's replay marker.
 */
export function answerOutcome(response, data, verdict, replayed, dialect, key, now, earlierMaybe = false) {
  const err = data !== null && typeof data === 'object' && data.error !== null && typeof data.error === 'object' ? data.error : {};
  const declined = response.status === 402 || err.type === 'card_error';
  if (response.ok) {
    const reference = referenceOf(data);
    // A 2xx that names the charge: the key's answer, whatever came before it.
    if (reference !== undefined && !declined) {
      const outcome = { status: 'succeeded', reference, key };
      // The gateway's replay marker: this success was charged earlier (a UI must not count it twice).
      if (replayed) outcome.replayed = true;
      return { outcome };
    }
    // A 2xx carrying a decline (and no charge reference) is a decline, read like any other: it
    // frees the key only when no earlier attempt may have been processed.
    if (declined && reference === undefined && !earlierMaybe) return { error: new Declined(declineReason(err)) };
    // A 2xx that names no charge (an empty or unreadable body, a page served by something in front
    // of the gateway), or names one and a decline: processed or not, nobody can tell from it.
    return { unknown: true };
  }
  // An earlier attempt may have been processed: this answer (a 404 from a load balancer, a 409
  // while the gateway still runs the key, a 401 from a proxy) says nothing about it.
  if (verdict === VERDICT.UNKNOWN) return { unknown: true };
  if (declined) return { error: new Declined(declineReason(err)) };
  if (dialect.isReuse(response.status, data, response.headers?.get?.('content-type'))) return { error: new IdempotencyKeyReuseError(key) };
  if (verdict === VERDICT.NOT_PROCESSED) return { error: new Unavailable('rate-limited', retryAfterOf(response, now) ?? UNAVAILABLE_RETRY_MS) };
  if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) {
    return { error: new CheckoutRequestError(response.status, data, 'redirected: a charge is never followed through a redirect') };
  }
  return { error: new CheckoutRequestError(response.status, data) };
}

/**
 * @internal The outcome for what a charge (through the store) failed with, or undefined for a
 * programming error (the caller rethrows it). The caller's own abort is the caller's to handle first.
 */
export function failureOutcome(e, key) {
  if (isInstance(e, Declined)) return { status: 'declined', reason: e.reason, key };
  if (isInstance(e, Unavailable)) return { status: 'unavailable', reason: e.reason, retryAfterMs: e.retryAfterMs, key };
  // Unknown here, or parked earlier; or another tab/process is charging this key right now.
  if (isInstance(e, OutcomeUnknownError) || fieldOf(e, 'code') === 'OUTCOME_UNKNOWN' || fieldOf(e, 'code') === 'DUPLICATE_IN_FLIGHT')
    return { status: 'unknown', key };
  // A shared store that cannot record the start never starts the charge: nothing was sent.
  // So does one that refuses because Redis lost its data (STORE_AMNESIA, until an operator
  // acknowledges it): the charge did not start.
  if (fieldOf(e, 'code') === 'STORE_UNAVAILABLE' || fieldOf(e, 'code') === 'STORE_AMNESIA') {
    return { status: 'unavailable', reason: 'store-unavailable', retryAfterMs: UNAVAILABLE_RETRY_MS, key };
  }
  // Every record is live (in flight, done within its TTL, or unknown): nothing was sent. The way
  // out is reconciliation (settle unknown keys) or a larger maxRecords; see the README.
  if (fieldOf(e, 'code') === 'STORE_FULL') return { status: 'unavailable', reason: 'store-full', retryAfterMs: UNAVAILABLE_RETRY_MS, key };
  return undefined;
}

/**
 * @internal When a key that stays unknown after a reconcile is worth trying again: the error's own
 * hint, else an open circuit's cooldown (the circuit may be the cause or the cause's cause), else a
 * second.
 */
export function unknownRetryAfterMs(e) {
  const hint = fieldOf(e, 'retryAfterMs');
  if (typeof hint === 'number' && hint > 0) return hint;
  const cause = fieldOf(e, 'cause');
  const open = isInstance(cause, CircuitOpenError) ? cause : isInstance(fieldOf(cause, 'cause'), CircuitOpenError) ? cause.cause : undefined;
  return open?.retryAfterMs ?? UNAVAILABLE_RETRY_MS;
}
