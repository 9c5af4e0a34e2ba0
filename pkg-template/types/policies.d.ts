/** Composable policies (cockatiel-style): `wrap`, `pipeline`, `retry`, `timeout`, `bulkhead`, `fallback`, `idempotency`. */

import type { Executor, IdempotencyRunner } from './pipeline.js';
import type { AbortSignalLike, PlatformAbortSignal } from './platform.js';
import type { RetryPolicy } from './retry.js';
import type { HedgePolicyOptions } from './hedge.js';

/** What each stage of a policy passes to the function it runs. */
export interface PolicyContext {
  /** The retry attempt, from 1 (1 outside a retry). */
  readonly attempt: number;
  /** Aborts when the caller's signal aborts, a timeout passes, or the retry's deadline passes. */
  readonly signal: PlatformAbortSignal | undefined;
  /** From `execute(fn, { idempotencyKey })`: what an `idempotency(store)` stage keys the call by. */
  readonly idempotencyKey: string | undefined;
  readonly fingerprint: string | undefined;
}

export interface PolicyExecuteOptions {
  readonly signal?: AbortSignalLike;
  /** Required by an `idempotency(store)` stage: the call runs once per key. */
  readonly idempotencyKey?: string;
  /** Binds the key to one request (see `IdempotencyStore.run`). */
  readonly fingerprint?: string;
}

/** A composable policy. `R` is what it adds to the result type (a fallback's value). */
export interface Policy<R = never> {
  execute<T>(fn: (ctx: PolicyContext) => Promise<T> | T, options?: PolicyExecuteOptions): Promise<T | R>;
}

/** Anything `wrap`/`pipeline` accept: a steadfast policy, a CircuitBreaker, a shared breaker, any `execute(fn)`. */
export type PolicyLike<R = never> = Policy<R> | Executor;

type FallbackOf<P> = P extends Policy<infer R> ? R : never;

/** Compose policies, outermost first: `wrap(a, b, c).execute(fn)` runs `a(b(c(fn)))`. */
export function wrap<P extends readonly PolicyLike<unknown>[]>(...policies: P): Policy<FallbackOf<P[number]>>;

export interface PipelineStages<F = never> {
  /** Outermost: answers when everything inside failed. */
  readonly fallback?: Policy<F>;
  /** One run per `idempotencyKey` passed to `execute` (a store, or `idempotency(store)`). */
  readonly idempotency?: IdempotencyRunner<unknown> | Policy;
  readonly bulkhead?: Policy;
  /** A CircuitBreaker or a shared one. */
  readonly breaker?: Executor;
  /** A retry policy (its `budget` included), or `retry(policy)`. */
  readonly retry?: RetryPolicy | Policy;
  /** Copies of each attempt: `hedge(options)`, or its options. */
  readonly hedge?: HedgePolicyOptions | Policy;
  /** Per attempt (per copy, with a hedge): ms, or `timeout(ms)`. */
  readonly timeout?: number | Policy;
}

/**
 * The documented order whatever order the stages are written in: fallback → idempotency → bulkhead →
 * breaker → retry (budget) → hedge → timeout per attempt → fn. Omitted stages are skipped.
 */
export function pipeline<F = never>(stages: PipelineStages<F>): Policy<F>;

/** `withRetry` as a policy (validated and frozen now). Each attempt gets its `attempt` and `signal`. */
export function retry(policy?: RetryPolicy): Policy;

/** Reject with `TimeoutError` after `ms` and abort the context's signal (ms ≥ 0). */
export function timeout(ms: number): Policy;

/** A bulkhead: its policy, plus what it holds now. */
export interface Bulkhead extends Policy {
  stats(): { readonly running: number; readonly queued: number };
}

/**
 * At most `limit` (integer ≥ 1) calls at once; `queue` (default 0; an integer or Infinity) more wait in
 * order; beyond that `BulkheadRejectedError` without running. A waiting call whose signal aborts leaves.
 */
export function bulkhead(limit: number, queue?: number): Bulkhead;

/**
 * Answer `fallback(error)` (or the value) when the call fails and `when(error)` agrees (default: every
 * error). The result type becomes `T | F`.
 */
export function fallback<F>(value: F | ((error: unknown) => Promise<F> | F), options?: { readonly when?: (error: unknown) => boolean }): Policy<F>;

/** An idempotency store as a policy: `execute(fn, { idempotencyKey, fingerprint? })` runs once per key. */
export function idempotency(store: IdempotencyRunner<unknown>): Policy;
