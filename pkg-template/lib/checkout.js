// Why: a checkout button is where double charges are born (double clicks, reloads, timeouts). The
// client makes one key per logical charge, sends it on every attempt (and to the secondary
// endpoint on failover), and answers with an outcome a UI can show, for everything the network or
// the gateway can do: succeeded, declined, unknown (money may have moved: show "we're checking",
// never "try again") or unavailable (provably nothing was sent: open circuit, offline, connection
// refused; the key is free). Only programming errors reject. `reconcile()` gets a cart out of
// unknown by re-sending the SAME key: a gateway that honours keys replays the first outcome,
// processes it once, or answers 409 while it is still running (then it stays unknown).

import { failedVerdictWaitMs } from '../steadfast_core.js';
import { RetryBudget } from './budget.js';
import { IdempotencyStore, newIdempotencyKey } from './idempotency.js';
import { CircuitOpenError, IdempotencyKeyExpiredError, IdempotencyKeyReuseError, OfflineError, OutcomeUnknownError, SteadfastError, named } from './errors.js';
import { compileDialect, defaultDialectName } from './dialect.js';
import { fetchWithState, provablyNotSent, settleWindowFor, BreakerRegistry, compile as checkFetchOptions, originOf } from './fetch.js';
import { VERDICT, historyVerdict, rememberHistory, retryAfterMsOf, statusOf } from './classify.js';
import * as o from './options.js';
import { canonicalCharge, volatileFields } from './canonical.js';
import { fetchDefaults } from './defaults.js';
import { coreUnavailable } from './loader.js';

/** What `retryAfterMs` says when nothing but the network itself failed (offline, refused): a hint, not a server's word. */
const UNAVAILABLE_RETRY_MS = 1_000;

/** The gateway answered with something a correct client never causes (400, 401, 404, …). */
export class CheckoutRequestError extends SteadfastError {
  constructor(status, body, why) {
    super(`Checkout request rejected with HTTP ${status}${why === undefined ? '' : `: ${why}`}`, 'CHECKOUT_REJECTED');
    this.status = status;
    this.body = body;
  }
}
named(CheckoutRequestError, 'CheckoutRequestError');

/** Internal: a decline travels through the store as a definitive failure (frees the key). */
class Declined extends Error {
  constructor(reason) {
    super(reason);
    this.reason = reason;
  }
}

/**
 * Internal: provably nothing was sent; travels through the store as a definitive failure (frees
 * the key). No `cause` on purpose: a nested ECONNREFUSED would read as transient to the store.
 */
class Unavailable extends Error {
  constructor(reason, retryAfterMs) {
    super(`nothing was sent: ${reason}`);
    this.reason = reason;
    this.retryAfterMs = retryAfterMs;
  }
}

/** Internal: the caller's own abort, already classified for the store; `charge()` rejects with the signal's reason. */
const ABORTED = new WeakSet();

/** A URL string from a string or anything with a string `href` (URL). */
function href(v) {
  if (typeof v === 'string') return v;
  return v !== null && typeof v === 'object' && typeof v.href === 'string' ? v.href : undefined;
}

/** A charge's shape: an object with a positive integer `amountCents` and a non-empty `currency`. */
function checkCharge(charge, where) {
  const c = o.object(charge, where);
  if (!Number.isSafeInteger(c.amountCents) || c.amountCents <= 0) {
    throw (typeof c.amountCents === 'number' ? o.rangeError : o.typeError)(where, 'amountCents', 'a positive integer', c.amountCents);
  }
  if (typeof c.currency !== 'string' || c.currency.length === 0) throw o.typeError(where, 'currency', 'a non-empty string', c.currency);
  return c;
}

