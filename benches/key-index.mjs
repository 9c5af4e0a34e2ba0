// What the core's key index costs per lookup against the JS Map it replaced: `StoreCore.slotOf(key)`
// (the key string copied into wasm, SipHash-2-4-128, one table probe) vs `Map.get(key)` (V8's cached
// string hash), over the same known keys, interleaved, medians. A replay pays this difference on
// every call. And what a NEW key costs the core: the key written into the input buffer
// (`encodeInto`), `beginInput` (hash, probe, insert, record) and `complete`, 100,000 new keys per
// run into the same store, which grows from `keys` records by 100,000 per run.
//
//   node benches/key-index.mjs [keys = 100000] [package dir]
//
// Without a package dir: the tarball `make build` packed (reinstalled). With one (e.g. a copy of an
// older build's tests/node_modules/steadfast): that package, to compare two builds run by run.
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { INSTALLED, installTarball, median } from './common.mjs';

const dir = process.argv[3] ?? (installTarball(), INSTALLED);
const core = await import(pathToFileURL(join(dir, 'steadfast_core.js')).href);
core.initSync({ module: readFileSync(join(dir, 'steadfast_core_bg.wasm')) });

const N = Number(process.argv[2] ?? 100_000);
const CALLS = 1_000_000;
const FRESH = 100_000;
const keys = Array.from({ length: N }, () => crypto.randomUUID());
const store = new core.StoreCore(undefined, N + 10 * FRESH);
const encoder = new TextEncoder();
const ptr = core.inputBuffer(4096);
/** `key` into the input buffer (a view made afresh: memory growth detaches the old one); its length. */
const put = (key) => encoder.encodeInto(key, new Uint8Array(core.wasmMemory().buffer, ptr, 4096)).written;
const map = new Map();
for (let i = 0; i < N; i++) {
  const slot = Math.floor(store.beginInput(put(keys[i]), 0, 0) / 16);
  store.complete(slot, 0, 0);
  map.set(keys[i], slot);
}
const variants = {
  'Map.get(key)': () => {
    let x = 0;
    for (let i = 0; i < CALLS; i++) x += map.get(keys[i % N]);
    return x;
  },
  'StoreCore.slotOf(key)': () => {
    let x = 0;
    for (let i = 0; i < CALLS; i++) x += store.slotOf(keys[i % N]);
    return x;
  },
};
const names = Object.keys(variants);
const ns = Object.fromEntries(names.map((n) => [n, []]));
for (let r = 0; r < 9; r++) {
  const sums = {};
  for (let k = 0; k < names.length; k++) {
    const name = names[(r + k) % names.length];
    const t0 = process.hrtime.bigint();
    sums[name] = variants[name]();
    ns[name].push(Number(process.hrtime.bigint() - t0) / CALLS);
  }
  if (sums[names[0]] !== sums[names[1]]) throw new Error('key-index: the two indexes disagree');
}
const [a, b] = names.map((n) => median(ns[n]));
console.log(`${N.toLocaleString('en')} known UUID keys, ${CALLS.toLocaleString('en')} lookups per run, median of 9:`);
console.log(`  ${names[0]}           ${a.toFixed(1)} ns`);
console.log(`  ${names[1]}  ${b.toFixed(1)} ns  (+${(b - a).toFixed(1)} ns per known-key lookup)`);

// New keys: each run begins and completes FRESH keys never seen (made before the timing).
const fresh = [];
for (let r = 0; r < 9; r++) {
  const batch = Array.from({ length: FRESH }, () => crypto.randomUUID());
  let bytes = new Uint8Array(core.wasmMemory().buffer, ptr, 4096);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < FRESH; i++) {
    if (bytes.byteLength === 0) bytes = new Uint8Array(core.wasmMemory().buffer, ptr, 4096); // memory grew: a new view, once
    const code = store.beginInput(encoder.encodeInto(batch[i], bytes).written, 0, 0);
    store.complete(Math.floor(code / 16), 0, 0);
  }
  fresh.push(Number(process.hrtime.bigint() - t0) / FRESH);
}
console.log(
  `  new key: encodeInto + beginInput + complete  ${median(fresh).toFixed(1)} ns  (median of 9 runs of ${FRESH.toLocaleString('en')}, the store growing from ${N.toLocaleString('en')} to ${(N + 9 * FRESH).toLocaleString('en')} records)`,
);
