/** Hedging: race copies of a slow call, safe for payments (one key, one budget, losers cancelled). */

import type { RetryBudget } from './budget.js';
import type { RetryQuota } from './throttling.js';
import type { Policy } from './policies.js';
import type { SteadfastError } from './errors.js';
import type { PlatformAbortSignal } from './platform.js';

/**
 * When another copy of a call starts, and how many. Reuse one object across calls: its moving
 * latency window lives as long as it does. The delay is fixed (`delayMs`) or adaptive: the `quantile`
 * of the last `windowSize` answered latencies, clamped to [`minDelayMs`, `maxDelayMs`] (and
 * `maxDelayMs` until 10 latencies are known).
 */
export interface HedgeOptions {
  /** A fixed delay before each hedge (ms ≥ 0), counted from the previous copy's start. Default: none (adaptive). */
  readonly delayMs?: number;
  /** The latency quantile to wait for, strictly between 0 and 1. Default 0.95. */
  readonly quantile?: number;
  /** Latencies the quantile is taken over: an integer from 1 to 10000. Default 100. */
  readonly windowSize?: number;
  /** The adaptive delay's floor (ms ≥ 0). Default 10. */
  readonly minDelayMs?: number;
  /** The adaptive delay's ceiling (ms ≥ minDelayMs). Default 1000. */
  readonly maxDelayMs?: number;
  /** Copies beyond the first: an integer from 1 to 10. Default 1. */
  readonly maxHedges?: number;
  /** Copies running at once (1 never hedges). Default: maxHedges + 1. */
  readonly maxInFlight?: number;
}

/**
 * `withRetry`'s and `hedge()`'s hedge: the call must say why a copy is harmless — it only reads
 * (`safe: true`), or every copy carries the same `idempotencyKey` (given to `fn` as `ctx.idempotencyKey`,
 * for the server to recognise the duplicate). Otherwise the call is refused with `HedgeNotSafeError`.
 */
export interface CallHedgeOptions extends HedgeOptions {
  /** The call only reads: a duplicate is harmless. Default false. */
  readonly safe?: boolean;
  /** Sent with every copy (`ctx.idempotencyKey`). Default: none. */
  readonly idempotencyKey?: string;
}

/** What each copy of a hedged call is given, besides its stage's context. */
export interface HedgeContext {
  /** Which copy: 0 the first, 1 the first hedge, … */
  readonly hedge: number;
  /** Aborted when another copy wins (an `AbortError`), the caller aborts, or a deadline passes. */
  readonly signal: PlatformAbortSignal;
  /** The hedge's `idempotencyKey` (the same on every copy), when it has one. */
  readonly idempotencyKey?: string;
}

/** A hedge() stage's options: the hedge, and the budget it shares with retries. */
export interface HedgePolicyOptions extends CallHedgeOptions {
  /** Pays for every copy beyond the first; pass the retry policy's to share one. Default: none. */
  readonly budget?: RetryBudget | RetryQuota;
  /** A failure another copy may still beat (true), or a definitive answer (false). Default `isTransientError`. */
  readonly isRetryable?: (error: unknown) => boolean | PromiseLike<boolean>;
  /** Clock for latencies (ms). Default `Date.now`. */
  readonly clock?: () => number;
}

/**
 * Race copies of each call: after the hedge delay another copy starts (at most `maxHedges` more,
 * `maxInFlight` at once); the first success or definitive failure wins and the others are aborted
 * through their signals. A copy refused by the budget is not sent; the running ones go on. When every
 * copy fails retryably, the last error is the call's (a retry stage outside decides). A copy aborted
 * unanswered may have been processed: it counts in the history of the `withRetry` attempt or
 * `IdempotencyStore` run that starts the hedge, so a key is never freed by the winner's decline.
 */
export function hedge(options: HedgePolicyOptions): Policy;

/**
 * A hedge was asked for a call that is not safe to send twice (a POST/PATCH without an
 * Idempotency-Key, a one-shot body, a call declaring neither `safe` nor `idempotencyKey`). Nothing was sent.
 */
export class HedgeNotSafeError extends SteadfastError {
  constructor(where: string, method: string | undefined);
  readonly code: 'HEDGE_NOT_SAFE';
  readonly name: 'HedgeNotSafeError';
  /** The HTTP method refused (resilientFetch), else undefined. */
  readonly method: string | undefined;
}

/** A hedged attempt's event (see `events.onHedge`). */
export type HedgeEvent =
  | { readonly kind: 'started'; readonly attempt: number; readonly copy: number; readonly delayMs: number }
  | { readonly kind: 'won'; readonly attempt: number; readonly copy: number; readonly copies: number }
  | { readonly kind: 'cancelled' | 'refused'; readonly attempt: number; readonly copy: number };
