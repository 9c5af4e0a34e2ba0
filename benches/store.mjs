// Case 3b (issue 15): fresh-key chargeCustomer into ONE store that keeps every record, as a service
// does for the records' 24 h TTL, while the store grows from empty to `records` (10^6 by default).
//
// Method: one store, one breaker, one process. Each round runs three batches of `batch` sequential
// awaited calls in a rotated order, each after a macrotask turn and a full GC (untimed): the bare
// gateway (baseline), steadfast chargeCustomer with keys never seen before (the store grows by
// `batch` records per round), and cockatiel 4's wrap(retry, SamplingBreaker) (no store: its cost does
// not depend on the round). "At 10k" is the median of the rounds that start with 10k–60k records,
// "at 1M" of the last five rounds; the anchor and the baseline are the medians of the rounds
// interleaved with each window. Memory: JS heap + wasm linear memory after GC, once the warm-up
// has run and again when the store holds every record, divided by the records added (wasm memory
// only grows, in 64 KiB pages: allocator slack counts, as it does in a real process).
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { CircuitBreaker, IdempotencyStore, chargeCustomer } from 'steadfast';
import * as cockatiel from 'cockatiel';
import { INSTALLED, median } from './common.mjs';

const policy = Object.freeze({ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 10_000 });
const rate = { windowSize: 100, failureRateThreshold: 0.5, openDurationMs: 10_000 };
const gateway = (c) => Promise.resolve({ reference: 'ch_1', amountCents: c.amountCents });

function loopOf(op) {
  return new Function('op', 'return async function loop(n, from) { for (let i = 0; i < n; i++) await op(from + i); }')(op);
}

async function timed(loop, n, from) {
  await new Promise((resolve) => setTimeout(resolve, 0));
  globalThis.gc();
  const t0 = process.hrtime.bigint();
  await loop(n, from);
  return Number(process.hrtime.bigint() - t0) / n;
}

/** `[JS heap, wasm linear memory]` in bytes, after GC. */
function memory(wasm) {
  globalThis.gc();
  globalThis.gc();
  return [process.memoryUsage().heapUsed, wasm.buffer.byteLength];
}

/** @returns {Promise<{ rows: string[][], figures: object }>} */
export async function runStoreGrowth({ records = 1_000_000, batch = 10_000 } = {}) {
  const core = await import(pathToFileURL(join(INSTALLED, 'steadfast_core.js')).href);
  core.initSync();
  const wasm = core.wasmMemory();
  const keyOf = (i) => `order-${i.toString(36)}-charge`;
  const ckWrap = cockatiel.wrap(
    cockatiel.retry(cockatiel.handleAll, { maxAttempts: 3, backoff: new cockatiel.ExponentialBackoff() }),
    cockatiel.circuitBreaker(cockatiel.handleAll, {
      halfOpenAfter: 10_000,
      breaker: new cockatiel.SamplingBreaker({ threshold: 0.5, duration: 10_000 }),
    }),
  );
  let keys = [];
  let deps = { store: new IdempotencyStore(), breaker: new CircuitBreaker(rate), gateway, policy };
  const variants = {
    baseline: loopOf(() => gateway({ idempotencyKey: 'k', amountCents: 1200, currency: 'usd' })),
    steadfast: loopOf((i) => chargeCustomer({ idempotencyKey: keys[i], amountCents: 1200, currency: 'usd' }, deps)),
    cockatiel: loopOf(() => {
      const c = { idempotencyKey: 'k', amountCents: 1200, currency: 'usd' };
      return ckWrap.execute(() => gateway(c));
    }),
  };
  const makeKeys = (from) => {
    keys = new Array(from + batch);
    for (let i = from; i < from + batch; i++) keys[i] = keyOf(i);
  };
  // Warm-up (JIT, wasm tier-up) into a throwaway store, with keys the measured store never sees.
  for (let w = 0; w < 3; w++) {
    keys = Array.from({ length: batch }, (_, i) => `warm-${w}-${i}`);
    for (const loop of Object.values(variants)) await loop(batch, 0);
  }
  deps = { ...deps, store: new IdempotencyStore() };
  keys = [];
  await new Promise((resolve) => setTimeout(resolve, 10));
  const before = memory(wasm);

  const names = Object.keys(variants);
  const rounds = [];
  let size = 0;
  for (let r = 0; size < records; r++) {
    makeKeys(size);
    const round = { size };
    for (let k = 0; k < names.length; k++) {
      const name = names[(r + k) % names.length];
      round[name] = await timed(variants[name], batch, size);
    }
    size += batch;
    keys = [];
    rounds.push(round);
  }
  const after = memory(wasm);
  const retained = deps.store.size;

  const window = (rs) => {
    const base = median(rs.map((x) => x.baseline));
    const sf = median(rs.map((x) => x.steadfast));
    const ck = median(rs.map((x) => x.cockatiel));
    return { base, sf, ck, over: (sf - base) / (ck - base) };
  };
  const small = window(rounds.filter((x) => x.size >= 10_000 && x.size < 60_000));
  const big = window(rounds.slice(-5));
  const flat = (big.sf - big.base) / (small.sf - small.base);
  const heapPerRecord = (after[0] - before[0]) / size;
  const wasmPerRecord = (after[1] - before[1]) / size;
  const perRecord = heapPerRecord + wasmPerRecord;
  const bigLabel = `${Math.round(rounds.at(-5).size / 1000)}k–${Math.round(records / 1000)}k`;
  const rows = [
    ['records in the store', 'steadfast ns/charge', 'cockatiel wrap ns/call', 'baseline ns', 'overhead ratio', 'target'],
    ['10k–60k', small.sf.toFixed(1), small.ck.toFixed(1), small.base.toFixed(1), `${small.over.toFixed(2)}×`, small.over <= 1 ? '≤ 1.0× met' : '≤ 1.0× MISSED'],
    [bigLabel, big.sf.toFixed(1), big.ck.toFixed(1), big.base.toFixed(1), `${big.over.toFixed(2)}×`, big.over <= 1 ? '≤ 1.0× met' : '≤ 1.0× MISSED'],
  ];
  return {
    rows,
    flat,
    perRecord,
    heapPerRecord,
    wasmPerRecord,
    retained,
    added: size,
    heapWasmMiB: [((before[0] + before[1]) / 1048576).toFixed(1), ((after[0] + after[1]) / 1048576).toFixed(1)],
  };
}
