/**
 * steadfast/otel: OpenTelemetry metrics and span events for steadfast's `events`. Needs
 * `@opentelemetry/api` (an optional peer dependency of steadfast; only this entry imports it).
 */
import type { MeterProvider } from '@opentelemetry/api';

export interface InstrumentOptions {
  /** Where the meter `steadfast` comes from. Default: the global MeterProvider (`metrics.getMeterProvider()`). */
  readonly meterProvider?: MeterProvider;
  /** Add an event to the active span for each steadfast event. Default true. */
  readonly spanEvents?: boolean;
}

/** A function that stops the instrumentation (also usable with `using`). */
export type Disposer = () => void;

/**
 * Record every steadfast event in this process: counters `steadfast.retry.count` (by `error.type`),
 * `steadfast.retry.give_up.count` (by `steadfast.reason`), `steadfast.breaker.transition.count` (by
 * `steadfast.breaker.state`), `steadfast.budget.refusal.count`, `steadfast.idempotency.outcome.count`
 * (by `steadfast.idempotency.outcome`), the histogram `steadfast.retry.delay` (ms), and span events
 * `steadfast.retry`, `steadfast.give_up`, `steadfast.breaker.state_change`, `steadfast.budget.refused`,
 * `steadfast.idempotency` on the active span. Bad options (not an object, a `meterProvider` without
 * `getMeter`, a `spanEvents` that is not a boolean, a name near one of these) are a `TypeError` with
 * code `INVALID_OPTION`, and nothing is instrumented.
 */
export function instrument(options?: InstrumentOptions): Disposer;
