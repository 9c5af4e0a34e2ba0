/**
 * `steadfast/sim`: the retry-storm simulator. It runs the same Rust backoff, breaker and budget the
 * main entry ships (its own wasm module, so apps that only retry and charge don't download it).
 * Every function is seeded and reproducible; options are validated like the rest of steadfast
 * (TypeError for a wrong type, RangeError naming the option and value).
 */

import type { ConsecutiveBreakerOptions, RateBreakerOptions } from './types/breaker.js';
import type { RatioBudgetOptions, TokenBucketBudgetOptions } from './types/budget.js';
import type { RateLimiterOptions, RetryQuotaOptions } from './types/throttling.js';

/** Strategy names. `fixed` waits exactly `baseDelayMs`; `none` is the exponential ceiling (1 s, 2 s, 4 s…). */
export type Strategy = 'full' | 'equal' | 'decorrelated' | 'none' | 'fixed';
export const STRATEGIES: readonly Strategy[];
/** Quota presets of `simulateOutage({ quota })`. */
export const QUOTA_PRESETS: readonly QuotaPreset[];
/** Limiter presets of `simulateOutage({ limiter })`. */
export const LIMITER_PRESETS: readonly LimiterPreset[];

export interface HistogramOptions {
  /** Default 10,000. */
  readonly clients?: number;
  /** Default 1,000 ms. */
  readonly baseDelayMs?: number;
  /** Default 30,000 ms. */
  readonly maxDelayMs?: number;
  /** The attempt that failed (from 1). Default 1: everyone retries once. */
  readonly attempt?: number;
  /** Default 100 ms. */
  readonly bucketMs?: number;
  /** Default 1. */
  readonly seed?: number;
  /** Default ['fixed', 'full', 'equal', 'decorrelated', 'none']. */
  readonly strategies?: readonly Strategy[];
}

export interface HistogramRun {
  readonly strategy: Strategy;
  /** Retries per bucket; bucket i = [i·bucketMs, (i+1)·bucketMs). */
  readonly counts: Float64Array;
  /** Non-empty buckets. */
  readonly rows: ReadonlyArray<{ readonly at: number; readonly count: number }>;
  readonly peak: number;
  readonly peakAtMs: number;
  readonly retries: number;
  /** fixed's peak ÷ this peak. */
  readonly reduction: number;
}

export interface HistogramResult {
  readonly clients: number;
  readonly attempt: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** The bucket width used (widened only past 2^20 buckets). */
  readonly bucketMs: number;
  readonly seed: number;
  readonly runs: readonly HistogramRun[];
}

/** The retry-storm experiment: `clients` clients that failed together at t = 0 retry once. */
export function simulateHistogram(options?: HistogramOptions): HistogramResult;

/** The tail-latency experiment's options. */
export interface TailOptions {
  /** Requests simulated: an integer ≥ 1, at most ten million. Default 100000. */
  readonly requests?: number;
  /** Typical answer time, ms (each answer takes latencyMs × (0.5 + u), u uniform in [0, 1)). Default 20. */
  readonly latencyMs?: number;
  /** Probability that one copy lands in the slow tail, from 0 to 1. Default 0.02. */
  readonly tailProbability?: number;
  /** Typical answer time in the tail, ms. Default 1000. */
  readonly tailLatencyMs?: number;
  /** Gap between requests, ms (the budget's clock). Default 1. */
  readonly arrivalMs?: number;
  /** Default 1. */
  readonly seed?: number;
  /** The hedge to run (the package's `HedgeOptions`). Default: the hedge's defaults. */
  readonly hedge?: import('./types/hedge.js').HedgeOptions;
  /** A ratio budget (no floor, 10 s window) paying for the hedges. Default: none. */
  readonly budgetRatio?: number;
}

/** Waits (ms) and load of one run of the tail experiment. */
export interface TailRun {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  /** Copies sent per request (1: no hedge was sent; 1.05: 5 % more load). */
  readonly copiesPerRequest: number;
  /** Hedges the budget refused. */
  readonly refused: number;
}

