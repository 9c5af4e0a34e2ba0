// The simulated experiments `make demo` shows (examples/scenarios.mjs: the same options), as the
// tables of docs/performance.md's first sections: the retry storm, the jitter table, the outage
// model, throttling and hedging a slow tail. The simulator is seeded (seed 1, its default), so every
// run gives the same figures; what this part buys is that none of them is copied by hand.
import * as sim from 'steadfast/sim';
import { STORM, runScenarios, limiterEffect } from '../examples/scenarios.mjs';

const int = (n) => Math.round(n).toLocaleString('en');
const ms = (n) => `${int(n)} ms`;
const secs = (n, digits = 1) => (Number.isFinite(n) ? `${(n / 1000).toFixed(digits)} s` : 'never');
const pct = (x) => `${(100 * x).toFixed(1)} %`;
const times = (x, digits = 1) => `${x.toFixed(digits)}×`;

const STRATEGY_LABELS = {
  fixed: 'fixed 1000 ms (naive)',
  none: 'none (1 s, 2 s, 4 s…)',
  full: 'full jitter',
  equal: 'equal jitter',
  decorrelated: 'decorrelated',
};

/** The retry storm: each strategy's peak per 100 ms, against the fixed delay's. */
function storm() {
  const { runs, bucketMs } = sim.simulateHistogram(STORM);
  const fixed = runs.find((r) => r.strategy === 'fixed');
  const rows = [['strategy', `peak per ${bucketMs} ms`, 'vs fixed']];
  for (const strategy of ['fixed', 'none', 'full', 'equal', 'decorrelated']) {
    const r = runs.find((x) => x.strategy === strategy);
    const peak = r.peak === STORM.clients ? `${int(r.peak)} at ${ms(r.peakAtMs)}` : int(r.peak);
    const vs = strategy === 'fixed' ? '—' : r.peak === fixed.peak ? '1×' : `${times(fixed.peak / r.peak)} lower`;
    rows.push([STRATEGY_LABELS[strategy], peak, vs]);
  }
  return rows;
}

/** Which jitter: min / median / max of each strategy's delay at attempt 4. */
function jitter(stats) {
  const rows = [['variant', 'min', 'median', 'max']];
  for (const r of stats.rows) if (r.variant !== 'none') rows.push([r.variant, ms(r.min), ms(r.median), ms(r.max)]);
  return rows;
}

const outageRow = (label, s) => [
  label,
  `${int(s.secondPeakOffered)} at ${secs(s.secondPeakAtMs)}`,
  s.amplification.toFixed(2),
  int(s.failed),
  secs(s.timeToRecoverMs),
];

/** The 400 ms hiccup, per strategy and with the breaker; the 40-minute outage, with the breaker and the budget. */
function outage({ hiccup, long }) {
  const short = [['a 400 ms hiccup at t = 5 s', 'second peak / 100 ms', 'amplification', 'requests that finally failed', 'recovered after']];
  for (const [label, r] of hiccup) short.push(outageRow(label, r.summary));
  const longRows = [['a 40-minute outage', 'attempts during the outage', 'amplification', 'requests that failed', 'recovered after']];
  for (const [label, { summary: s }] of long) longRows.push([label, int(s.outageAttempts), s.amplification.toFixed(2), int(s.failed), secs(s.timeToRecoverMs)]);
  return [short, longRows];
}

/** Throttling, without and with Retry-After: each table and what the CUBIC limiter changed. */
function throttle(throttled) {
  return throttled.map(({ retryAfterMs, runs }) => {
    const title = retryAfterMs === 0 ? 'without Retry-After' : `with Retry-After: ${retryAfterMs / 1000} s`;
    const rows = [[title, 'offered/s', 'served/s', '429s', '429 share', 'requests failed', 'converged']];
    for (const [label, { summary: s }] of runs) {
      rows.push([label, int(s.offeredPerSec), int(s.goodputPerSec), int(s.throttled), pct(s.throttledShare), int(s.failed), secs(s.convergedAtMs, 0)]);
    }
    const e = limiterEffect(runs);
    const summary =
      `${title}, the CUBIC limiter against full jitter alone: ${times(e.fewer429s, 0)} fewer 429s, ` +
      `${times(e.lessOffered)} less offered load, ${pct(e.capacityServed)} of capacity served.`;
    return { rows, summary };
  });
}

/** Hedging a slow tail: latency percentiles and the load each set-up adds. */
function tail(runs) {
  const load = (r) => `${(100 * (r.copiesPerRequest - 1)).toFixed(1)} %`;
  const rows = [['', 'p50', 'p99', 'p99.9', 'load added']];
  const plain = runs[0][1].plain;
  rows.push(['no hedging', `${plain.p50Ms.toFixed(1)} ms`, `${plain.p99Ms.toFixed(1)} ms`, `${plain.p999Ms.toFixed(1)} ms`, '—']);
  for (const [label, { hedged: h }] of runs) rows.push([label, `${h.p50Ms.toFixed(1)} ms`, `${h.p99Ms.toFixed(1)} ms`, `${h.p999Ms.toFixed(1)} ms`, load(h)]);
  return rows;
}

/** Every table, by the docs page block it fills. */
export function figures() {
  const scenarios = runScenarios(sim);
  return {
    storm: storm(),
    jitter: jitter(scenarios.jitter),
    outage: outage(scenarios),
    throttle: throttle(scenarios.throttled),
    tail: tail(scenarios.tail),
  };
}
