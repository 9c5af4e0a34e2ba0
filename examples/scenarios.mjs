// The demo's simulated scenarios, as options for `steadfast/sim`, in one place: `demo.mjs` prints
// them, and `make bench` writes their tables into docs/performance.md from the same options (seed 1,
// the simulator's default, where the demo itself draws a fresh seed for the first experiment).

/** The first experiment: 10,000 clients that failed together retry once. */
export const STORM = { clients: 10_000, baseDelayMs: 1_000 };

/** Which jitter? The delays each strategy draws at attempt 4. */
export const JITTER = { samples: 20_000, attempt: 4, baseDelayMs: 1_000, maxDelayMs: 30_000 };

/** A 400 ms hiccup at t = 5 s (the simulator's default outage): each strategy, then full jitter with the breaker on. */
export const HICCUP_RUNS = [
  ['none (1 s, 2 s, 4 s…)', { strategy: 'none' }],
  ['fixed 1 s', { strategy: 'fixed' }],
  ['full jitter', { strategy: 'full' }],
  ['equal jitter', { strategy: 'equal' }],
  ['decorrelated', { strategy: 'decorrelated' }],
  ['full jitter + breaker', { strategy: 'full', breaker: true }],
];

/** A 40-minute outage: what the breaker and the retry budget change. */
export const LONG_OUTAGE = { outageDurationMs: 40 * 60_000, durationMs: 45 * 60_000, bucketMs: 10_000 };
export const LONG_OUTAGE_RUNS = [
  ['none', { strategy: 'none' }],
  ['full', { strategy: 'full' }],
  ['full + breaker', { strategy: 'full', breaker: true }],
  ['full + budget', { strategy: 'full', budget: true }],
  ['full + breaker + budget', { strategy: 'full', breaker: true, budget: true }],
];

/**
 * Throttling: 10,000 clients (100 processes of 100) want ~5,000 attempts/s; the gateway takes
 * 2,500/s (25 per 10 ms tick) and answers 429 above it; 60 s. Once without Retry-After, once with 1 s.
 */
export const THROTTLING = { capacityPerTick: 25, throttle: true, outageDurationMs: 0, durationMs: 60_000, bucketMs: 1_000 };
const THROTTLE_CAPACITY_PER_SEC = 2_500;
export const RETRY_AFTER_MS = [0, 1_000];
export const THROTTLE_RUNS = [
  ['full jitter', {}],
  ['full jitter + quota', { quota: true }],
  ['full jitter + limiter (cubic)', { limiter: 'cubic' }],
  ['full jitter + limiter (aws)', { limiter: 'aws' }],
  ['full jitter + limiter (aimd)', { limiter: 'aimd' }],
];

/** Hedging a slow tail: the simulator's default server, three hedging set-ups. */
export const TAIL_RUNS = [
  ['hedge after p95 (adaptive, the default)', {}],
  ['hedge after a fixed 50 ms', { hedge: { delayMs: 50 } }],
  ['hedge after p95, budget 5 %', { budgetRatio: 0.05 }],
];

/**
 * Every scenario but the first experiment (whose seed the demo draws), run with `sim`: the
 * `steadfast/sim` module of the caller's own install (the demo's and the bench's differ). Each
 * list holds `[label, result]` pairs; `throttled` holds one `{ retryAfterMs, runs }` per Retry-After.
 */
export function runScenarios(sim) {
  return {
    jitter: sim.jitterStats(JITTER),
    hiccup: HICCUP_RUNS.map(([label, o]) => [label, sim.simulateOutage(o)]),
    long: LONG_OUTAGE_RUNS.map(([label, o]) => [label, sim.simulateOutage({ ...o, ...LONG_OUTAGE })]),
    throttled: RETRY_AFTER_MS.map((retryAfterMs) => ({
      retryAfterMs,
      runs: THROTTLE_RUNS.map(([label, o]) => [label, sim.simulateOutage({ ...THROTTLING, retryAfterMs, ...o })]),
    })),
    tail: TAIL_RUNS.map(([label, o]) => [label, sim.simulateTail(o)]),
  };
}

/** What the CUBIC limiter changed in one throttling set-up's `runs`, against full jitter alone. */
export function limiterEffect(runs) {
  const alone = runs[0][1].summary;
  const cubic = runs[THROTTLE_RUNS.findIndex(([, o]) => o.limiter === 'cubic')][1].summary;
  return {
    fewer429s: alone.throttled / Math.max(1, cubic.throttled),
    lessOffered: alone.offeredPerSec / cubic.offeredPerSec,
    capacityServed: cubic.goodputPerSec / THROTTLE_CAPACITY_PER_SEC,
  };
}
