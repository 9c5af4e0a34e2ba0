// steadfast/otel: OpenTelemetry metrics and span events for steadfast's events, through
// @opentelemetry/api (an optional peer dependency: only this entry imports it). It listens on the same
// process-wide hub as `events` from 'steadfast' (the same module instance: a relative import).
import { metrics, trace } from '@opentelemetry/api';
import { events } from './lib/events.js';
import { boundedErrorType as errorType } from './lib/classify.js';
import * as o from './lib/options.js';

/**
 * Record steadfast's events as OpenTelemetry metrics (counters and a delay histogram on the meter
 * `steadfast`) and as events on the active span. Returns a function that stops it (also `using`-able).
 * @param {{ meterProvider?: object, spanEvents?: boolean }} [options]
 */
export function instrument(options) {
  const where = 'instrument';
  const opts = o.misspelt(o.object(options, where, true), ['meterProvider', 'spanEvents'], where);
  const given = o.own(opts, 'meterProvider');
  if (given !== undefined && typeof given?.getMeter !== 'function')
    throw o.typeError(where, 'meterProvider', 'a MeterProvider (an object with getMeter())', given);
  const meterProvider = given ?? metrics.getMeterProvider();
  const spanEvents = o.own(opts, 'spanEvents') ?? true;
  if (typeof spanEvents !== 'boolean') throw o.typeError(where, 'spanEvents', 'a boolean', spanEvents);
  const meter = meterProvider.getMeter('steadfast');
  const retries = meter.createCounter('steadfast.retry.count', { description: 'Retries scheduled (each before its sleep)' });
  const delays = meter.createHistogram('steadfast.retry.delay', { unit: 'ms', description: 'Sleep before each retry' });
  const giveUps = meter.createCounter('steadfast.retry.give_up.count', { description: 'Retried calls that failed for good, by reason' });
  const transitions = meter.createCounter('steadfast.breaker.transition.count', { description: 'Circuit breaker state changes, by new state' });
  const refusals = meter.createCounter('steadfast.budget.refusal.count', { description: 'Retries the retry budget refused' });
  const hedges = meter.createCounter('steadfast.hedge.count', { description: 'Hedged copies started, won, cancelled and refused, by kind' });
  const outcomes = meter.createCounter('steadfast.idempotency.outcome.count', { description: 'Idempotency decisions and settlements, by outcome' });
  const spanEvent = (name, attributes) => {
    if (spanEvents) trace.getActiveSpan()?.addEvent(name, attributes);
  };

  const disposers = [
    events.onRetry((e) => {
      const attributes = { 'steadfast.attempt': e.attempt, 'error.type': 'result' in e ? 'result' : errorType(e.error) };
      retries.add(1, { 'error.type': attributes['error.type'] });
      delays.record(e.delayMs);
      // OpenTelemetry's HTTP convention: the ordinal of the re-send this retry schedules (1 = first re-send).
      spanEvent('steadfast.retry', { ...attributes, 'steadfast.delay_ms': e.delayMs, 'http.request.resend_count': e.attempt });
    }),
    events.onGiveUp((e) => {
      giveUps.add(1, { 'steadfast.reason': e.reason });
      spanEvent('steadfast.give_up', {
        'steadfast.reason': e.reason,
        'steadfast.attempt': e.attempt,
        'error.type': 'result' in e ? 'result' : errorType(e.error),
      });
    }),
    events.onBreakerStateChange((e) => {
      transitions.add(1, { 'steadfast.breaker.state': e.state });
      spanEvent('steadfast.breaker.state_change', { 'steadfast.breaker.state': e.state });
    }),
    events.onBudgetRefused((e) => {
      refusals.add(1);
      spanEvent('steadfast.budget.refused', { 'steadfast.attempt': e.attempt });
    }),
    events.onHedge((e) => {
      hedges.add(1, { 'steadfast.hedge.kind': e.kind });
      spanEvent(`steadfast.hedge.${e.kind}`, { 'steadfast.attempt': e.attempt, 'steadfast.hedge.copy': e.copy });
    }),
    events.onIdempotency((e) => {
      outcomes.add(1, { 'steadfast.idempotency.outcome': e.outcome });
      spanEvent('steadfast.idempotency', { 'steadfast.idempotency.outcome': e.outcome });
    }),
  ];
  const dispose = () => {
    for (const d of disposers.splice(0)) d();
  };
  if (typeof Symbol.dispose === 'symbol') dispose[Symbol.dispose] = dispose;
  return dispose;
}
