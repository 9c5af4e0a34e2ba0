/** Events: one process-wide emitter for retries, give-ups, breaker transitions, budget refusals and idempotency outcomes. */

import type { BreakerState, CircuitBreaker } from './breaker.js';
import type { IdempotencyStore } from './idempotency.js';
import type { RetryInfo } from './retry.js';
import type { HedgeEvent } from './hedge.js';

/** Removes the listener it was returned for (idempotent). */
export type Unsubscribe = () => void;

export interface RetryEvent extends RetryInfo {}
export type GiveUpReason = 'attempts' | 'not-retryable' | 'permanent' | 'deadline' | 'budget';
export type GiveUpEvent =
  | { readonly attempt: number; readonly error: unknown; readonly reason: GiveUpReason }
  | { readonly attempt: number; readonly result: unknown; readonly reason: 'attempts' | 'deadline' | 'budget' };
export interface BreakerStateEvent {
  readonly breaker: CircuitBreaker;
  readonly state: BreakerState;
}
export interface BudgetRefusedEvent {
  readonly attempt: number;
  /** The error the refused retry would have answered. */
  readonly error: unknown;
}
/**
 * `run`: the key is new (or free again) and runs; `replay`, `in-flight`, `unknown`, `mismatch`: what
 * `run()` answered instead of running; `done`, `failed`, `parked-unknown`: how a run settled.
 */
export type IdempotencyOutcome = 'run' | 'replay' | 'in-flight' | 'unknown' | 'mismatch' | 'full' | 'done' | 'failed' | 'parked-unknown';
export interface IdempotencyEvent {
  readonly store: IdempotencyStore<unknown>;
  readonly key: string;
  readonly outcome: IdempotencyOutcome;
}

/**
 * Process-wide events of every steadfast component (this copy of the package). Any number of
 * listeners; each `on…` returns its disposer. A throwing listener never disturbs steadfast or the
 * other listeners: its error is reported as uncaught, asynchronously (like node:diagnostics_channel).
 */
export interface SteadfastEvents {
  /** Before each retry's sleep (every withRetry, retry() policy, chargeCustomer). */
  onRetry(listener: (event: RetryEvent) => void): Unsubscribe;
  /** A retried call failed for good. */
  onGiveUp(listener: (event: GiveUpEvent) => void): Unsubscribe;
  /** A CircuitBreaker changed state. */
  onBreakerStateChange(listener: (event: BreakerStateEvent) => void): Unsubscribe;
  /** A RetryBudget refused a retry. */
  onBudgetRefused(listener: (event: BudgetRefusedEvent) => void): Unsubscribe;
  /** An IdempotencyStore decided or settled a key. */
  onIdempotency(listener: (event: IdempotencyEvent) => void): Unsubscribe;
  /** A hedged attempt started a copy, was won by one, cancelled a loser, or had a copy refused by the budget. */
  onHedge(listener: (event: HedgeEvent) => void): Unsubscribe;
}
export const events: SteadfastEvents;
