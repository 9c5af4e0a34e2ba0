/** Jitter, error classification and `withRetry`. */

import type { RetryBudget } from './budget.js';
import type { CallHedgeOptions } from './hedge.js';
import type { AbortSignalLike, PlatformAbortSignal } from './platform.js';
import type { RateLimiter, RetryQuota } from './throttling.js';

/** Uniform in `[0, min(maxDelayMs, baseDelayMs · 2^(attempt−1)))`; `attempt` counts from 1. */
export function fullJitter(attempt: number, baseDelayMs: number, maxDelayMs: number): number;
/** `c/2 + uniform [0, c/2)` with `c` the exponential ceiling: a guaranteed minimum gap. */
export function equalJitter(attempt: number, baseDelayMs: number, maxDelayMs: number): number;
/** `min(maxDelayMs, uniform [baseDelayMs, previousDelayMs · 3))`: chains from the previous delay. */
export function decorrelatedJitter(previousDelayMs: number, baseDelayMs: number, maxDelayMs: number): number;

/** Reseed the generator behind the jitter functions and `withRetry` (default: seeded once from crypto). */
export function seedRandom(seed: number): void;

/**
 * Whether an error is worth retrying: HTTP 408, 429 and ≥ 500 (`status`, `statusCode`,
 * `response.status`, got's `response.statusCode` or the AWS SDK's `$metadata.httpStatusCode`);
 * network codes ECONNRESET, ETIMEDOUT, EAI_AGAIN, ECONNREFUSED, EPIPE, ENOTFOUND…, axios's
 * ERR_NETWORK and ERR_CANCELED (also nested as `cause.code`, or in Stripe's `detail`); a fetch
 * network error in any engine (`isFetchNetworkError`); `TimeoutError`/`AbortError`; Stripe's
 * `StripeConnectionError` and Braintree's `unexpectedError`, `serverError`,
 * `serviceUnavailableError`, `gatewayTimeoutError` (by `type`). Every other 4xx is not. An error
 * that carries a 2xx status (a body cut off after a success head) is judged by its code, and a
 * store keeps its key parked: the charge may have gone through. Of steadfast's own
 * errors, an unknown outcome and a deadline are; an open circuit and `OfflineError` are not
 * (nothing was sent, so a store frees the key). An error that says none of this is judged by its
 * `cause`, a few levels down: a gateway function's own error wrapping a timeout or a network error
 * is as transient as what it wraps.
 */
export function isTransientError(error: unknown): boolean;

/**
 * Whether this is the error that `fetch` (or the read of its body) rejects with on a network error:
 * the `TypeError` of Chromium "Failed to fetch", Firefox "NetworkError when attempting to fetch
 * resource.", WebKit "Load failed", undici "fetch failed" (and the other engines `is-network-error`
 * knows), Deno "error sending request for url (…)" and "error reading a body from connection"; the
 * plain `Error` of Cloudflare Workers, "Network connection lost." (and its "internal error;
 * reference = …"). By name and message, across realms.
 */
export function isFetchNetworkError(error: unknown): boolean;

/** A `Retry-After` header value (delta-seconds or HTTP-date) in ms from `nowMs`; NaN if unparseable. */
export function parseRetryAfter(value: string, nowMs: number): number;

export type Jitter = 'full' | 'equal' | 'decorrelated' | 'none';

/** Frozen (`Object.freeze`) on every attempt. */
export interface RetryContext {
  /** This attempt's number, from 1. */
  readonly attempt: number;
  /**
   * Aborts when the caller's `signal` aborts or `maxElapsedMs` passes; undefined when neither is set.
   * The platform's `AbortSignal` type, so `fetch(url, { signal })` type-checks (with
   * `exactOptionalPropertyTypes`, pass `signal ?? null`).
   */
  readonly signal: PlatformAbortSignal | undefined;
}

/** Frozen (`Object.freeze`) on every retry. */
export interface RetryInfo {
  /** The attempt that just failed, from 1. */
  readonly attempt: number;
  /** The delay before the next attempt. */
  readonly delayMs: number;
  /** What the failed attempt threw (undefined when `retryOnResult` rejected a result). */
  readonly error: unknown;
  /** The result `retryOnResult` asked to retry, when that is why. */
  readonly result?: unknown;
}

