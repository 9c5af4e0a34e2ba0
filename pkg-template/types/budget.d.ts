/** The retry budget. */

export interface TokenBucketBudgetOptions {
  /** Tokens when full (finite, ≥ 0). The bucket starts full. */
  readonly capacity: number;
  /** Tokens added per second, lazily (finite, ≥ 0). */
  readonly refillPerSec: number;
  readonly clock?: () => number;
  readonly ratio?: never;
}

export interface RatioBudgetOptions {
  /** Retries allowed per request in the window (0 to 1000). Default 0.2. */
  readonly ratio?: number;
  /** Reserve so quiet callers can still retry. Default 10. */
  readonly minRetriesPerSec?: number;
  /** Sliding window (ms, > 0). Default 10,000. */
  readonly windowMs?: number;
  readonly clock?: () => number;
  readonly capacity?: never;
}

export class RetryBudget {
  constructor(options: TokenBucketBudgetOptions | RatioBudgetOptions);
  /** Take one retry: true if the budget allows it. */
  tryConsume(): boolean;
  /** Count one first attempt (withRetry does this for you; a no-op for token buckets). */
  recordRequest(): void;
  /** Retries available now. */
  readonly available: number;
}
