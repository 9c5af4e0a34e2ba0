// What the core's key index costs per lookup against the JS Map it replaced (issue 15, target 1):
// `StoreCore.slotOf(key)` (the key string copied into wasm, SipHash-2-4-128, one table probe) vs
// `Map.get(key)` (V8's cached string hash), over the same known keys, interleaved, medians. A
// replay pays this difference on every call; a new key pays the Map's insert and the key string's
// life on the JS heap instead, which case 3b (store.mjs) measures.
//
//   node benches/key-index.mjs [keys = 100000]    (after `make build`; reinstalls the tarball)
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { INSTALLED, installTarball, median } from './common.mjs';

installTarball();
const core = await import(pathToFileURL(join(INSTALLED, 'steadfast_core.js')).href);
core.initSync({ module: readFileSync(join(INSTALLED, 'steadfast_core_bg.wasm')) });

const N = Number(process.argv[2] ?? 100_000);
const CALLS = 1_000_000;
const keys = Array.from({ length: N }, () => crypto.randomUUID());
const store = new core.StoreCore(undefined, N);
const map = new Map();
for (let i = 0; i < N; i++) {
  const slot = Math.floor(store.begin(keys[i], NaN, 0, 0, 0, 0) / 16);
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