/**
 * A retry policy. Validated and frozen (`Object.freeze`) on first use: mutating a policy at runtime
 * is a race.
 */
export interface RetryPolicy {
  /** Calls at most, first attempt included: an integer from 1 to 1000. Default 3. */
  readonly maxAttempts?: number;
  /**
   * Ceiling of the first retry's delay (ms, finite, ≥ 0). Default 100 ms (or `maxDelayMs`, when
   * only that is given and it is smaller).
   */
  readonly baseDelayMs?: number;
  /**
   * Cap on every delay (ms, ≥ baseDelayMs; `Infinity` allowed). Default 10,000 ms (or
   * `baseDelayMs`, when only that is given and it is larger).
   */
  readonly maxDelayMs?: number;
  /** Jitter variant. Default `'full'`. */
  readonly jitter?: Jitter;
  /** Overall deadline including sleeps (ms). Default: none. On expiry: `DeadlineExceededError`. */
  readonly maxElapsedMs?: number;
  /**
   * Whether to retry an error. Default `isTransientError`. A Promise is awaited (a rejection rejects
   * the call, as a throw does; the attempt still counts: a store around the call parks its key if
   * that attempt may have been processed); only `true` retries. A `PermanentError` is never retried. Throwing p-retry's
   * `AbortError` does not stop steadfast (it is just another error to classify): throw a
   * `PermanentError`, or return false here.
   */
  readonly isRetryable?: (error: unknown) => boolean | PromiseLike<boolean>;
  /**
   * Retry on a returned result, not only on a thrown error (cockatiel's `handleResultType`, Polly's
   * `HandleResult`): true retries (same delays, budget and deadline); when no attempt is left, the
   * last result is returned. One that throws rejects the call with its error, not retried: the
   * gateway answered, so a store around the call parks its key (it may have charged). Default: none.
   */
  readonly retryOnResult?: (result: unknown) => boolean;
  /** Called before each sleep. A throwing callback rejects the call. */
  readonly onRetry?: (info: RetryInfo) => void;
  /** Consulted before every retry (never the first attempt); a RetryQuota is also refunded on success. Default: none. */
  readonly budget?: RetryBudget | RetryQuota;
  /** Paces every attempt, the first included, and learns from its 429s. Default: none. */
  readonly rateLimiter?: RateLimiter;
  /** `true`: a `new RateLimiter()` of this policy's own (ignored when `rateLimiter` is given). Default false. */
  readonly adaptive?: boolean;
  /** Aborts the attempt and the sleep; the call rejects with `signal.reason`. */
  readonly signal?: AbortSignalLike;
  /** Uniform draws in [0, 1) for jitter. Default: a SplitMix64 seeded once from crypto. */
  readonly random?: () => number;
  /** Clock for `maxElapsedMs` (ms). Default `Date.now`, read at call time. */
  readonly clock?: () => number;
  /**
   * Race copies of each attempt when it is slow (see `CallHedgeOptions`: it must say `safe: true` or
   * carry an `idempotencyKey`, else `HedgeNotSafeError`). Each copy beyond the first is paid from
   * `budget`, like a retry; a copy aborted unanswered counts in this call's history as possibly
   * processed. Default: none.
   */
  readonly hedge?: CallHedgeOptions;
}

/**
 * Call `fn` until it succeeds, at most `maxAttempts` times. After failed attempt `n` it retries
 * only if `isRetryable(error)`, sleeping the jittered delay for `n` (at least a server's
 * Retry-After, capped by `maxDelayMs`). The last error is rethrown as is; a permanent error at once.
 */
export function withRetry<T>(fn: (ctx: RetryContext) => Promise<T> | T, policy?: RetryPolicy): Promise<T>;

/**
 * The policy `withRetry` uses when given none: `{ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 10_000 }`,
 * full jitter, retrying what `isTransientError` accepts. Frozen; spread it to change a field.
 */
export const DEFAULT_RETRY_POLICY: Readonly<{ maxAttempts: 3; baseDelayMs: 100; maxDelayMs: 10_000 }> & RetryPolicy;
