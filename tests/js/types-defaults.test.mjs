// The reference cannot drift: every default and limit the installed package's declarations state in
// their JSDoc (index.d.ts with types/*.d.ts, sim.d.ts; parsed by tests/support/stated-defaults.mjs) is
// checked against what the core exports (fetchDefaults through lib/defaults.js, storeDefaults, quotaPreset, limiterPreset,
// settleAfterMs, the simulator's defaults: the numbers the options are filled in with), or, for a
// range or a value only behaviour shows, against what the package does. A new stated default with no
// check fails the first test, so nothing stated goes unchecked by accident.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as steadfast from 'steadfast';
import * as sim from 'steadfast/sim';
import { statedDefaults } from '../support/stated-defaults.mjs';
import { manualClock } from '../support/clock.mjs';

const PKG = dirname(fileURLToPath(import.meta.resolve('steadfast')));
// The same module instances the entries initialised (same file URLs), for the core's own exports.
const core = await import(pathToFileURL(join(PKG, 'steadfast_core.js')).href);
const simCore = await import(pathToFileURL(join(PKG, 'steadfast_sim.js')).href);

const stated = statedDefaults(PKG);

// ---- the core's exported defaults, by name ---------------------------------------------------------
// lib/defaults.js is the package's one reader of the core's fetchDefaults() (src/wasm/defaults.rs).
const { fetchDefaults } = await import(pathToFileURL(join(PKG, 'lib', 'defaults.js')).href);
const { LAYOUT, LIMITER_PRESETS, QUOTA_PRESETS, namedSlots } = await import(pathToFileURL(join(PKG, 'lib', 'wire.js')).href);
const { budget: fetchBudget, retry, breaker: fetchBreaker, checkoutAttemptTimeoutMs, checkoutMaxResponseBytes } = fetchDefaults();
const { jitter: JITTER, ...fetchRetry } = retry;
const { ratio, minRetriesPerSec, windowMs } = fetchBudget;
const [ttlMs, maxRecords, inFlightLeaseMs, unknownTtlMs] = core.storeDefaults();
// The presets by the names the core gives their ids and slots (lib/wire.js).
const quotaOf = (name) => namedSlots(LAYOUT.quotaPreset, core.quotaPreset(QUOTA_PRESETS.indexOf(name)));
const limiterOf = (name) => namedSlots(LAYOUT.limiterPreset, core.limiterPreset(LIMITER_PRESETS.indexOf(name)));
const quota = { steadfast: quotaOf('steadfast'), aws: quotaOf('aws') };
const limiter = { cubic: limiterOf('cubic'), aimd: limiterOf('aimd') };
const settleWhenUnbounded = core.settleAfterMs(NaN, NaN);
const [hClients, hBase, hMax, hAttempt, hBucket, hSeed] = simCore.simHistogramDefaults();
const [jSamples, jAttempt, jBase, jMax, jSeed] = simCore.simJitterDefaults();
const outageNames = simCore.simOutageLayout().split(';')[0].split(',');
const outageVector = simCore.simOutageDefaults();
const outage = Object.fromEntries(outageNames.map((name, i) => [name, outageVector[i]]));

const {
  quantile: qQuantile,
  windowSize: qWindow,
  minDelayMs: qMin,
  maxDelayMs: qMax,
  maxHedges: qHedges,
} = namedSlots(LAYOUT.hedgeDefaults, core.hedgeDefaults());
const tailNames = ['requests', 'latencyMs', 'tailProbability', 'tailLatencyMs', 'arrivalMs', 'seed'];
const tailDefaults = simCore.simTailDefaults();
const fields = (prefix, values) => Object.fromEntries(Object.entries(values).map(([k, v]) => [`${prefix}.${k}`, () => v]));

