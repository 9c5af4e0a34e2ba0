// Why: the three mechanisms are one pipeline, and the order matters: idempotency outside (one
// logical charge), breaker in the middle (refuse a known-dead gateway before any retry starts),
// retry inside (absorb transient noise). The gateway sees the same key on every attempt.

import * as o from './options.js';
import { withRetry, checkPolicy, errorBefore } from './retry.js';
import { canonicalCharge, volatileFields } from './canonical.js';
import { checkCharge } from './charge-shape.js';
import { IdempotencyStore, RUN_WRITTEN, RUNS_WRITTEN } from './idempotency.js';
import { IdempotencyKeyReuseError } from './errors.js';
import { writeCharge } from './input.js';

/** chargeCustomer's deps names (ChargeDeps in types/pipeline.d.ts), and the deps objects already checked. */
const DEPS_OPTIONS = ['store', 'breaker', 'gateway', 'policy', 'scope', 'settleAfterMs', 'volatileFields'];
const CHECKED_DEPS = new WeakSet();

/**
 * The canonical text a charge is fingerprinted by (what chargeCustomer and the checkout client bind
 * to its key): every own field but `idempotencyKey` and `options.volatileFields`, keys sorted at
 * every level, as JSON. The same text (and SHA-256/128 digest) as the Rust `Charge::fingerprint`.
 * A charge that is not plain JSON data is a TypeError (INVALID_OPTION) naming the field.
 */
export function chargeFingerprint(charge, options) {
  const where = 'chargeFingerprint';
  const c = o.object(charge, where);
  const opts = o.misspelt(o.object(options, where, true), ['volatileFields'], where);
  return canonicalCharge(c, volatileFields(o.own(opts, 'volatileFields'), where), where);
}

/**
 * store.run(key, () => breaker.execute(() => withRetry(() => gateway(charge), policy))), with the
 * whole charge (every own field but the key, canonical JSON) as the key's fingerprint: reusing a key
 * for another amount, currency or customer is an error (KEY_REUSED), never a replay. `deps.scope`
 * (the principal a client-supplied key belongs to) is part of the fingerprint too;
 * `deps.volatileFields` (top-level field names, e.g. a per-attempt SDK nonce) are not. The charge
 * must be plain JSON data (what the gateway sends is then exactly what was fingerprinted): a class
 * instance, toJSON, getter or boxed value is a TypeError (INVALID_OPTION) naming the field.
 */
export function chargeCustomer(charge, deps) {
  const where = 'chargeCustomer';
  const c = o.object(charge, where);
  const key = o.ownValue(c, c.idempotencyKey, 'idempotencyKey'); // own only: a polluted prototype must not supply a key
  if (typeof key !== 'string') return Promise.reject(o.typeError(where, 'idempotencyKey', 'a string', key));
  try {
    checkCharge(c, where);
  } catch (e) {
    return Promise.reject(e);
  }
  const d = o.object(deps, where);
  // An app keeps one deps object for every charge: its names are checked once (a misspelt
  // `settleAfterMS` would otherwise leave the charge on the default settle window, silently).
  if (!CHECKED_DEPS.has(d)) {
    try {
      o.misspelt(d, DEPS_OPTIONS, where);
    } catch (e) {
      return Promise.reject(e);
    }
    CHECKED_DEPS.add(d);
  }
  // Structural: an IdempotencyStore or a shared (Redis) one, a CircuitBreaker or a shared one.
  const store = o.ownValue(d, d.store, 'store');
  const breaker = o.ownValue(d, d.breaker, 'breaker');
  const gateway = o.ownValue(d, d.gateway, 'gateway');
  const policy = o.ownValue(d, d.policy, 'policy');
  const scope = o.ownValue(d, d.scope, 'scope');
  const settleAfterMs = o.ownValue(d, d.settleAfterMs, 'settleAfterMs');
  if (typeof store?.run !== 'function') return Promise.reject(o.typeError(where, 'store', 'an IdempotencyStore (an object with run())', store));
  if (typeof breaker?.execute !== 'function') return Promise.reject(o.typeError(where, 'breaker', 'a CircuitBreaker (an object with execute())', breaker));
  if (typeof gateway !== 'function') return Promise.reject(o.typeError(where, 'gateway', 'a function', gateway));
  if (scope !== undefined && typeof scope !== 'string') return Promise.reject(o.typeError(where, 'scope', 'a string', scope));
  if (settleAfterMs !== undefined && !(typeof settleAfterMs === 'number' && settleAfterMs >= 0)) {
    return Promise.reject((typeof settleAfterMs === 'number' ? o.rangeError : o.typeError)(where, 'settleAfterMs', 'a number >= 0', settleAfterMs));
  }
  // A bad policy must fail here, not inside breaker.execute where it would count as a gateway failure.
  try {
    checkPolicy(policy);
  } catch (e) {
    return Promise.reject(e);
  }
  let skip;
  try {
    skip = volatileFields(o.ownValue(d, d.volatileFields, 'volatileFields'), where);
  } catch (e) {
    return Promise.reject(e);
  }
  // What an unknown record keeps for reconcile: how many attempts were sent (the store stamps the
  // time it saw the failure, on its own clock) and the caller's settle window, if given.
  const progress = { attempts: 0 };
  // Every attempt sends the request the key was bound to. An attempt that runs after this call has
  // returned (a retry after its delay; the first one behind a store or breaker that awaits) follows
  // code the caller could run, which may have changed the charge: it is sent only while the charge
  // is still that request (`same`), else it is refused with KEY_REUSED, nothing sent.
  let returned = false;
  let same;
  const run = () =>
    breaker.execute(() =>
      withRetry((ctx) => {
        if ((returned || ctx.attempt > 1) && !same()) throw new IdempotencyKeyReuseError(key, { reason: 'changed', cause: errorBefore(ctx) });
        progress.attempts = ctx.attempt;
        return gateway(c, ctx);
      }, policy),
    );
  // The in-process store takes the charge itself: its canonical bytes are written where the core
  // hashes them, the same bytes as the text below (canonical.js), with no string built.
  if (store instanceof IdempotencyStore && scope === undefined) {
    const options = settleAfterMs === undefined ? { progress } : { progress, settleAfterMs };
    const write = () => writeCharge(key, c, skip, where);
    same = () => store[RUNS_WRITTEN](key, write);
    const running = store[RUN_WRITTEN](key, run, write, options);
    returned = true;
    return running;
  }
  let fingerprint;
  try {
    fingerprint = canonicalCharge(c, skip, where);
  } catch (e) {
    return Promise.reject(e);
  }
  same = () => {
    try {
      return canonicalCharge(c, skip, where) === fingerprint;
    } catch {
      return false; // no longer plain JSON data: not the request the key was bound to
    }
  };
  const runOptions = { fingerprint, progress };
  if (scope !== undefined) runOptions.scope = scope;
  if (settleAfterMs !== undefined) runOptions.settleAfterMs = settleAfterMs;
  const running = store.run(key, run, runOptions);
  returned = true;
  return running;
}
