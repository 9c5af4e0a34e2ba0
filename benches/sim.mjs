// The simulator's performance (issue: retry-storm simulator): the seed's histogram experiment at
// 1,000,000 clients in the wasm core vs a tight plain-JS implementation (typed arrays, no per-client
// objects, the same SplitMix64 draws per client), interleaved in one process, medians; and how the
// outage model's time grows from 10^4 to 10^6 clients.
import { simulateHistogram, simulateOutage } from 'steadfast/sim';

/**
 * Plain JS: full jitter for `clients` clients at attempt 1 into 100 ms buckets. A 64-bit generator
 * with BigInt would be unfairly slow, so this uses the fastest honest JS: a 32-bit xorshift PRNG
 * (Math.random is slower still) and an Int32Array of buckets.
 */
function plainJsHistogram(clients, baseDelayMs, bucketMs, seed) {
  const buckets = new Int32Array(Math.ceil(baseDelayMs / bucketMs) + 1);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < clients; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    const u = (s >>> 0) / 4294967296;
    buckets[Math.floor((u * baseDelayMs) / bucketMs)]++;
  }
  let peak = 0;
  for (let i = 0; i < buckets.length; i++) if (buckets[i] > peak) peak = buckets[i];
  return peak;
}

/** Plain JS as the seed writes it: Math.random() per client, into an Int32Array of buckets. */
function mathRandomHistogram(clients, baseDelayMs, bucketMs) {
  const buckets = new Int32Array(Math.ceil(baseDelayMs / bucketMs) + 1);
  for (let i = 0; i < clients; i++) buckets[Math.floor((Math.random() * baseDelayMs) / bucketMs)]++;
  let peak = 0;
  for (let i = 0; i < buckets.length; i++) if (buckets[i] > peak) peak = buckets[i];
  return peak;
}

const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];

export function runSim({ quick = false } = {}) {
  const clients = 1_000_000;
  const reps = quick ? 7 : 25;
  const times = { wasm: [], xorshift: [], math: [] };
  const run = {
    wasm: (r) => simulateHistogram({ clients, strategies: ['full'], seed: r + 1 }),
    xorshift: (r) => plainJsHistogram(clients, 1000, 100, r + 1),
    math: () => mathRandomHistogram(clients, 1000, 100),
  };
  const names = Object.keys(run);
  // Warm-up (JIT, wasm tier-up).
  for (let i = 0; i < 3; i++) for (const n of names) run[n](i);
  for (let r = 0; r < reps; r++) {
    for (let k = 0; k < names.length; k++) {
      const n = names[(r + k) % names.length]; // rotate the order every repetition
      const t0 = performance.now();
      run[n](r);
      times[n].push(performance.now() - t0);
    }
  }
  const wasm = times.wasm;
  const js = times.xorshift;
  const m = median(times.math);
  const w = median(wasm);
  const j = median(js);
  const rows = [['case', 'steadfast (wasm) ms', 'plain JS ms', 'speed-up', 'target']];
  const label = `histogram, full jitter, ${clients.toLocaleString('en')} clients`;
  rows.push([`${label} (JS: Math.random)`, w.toFixed(2), m.toFixed(2), `${(m / w).toFixed(2)}×`, m / w >= 4 ? '≥ 4× met' : '≥ 4× MISSED']);
  rows.push([`${label} (JS: inlined xorshift32)`, w.toFixed(2), j.toFixed(2), `${(j / w).toFixed(2)}×`, j / w >= 4 ? '≥ 4× met' : '≥ 4× MISSED']);
  // The whole five-strategy experiment (fixed and none are O(1) in the core: every client lands in one bucket).
  const all = [];
  for (let r = 0; r < (quick ? 3 : 7); r++) {
    const t0 = performance.now();
    simulateHistogram({ clients, seed: r + 1 });
    all.push(performance.now() - t0);
  }
  rows.push([
    `histogram, all 5 strategies, ${clients.toLocaleString('en')} clients`,
    median(all).toFixed(2),
    (m * 5).toFixed(2) + ' (5 × Math.random)',
    `${((m * 5) / median(all)).toFixed(2)}×`,
    '',
  ]);

  // Per-event cost: every logical request is one "start" event, every attempt one "send" and one
  // "answer" event, every refusal or pacing one more; ns per event must stay flat as n grows
  // (issue 15: ≤ 1.3× from 10^4 to 10^6, and 10^6 clients ≤ 0.5 s).
  const scale = [['clients', 'outage model ms (400 ms hiccup, 20 s simulated)', 'ms per 1,000 clients', 'events', 'ns per event', 'vs 10,000', 'target']];
  let first;
  for (const n of quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000]) {
    const times = [];
    let events = 0;
    // Interleaving is moot here (one library); more repetitions for the short runs, whose noise is larger.
    for (let r = 0; r < (n >= 1_000_000 ? 5 : n >= 100_000 ? 9 : 21); r++) {
      const t0 = performance.now();
      const { summary: s } = simulateOutage({ clients: n, capacityPerTick: Math.round((150 * n) / 10_000), seed: r + 1 });
      times.push(performance.now() - t0);
      events = s.logicalRequests + 2 * s.attempts + s.failedRejected + s.paced;
    }
    const m = median(times);
    const perEvent = (m * 1e6) / events;
    first ??= perEvent;
    const flat = perEvent / first;
    const target = n === 1_000_000 ? `≤ 500 ms, ≤ 1.3×: ${m <= 500 && flat <= 1.3 ? 'met' : 'MISSED'}` : '';
    scale.push([
      n.toLocaleString('en'),
      m.toFixed(1),
      (m / (n / 1000)).toFixed(3),
      events.toLocaleString('en'),
      perEvent.toFixed(1),
      `${flat.toFixed(2)}×`,
      target,
    ]);
  }
  return { rows, scale };
}
