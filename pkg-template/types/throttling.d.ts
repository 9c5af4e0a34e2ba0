/** Throttling: the weighted retry quota and the adaptive rate limiter. */

import type { AbortSignalLike } from './platform.js';

/** How the quota charges a failure: 429 → throttled; no response (timeout, network error) or 408 → timeout; else serverError. */
export type RetryErrorClass = 'timeout' | 'throttled' | 'serverError';

/** The class `RetryQuota` charges `error` by. */
export function retryErrorClass(error: unknown): RetryErrorClass;

export interface RetryQuotaOptions {
  /**
   * `'steadfast'` (default): `{ capacity: 500, timeoutCost: 10, throttledCost: 5, serverErrorCost: 5,
   * successRefund: 1 }`. `'aws'`, the AWS SDK v3 standard mode (`@smithy/util-retry`; its "transient"
   * errors, 500/502/503/504 among them, cost what a timeout does): `{ capacity: 500, timeoutCost: 10,
   * throttledCost: 5, serverErrorCost: 10, successRefund: 1 }`. The fields below override the preset.
   */
  readonly preset?: 'steadfast' | 'aws';
  /** Tokens when full (integer ≥ 1); it starts full. */
  readonly capacity?: number;
  /** Integer ≥ 0. */
  readonly timeoutCost?: number;
  /** Integer ≥ 0. */
  readonly throttledCost?: number;
  /** Integer ≥ 0. */
  readonly serverErrorCost?: number;
  /** Refund of a success without retry (integer ≥ 0). A success after retries refunds its last retry's cost. */
  readonly successRefund?: number;
}

/**
 * A weighted retry quota, usable wherever a RetryBudget is (`budget` of withRetry, resilientFetch,
 * the checkout client). Local to the process (or tab) that holds it.
 */
export class RetryQuota {
  constructor(options?: RetryQuotaOptions);
  /** Pay for one retry after `error` (by its class): true if the quota covers it. */
  tryConsume(error: unknown): boolean;
  /** Report a success; `retryCost` = what its last retry paid (omit when it never retried). */
  recordSuccess(retryCost?: number): void;
  readonly capacity: number;
  readonly available: number;
}

export interface RateLimiterOptions {
  /**
   * `'cubic'` (default): CUBIC with the AWS SDK's constants plus our rules (one cut per burst of
   * 429s; a throttle before the first half-second is measured, not taken as rate 0).
   * `'aws'`: the AWS SDK's `DefaultRateLimiter` exactly, time counted from the limiter's creation
   * (its rate before the first throttle is `min(0.4 · t³, 2 · measured)`). `'aimd'`: additive increase,
   * multiplicative decrease, `{ beta: 0.5, increasePerSec: 10 }`. The fields below override the preset.
   */
  readonly preset?: 'cubic' | 'aws' | 'aimd';
  /** Share of the rate kept on a throttle, in (0, 1). Default 0.7 (AIMD 0.5). */
  readonly beta?: number;
  /** CUBIC's C. Default 0.4. */
  readonly scaleConstant?: number;
  /** Weight of the newest half-second in the measured rate, in (0, 1]. Default 0.8. */
  readonly smooth?: number;
  /** Floor of the send rate (per second, > 0). Default 0.5. */
  readonly minRatePerSec?: number;
  /** Floor of the bucket size (> 0). Default 1. */
  readonly minCapacity?: number;
  /** AIMD's additive increase (per second, per second). Default 10. */
  readonly increasePerSec?: number;
  /** Longest Retry-After honoured (ms). Default 60,000. */
  readonly maxHoldMs?: number;
  /** Monotonic clock (ms). Default `performance.now`. */
  readonly clock?: () => number;
}

/**
 * An adaptive client-side rate limiter: a token bucket whose rate follows the server's 429s
 * (CUBIC as the AWS SDKs' adaptive mode, or AIMD), applied before every attempt; a Retry-After
 * holds every send until it passes. Off (no waiting) until the first 429. Local to one process
 * or tab by design: it learns from that process's own answers, as each AWS SDK client does.
 */
export class RateLimiter {
  constructor(options?: RateLimiterOptions);
  /** Wait until a send is allowed (rejects with `signal.reason` if it aborts first). */
  acquire(signal?: AbortSignalLike): Promise<void>;
  /** Report an answer (withRetry, resilientFetch and the checkout client do it for you). */
  record(outcome: { readonly throttled?: boolean; readonly retryAfterMs?: number; readonly sentAtMs?: number }): void;
  /** Run `fn` once, paced: acquire, call, report its outcome (a 429 is a throttle). */
  run<T>(fn: () => Promise<T> | T, signal?: AbortSignalLike): Promise<T>;
  readonly preset: 'cubic' | 'aws' | 'aimd';
  /** Current send rate (per second). */
  readonly ratePerSec: number;
  /** Measured rate of answers (per second). */
  readonly measuredRatePerSec: number;
  /** Whether a 429 has switched pacing on. */
  readonly enabled: boolean;
}
