// `make demo`: the retry storm in numbers, computed by the same Rust backoff, breaker and budget the
// package ships (through the built package, on Node 24).
//
//   1. the retry storm: 10,000 clients that failed together retry once — naive vs full jitter
//   2. the jitter table (20,000 samples at attempt 4)
//   3. an outage model: a 400 ms hiccup and a 40-minute outage, per strategy, with breaker and budget
//   4. throttling: a gateway at half the demand that answers 429 — full jitter vs + adaptive limiter
//   5. SVG charts of load over time, written to demo-out/
import { mkdir, writeFile } from 'node:fs/promises';
import * as sim from 'steadfast/sim';
import { STORM, runScenarios, limiterEffect } from './scenarios.mjs';

const { renderHistogram, outageChartSvg } = sim;
const scenarios = runScenarios(sim);

const fmt = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const pad = (s, n) => String(s).padEnd(n);
const num = (s, n) => String(s).padStart(n);

// 1. The retry storm -------------------------------------------------------------------------
const h = sim.simulateHistogram({ ...STORM, strategies: ['fixed', 'full'], seed: Date.now() % 2 ** 32 });
const [fixed, full] = h.runs;
console.log('\n  naive — fixed 1000ms delay\n  when    clients');
console.log(renderHistogram(fixed.rows, h.clients));
console.log('\n  full jitter — random in [0, 1000ms)\n  when    clients');
console.log(renderHistogram(full.rows, h.clients));
console.log('\n  summary\n  strategy        peak/100ms  retries');
console.log(`  fixed 1000ms    ${pad(fixed.peak, 12)}${fixed.retries}`);
console.log(`  full jitter     ${pad(full.peak, 12)}${full.retries}`);
console.log(`\n  peak/100ms: ${fixed.peak} vs ${full.peak} (${(fixed.peak / full.peak).toFixed(1)}× lower), same ${full.retries} retries`);

// 2. The jitter table ------------------------------------------------------------------------
const j = scenarios.jitter;
console.log(`\n  which jitter? ${fmt(j.samples)} samples at attempt ${j.attempt} (base 1000 ms, cap 30 s)`);
console.log(`  ${pad('variant', 22)}${num('min', 9)}${num('median', 10)}${num('max', 10)}`);
for (const r of j.rows) console.log(`  ${pad(r.variant, 22)}${num(fmt(r.min), 9)}${num(fmt(r.median), 10)}${num(fmt(r.max), 10)}`);
console.log('  (decorrelated = min(cap, uniform[base, 3·previous)) with previous = the attempt-4 ceiling, 8,000 ms,');
console.log('   the common textbook reading; decorrelatedChained chains previous from attempt 1.)');

// 3. Outage model ----------------------------------------------------------------------------
const table = (title, runs) => {
  console.log(`\n  ${title}`);
  console.log(
    `  ${pad('strategy', 24)}${num('2nd peak', 9)}${num('at', 9)}${num('attempts', 12)}${num('amplif.', 9)}${num('failed', 11)}${num('recovered', 11)}${num('attempts in outage', 20)}`,
  );
  for (const [label, r] of runs) {
    const s = r.summary;
    const rec = Number.isFinite(s.timeToRecoverMs) ? `${(s.timeToRecoverMs / 1000).toFixed(1)} s` : 'never';
    const at = `${(s.secondPeakAtMs / 1000).toFixed(1)} s`;
    console.log(
      `  ${pad(label, 24)}${num(fmt(s.secondPeakOffered), 9)}${num(at, 9)}${num(fmt(s.attempts), 12)}${num(s.amplification.toFixed(2), 9)}${num(fmt(s.failed), 11)}${num(rec, 11)}${num(fmt(s.outageAttempts), 20)}`,
    );
  }
};
const { hiccup, long } = scenarios;
table('a 400 ms hiccup at t = 5 s: 10,000 clients, gateway capacity 150 per 10 ms', hiccup);

