/** The pipeline `chargeCustomer`: idempotency → breaker → retry. */

import type { RunOptions } from './idempotency.js';
import type { RetryContext, RetryPolicy } from './retry.js';

export interface Charge {
  readonly idempotencyKey: string;
  /** A positive integer. */
  readonly amountCents: number;
  readonly currency: string;
}

export interface ChargeResult {
  readonly reference: string;
  readonly amountCents: number;
}

/** What `chargeCustomer` needs of a store: `IdempotencyStore` or a shared (Redis) one. */
export interface IdempotencyRunner<T> {
  run(key: string, fn: () => Promise<T> | T, options?: RunOptions): Promise<T>;
}

/** What the pipelines need of a breaker: `CircuitBreaker` or a shared (Redis) one. */
export interface Executor {
  execute<T>(fn: () => Promise<T> | T): Promise<T>;
  execute<T, F>(fn: () => Promise<T> | T, fallback: () => Promise<F> | F): Promise<T | F>;
}

export interface ChargeDeps<C extends Charge = Charge, R = ChargeResult> {
  /** Its result type is not used to infer `R`: the gateway's is (an `IdempotencyStore()` of unknown fits any). */
  readonly store: IdempotencyRunner<NoInfer<R>>;
  readonly breaker: Executor;
  readonly gateway: (charge: C, ctx: RetryContext) => Promise<R>;
  /** Default `DEFAULT_RETRY_POLICY`. */
  readonly policy?: RetryPolicy;
  /** The principal a client-supplied key belongs to: part of the key's binding (see `RunOptions`). */
  readonly scope?: string;
  /** The settle window (ms) kept on the key if the charge ends unknown (see `reconcile`). Default: none (reconcile's default). */
  readonly settleAfterMs?: number;
  /**
   * Top-level charge fields that do not identify the charge (a per-attempt SDK nonce, a client
   * timestamp): passed to the gateway, left out of the key's fingerprint. Default `[]`.
   */
  readonly volatileFields?: readonly string[];
}

/**
 * The canonical text a charge is fingerprinted by: every own field but `idempotencyKey` and
 * `volatileFields` (default `[]`), keys sorted at every level, JSON values — the same text, and the
 * same SHA-256/128 digest in Redis, as the Rust `steadfast::web::Charge::fingerprint`. The charge
 * must be plain JSON data (plain objects, arrays, strings, finite numbers, booleans, null): a class
 * instance, `toJSON`, a getter, a boxed value, a non-finite number, a bigint, function or symbol is a
 * `TypeError` with code `INVALID_OPTION` whose `option` names the field (e.g. `charge.customer.since`).
 */
export function chargeFingerprint(charge: object, options?: { readonly volatileFields?: readonly string[] }): string;

/**
 * `store.run(key, () => breaker.execute(() => withRetry(() => gateway(charge), policy)))`:
 * idempotency outside, breaker in the middle, retry inside. The key's fingerprint is the whole charge
 * (`chargeFingerprint`: every own field but `idempotencyKey` and `volatileFields`, canonical JSON):
 * the same key for another amount, currency or customer is `IdempotencyKeyReuseError`, never a
 * replay. A charge that is not plain JSON data rejects with a `TypeError` (`INVALID_OPTION`) naming
 * the field. Options are read from own properties. Every attempt sends the charge the key was bound
 * to: an attempt that runs after `chargeCustomer` has returned (a retry, or the first one behind a
 * store or breaker that awaits) is made only while the charge is unchanged. A charge changed in the
 * meantime rejects with `IdempotencyKeyReuseError` (`reason: 'changed'`) and nothing is sent for
 * it; the key is then judged by the attempts sent before (unknown if one may have been processed).
 */
export function chargeCustomer<C extends Charge = Charge, R = ChargeResult>(charge: C, deps: ChargeDeps<C, R>): Promise<R>;
