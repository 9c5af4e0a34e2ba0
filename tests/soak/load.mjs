// Load: 100,000 concurrent in-flight chargeCustomer calls through ONE breaker and ONE store, with an
// in-process gateway that resolves on a later tick (setImmediate); a short-TTL store on a manual clock so
// the records can expire. Measures the JS heap (after gc()) and the wasm linear memory at the baseline,
// at the peak and after each round, and checks that every call completes and no record is left behind.
//
//   node --expose-gc tests/soak/load.mjs [--json] [calls] [rounds]
//
// Wasm linear memory can grow but never shrink (WebAssembly semantics), so "returns to baseline" for it
// means: after the first round it stays at its high-water mark (memory is reused, not leaked). The JS
// heap must come back to within a small margin of the baseline.
import { chargeCustomer, IdempotencyStore, CircuitBreaker, newIdempotencyKey } from 'steadfast';

const args = process.argv.slice(2);
const json = args.includes('--json');
const [calls = 100_000, rounds = 3] = args.filter((a) => !a.startsWith('--')).map(Number);
if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');

// The package's own wasm instance: same module URL as the one the package imports, so initSync()
// keeps the instance already made (no second one) and wasmMemory() is its memory.
const core = await import(new URL('./steadfast_core.js', import.meta.resolve('steadfast')).href);
core.initSync();
const memory = core.wasmMemory();

async function settleGc() {
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await new Promise((resolve) => setImmediate(resolve)); // let FinalizationRegistry callbacks run
  }
  globalThis.gc();
}
const heap = () => process.memoryUsage().heapUsed;
const wasmBytes = () => memory.buffer.byteLength;
const mb = (b) => `${(b / 1048576).toFixed(1)} MB`;

let now = 1_700_000_000_000;
const clock = () => now;
const TTL = 1_000;
const store = new IdempotencyStore({ ttlMs: TTL, clock });
const breaker = new CircuitBreaker({ windowSize: 100, failureRateThreshold: 0.5, openDurationMs: 1_000, clock });
const policy = { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 };
let inFlight = 0;
let peakInFlight = 0;
const gateway = (charge) => {
  inFlight += 1;
  if (inFlight > peakInFlight) peakInFlight = inFlight;
  return new Promise((resolve) =>
    setImmediate(() => {
      inFlight -= 1;
      resolve({ reference: `ch_${charge.idempotencyKey.slice(0, 8)}`, amountCents: charge.amountCents });
    }),
  );
};

await settleGc();
const baseline = { heap: heap(), wasm: wasmBytes() };
const results = [];
for (let round = 1; round <= rounds; round++) {
  peakInFlight = 0;
  const t0 = performance.now();
  const promises = new Array(calls);
  for (let i = 0; i < calls; i++) {
    promises[i] = chargeCustomer({ idempotencyKey: newIdempotencyKey(), amountCents: 100 + (i % 1000), currency: 'usd' }, { store, breaker, gateway, policy });
  }
  const sizeInFlight = store.size;
  const heapPeak = heap();
  const settled = await Promise.allSettled(promises);
  const ms = performance.now() - t0;
  const completed = settled.filter((s) => s.status === 'fulfilled' && s.value.amountCents >= 100).length;
  const rejected = settled.length - completed;
  const sizeDone = store.size;
  promises.fill(undefined);
  settled.length = 0;
  // Expire every record: advance the clock past the TTL. The sweep is lazy (it runs inside run()), so
  // size still counts the expired records until the next call; one definitive failure then sweeps
  // them and leaves nothing behind itself.
  now += TTL + 1;
  const sizeExpiredBeforeSweep = store.size;
  await store
    .run(newIdempotencyKey(), async () => {
      throw Object.assign(new Error('declined'), { status: 402 });
    })
    .catch(() => {});
  const sizeAfterExpiry = store.size;
  await settleGc();
  results.push({
    round,
    calls,
    completed,
    rejected,
    ms: Math.round(ms),
    peakInFlight,
    sizeInFlight,
    sizeDone,
    sizeExpiredBeforeSweep,
    sizeAfterExpiry,
    breaker: breaker.currentState,
    heapPeak,
    heapAfter: heap(),
    wasmAfter: wasmBytes(),
  });
}

const report = { node: process.versions.node, baseline, results };
if (json) {
  console.log(JSON.stringify(report));
} else {
  console.log(
    `load: ${calls.toLocaleString('en-US')} concurrent chargeCustomer calls × ${rounds} rounds, one store (ttlMs ${TTL}) and one breaker, Node ${process.versions.node}`,
  );
  console.log(`  baseline                 JS heap ${mb(baseline.heap)}, wasm linear memory ${mb(baseline.wasm)}`);
  for (const r of results) {
    console.log(
      `  round ${r.round}: ${r.completed.toLocaleString('en-US')}/${r.calls.toLocaleString('en-US')} completed in ${r.ms} ms, peak in flight ${r.peakInFlight.toLocaleString('en-US')}, ` +
        `store.size ${r.sizeInFlight} in flight → ${r.sizeDone} done → ${r.sizeExpiredBeforeSweep} expired (before sweep) → ${r.sizeAfterExpiry} after sweep; ` +
        `JS heap peak ${mb(r.heapPeak)}, after GC ${mb(r.heapAfter)} (${r.heapAfter >= baseline.heap ? '+' : ''}${mb(r.heapAfter - baseline.heap)} vs baseline); wasm ${mb(r.wasmAfter)}`,
    );
  }
}