table('a 40-minute outage: the breaker stops the knocking, the budget caps amplification', long);
console.log('  (per 10 s bucket; with a breaker, clients fail fast and come back after their think time, so more');
console.log('   logical requests fail — in microseconds, without touching the gateway.)');

// 4. Throttling --------------------------------------------------------------------------------
// 10,000 clients (100 processes of 100) want ~5,000 attempts/s; the gateway takes 2,500/s and
// answers 429 above that. Jitter spreads the retries but does not lower what is offered; a
// per-process adaptive limiter (CUBIC, as the AWS SDKs' adaptive mode) learns the rate from the
// 429s and paces every attempt, first attempts included.
const pct = (x) => `${(100 * x).toFixed(1)} %`;
const secs = (ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(0)} s` : 'never');
const throttleTable = (title, runs) => {
  console.log(`\n  ${title}`);
  console.log(
    `  ${pad('strategy', 30)}${num('offered/s', 10)}${num('served/s', 10)}${num('429s', 10)}${num('429 share', 11)}${num('failed', 9)}${num('converged', 11)}`,
  );
  for (const [label, r] of runs) {
    const s = r.summary;
    console.log(
      `  ${pad(label, 30)}${num(fmt(s.offeredPerSec), 10)}${num(fmt(s.goodputPerSec), 10)}${num(fmt(s.throttled), 10)}${num(pct(s.throttledShare), 11)}${num(fmt(s.failed), 9)}${num(secs(s.convergedAtMs), 11)}`,
    );
  }
};
for (const { retryAfterMs, runs } of scenarios.throttled) {
  throttleTable(
    `a gateway at half the demand answering 429 ${retryAfterMs ? `with Retry-After: ${retryAfterMs / 1000} s` : 'without Retry-After'} (60 s)`,
    runs,
  );
  const e = limiterEffect(runs);
  console.log(
    `  → the limiter: ${e.fewer429s.toFixed(0)}× fewer 429s, ${e.lessOffered.toFixed(1)}× less offered load, ${pct(e.capacityServed)} of capacity served`,
  );
}
console.log('  (the quota alone does not lower the load: first attempts are never refused, so clients whose');
console.log('   retries it refuses simply come back sooner with new requests.)');

// 5. Hedging a slow tail -----------------------------------------------------------------------
{
  const runs = scenarios.tail;
  const t = runs[0][1];
  console.log(
    `\n5. Hedging: ${t.requests.toLocaleString('en-US')} requests, ${t.latencyMs} ms typical, ${pct(t.tailProbability)} in a ${t.tailLatencyMs} ms tail (seed ${t.seed})`,
  );
  const row = (name, r) =>
    `  ${name.padEnd(30)} p50 ${r.p50Ms.toFixed(1).padStart(7)} ms  p99 ${r.p99Ms.toFixed(1).padStart(7)} ms  p99.9 ${r.p999Ms.toFixed(1).padStart(7)} ms  load ${(r.copiesPerRequest * 100 - 100).toFixed(1).padStart(5)} % more`;
  console.log(row('no hedging', t.plain));
  for (const [name, r] of runs) console.log(row(name, r.hedged));
}

// 6. Charts ----------------------------------------------------------------------------------
await mkdir('demo-out', { recursive: true });
const charts = [
  ['outage-none.svg', hiccup[0][1], 'no jitter (1 s, 2 s, 4 s): the synchronized second peak'],
  ['outage-full.svg', hiccup[2][1], 'full jitter: the same retries, spread out'],
  ['outage-long-breaker.svg', long[2][1], '40-minute outage, full jitter + breaker'],
  ['throttle-jitter.svg', scenarios.throttled[0].runs[0][1], 'gateway at half the demand, 429s: full jitter alone'],
  ['throttle-adaptive.svg', scenarios.throttled[0].runs[2][1], 'gateway at half the demand, 429s: full jitter + adaptive limiter (cubic)'],
];
for (const [file, result, title] of charts) await writeFile(`demo-out/${file}`, outageChartSvg(result, { title }));
console.log(`\n  charts: ${charts.map(([f]) => `demo-out/${f}`).join(', ')}`);