/** p50/p99/p99.9 with and without hedging over the same draws, and the load hedging adds. */
export function simulateTail(options?: TailOptions): {
  readonly requests: number;
  readonly latencyMs: number;
  readonly tailProbability: number;
  readonly tailLatencyMs: number;
  readonly arrivalMs: number;
  readonly seed: number;
  readonly plain: TailRun;
  readonly hedged: TailRun;
};

export interface JitterStatsOptions {
  /** Default 20,000. */
  readonly samples?: number;
  /** Default 4. */
  readonly attempt?: number;
  /** Default 1,000 ms. */
  readonly baseDelayMs?: number;
  /** Default 30,000 ms. */
  readonly maxDelayMs?: number;
  /** Default 1. */
  readonly seed?: number;
}

export interface JitterStatsRow {
  /**
   * `decorrelated` is the textbook definition (previous = the exponential ceiling at `attempt`);
   * `decorrelatedChained` chains previous from attempt 1, as a client really does.
   */
  readonly variant: 'full' | 'equal' | 'decorrelated' | 'decorrelatedChained' | 'none';
  readonly min: number;
  readonly median: number;
  readonly max: number;
  readonly mean: number;
}

/** Min / median / max / mean of each jitter variant at `attempt`. */
export function jitterStats(options?: JitterStatsOptions): {
  readonly samples: number;
  readonly attempt: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly seed: number;
  readonly rows: readonly JitterStatsRow[];
};

/** The breaker's options (see `CircuitBreaker`), with the simulator's defaults. */
export interface SimBreakerOptions {
  /** Rate shape: default 100. */
  readonly windowSize?: RateBreakerOptions['windowSize'];
  /** Default 0.5. */
  readonly failureRateThreshold?: RateBreakerOptions['failureRateThreshold'];
  /** Consecutive shape instead of the rate window. */
  readonly failureThreshold?: ConsecutiveBreakerOptions['failureThreshold'];
  /** Default 5,000 ms. */
  readonly openDurationMs?: RateBreakerOptions['openDurationMs'];
  /** Default 1. */
  readonly probesToClose?: RateBreakerOptions['probesToClose'];
}

/** The retry budget's options (see `RetryBudget`), with the simulator's defaults. */
export interface SimBudgetOptions {
  /** Ratio shape: default 0.2. */
  readonly ratio?: RatioBudgetOptions['ratio'];
  /** Default 10. */
  readonly minRetriesPerSec?: RatioBudgetOptions['minRetriesPerSec'];
  /** Default 10,000 ms. */
  readonly windowMs?: RatioBudgetOptions['windowMs'];
  /** Token-bucket shape instead: default 100. */
  readonly capacity?: TokenBucketBudgetOptions['capacity'];
  /** Default 10. */
  readonly refillPerSec?: TokenBucketBudgetOptions['refillPerSec'];
}

export interface OutageOptions {
  /** Default 'full'. */
  readonly strategy?: Strategy;
  /** Closed-loop clients. Default 10,000. */
  readonly clients?: number;
  /** Mean think time between a client's requests (uniform [0, 2·mean)). Default 1,000 ms. */
  readonly thinkTimeMs?: number;
  /** Gateway latency. Default 1,000 ms. */
  readonly latencyMs?: number;
  /** Client timeout per attempt. Default 10,000 ms. */
  readonly timeoutMs?: number;
  /** Attempts the gateway admits per tick; the rest are shed. Default 150. */
  readonly capacityPerTick?: number;
  /** Default 10 ms. */
  readonly tickMs?: number;
  /** Default 5,000 ms. */
  readonly outageStartMs?: number;
  /** Default 400 ms (a short hiccup). */
  readonly outageDurationMs?: number;
  /** Simulated time. Default 20,000 ms. */
  readonly durationMs?: number;
  /** Default 100 ms. */
  readonly bucketMs?: number;
  /** Default 4. */
  readonly maxAttempts?: number;
  /** Default 1,000 ms. */
  readonly baseDelayMs?: number;
  /** Default 30,000 ms. */
  readonly maxDelayMs?: number;
  /** Default 1. */
  readonly seed?: number;
  /** One breaker shared by every client: `true` for the defaults. Default off. */
  readonly breaker?: boolean | SimBreakerOptions;
  /** One retry budget shared by every client: `true` for the defaults. Default off. */
  readonly budget?: boolean | SimBudgetOptions;
  /** Above capacity, answer 429 (a rate limit) instead of shedding like a 503. Default false. */
  readonly throttle?: boolean;
  /** Retry-After on those 429s, ms; 0 = none. Default 0. */
  readonly retryAfterMs?: number;
  /** How much capacity the throttling gateway lets accumulate, ms (≥ tickMs). Default 1,000. */
  readonly burstMs?: number;
  /** One weighted retry quota shared by every client. Default off. */
  readonly quota?: boolean | QuotaPreset | SimQuotaOptions;
  /** An adaptive rate limiter per process. Default off. */
  readonly limiter?: boolean | LimiterPreset | SimLimiterOptions;
  /** Processes (client i in process i mod limiterGroups), each with its own limiter. Default 100. */
  readonly limiterGroups?: number;
}

