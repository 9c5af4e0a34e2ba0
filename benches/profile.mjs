// Where a fresh-key chargeCustomer spends its time: the call run under V8's sampling CPU profiler
// (node:inspector, in this process), each sample's self time given to the layer of the function it
// was in. It explains case 3's ratio against cockatiel's `wrap` (benches/timing.mjs): which layers a
// cheaper charge would have to cut. Self time only (a layer's callees count as theirs), so the
// shares add up to 100 % of the samples taken while the loop ran.
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { INSTALLED, RATE_BREAKER, RETRY_POLICY, checkoutSizedCharge } from './common.mjs';

/** Package file → layer. Anything else of the package is "other package code". */
const LAYERS = [
  [/\/lib\/canonical\.js$/, 'the canonical text (lib/canonical.js)'],
  [/\/lib\/(charge|charge-shape|options)\.js$/, "chargeCustomer's checks (charge, charge-shape, options)"],
  [/\/lib\/(idempotency|idempotency-key|input|fingerprint|unknown|wire)\.js$/, 'the store, JS side (idempotency, input buffer, key rule, fingerprint text)'],
  [/\/lib\/breaker\.js$/, 'the breaker, JS side (lib/breaker.js)'],
  [/\/lib\/(retry|classify|clock|events)\.js$/, 'the retry, JS side (retry, classify)'],
];

function layerOf(frame, self) {
  const { url, functionName } = frame;
  if (url.startsWith('wasm:') || /^wasm-function\[/.test(functionName)) return 'the core, in wasm (hashing, key index, records, breaker, retry)';
  if (functionName === 'encodeInto') return 'TextEncoder.encodeInto (key and text into the core)';
  // lib/options.js's clocks: Date.now is a builtin, so its time is its caller's, these two.
  if (functionName === 'systemClock' || functionName === 'checkedClock') return 'the clock (Date.now, read when a record begins and when it completes)';
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (functionName === '(program)' || functionName === '(idle)') return 'the engine itself (promise jobs, microtasks, compiled code stubs)';
  if (url === self) return 'the bench loop and its gateway';
  if (url.includes('/steadfast/')) {
    for (const [re, name] of LAYERS) if (re.test(url)) return name;
    return 'other package code';
  }
  if (url.startsWith('node:')) return 'Node internals';
  return 'other';
}

/**
 * Profiles fresh-key charges of each shape (short: the timing case's `{ amountCents, currency }`;
 * checkout-sized: its ~200-byte charge) in `rounds` rounds of `batch` calls, each round into a new
 * store with pre-made keys, as case 3 runs them (a store keeping every record would measure the
 * heap's growth instead), after `warmup` rounds; sampling every 50 µs, only while a round runs (a
 * gc() between rounds when the process has one). Returns { rows (a table: layer, share per shape),
 * ns (mean ns per call of each shape, profiler on), samples }.
 */
export async function profileCharge({ rounds = 15, batch = 20_000, warmup = 3 } = {}) {
  const m = await import(`${INSTALLED}/index.node.js`);
  const gateway = async (c) => ({ reference: 'ch_1', amountCents: c.amountCents });
  const policy = RETRY_POLICY;
  const breaker = new m.CircuitBreaker(RATE_BREAKER);
  const shapes = {
    short: (key, i) => ({ idempotencyKey: key, amountCents: 1200 + (i % 1000), currency: 'usd' }),
    'checkout-sized': (key, i) => checkoutSizedCharge(key, 1200 + (i % 1000)),
  };
  const self = import.meta.url;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 50 });
  const shares = new Map();
  const ns = {};
  const samples = {};
  for (const [shape, make] of Object.entries(shapes)) {
    const keys = Array.from({ length: batch }, (_, i) => `order-${i.toString(36)}-charge`); // the caller's cost, not the pipeline's
    const counts = new Map();
    let taken = 0;
    let ms = 0;
    for (let r = 0; r < warmup + rounds; r++) {
      const deps = { store: new m.IdempotencyStore(), breaker, gateway, policy };
      globalThis.gc?.();
      const profiled = r >= warmup;
      if (profiled) await session.post('Profiler.start');
      const t0 = performance.now();
      for (let i = 0; i < batch; i++) await m.chargeCustomer(make(keys[i], i), deps);
      if (!profiled) continue;
      ms += performance.now() - t0;
      const { profile } = await session.post('Profiler.stop');
      const byId = new Map(profile.nodes.map((n) => [n.id, n]));
      for (const id of profile.samples) {
        const layer = layerOf(byId.get(id).callFrame, self);
        counts.set(layer, (counts.get(layer) ?? 0) + 1);
      }
      taken += profile.samples.length;
    }
    ns[shape] = (ms * 1e6) / (rounds * batch);
    samples[shape] = taken;
    for (const [layer, c] of counts) {
      const row = shares.get(layer) ?? {};
      row[shape] = c / taken;
      shares.set(layer, row);
    }
  }
  session.disconnect();
  const names = Object.keys(shapes);
  const ordered = [...shares].sort((a, b) => (b[1][names[0]] ?? 0) - (a[1][names[0]] ?? 0));
  const pct = (x) => `${(100 * (x ?? 0)).toFixed(1)} %`;
  const rows = [['layer (self time)', ...names.map((n) => `${n} charge`)], ...ordered.map(([layer, row]) => [layer, ...names.map((n) => pct(row[n]))])];
  return { rows, ns, samples };
}

// Alone: `node --expose-gc benches/profile.mjs [--quick] [--json]`. `make bench` runs it so, in a
// child process of its own: the bench process's heap (a 1,000,000-record store among it) would
// put its own garbage collection into the table.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { installTarball, table, fmt } = await import('./common.mjs');
  installTarball();
  const quick = process.argv.includes('--quick');
  const result = await profileCharge(quick ? { rounds: 4, batch: 5_000, warmup: 1 } : undefined);
  if (process.argv.includes('--json')) {
    console.log(`profile-json ${JSON.stringify(result)}`);
  } else {
    table(result.rows);
    const per = Object.entries(result.ns).map(([k, v]) => `${k} ${fmt(v, 0)}`);
    console.log(`\nmean ns per charge with the profiler on: ${per.join(', ')}; samples: ${Object.values(result.samples).join(', ')}`);
  }
}
