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
}

/**
 * `store.run(key, () => breaker.execute(() => withRetry(() => gateway(charge), policy)))`:
 * idempotency outside, breaker in the middle, retry inside. The key's fingerprint is the whole charge
 * (every own field but `idempotencyKey`, canonical JSON): the same key for another amount, currency
 * or customer is `IdempotencyKeyReuseError`, never a replay. Options are read from own properties.
 */
export function chargeCustomer<C extends Charge = Charge, R = ChargeResult>(charge: C, deps: ChargeDeps<C, R>): Promise<R>;