/** The JSON of a body text, or undefined. */
function parse(text) {
  if (typeof text !== 'string' || text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The Retry-After of a Response (or an error carrying one) in ms, by the core's parser; undefined when none. */
function retryAfterOf(answer) {
  const ms = retryAfterMsOf(answer, Date.now());
  return Number.isNaN(ms) ? undefined : ms;
}

/** When an unknown key is worth reconciling again: an open circuit's cooldown, else a second. */
function retryHint(e) {
  const open = e?.cause instanceof CircuitOpenError ? e.cause : e?.cause?.cause instanceof CircuitOpenError ? e.cause.cause : undefined;
  return open?.retryAfterMs ?? UNAVAILABLE_RETRY_MS;
}

/**
 * A checkout client over `resilientFetch`. See index.d.ts for every option and default.
 */
export function createCheckoutClient(options) {
  const where = 'createCheckoutClient';
  if (coreUnavailable(where) !== undefined) return clientBeforeCore(options);
  const opts = o.object(options, where);
  const endpoint = href(opts.endpoint);
  if (endpoint === undefined) throw o.typeError(where, 'endpoint', 'a URL string or URL', opts.endpoint);
  const secondary = opts.secondaryEndpoint === undefined ? undefined : href(opts.secondaryEndpoint);
  if (opts.secondaryEndpoint !== undefined && secondary === undefined) {
    throw o.typeError(where, 'secondaryEndpoint', 'a URL string or URL', opts.secondaryEndpoint);
  }
  const fetchImpl = o.fn(opts, 'fetch', where);
  const store = o.own(opts, 'store') ?? new IdempotencyStore();
  if (typeof store?.run !== 'function') throw o.typeError(where, 'store', 'an IdempotencyStore (an object with run())', store);
  const budget = opts.budget ?? new RetryBudget(fetchDefaults().budget);
  // A single CircuitBreaker guards the primary only; the secondary always has its own (a dead
  // primary must not block the failover path), from the registry. `breaker: false`: none at all.
  const noBreaker = opts.breaker === false;
  const primaryBreaker = typeof opts.breaker?.execute === 'function' ? opts.breaker : undefined;
  const registry = noBreaker
    ? undefined
    : opts.breaker instanceof BreakerRegistry
      ? opts.breaker
      : new BreakerRegistry(opts.breaker === undefined || primaryBreaker !== undefined ? undefined : o.object(opts.breaker, where));
  // The endpoints this client names are pinned in the registry (a shared one included): URLs that
  // other code fetches through it can never evict the breaker of the payment gateway.
  for (const url of primaryBreaker === undefined ? [endpoint, secondary] : [secondary]) {
    const origin = url === undefined ? undefined : originOf(url);
    if (origin !== undefined) registry?.pin(origin);
  }
  const attemptTimeoutMs = o.num(opts, 'attemptTimeoutMs', where) ?? fetchDefaults().checkoutAttemptTimeoutMs;
  const deadlineMs = o.num(opts, 'deadlineMs', where);
  const onAttempt = o.fn(opts, 'onAttempt', where);
  // Top-level charge fields that are sent but do not identify the charge (left out of its fingerprint).
  const volatile = volatileFields(o.own(opts, 'volatileFields'), where);
  // Validate retry/budget/timeouts once, up front, with the same rules resilientFetch applies.
  // The settle window an unknown keeps (see reconcile): the core's default from the time limits, or
  // the caller's own bound on how late its gateway may still process a request.
  const settleAfterMs = o.num(opts, 'settleAfterMs', where) ?? settleWindowFor(attemptTimeoutMs, deadlineMs);
  if (!(settleAfterMs >= 0)) throw o.rangeError(where, 'settleAfterMs', 'a number >= 0', settleAfterMs);
  // How the gateway speaks idempotency: the key's header and syntax, in progress, reuse, replay, retention.
  const dialect = compileDialect(o.own(opts, 'dialect') ?? defaultDialectName(), where);
  const fetchOptions = {
    dialect,
    retry: opts.retry,
    budget,
    breaker: registry ?? false,
    attemptTimeoutMs,
    deadlineMs,
    settleAfterMs,
    rateLimiter: opts.rateLimiter,
    adaptive: opts.adaptive,
    attemptHeader: o.own(opts, 'attemptHeader'),
  };
  checkFetchOptions(fetchOptions);
  const inFlight = new Map();
  /** key -> the charge, while its outcome is unknown (what reconcile() re-sends). */
  const unknownCharges = new Map();

  /** The breaker that guards `url`: the caller's own for the primary, else the registry's. */
  const breakerFor = (url) => (url === endpoint ? (primaryBreaker ?? registry) : registry);

  /**
   * One resilientFetch to `url`, its answer's body read inside the attempt (so the attempt timeout
   * and the deadline cover a body that stalls); folds what it sent into `sent` (across primary and
   * secondary): attempts, the last attempt's time, the charge's history (core::history) and the
   * endpoint where it may have been processed.
   */
  const post = async (url, body, key, signal, sent) => {
    const counted = fetchImpl ?? ((...a) => globalThis.fetch(...a));
    const fetch = (req, init) => {
      onAttempt?.({ attempt: sent.attempts + state.attempts, key, url: String(url) });
      return counted(req, init);
    };
    const state = { history: sent.history, key, keyFirstUsedAt: sent.firstUsedAt };
    const before = historyVerdict(sent.history) === VERDICT.UNKNOWN;
    try {
      const breaker = breakerFor(url);
      const response = await fetchWithState(
        url,
        { method: 'POST', headers: { 'content-type': 'application/json', [dialect.header]: dialect.headerValue(key, 'charge') }, body, signal },
        { ...fetchOptions, breaker: breaker ?? false, fetch },
        state,
        true,
      );
      return { response, text: state.bodyText };
    } finally {
      sent.maybeSent ||= state.maybeSent === true;
      sent.attempts += state.attempts ?? 0;
      sent.replayed = state.replayed === true;
      if (typeof state.history === 'number') sent.history = state.history;
      if (state.lastAttemptAt !== undefined) sent.lastAttemptAt = state.lastAttemptAt;
      if (!before && historyVerdict(sent.history) === VERDICT.UNKNOWN) sent.endpoint = String(url);
    }
  };

  const unknown = (key, startedAt, sent, cause) => {
    const e = new OutcomeUnknownError(key, startedAt, { cause, attempts: sent.attempts, lastAttemptAt: sent.lastAttemptAt, settleAfterMs });
    if (sent.endpoint !== undefined) e.endpoint = sent.endpoint;
    return e;
  };

  /** Why nothing was processed, from what the call met (the history said "not processed"). */
  const unavailable = (e, sent) => {
    if (e instanceof CircuitOpenError) return new Unavailable('circuit-open', e.retryAfterMs);
    // A budget refusal or a deadline after attempts that never left: classify what those met.
    const met = e?.code === 'RETRY_BUDGET_EXHAUSTED' || e?.code === 'DEADLINE_EXCEEDED' ? e.cause : e;
    if (met instanceof OfflineError) return new Unavailable('offline', UNAVAILABLE_RETRY_MS);
    if (statusOf(met) === 429) return new Unavailable('rate-limited', retryAfterOf(met) ?? UNAVAILABLE_RETRY_MS);
    if (provablyNotSent(met)) return new Unavailable('connection-refused', UNAVAILABLE_RETRY_MS);
    if (met instanceof CircuitOpenError) return new Unavailable('circuit-open', met.retryAfterMs);
    // Not processed, yet answered: only a 429 says that.
    if (sent.maybeSent) return new Unavailable('rate-limited', UNAVAILABLE_RETRY_MS);
    return undefined; // nothing was sent and it is not the network: a programming error (bad URL, bad option)
  };

  /**
   * Classify a failure of the HTTP calls by the charge's whole history: unknown if any attempt may
   * have been processed, unavailable if provably none was.
   */
  const failure = (e, key, startedAt, sent, signal) => {
    const verdict = historyVerdict(sent.history);
    if (signal?.aborted && e === signal.reason) {
      const classified = verdict === VERDICT.UNKNOWN ? unknown(key, startedAt, sent, e) : new Unavailable('aborted', 0);
      ABORTED.add(classified);
      return classified;
    }
    // resilientFetch's own OutcomeUnknownError knows its attempts but not this client's settle
    // window (nor the attempts made at the other endpoint): restate it with both.
    if (e instanceof OutcomeUnknownError) return unknown(key, startedAt, sent, e.cause);
    if (verdict === VERDICT.UNKNOWN) return unknown(key, startedAt, sent, e);
    return unavailable(e, sent) ?? e;
  };

  /**
   * One charge over HTTP: to `only` (reconciliation: the endpoint that may have processed the
   * key), or to the primary with failover to the secondary — the SAME key, and only while nothing
   * sent to the primary may have been processed (a key the primary may hold is never sent
   * elsewhere). Every error it throws carries the charge's history for the store.
   */
  const attemptCharge = async (charge, key, signal, only, firstUsedAt) => {
    const body = JSON.stringify(charge);
    const startedAt = Date.now();
    const sent = {
      maybeSent: false,
      attempts: 0,
      lastAttemptAt: undefined,
      history: 0,
      endpoint: undefined,
      firstUsedAt: firstUsedAt ?? startedAt,
      replayed: false,
    };
    try {
      return await answerOf(await send(body, key, signal, only, sent), key, startedAt, sent);
    } catch (e) {
      const thrown = sent.thrown === e ? e : failure(e, key, startedAt, sent, signal);
      rememberHistory(thrown, sent.history);
      throw thrown;
    }
  };

  const send = async (body, key, signal, only, sent) => {
    if (only !== undefined) return post(only, body, key, signal, sent);
    try {
      return await post(endpoint, body, key, signal, sent);
    } catch (e) {
      if (e instanceof CircuitOpenError && secondary !== undefined && historyVerdict(sent.history) !== VERDICT.UNKNOWN) {
        return post(secondary, body, key, signal, sent); // failover: the SAME key
      }
      throw e;
    }
  };

  /** The outcome of an HTTP answer, judged with the charge's history (already folded in by post). */
  const answerOf = async ({ response, text }, key, startedAt, sent) => {
    // A final transient answer comes back unread (its body was not awaited inside the attempt).
    if (text === undefined) response.body?.cancel().catch(() => {});
    const data = parse(text);
    const verdict = historyVerdict(sent.history);
    const fail = (e) => {
      sent.thrown = e;
      throw e;
    };
    if (response.ok) {
      const outcome = { status: 'succeeded', reference: String(data?.reference ?? data?.id ?? ''), key };
      // The gateway's replay marker: this success was charged earlier (a UI must not count it twice).
      if (sent.replayed) outcome.replayed = true;
      return outcome;
    }
    // An earlier attempt may have been processed: this answer (a 404 from a load balancer, a 409
    // while the gateway still runs the key, a 401 from a proxy) says nothing about it.
    if (verdict === VERDICT.UNKNOWN) fail(unknown(key, startedAt, sent, undefined));
    const err = data?.error ?? {};
    if (response.status === 402 || err.type === 'card_error') fail(new Declined(String(err.decline_code ?? err.code ?? 'declined')));
    if (dialect.isReuse(response.status, data, response.headers?.get?.('content-type'))) fail(new IdempotencyKeyReuseError(key));
    if (verdict === VERDICT.NOT_PROCESSED) fail(new Unavailable('rate-limited', retryAfterOf(response) ?? UNAVAILABLE_RETRY_MS));
    if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) {
      fail(new CheckoutRequestError(response.status, data, 'redirected: a charge is never followed through a redirect'));
    }
    return fail(new CheckoutRequestError(response.status, data));
  };

  /** The outcome for what attemptCharge (through the store) threw; rethrows programming errors. */
  const outcomeOf = (e, key, signal) => {
    if (e instanceof Declined) return { status: 'declined', reason: e.reason, key };
    if (ABORTED.has(e) || ABORTED.has(e?.cause)) throw signal.reason;
    if (e instanceof Unavailable) return { status: 'unavailable', reason: e.reason, retryAfterMs: e.retryAfterMs, key };
    // Unknown here, or parked earlier; or another tab/process is charging this key right now.
    if (e instanceof OutcomeUnknownError || e?.code === 'OUTCOME_UNKNOWN' || e?.code === 'DUPLICATE_IN_FLIGHT') return { status: 'unknown', key };
    // A shared store that cannot record the start never starts the charge: nothing was sent.
    // So does one that refuses because Redis lost its data (STORE_AMNESIA, until an operator
    // acknowledges it): the charge did not start.
    if (e?.code === 'STORE_UNAVAILABLE' || e?.code === 'STORE_AMNESIA') {
      return { status: 'unavailable', reason: 'store-unavailable', retryAfterMs: UNAVAILABLE_RETRY_MS, key };
    }
    // Every record is live (in flight, done within its TTL, or unknown): nothing was sent. The way
    // out is reconciliation (settle unknown keys) or a larger maxRecords; see the README.
    if (e?.code === 'STORE_FULL') return { status: 'unavailable', reason: 'store-full', retryAfterMs: UNAVAILABLE_RETRY_MS, key };
    throw e;
  };

  /** `fingerprint`: the charge's canonical text when the caller already has it (charge() does). */
  const run = async (charge, key, signal, fingerprint) => {
    let outcome;
    try {
      outcome = await store.run(key, () => attemptCharge(charge, key, signal), {
        fingerprint: fingerprint ?? canonicalCharge(charge, volatile),
        settleAfterMs,
      });
    } catch (e) {
      outcome = outcomeOf(e, key, signal);
    }
    if (outcome.status === 'unknown') unknownCharges.set(key, charge);
    else unknownCharges.delete(key);
    return outcome;
  };

  /**
   * Re-send an unknown key's charge with the SAME key, on the SAME record: the store moves it from
   * unknown back to in flight in one compare-and-set (never delete-then-begin, so a failure in
   * between cannot forget a debit), to the endpoint that may have processed it. Its answer settles
   * it only when it is about the key: a success, or a decline sent after the settle window (a
   * gateway that honours keys would have replayed an earlier debit instead). Anything else leaves
   * it unknown.
   */
  const resubmit = async (key, charge) => {
    const record = await store.peek(key);
    // No record, a settled one or one in flight: the store's own answers (replay, in flight, or a
    // different charge for this key: IdempotencyKeyReuseError) — nothing is joined or re-sent blind.
    if (record === undefined || record.status !== 'unknown') {
      if (charge !== undefined) return run(charge, key, undefined);
      if (record === undefined) return undefined;
      return record.status === 'done' ? record.result : { status: 'unknown', key };
    }
    const body = charge ?? unknownCharges.get(key);
    if (body === undefined) return undefined;
    if (typeof store.resubmit !== 'function') {
      throw o.typeError('reconcile', 'store', 'a store with resubmit() (IdempotencyStore, createSharedIdempotencyStore)', store);
    }
    // Past the gateway's retention window the same key is a NEW charge there: never re-sent.
    if (dialect.keyExpired(record.startedAt, Date.now())) {
      const error = new IdempotencyKeyExpiredError(key, { firstUsedAt: record.startedAt, retentionMs: dialect.retentionMs, dialect: dialect.name });
      return { status: 'unknown', key, reason: 'key-expired', retryAfterMs: Infinity, error };
    }
    const windowMs = record.settleAfterMs ?? settleAfterMs;
    const last = record.lastAttemptAt ?? record.startedAt;
    const afterWindow = failedVerdictWaitMs(Date.now(), last, windowMs) <= 0;
    const only = record.endpoint === secondary && secondary !== undefined ? secondary : endpoint;
    let outcome;
    try {
      outcome = await store.resubmit(key, () => attemptCharge(body, key, undefined, only, record.startedAt), {
        fingerprint: canonicalCharge(body, volatile, 'reconcile'),
        startedAt: record.startedAt,
        settleAfterMs,
        refutes: (e) => afterWindow && e instanceof Declined,
      });
    } catch (e) {
      if (e?.code === 'KEY_WRONG_STATE' || e?.code === 'KEY_NOT_FOUND') {
        const now = await store.peek(key); // settled meanwhile (another reconcile, another tab): its answer stands
        return now?.status === 'done' ? now.result : { status: 'unknown', key };
      }
      outcome = outcomeOf(e, key, undefined);
      if (outcome.status === 'unknown') {
        outcome.retryAfterMs = typeof e?.retryAfterMs === 'number' && e.retryAfterMs > 0 ? e.retryAfterMs : retryHint(e);
      }
    }
    if (outcome.status !== 'unknown') unknownCharges.delete(key);
    return outcome;
  };

  /**
   * One pending promise per key. A charge passes its request's fingerprint: a double click of the
   * SAME charge shares the pending promise; another charge under the same key is refused (never
   * answered with this one's outcome); a charge meeting a reconciliation whose charge it cannot
   * compare waits for it, then goes through the store, which checks the binding.
   */
  const once = (key, start, fingerprint) => {
    const pending = inFlight.get(key);
    if (pending !== undefined) {
      if (fingerprint === undefined || pending.fingerprint === fingerprint) return pending.promise;
      if (pending.fingerprint !== undefined) return Promise.reject(new IdempotencyKeyReuseError(key));
      return pending.promise.then(
        () => once(key, start, fingerprint),
        () => once(key, start, fingerprint),
      );
    }
    const promise = start().finally(() => inFlight.delete(key));
    inFlight.set(key, { promise, fingerprint });
    return promise;
  };

  /** The fingerprint of the charge reconcile() would re-send for `key`, when this client knows it. */
  const fingerprintFor = (key, charge) => {
    const c = charge ?? unknownCharges.get(key);
    return c === undefined ? undefined : canonicalCharge(c, volatile, 'reconcile');
  };

  return {
    /** The store holding this client's keys (for reconciliation). */
    store,
    /**
     * The text a charge's key is bound to, as this client computes it (canonical JSON of the charge
     * without its volatile fields): what `persistentCheckoutKey` compares a resumed cart against.
     */
    fingerprint(charge) {
      return canonicalCharge(checkCharge(charge, 'fingerprint'), volatile, 'fingerprint');
    },
    /**
     * Charge once per key. A second call with the same key while the first is in flight returns
     * the same promise (a double click charges once); after it settles, a succeeded key replays
     * and an unknown key answers unknown without sending anything.
     */
    charge(charge, chargeOptions) {
      let c;
      try {
        c = checkCharge(charge, 'charge');
      } catch (e) {
        return Promise.reject(e);
      }
      const co = o.object(chargeOptions, 'charge', true);
      const key = o.own(co, 'idempotencyKey') ?? newIdempotencyKey();
      if (typeof key !== 'string') return Promise.reject(o.typeError('charge', 'idempotencyKey', 'a string', key));
      try {
        dialect.headerValue(key, 'charge'); // the gateway's key rule, before anything is stored or sent
      } catch (e) {
        return Promise.reject(e);
      }
      let fingerprint;
      try {
        fingerprint = canonicalCharge(c, volatile, 'charge');
      } catch (e) {
        return Promise.reject(e);
      }
      return once(key, () => run(c, key, o.own(co, 'signal'), fingerprint), fingerprint);
    },
    /**
     * Get unknown charges out of unknown by re-sending each with the SAME key (see index.d.ts).
     * With a key: that charge's outcome; without: every unknown key of the store, in order.
     */
    reconcile(key, charge) {
      if (key === undefined) {
        return (async () => {
          const out = [];
          for (const k of await store.unknownKeys()) {
            // One key's trouble (a store blip, a bad answer) costs that key only.
            let outcome;
            try {
              outcome = await once(k, () => resubmit(k, undefined), fingerprintFor(k));
            } catch (error) {
              outcome = { status: 'unknown', key: k, retryAfterMs: UNAVAILABLE_RETRY_MS, error };
            }
            // A key this client did not make (another client's, on a shared store): skipped, reported.
            out.push(outcome ?? { status: 'skipped', reason: 'not-this-client', key: k });
          }
          return out;
        })();
      }
      if (typeof key !== 'string') return Promise.reject(o.typeError('reconcile', 'key', 'a string', key));
      let fingerprint;
      if (charge !== undefined) {
        try {
          fingerprint = canonicalCharge(checkCharge(charge, 'reconcile'), volatile, 'reconcile');
        } catch (e) {
          return Promise.reject(e);
        }
        // The charge this client sent under the key, if it knows it: another one is refused before anything is sent.
        const mine = unknownCharges.get(key);
        if (mine !== undefined && canonicalCharge(mine, volatile, 'reconcile') !== fingerprint) return Promise.reject(new IdempotencyKeyReuseError(key));
      }
      return once(
        key,
        async () => {
          let outcome;
          try {
            outcome = await resubmit(key, charge);
          } catch (e) {
            // A shared store that cannot answer: nothing was settled, the key stays as it was.
            if (e?.code === 'STORE_UNAVAILABLE' || e?.code === 'STORE_AMNESIA') return { status: 'unknown', key, retryAfterMs: UNAVAILABLE_RETRY_MS };
            throw e;
          }
          if (outcome === undefined) throw o.typeError('reconcile', 'charge', `the charge sent with key ${key} (this client did not make it)`, charge);
          return outcome;
        },
        fingerprint ?? fingerprintFor(key),
      );
    },
  };
}

/**
 * A client made while the core is unavailable (module level under a strict CSP, `steadfast/lazy`
 * still loading; see deferred.js). Nothing can be sent safely without the core, so `charge()`
 * resolves `unavailable` with reason 'wasm' (the key, if the caller gave one, is free); once the
 * core has loaded, the real client is made from the same options and every call goes to it.
 */
function clientBeforeCore(options) {
  let real;
  const client = () => (real ??= createCheckoutClient(options));
  const now = (call) => {
    try {
      return call(client());
    } catch (e) {
      return Promise.reject(e); // options only the core validates, checked at this first use
    }
  };
  return {
    get store() {
      const unavailable = coreUnavailable('createCheckoutClient.store');
      if (unavailable !== undefined) throw unavailable;
      return client().store;
    },
    fingerprint(charge) {
      return client().fingerprint(charge);
    },
    charge(charge, chargeOptions) {
      if (coreUnavailable('charge') === undefined) return now((c) => c.charge(charge, chargeOptions));
      let key;
      try {
        checkCharge(charge, 'charge');
        key = o.own(o.object(chargeOptions, 'charge', true), 'idempotencyKey');
      } catch (e) {
        return Promise.reject(e);
      }
      if (key !== undefined && typeof key !== 'string') return Promise.reject(o.typeError('charge', 'idempotencyKey', 'a string', key));
      return Promise.resolve({ status: 'unavailable', reason: 'wasm', retryAfterMs: UNAVAILABLE_RETRY_MS, key });
    },
    reconcile(key, charge) {
      const unavailable = coreUnavailable('reconcile');
      if (unavailable !== undefined) return Promise.reject(unavailable);
      return now((c) => c.reconcile(key, charge));
    },
  };
}
