/** The circuit breaker. */

/**
 * A breaker's state, in every API that reports one (`currentState`, `onStateChange`, events, snapshots,
 * shared breakers and store handles). `'isolated'`: held open by `isolate()` until `reset()`.
 */
export type BreakerState = 'closed' | 'open' | 'half-open' | 'isolated';

interface BreakerCommon {
  /**
   * How long the circuit stays open before one probe is allowed (ms, finite, ≥ 0). Also the
   * probe's lease: a probe that has not reported within twice this is presumed lost (a dead
   * worker, a dropped callback), the next caller becomes the probe, and the late outcome is
   * ignored. Keep a probe's whole call, the retries inside the breaker included, shorter than that
   * (e.g. `maxElapsedMs` ≤ 2 × `openDurationMs`).
   */
  readonly openDurationMs: number;
  /** Consecutive probe successes that close the circuit. Default 1. */
  readonly probesToClose?: number;
  /** Clock (ms). Default `Date.now`, read at call time. */
  readonly clock?: () => number;
  /** Called on every transition ('half-open' | 'open' | 'closed' | 'isolated'); 'half-open' when the cooldown ends, with or without a call. */
  readonly onStateChange?: (state: BreakerState) => void;
  /** Which errors count against the dependency. Default: every error. */
  readonly isFailure?: (error: unknown) => boolean;
  /**
   * Errors that count as neither success nor failure (e.g. a 409 "still processing", a 429, a
   * decline, the caller's own abort): nothing is recorded, and a half-open probe gives its slot
   * back. Checked before `isFailure`. Default: none — but a refusal that never ran the call (a full
   * `bulkhead`, an inner breaker's `CircuitOpenError`) is always excluded.
   */
  readonly isExcluded?: (error: unknown) => boolean;
  /**
   * A call that succeeds but takes at least this long (ms, > 0) counts as a failure, in both trip
   * kinds. Costs two clock reads per call. Default: none (no call is slow). Shared breakers apply
   * it too: the process that made the call judges its duration, the store counts the failure.
   */
  readonly slowCallDurationMs?: number;
  /** Restore a snapshot from `toJSON()` of a breaker with the same options. */
  readonly state?: BreakerSnapshot;
}

/** Trip on the failure rate over the last `windowSize` outcomes. */
export interface RateBreakerOptions extends BreakerCommon {
  /** Outcomes in the rolling window: an integer from 1 to 100,000. */
  readonly windowSize: number;
  /** Trip when failures ÷ outcomes ≥ this (0 to 1), judged each time a failure is recorded (a success never trips). */
  readonly failureRateThreshold: number;
  /** Outcomes needed before the rate is judged (≤ windowSize). Default: a full window. */
  readonly minimumCalls?: number;
  readonly failureThreshold?: never;
}

/** Trip after `failureThreshold` consecutive failures. */
export interface ConsecutiveBreakerOptions extends BreakerCommon {
  /** Failures in a row: an integer from 1 to 1,000,000. */
  readonly failureThreshold: number;
  readonly windowSize?: never;
  readonly failureRateThreshold?: never;
  readonly minimumCalls?: never;
}

export type CircuitBreakerOptions = RateBreakerOptions | ConsecutiveBreakerOptions;

/** Plain data from `toJSON()`. */
export interface BreakerSnapshot {
  readonly version: 1;
  readonly kind: 'rate' | 'consecutive';
  readonly state: BreakerState;
  /** When an open circuit admits a probe (ms on the breaker's clock); null unless open. */
  readonly openUntil: number | null;
  readonly probeSuccesses: number;
  readonly consecutiveFailures: number;
  /** Rolling window, oldest first, 1 = failure (rate breakers). */
  readonly window: readonly number[];
}

export class CircuitBreaker {
  constructor(options: CircuitBreakerOptions);
  /** The state now (an open circuit past its cooldown reads 'half-open'; held by `isolate()`, 'isolated'). */
  readonly currentState: BreakerState;
  /** Whether `isolate()` holds it open. */
  readonly isolated: boolean;
  /**
   * Whether forgetting this breaker would lose protection: it is not closed (open, half-open,
   * isolated), or it is closed with a failure on record. A `BreakerRegistry` never evicts it.
   */
  readonly holdsProtection: boolean;
  /**
   * Run `fn` if admitted. When open (or while the half-open probe is in flight): `fallback()` if
   * given, else reject with `CircuitOpenError` without calling `fn`.
   */
  execute<T>(fn: () => Promise<T> | T): Promise<T>;
  execute<T, F>(fn: () => Promise<T> | T, fallback: () => Promise<F> | F): Promise<T | F>;
  /** Hold open until `reset()`. */
  isolate(): void;
  /** Close and forget every outcome. */
  reset(): void;
  /** Open until `untilMs` (breaker clock) because a peer saw it trip; clamped to now + openDurationMs. */
  openUntil(untilMs: number): void;
  toJSON(): BreakerSnapshot;
}
