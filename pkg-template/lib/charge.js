// Why: the three mechanisms are one pipeline, and the order matters: idempotency outside (one
// logical charge), breaker in the middle (refuse a known-dead gateway before any retry starts),
// retry inside (absorb transient noise). The gateway sees the same key on every attempt.

import * as o from './options.js';
import { withRetry, checkPolicy } from './retry.js';

/**
 * store.run(key, () => breaker.execute(() => withRetry(() => gateway(charge), policy))), with the
 * charge's amount and currency as the key's fingerprint (reusing a key for another amount is an
 * error, not a replay).
 */
export function chargeCustomer(charge, deps) {
  const where = 'chargeCustomer';
  const c = o.object(charge, where);
  if (typeof c.idempotencyKey !== 'string') return Promise.reject(o.typeError(where, 'idempotencyKey', 'a string', c.idempotencyKey));
  if (!Number.isSafeInteger(c.amountCents) || c.amountCents <= 0) {
    return Promise.reject((typeof c.amountCents === 'number' ? o.rangeError : o.typeError)(where, 'amountCents', 'a positive integer', c.amountCents));
  }
  if (typeof c.currency !== 'string' || c.currency.length === 0) {
    return Promise.reject(o.typeError(where, 'currency', 'a non-empty string', c.currency));
  }
  const d = o.object(deps, where);
  // Structural: an IdempotencyStore or a shared (Redis) one, a CircuitBreaker or a shared one.
  if (typeof d.store?.run !== 'function') return Promise.reject(o.typeError(where, 'store', 'an IdempotencyStore (an object with run())', d.store));
  if (typeof d.breaker?.execute !== 'function') return Promise.reject(o.typeError(where, 'breaker', 'a CircuitBreaker (an object with execute())', d.breaker));
  if (typeof d.gateway !== 'function') return Promise.reject(o.typeError(where, 'gateway', 'a function', d.gateway));
  const { store, breaker, gateway, policy } = d;
  const settleAfterMs = d.settleAfterMs;
  if (settleAfterMs !== undefined && !(typeof settleAfterMs === 'number' && settleAfterMs >= 0)) {
    return Promise.reject((typeof settleAfterMs === 'number' ? o.rangeError : o.typeError)(where, 'settleAfterMs', 'a number >= 0', settleAfterMs));
  }
  // A bad policy must fail here, not inside breaker.execute where it would count as a gateway failure.
  try {
    checkPolicy(policy);
  } catch (e) {
    return Promise.reject(e);
  }
  // What an unknown record keeps for reconcile: how many attempts were sent (the store stamps the
  // time it saw the failure, on its own clock) and the caller's settle window, if given.
  const progress = { attempts: 0 };
  return store.run(
    c.idempotencyKey,
    () =>
      breaker.execute(() =>
        withRetry((ctx) => {
          progress.attempts = ctx.attempt;
          return gateway(c, ctx);
        }, policy),
      ),
    settleAfterMs === undefined ? { fingerprint: `${c.amountCents} ${c.currency}`, progress } : { fingerprint: `${c.amountCents} ${c.currency}`, progress, settleAfterMs },
  );
}