/** Quota presets: see `RetryQuotaOptions['preset']`. */
export type QuotaPreset = NonNullable<RetryQuotaOptions['preset']>;
/** Limiter presets: see `RateLimiterOptions['preset']`. */
export type LimiterPreset = NonNullable<RateLimiterOptions['preset']>;

/** `RetryQuota`'s options: a preset (default 'steadfast'), and any field overriding it. */
export type SimQuotaOptions = RetryQuotaOptions;

/** `RateLimiter`'s options but the clock (the simulator's own): a preset (default 'cubic'), and any field overriding it. */
export type SimLimiterOptions = Omit<RateLimiterOptions, 'clock'>;

export interface OutageSummary {
  readonly bucketMs: number;
  readonly buckets: number;
  readonly logicalRequests: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly failedExhausted: number;
  readonly failedBudget: number;
  readonly failedRejected: number;
  readonly pending: number;
  readonly attempts: number;
  readonly retries: number;
  readonly outageAttempts: number;
  readonly peakOffered: number;
  readonly peakOfferedAtMs: number;
  /** The highest bucket after the outage ends. */
  readonly secondPeakOffered: number;
  readonly secondPeakAtMs: number;
  /** Attempts ÷ logical requests. */
  readonly amplification: number;
  /** NaN when it did not recover. */
  readonly recoveredAtMs: number;
  /** First bucket after the outage where ≥ 99 % of offered load is served; NaN when never. */
  readonly timeToRecoverMs: number;
  readonly outageEndMs: number;
  /** Logical requests that failed because the quota refused a retry. */
  readonly failedQuota: number;
  /** Attempts answered 429. */
  readonly throttled: number;
  /** throttled ÷ attempts. */
  readonly throttledShare: number;
  /** Attempts per second over the run. */
  readonly offeredPerSec: number;
  /** Successful attempts per second over the run. */
  readonly goodputPerSec: number;
  /** Times the limiter made an attempt wait (re-asks included). */
  readonly paced: number;
  /** From here on, every 10 s window has ≤ 5 % of its attempts throttled; NaN when never. */
  readonly convergedAtMs: number;
}

export interface OutageBucket {
  readonly atMs: number;
  readonly offered: number;
  readonly served: number;
  readonly failed: number;
  readonly retries: number;
  readonly rejected: number;
  /** Of `failed`, the 429s. */
  readonly throttled: number;
}

export interface OutageResult {
  readonly strategy: Strategy;
  readonly throttle: boolean;
  readonly quota: QuotaPreset | false;
  readonly limiter: LimiterPreset | false;
  readonly options: Readonly<Record<string, number>>;
  readonly summary: OutageSummary;
  readonly buckets: readonly OutageBucket[];
}

/** The outage model: offered load, served, failed, retries, breaker rejections and 429s per bucket. */
export function simulateOutage(options?: OutageOptions): OutageResult;

/** Terminal bars (`█`), on a scale shared by every run. */
export function renderHistogram(rows: ReadonlyArray<{ readonly at: number; readonly count: number }>, scaleMax: number, width?: number): string;

/** A self-contained SVG chart of one `simulateOutage` result. Defaults: 800 × 260. */
export function outageChartSvg(result: OutageResult, options?: { readonly width?: number; readonly height?: number; readonly title?: string }): string;
