// Why: a checkout button is where double charges are born (double clicks, reloads, timeouts). The
// client makes one key per logical charge, sends it on every attempt (and to the secondary
// endpoint on failover), and answers with an outcome a UI can show: succeeded, declined, or
// unknown (money may have moved: show "we're checking", never "try again").

import { RetryBudget } from './budget.js';
import { IdempotencyStore, newIdempotencyKey } from './idempotency.js';
import { CircuitOpenError, IdempotencyKeyReuseError, OutcomeUnknownError, SteadfastError } from './errors.js';
import { resilientFetch, BreakerRegistry, compile as checkFetchOptions } from './fetch.js';
import * as o from './options.js';
import { canonicalCharge } from './idempotency-key.js';

/** The gateway answered with something a correct client never causes (400, 401, 404, …). */
export class CheckoutRequestError extends SteadfastError {
  constructor(status, body) {
    super(`Checkout request rejected with HTTP ${status}`, 'CHECKOUT_REJECTED');
    this.status = status;
    this.body = body;
  }
}

/** Internal: a decline travels through the store as a definitive failure (frees the key). */
class Declined extends Error {
  constructor(reason) {
    super(reason);
    this.reason = reason;
  }
}

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
  const budget = opts.budget ?? new RetryBudget({ ratio: 0.2, minRetriesPerSec: 10, windowMs: 10_000 });
  // A single CircuitBreaker guards the primary only; the secondary always has its own (a dead
  // primary must not block the failover path), from the registry.
  const primaryBreaker = typeof opts.breaker?.execute === 'function' ? opts.breaker : undefined;
  const registry =
    opts.breaker instanceof BreakerRegistry
      ? opts.breaker
      : new BreakerRegistry(opts.breaker === undefined || primaryBreaker !== undefined ? undefined : o.object(opts.breaker, where));
  const attemptTimeoutMs = o.num(opts, 'attemptTimeoutMs', where) ?? 10_000;
  const deadlineMs = o.num(opts, 'deadlineMs', where);
  const onAttempt = o.fn(opts, 'onAttempt', where);
  // Validate retry/budget/timeouts once, up front, with the same rules resilientFetch applies.
  const fetchOptions = { retry: opts.retry, budget, breaker: registry, attemptTimeoutMs, deadlineMs };
  checkFetchOptions(fetchOptions);
  const inFlight = new Map();

  const post = (url, body, key, signal, breaker) => {
    const counted = fetchImpl ?? ((...a) => globalThis.fetch(...a));
    let attempt = 0;
    const fetch = (req, init) => {
      attempt += 1;
      onAttempt?.({ attempt, key, url: String(url) });
      return counted(req, init);
    };
    return resilientFetch(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body, signal },
      { ...fetchOptions, breaker, fetch },
    );
  };

  const attemptCharge = async (charge, key, signal) => {
    const body = JSON.stringify(charge);
    let response;
    try {
      response = await post(endpoint, body, key, signal, primaryBreaker ?? registry);
    } catch (e) {
      if (e instanceof CircuitOpenError && secondary !== undefined) {
        response = await post(secondary, body, key, signal, registry); // failover: the SAME key
      } else {
        throw e;
      }
    }
    const data = await json(response);
    if (response.ok) return { status: 'succeeded', reference: String(data?.reference ?? data?.id ?? ''), key };
    const err = data?.error ?? {};
    if (response.status === 402 || err.type === 'card_error') throw new Declined(String(err.decline_code ?? err.code ?? 'declined'));
    if (response.status === 422 && err.type === 'idempotency_error') throw new IdempotencyKeyReuseError(key);
    if (response.status === 409 || response.status >= 500 || response.status === 429 || response.status === 408) {
      // Still being processed elsewhere, or the server failed without saying what happened.
      throw new OutcomeUnknownError(key, Date.now());
    }
    throw new CheckoutRequestError(response.status, data);
  };

  const run = async (charge, key, signal, fingerprint) => {
    try {
      return await store.run(key, () => attemptCharge(charge, key, signal), { fingerprint });
    } catch (e) {
      if (e instanceof Declined) return { status: 'declined', reason: e.reason, key };
      if (e instanceof OutcomeUnknownError) return { status: 'unknown', key };
      throw e;
    }
  };

  return {
    /** The store holding this client's keys (for reconciliation). */
    store,
    /**
     * Charge once per key. A second call with the same key while the first is in flight returns
     * the same promise (a double click charges once); after it settles, a succeeded key replays.
     */
    charge(charge, chargeOptions) {
      const c = o.object(charge, 'charge');
      if (!Number.isSafeInteger(c.amountCents) || c.amountCents <= 0) {
        return Promise.reject((typeof c.amountCents === 'number' ? o.rangeError : o.typeError)('charge', 'amountCents', 'a positive integer', c.amountCents));
      }
      if (typeof c.currency !== 'string' || c.currency.length === 0) return Promise.reject(o.typeError('charge', 'currency', 'a non-empty string', c.currency));
      const co = o.object(chargeOptions, 'charge', true);
      const key = o.own(co, 'idempotencyKey') ?? newIdempotencyKey();
      if (typeof key !== 'string') return Promise.reject(o.typeError('charge', 'idempotencyKey', 'a string', key));
      // The whole request is the fingerprint: a double click of the SAME charge shares the pending
      // promise; another charge under the same key is refused, never answered with this one's outcome.
      let fingerprint;
      try {
        fingerprint = canonicalCharge(c);
      } catch (e) {
        return Promise.reject(e);
      }
      const pending = inFlight.get(key);
      if (pending !== undefined) {
        return pending.fingerprint === fingerprint ? pending.promise : Promise.reject(new IdempotencyKeyReuseError(key));
      }
      const promise = run(c, key, o.own(co, 'signal'), fingerprint).finally(() => inFlight.delete(key));
      inFlight.set(key, { promise, fingerprint });
      return promise;
    },
  };
}