/** key → the actual value (a function, so a failing one names its key). */
const CORE = {
  'RatioBudgetOptions.ratio': () => ratio,
  'RatioBudgetOptions.minRetriesPerSec': () => minRetriesPerSec,
  'RatioBudgetOptions.windowMs': () => windowMs,
  ...fields('FetchRetryOptions', fetchRetry),
  ...fields('RetryPolicy', fetchRetry),
  'FetchRetryOptions.jitter': () => JITTER,
  'RetryPolicy.jitter': () => JITTER,
  ...fields('DEFAULT_RETRY_POLICY', fetchRetry),
  ...fields('ResilientFetchOptions.breaker', fetchBreaker),
  ...fields('ResilientFetchOptions.budget', fetchBudget),
  ...fields('BreakerRegistry.constructor', fetchBreaker),
  ...fields('CheckoutClientOptions.retry', fetchRetry),
  ...fields('CheckoutClientOptions.breaker', fetchBreaker),
  ...fields('CheckoutClientOptions.budget', fetchBudget),
  'CheckoutClientOptions.attemptTimeoutMs': () => checkoutAttemptTimeoutMs,
  'CheckoutClientOptions.maxResponseBytes': () => checkoutMaxResponseBytes,
  // The core's dialect table (src/core/dialect.rs BUILTIN): its first row is the default.
  'CustomDialect.base': () => core.dialectNames().split(',')[0],
  'CheckoutClientOptions.dialect': () => core.dialectNames().split(',')[0],
  gatewayDialect: () => steadfast.gatewayDialect().name,
  'ResilientFetchOptions.settleAfterMs#unset': () => settleWhenUnbounded,
  'reconcile.settleAfterMs': () => settleWhenUnbounded,
  'IdempotencyStoreOptions.ttlMs': () => ttlMs,
  'IdempotencyStoreOptions.maxRecords': () => maxRecords,
  ...fields('SharedIdempotencyStoreOptions', { ttlMs, inFlightLeaseMs, maxRecords, unknownTtlMs }),
  ...fields('RetryQuotaOptions.preset@steadfast', quota.steadfast),
  ...fields('RetryQuotaOptions.preset@aws', quota.aws),
  'RateLimiterOptions.preset@aimd.beta': () => limiter.aimd.beta,
  'RateLimiterOptions.preset@aimd.increasePerSec': () => limiter.aimd.increasePerSec,
  ...fields('RateLimiterOptions', limiter.cubic),
  ...fields('HistogramOptions', { clients: hClients, baseDelayMs: hBase, maxDelayMs: hMax, attempt: hAttempt, bucketMs: hBucket, seed: hSeed }),
  ...fields('HedgeOptions', { quantile: qQuantile, windowSize: qWindow, minDelayMs: qMin, maxDelayMs: qMax, maxHedges: qHedges }),
  ...fields('TailOptions', Object.fromEntries(tailNames.map((n, i) => [n, tailDefaults[i]]))),
  ...fields('JitterStatsOptions', { samples: jSamples, attempt: jAttempt, baseDelayMs: jBase, maxDelayMs: jMax, seed: jSeed }),
  ...Object.fromEntries(outageNames.filter((n) => !n.includes('.')).map((n) => [`OutageOptions.${n}`, () => outage[n]])),
  'OutageOptions.strategy': () => sim.STRATEGIES[outage.strategy],
  'OutageOptions.throttle': () => outage.throttle === 1,
  ...Object.fromEntries(outageNames.filter((n) => n.startsWith('breaker.')).map((n) => [`SimBreakerOptions.${n.slice('breaker.'.length)}`, () => outage[n]])),
  ...Object.fromEntries(outageNames.filter((n) => n.startsWith('budget.')).map((n) => [`SimBudgetOptions.${n.slice('budget.'.length)}`, () => outage[n]])),
};

