// Why: a checkout button is where double charges are born (double clicks, reloads, timeouts). The
// client makes one key per logical charge, sends it on every attempt (and to the secondary
// endpoint on failover), and answers with an outcome a UI can show, for everything the network or
// the gateway can do: succeeded, declined, unknown (money may have moved: show "we're checking",
// never "try again") or unavailable (provably nothing was sent: open circuit, offline, connection
// refused; the key is free). Only programming errors reject. `reconcile()` gets a cart out of
// unknown by re-sending the SAME key: a gateway that honours keys replays the first outcome,
// processes it once, or answers 409 while it is still running (then it stays unknown).

import { isTransientStatus } from '../steadfast_core.js';
import { RetryBudget } from './budget.js';
import { IdempotencyStore, newIdempotencyKey } from './idempotency.js';
import { CircuitOpenError, IdempotencyKeyReuseError, OfflineError, OutcomeUnknownError, SteadfastError, named } from './errors.js';
import { fetchWithState, provablyNotSent, settleWindowFor, BreakerRegistry, compile as checkFetchOptions } from './fetch.js';
import * as o from './options.js';
import { canonicalCharge } from './idempotency-key.js';
import { fetchDefaults } from './defaults.js';
import { coreUnavailable } from './loader.js';

/** What `retryAfterMs` says when nothing but the network itself failed (offline, refused): a hint, not a server's word. */
const UNAVAILABLE_RETRY_MS = 1_000;

