import assert from 'node:assert/strict';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MeterProvider, InMemoryMetricExporter, PeriodicExportingMetricReader, AggregationTemporality } from '@opentelemetry/sdk-metrics';
import { withRetry, CircuitBreaker, IdempotencyStore, RetryBudget, pipeline } from 'steadfast';
import { instrument } from 'steadfast/otel';

let n = 0;
const eq = (a, b, m) => {
  assert.deepEqual(a, b, m);
  n += 1;
};

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
trace.setGlobalTracerProvider(tracerProvider);
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
const meterProvider = new MeterProvider({ readers: [reader] });

const stop = instrument({ meterProvider });
const tracer = trace.getTracer('checkout-test');
const transient = () => Object.assign(new Error('503'), { status: 503 });
const fast = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 };

await tracer.startActiveSpan('checkout', async (span) => {
  // Two retries, then a give-up (attempts).
  await withRetry(() => Promise.reject(transient()), fast).catch(() => {});
  // A budget refusal (and its give-up).
  await withRetry(() => Promise.reject(transient()), { ...fast, budget: new RetryBudget({ capacity: 0, refillPerSec: 0 }) }).catch(() => {});
  // A breaker trip.
  const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
  await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => {});
  // Idempotency: run, done, replay, through a pipeline.
  const charge = pipeline({ idempotency: new IdempotencyStore(), retry: fast });
  await charge.execute(() => ({ ref: 'ch_1' }), { idempotencyKey: 'order-otel-1' });
  await charge.execute(() => ({ ref: 'ch_2' }), { idempotencyKey: 'order-otel-1' });
  // A hedge: the first copy hangs until it is cancelled, the second answers.
  await withRetry(({ hedge, signal }) => (hedge === 0 ? new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))) : 'fast'), {
    ...fast,
    hedge: { delayMs: 1, safe: true },
  });
  span.end();
});

const [checkout] = spans.getFinishedSpans();
eq(checkout.name, 'checkout', 'the span was exported');
eq(
  checkout.events.map((e) => e.name),
  [
    'steadfast.retry',
    'steadfast.retry',
    'steadfast.give_up',
    'steadfast.budget.refused',
    'steadfast.give_up',
    'steadfast.breaker.state_change',
    'steadfast.idempotency',
    'steadfast.idempotency',
    'steadfast.idempotency',
    'steadfast.hedge.started',
    'steadfast.hedge.won',
    'steadfast.hedge.cancelled',
  ],
  'span events in order',
);
eq(
  checkout.events[0].attributes,
  { 'steadfast.attempt': 1, 'error.type': '503', 'steadfast.delay_ms': checkout.events[0].attributes['steadfast.delay_ms'], 'http.request.resend_count': 1 },
  'retry event attributes',
);
eq(checkout.events[2].attributes['steadfast.reason'], 'attempts');
eq(checkout.events[4].attributes['steadfast.reason'], 'budget');
eq(checkout.events[5].attributes['steadfast.breaker.state'], 'open');
eq(
  checkout.events.slice(6, 9).map((e) => e.attributes['steadfast.idempotency.outcome']),
  ['run', 'done', 'replay'],
);

await reader.forceFlush();
const exported = metricExporter.getMetrics().at(-1);
const metrics = new Map(
  exported.scopeMetrics
    .filter((s) => s.scope.name === 'steadfast')
    .flatMap((s) => s.metrics)
    .map((m) => [m.descriptor.name, m]),
);
const sum = (name, attr, value) =>
  (metrics.get(name)?.dataPoints ?? []).filter((p) => attr === undefined || p.attributes[attr] === value).reduce((a, p) => a + p.value, 0);
eq(sum('steadfast.retry.count'), 2, 'retries counted');
eq(sum('steadfast.retry.give_up.count', 'steadfast.reason', 'attempts'), 1);
eq(sum('steadfast.retry.give_up.count', 'steadfast.reason', 'budget'), 1);
eq(sum('steadfast.budget.refusal.count'), 1);
eq(sum('steadfast.breaker.transition.count', 'steadfast.breaker.state', 'open'), 1);
eq(sum('steadfast.idempotency.outcome.count', 'steadfast.idempotency.outcome', 'replay'), 1);
eq(checkout.events[11].attributes, { 'steadfast.attempt': 1, 'steadfast.hedge.copy': 0 }, 'the cancelled copy');
for (const kind of ['started', 'won', 'cancelled']) eq(sum('steadfast.hedge.count', 'steadfast.hedge.kind', kind), 1, `hedge ${kind} counted`);
eq(metrics.get('steadfast.retry.delay').dataPoints[0].value.count, 2, 'delay histogram');

// The disposer stops it: no more span events nor counts.
stop();
await tracer.startActiveSpan('after-stop', async (span) => {
  await withRetry(() => Promise.reject(transient()), fast).catch(() => {});
  span.end();
});
eq(spans.getFinishedSpans().find((s) => s.name === 'after-stop').events.length, 0, 'no events after stop()');
await reader.forceFlush();
const later = new Map(
  metricExporter
    .getMetrics()
    .at(-1)
    .scopeMetrics.flatMap((s) => s.metrics)
    .map((m) => [m.descriptor.name, m]),
);
eq(
  later.get('steadfast.retry.count').dataPoints.reduce((a, p) => a + p.value, 0),
  2,
  'no counts after stop()',
);

// Bad options are typed errors naming the option, and nothing is instrumented by them.
const refused = (options, option, pattern) => {
  assert.throws(
    () => instrument(options),
    (e) => e instanceof TypeError && e.code === 'INVALID_OPTION' && e.option === option && pattern.test(e.message),
  );
  n += 1;
};
refused(5, undefined, /instrument options must be an object, got 5/);
refused({ spanEvents: 'no' }, 'spanEvents', /spanEvents must be a boolean, got "no"/);
refused({ meterProvider: {} }, 'meterProvider', /must be a MeterProvider/);
refused({ meterProvder: meterProvider }, 'meterProvder', /did you mean meterProvider\?/);
refused({ spanEvent: false }, 'spanEvent', /did you mean spanEvents\?/);

await meterProvider.shutdown();
await tracerProvider.shutdown();
console.log(`otel: ${n} assertions`);