// ---- what only behaviour shows ----------------------------------------------------------------------
const tiny = { clients: 20, durationMs: 2_000, outageStartMs: 500, outageDurationMs: 100 };
const BEHAVIOUR = {
  // A breaker that has tripped closes after ONE successful probe.
  'BreakerCommon.probesToClose': async () => {
    const clock = manualClock();
    const b = new steadfast.CircuitBreaker({ failureThreshold: 1, openDurationMs: 10, clock });
    await b.execute(() => Promise.reject(new Error('down'))).catch(() => {});
    clock.advance(10);
    for (let probes = 1; probes <= 10; probes += 1) {
      await b.execute(() => 'ok');
      if (b.currentState === 'closed') return probes;
    }
    return Infinity;
  },
  'HistogramOptions.strategies': () => sim.simulateHistogram({ clients: 10 }).runs.map((r) => r.strategy),
  SimQuotaOptions: () => sim.simulateOutage({ ...tiny, throttle: true, quota: {} }).quota,
  SimLimiterOptions: () => sim.simulateOutage({ ...tiny, throttle: true, limiter: {} }).limiter,
  outageChartSvg: () => {
    const svg = sim.outageChartSvg(sim.simulateOutage(tiny));
    return [Number(/width="(\d+)"/.exec(svg)[1]), Number(/height="(\d+)"/.exec(svg)[1])];
  },
  // One call runs; with no queue the next is refused at once.
  'bulkhead.queue': async () => {
    const b = steadfast.bulkhead(1);
    let release;
    const first = b.execute(() => new Promise((r) => (release = r)));
    let queued = 0;
    for (;;) {
      const refused = await b
        .execute(() => 'ran')
        .then(
          () => false,
          (e) => e instanceof steadfast.BulkheadRejectedError,
        );
      if (refused) break;
      queued += 1;
    }
    release();
    await first;
    return queued;
  },
  'BreakerRegistry.constructor.maxOrigins': () => {
    const registry = new steadfast.BreakerRegistry();
    for (let i = 0; i <= 1_100; i += 1) registry.get(`https://o${i}.example`);
    return registry.origins().length;
  },
  // The timer each lookup runs under: the delay reconcile() arms for one lookup.
  'reconcile.lookupTimeoutMs': async () => {
    const store = new steadfast.IdempotencyStore();
    await store.run('key-t', () => Promise.reject(Object.assign(new Error('503'), { status: 503 }))).catch(() => {});
    const armed = [];
    const real = globalThis.setTimeout;
    globalThis.setTimeout = (fn, ms, ...rest) => (armed.push(ms), real(fn, ms, ...rest));
    try {
      await steadfast.reconcile(store, async () => ({ status: 'done', result: 1 }));
    } finally {
      globalThis.setTimeout = real;
    }
    return Math.max(...armed);
  },
  // Lookups running at once, over more unknown keys than that.
  'reconcile.concurrency': async () => {
    const store = new steadfast.IdempotencyStore();
    const transient = Object.assign(new Error('503'), { status: 503 });
    for (let i = 0; i < 40; i += 1) await store.run(`key-${i}`, () => Promise.reject(transient)).catch(() => {});
    let running = 0;
    let most = 0;
    await steadfast.reconcile(store, async () => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 5));
      running -= 1;
      return { status: 'done', result: 1 };
    });
    return most;
  },
};

/** Accepted at both ends, refused (RangeError naming the option) just past each. */
function range(option, make, step = 1) {
  return ([low, high]) => {
    make(low);
    make(high);
    for (const outside of [low - step, high + step]) {
      assert.throws(
        () => make(outside),
        (e) => e instanceof RangeError && e.message.includes(option),
        `${option} = ${outside} is outside the stated [${low}, ${high}] and must be a RangeError`,
      );
    }
  };
}
const RANGES = {
  'RateBreakerOptions.windowSize': range('windowSize', (v) => new steadfast.CircuitBreaker({ windowSize: v, failureRateThreshold: 0.5, openDurationMs: 1 })),
  'RateBreakerOptions.failureRateThreshold': range(
    'failureRateThreshold',
    (v) => new steadfast.CircuitBreaker({ windowSize: 10, failureRateThreshold: v, openDurationMs: 1 }),
    0.001,
  ),
  'ConsecutiveBreakerOptions.failureThreshold': range('failureThreshold', (v) => new steadfast.CircuitBreaker({ failureThreshold: v, openDurationMs: 1 })),
  'RatioBudgetOptions.ratio': range('ratio', (v) => new steadfast.RetryBudget({ ratio: v }), 0.001),
  'HedgeOptions.windowSize': range('windowSize', (v) => steadfast.hedge({ windowSize: v, safe: true })),
  'HedgeOptions.maxHedges': range('maxHedges', (v) => steadfast.hedge({ maxHedges: v, delayMs: 1, safe: true })),
  'TailOptions.tailProbability': range('tailProbability', (v) => sim.simulateTail({ tailProbability: v, requests: 10 }), 0.001),
  'RetryPolicy.maxAttempts': range('maxAttempts', (v) => steadfast.retry({ maxAttempts: v, baseDelayMs: 1, maxDelayMs: 1 })),
  'CustomDialect.inProgressStatus': range('inProgressStatus', (v) => steadfast.gatewayDialect({ inProgressStatus: v })),
  'CustomDialect.reuseStatuses': range('reuseStatuses', (v) => steadfast.gatewayDialect({ reuseStatuses: [v] })),
};