/** The gateway answered with something a correct client never causes (400, 401, 404, …). */
export class CheckoutRequestError extends SteadfastError {
  constructor(status, body) {
    super(`Checkout request rejected with HTTP ${status}`, 'CHECKOUT_REJECTED');
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

async function json(response) {
  try {
    return await response.json();
  } catch {
    return undefined;
  }
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
  const attemptTimeoutMs = o.num(opts, 'attemptTimeoutMs', where) ?? fetchDefaults().checkoutAttemptTimeoutMs;
  const deadlineMs = o.num(opts, 'deadlineMs', where);
  const onAttempt = o.fn(opts, 'onAttempt', where);
  // Validate retry/budget/timeouts once, up front, with the same rules resilientFetch applies.
  // The settle window an unknown keeps (see reconcile): the core's default from the time limits, or
  // the caller's own bound on how late its gateway may still process a request.
  const settleAfterMs = o.num(opts, 'settleAfterMs', where) ?? settleWindowFor(attemptTimeoutMs, deadlineMs);
  if (!(settleAfterMs >= 0)) throw o.rangeError(where, 'settleAfterMs', 'a number >= 0', settleAfterMs);
  const fetchOptions = {
    retry: opts.retry,
    budget,
    breaker: registry ?? false,
    attemptTimeoutMs,
    deadlineMs,
    settleAfterMs,
    rateLimiter: opts.rateLimiter,
    adaptive: opts.adaptive,
  };
  checkFetchOptions(fetchOptions);
  const inFlight = new Map();
  /** key -> the charge, while its outcome is unknown (what reconcile() re-sends). */
  const unknownCharges = new Map();

  /** One resilientFetch to `url`; adds what it sent to `sent` (across primary and secondary). */
  const post = async (url, body, key, signal, breaker, sent) => {
    const counted = fetchImpl ?? ((...a) => globalThis.fetch(...a));
    const fetch = (req, init) => {
      onAttempt?.({ attempt: sent.attempts + state.attempts, key, url: String(url) });
      return counted(req, init);
    };
    const state = {};
    try {
      return await fetchWithState(
        url,
        { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body, signal },
        { ...fetchOptions, breaker: breaker ?? false, fetch },
        state,
      );
    } finally {
      sent.maybeSent ||= state.maybeSent === true;
      sent.attempts += state.attempts ?? 0;
      if (state.lastAttemptAt !== undefined) sent.lastAttemptAt = state.lastAttemptAt;
    }
  };

  const unknown = (key, startedAt, sent, cause) =>
    new OutcomeUnknownError(key, startedAt, { cause, attempts: sent.attempts, lastAttemptAt: sent.lastAttemptAt, settleAfterMs });

  /** Classify a failure of the HTTP calls: unknown if anything may have left, unavailable if provably nothing did. */
  const failure = (e, key, startedAt, sent, signal) => {
    if (signal?.aborted && e === signal.reason) {
      const classified = sent.maybeSent ? unknown(key, startedAt, sent, e) : new Unavailable('aborted', 0);
      ABORTED.add(classified);
      return classified;
    }
    // resilientFetch's own OutcomeUnknownError knows its attempts but not this client's settle
    // window (nor the attempts made at the other endpoint): restate it with both.
    if (e instanceof OutcomeUnknownError) return unknown(key, startedAt, sent, e.cause);
    if (sent.maybeSent) return unknown(key, startedAt, sent, e);
    if (e instanceof CircuitOpenError) return new Unavailable('circuit-open', e.retryAfterMs);
    // A budget refusal or a deadline after attempts that never left: classify what those met.
    const met = e?.code === 'RETRY_BUDGET_EXHAUSTED' || e?.code === 'DEADLINE_EXCEEDED' ? e.cause : e;
    if (met instanceof OfflineError) return new Unavailable('offline', UNAVAILABLE_RETRY_MS);
    if (provablyNotSent(met)) return new Unavailable('connection-refused', UNAVAILABLE_RETRY_MS);
    return e; // nothing was sent and it is not the network: a programming error (bad URL, bad option)
  };

  const attemptCharge = async (charge, key, signal) => {
    const body = JSON.stringify(charge);
    const startedAt = Date.now();
    const sent = { maybeSent: false, attempts: 0, lastAttemptAt: undefined };
    let response;
    try {
      try {
        response = await post(endpoint, body, key, signal, primaryBreaker ?? registry, sent);
      } catch (e) {
        if (e instanceof CircuitOpenError && secondary !== undefined) {
          response = await post(secondary, body, key, signal, registry, sent); // failover: the SAME key
        } else {
          throw e;
        }
      }
    } catch (e) {
      throw failure(e, key, startedAt, sent, signal);
    }
    const data = await json(response);
    if (response.ok) return { status: 'succeeded', reference: String(data?.reference ?? data?.id ?? ''), key };
    const err = data?.error ?? {};
    if (response.status === 402 || err.type === 'card_error') throw new Declined(String(err.decline_code ?? err.code ?? 'declined'));
    if (response.status === 422 && err.type === 'idempotency_error') throw new IdempotencyKeyReuseError(key);
    if (response.status === 409 || isTransientStatus(response.status)) {
      // Still being processed elsewhere (409), or the server failed without saying what happened
      // (the core's transient status rule: 408, 429, 5xx).
      throw unknown(key, startedAt, sent, undefined);
    }
    throw new CheckoutRequestError(response.status, data);
  };

  /** The outcome for what attemptCharge (through the store) threw; rethrows programming errors. */
  const outcomeOf = (e, key, signal) => {
    if (e instanceof Declined) return { status: 'declined', reason: e.reason, key };
    if (ABORTED.has(e)) throw signal.reason;
    if (e instanceof Unavailable) return { status: 'unavailable', reason: e.reason, retryAfterMs: e.retryAfterMs, key };
    // Unknown here, or parked earlier; or another tab/process is charging this key right now.
    if (e instanceof OutcomeUnknownError || e?.code === 'OUTCOME_UNKNOWN' || e?.code === 'DUPLICATE_IN_FLIGHT') return { status: 'unknown', key };
    // A shared store that cannot record the start never starts the charge: nothing was sent.
    if (e?.code === 'STORE_UNAVAILABLE') return { status: 'unavailable', reason: 'store-unavailable', retryAfterMs: UNAVAILABLE_RETRY_MS, key };
    throw e;
  };

  /** `fingerprint`: the charge's canonical text when the caller already has it (charge() does). */
  const run = async (charge, key, signal, fingerprint) => {
    let outcome;
    try {
      outcome = await store.run(key, () => attemptCharge(charge, key, signal), { fingerprint: fingerprint ?? canonicalCharge(charge), settleAfterMs });
    } catch (e) {
      outcome = outcomeOf(e, key, signal);
    }
    if (outcome.status === 'unknown') unknownCharges.set(key, charge);
    else unknownCharges.delete(key);
    return outcome;
  };

  /** Re-send an unknown key's charge with the SAME key and settle the record by the answer. */
  const resubmit = async (key, charge) => {
    const record = await store.peek(key);
    if (record === undefined) return charge === undefined ? undefined : run(charge, key, undefined);
    if (record.status === 'done') return record.result;
    if (record.status === 'in-flight') return { status: 'unknown', key };
    const body = charge ?? unknownCharges.get(key);
    if (body === undefined) throw o.typeError('reconcile', 'charge', `the charge sent with key ${key} (this client did not make it)`, charge);
    // Reopen the record and run the SAME key through the store again, so that a resubmission that
    // ends unknown is parked with ITS attempt time (a later lookup's settle window counts from the
    // latest request, not the first). In-process the reopen and the new start are one synchronous
    // step; across processes another holder of the key could start in the gap, which is safe: it is
    // the same key, and the gateway answers it once.
    try {
      await store.resolve(key, { status: 'failed' });
    } catch (e) {
      if (e?.code !== 'KEY_WRONG_STATE' && e?.code !== 'KEY_NOT_FOUND') throw e;
      const now = await store.peek(key); // settled meanwhile (another reconcile, another tab): its answer stands
      return now?.status === 'done' ? now.result : { status: 'unknown', key };
    }
    const rethrow = new WeakMap();
    const again = async () => {
      try {
        return await attemptCharge(body, key, undefined);
      } catch (e) {
        if (e instanceof Declined || e instanceof OutcomeUnknownError) throw e;
        // Nothing was sent this time (or the request itself was refused, e.g. a different body for
        // the key): the earlier attempt's fate is still unknown, from its own time. Park it again.
        const parked = new OutcomeUnknownError(key, record.startedAt, {
          attempts: record.attempts,
          lastAttemptAt: record.lastAttemptAt,
          settleAfterMs: record.settleAfterMs,
        });
        if (e instanceof Unavailable) parked.retryAfterMs = e.retryAfterMs;
        else rethrow.set(parked, e);
        throw parked;
      }
    };
    let outcome;
    try {
      outcome = await store.run(key, again, { fingerprint: canonicalCharge(body), settleAfterMs });
    } catch (e) {
      if (rethrow.has(e)) throw rethrow.get(e); // a programming error; the key stays unknown
      outcome = outcomeOf(e, key, undefined);
      if (outcome.status === 'unknown' && typeof e?.retryAfterMs === 'number') outcome.retryAfterMs = e.retryAfterMs;
    }
    if (outcome.status !== 'unknown') unknownCharges.delete(key);
    return outcome;
  };

  /**
   * One pending promise per key. A charge passes its request's fingerprint: a double click of the
   * SAME charge shares the pending promise, another charge under the same key is refused (never
   * answered with this one's outcome). Reconciliation (no fingerprint) joins whatever is pending.
   */
  const once = (key, start, fingerprint) => {
    const pending = inFlight.get(key);
    if (pending !== undefined) {
      if (fingerprint !== undefined && pending.fingerprint !== undefined && pending.fingerprint !== fingerprint) {
        return Promise.reject(new IdempotencyKeyReuseError(key));
      }
      return pending.promise;
    }
    const promise = start().finally(() => inFlight.delete(key));
    inFlight.set(key, { promise, fingerprint });
    return promise;
  };

  return {
    /** The store holding this client's keys (for reconciliation). */
    store,
    /**
     * Charge once per key. A second call with the same key while the first is in flight returns
     * the same promise (a double click charges once); after it settles, a succeeded key replays
     * and an unknown key answers unknown without sending anything.
     */
    charge(charge, chargeOptions) {
      const c = o.object(charge, 'charge');
      const bad = chargeError(c);
      if (bad !== undefined) return Promise.reject(bad);
      const co = o.object(chargeOptions, 'charge', true);
      const key = o.own(co, 'idempotencyKey') ?? newIdempotencyKey();
      if (typeof key !== 'string') return Promise.reject(o.typeError('charge', 'idempotencyKey', 'a string', key));
      let fingerprint;
      try {
        fingerprint = canonicalCharge(c);
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
          for (const k of await store.unknownKeys()) out.push(await once(k, () => resubmit(k, undefined)));
          return out;
        })();
      }
      if (typeof key !== 'string') return Promise.reject(o.typeError('reconcile', 'key', 'a string', key));
      if (charge !== undefined) {
        const c = o.object(charge, 'reconcile');
        if (!Number.isSafeInteger(c.amountCents) || c.amountCents <= 0)
          return Promise.reject(o.rangeError('reconcile', 'amountCents', 'a positive integer', c.amountCents));
      }
      return once(key, async () => {
        let outcome;
        try {
          outcome = await resubmit(key, charge);
        } catch (e) {
          // A shared store that cannot answer: nothing was settled, the key stays as it was.
          if (e?.code === 'STORE_UNAVAILABLE') return { status: 'unknown', key, retryAfterMs: UNAVAILABLE_RETRY_MS };
          throw e;
        }
        if (outcome === undefined) throw o.typeError('reconcile', 'charge', `the charge for key ${key} (the store has no record of it)`, charge);
        return outcome;
      });
    },
  };
}

/** The TypeError/RangeError for a charge's amount or currency, or undefined. */
function chargeError(c) {
  if (!Number.isSafeInteger(c.amountCents) || c.amountCents <= 0) {
    return (typeof c.amountCents === 'number' ? o.rangeError : o.typeError)('charge', 'amountCents', 'a positive integer', c.amountCents);
  }
  if (typeof c.currency !== 'string' || c.currency.length === 0) return o.typeError('charge', 'currency', 'a non-empty string', c.currency);
  return undefined;
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
    charge(charge, chargeOptions) {
      if (coreUnavailable('charge') === undefined) return now((c) => c.charge(charge, chargeOptions));
      const c = o.object(charge, 'charge');
      const bad = chargeError(c);
      if (bad !== undefined) return Promise.reject(bad);
      const key = o.own(o.object(chargeOptions, 'charge', true), 'idempotencyKey');
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