// Stated, and owned by the JS shell or the platform: not a core number, and not cheap to observe.
// Listed so that a new statement must be placed in one of the tables above (or here, with a reason).
const SHELL = {
  'ResilientFetchOptions.adaptive': 'a flag (off unless set); its 1,000-limiter bound: tests/js/api-throttle.test.mjs',
  'CheckoutClientOptions.adaptive': 'a flag, off unless set',
  'RetryPolicy.adaptive': 'a flag, off unless set',
  'ResilientFetchOptions.bufferBody': 'a flag, off unless set',
  'CallHedgeOptions.safe': 'a flag, off unless set (refusal without it: tests/js/hedge.test.mjs)',
  memoryStateStore: 'the 10,000-name bound of the in-process state store: tests/js/shared-tamper.test.mjs',
  'RedisStoreOptions.timeoutMs': 'a bound on each Redis call, needs a Redis server: tests/js/shared-redis*.test.mjs',
  'RedisStoreOptions.buckets': 'how records spread over hash tags, needs a Redis server: tests/js/shared-redis-cluster.test.mjs, shared-redis-scale.test.mjs',
  'RedisStoreOptions.waitReplicas': 'off unless set; needs a replica: tests/js/shared-redis-failover.test.mjs',
  'RedisStoreOptions.waitTimeoutMs': 'a bound on each WAIT, needs a replica: tests/js/shared-redis-failover.test.mjs',
  'SharedIdempotencyStore.acknowledgeAmnesia.generation': "a memory store's answer: tests/js/shared-redis-scale.test.mjs",
  'SharedBreakerExtra.localCacheMs': "a remote store's local answer time (tests/js/shared-handle.test.mjs)",
  'persistentCheckoutKey.maxAgeMs': 'browser storage pruning: tests/js/shared-tamper.test.mjs',
  'persistentCheckoutKey.maxEntries': 'browser storage pruning: tests/js/shared-tamper.test.mjs',
};

test('the declarations state defaults and limits, and each one has a check', () => {
  assert.ok(stated.length > 50, `found ${stated.length} statements: is the parser still reading the JSDoc?`);
  const unchecked = stated.filter(({ key, kind }) => !(kind === 'range' ? key in RANGES : key in CORE || key in BEHAVIOUR || key in SHELL));
  assert.deepEqual(
    unchecked.map(({ key, kind, value, where }) => `${where} ${key} ${kind} ${JSON.stringify(value)}`),
    [],
    'a default or limit the JSDoc states with nothing checking it: add it to CORE, BEHAVIOUR or RANGES',
  );
});

test('every stated default is the core\u2019s (or what the package does)', async () => {
  const wrong = [];
  for (const { key, kind, value, where } of stated) {
    if (kind !== 'default' && kind !== 'limit') continue;
    const actual = key in CORE ? CORE[key]() : key in BEHAVIOUR ? await BEHAVIOUR[key]() : undefined;
    if (actual === undefined) continue; // SHELL
    try {
      assert.deepEqual(actual, value);
    } catch {
      wrong.push(`${where} ${key}: the declarations say ${JSON.stringify(value)}, the package has ${JSON.stringify(actual)}`);
    }
  }
  assert.deepEqual(wrong, []);
});

for (const [key, check] of Object.entries(RANGES)) {
  test(`the stated range of ${key} is the one the core enforces`, () => {
    const ranges = stated.filter((s) => s.key === key && s.kind === 'range');
    assert.equal(ranges.length, 1, `${key}: one stated range`);
    check(ranges[0].value);
  });
}
