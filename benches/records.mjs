// Bytes per idempotency record, in memory and in Redis (docs/guarantees.md, "Bytes per record":
// `make bench` runs this file twice, `records.mjs 100000 20000` and `records.mjs 1000000 0`, and
// writes the figures there). Alone: `node --expose-gc benches/records.mjs [records] [redisRecords]`
// after `make build` (imports the package from benches/node_modules, installed from the tarball).
// Prints one JSON line.
//
// Memory: N done records in one IdempotencyStore, each a UUID key, a fingerprint and a checkout-like
// result object; JS heap after GC and wasm linear memory (64 KiB pages), before and after, over N.
// Then 2,000 small stores of 3 records each, all kept alive: bytes per store.
// Redis: M done and M unknown records through the real Lua script; INFO memory used_memory, over M
// (M = 0: Redis is not measured).
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { INSTALLED, ROOT, installTarball } from './common.mjs';

if (typeof globalThis.gc !== 'function') throw new Error('records.mjs needs node --expose-gc');
installTarball();
const steadfast = await import(pathToFileURL(join(INSTALLED, 'index.node.js')).href);
const core = await import(pathToFileURL(join(INSTALLED, 'steadfast_core.js')).href);
core.initSync();
const wasmMemory = core.wasmMemory();
const wasm = () => wasmMemory.buffer.byteLength;
const { IdempotencyStore, newIdempotencyKey, createRedisIdempotencyStore } = steadfast;

const N = Number(process.argv[2] ?? 100_000);
const M = Number(process.argv[3] ?? 20_000);
const heap = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};

// Small stores, first (so no larger store's freed memory is reused by them): a store per request
// or per test, each holding a few records, all kept alive to the end (the garbage collector does
// not see wasm memory, so dropped ones can pile up as if they were).
const SMALL = 2_000;
const SMALL_RECORDS = 3;
const small = [];
await new IdempotencyStore().run('warm-up', async () => 1); // the shell's one-time set-up is not a store's
const hs = heap();
const ws = wasm();
for (let i = 0; i < SMALL; i++) {
  const s = new IdempotencyStore();
  for (let k = 0; k < SMALL_RECORDS; k++) await s.run(`small-${i}-${k}`, async () => ({ status: 'succeeded', reference: `ch_${k}` }));
  small.push(s);
}
const smallStores = {
  stores: small.length,
  records: SMALL_RECORDS,
  heapBytesPerStore: Math.round((heap() - hs) / SMALL),
  wasmBytesPerStore: Math.round((wasm() - ws) / SMALL),
};

// Memory: keys and results are made before the baseline, so what is counted is the store's own cost
// (index entry, slot arrays, wasm record) plus the result it keeps alive.
const keys = Array.from({ length: N }, () => newIdempotencyKey());
const store = new IdempotencyStore({ maxRecords: N + 1 });
await store.run('warm-up', async () => 1, { fingerprint: 'x' });
const h0 = heap();
const w0 = wasm();
for (let i = 0; i < N; i++) {
  const key = keys[i];
  await store.run(key, async () => ({ status: 'succeeded', reference: `ch_${i}`, key }), { fingerprint: `{"amountCents":${1000 + i},"currency":"usd"}` });
}
const h1 = heap();
const w1 = wasm();
// `store` is used below: otherwise V8 may collect it before h1 and the heap figure is of nothing.
const memory = {
  records: store.size - 1,
  defaultMaxRecords: new IdempotencyStore().maxRecords,
  heapBytesPerRecord: Math.round((h1 - h0) / N),
  wasmBytesPerRecord: Math.round((w1 - w0) / N),
  // Read here so that the small stores stay alive until the figures above are taken.
  smallStores: { ...smallStores, alive: small.length },
};

let redis;
if (M === 0) redis = { skipped: 'not measured (redisRecords 0)' };
else
  try {
    const { startRedis, connectClient } = await import(pathToFileURL(join(ROOT, 'tests', 'shared', 'redis-server.mjs')).href);
    const server = await startRedis();
    const { client, close } = await connectClient('node-redis', server.port);
    const used = async () => Number(String(await client.sendCommand(['INFO', 'memory'])).match(/used_memory:(\d+)/)[1]);
    const shared = createRedisIdempotencyStore({ client, prefix: 'bench', timeoutMs: 10_000, maxRecords: 2 ** 30 });
    await shared.run('warm-up', async () => 1);
    const measure = async (make) => {
      const before = await used();
      for (let i = 0; i < M; i += 100) await Promise.all(Array.from({ length: Math.min(100, M - i) }, (_, j) => make(i + j)));
      return Math.round(((await used()) - before) / M);
    };
    const done = await measure((i) =>
      shared.run(`done-${keys[i]}`, async () => ({ status: 'succeeded', reference: `ch_${i}`, key: keys[i] }), {
        fingerprint: `{"amountCents":${1000 + i},"currency":"usd"}`,
      }),
    );
    const unknown = await measure((i) =>
      shared
        .run(`unknown-${keys[i]}`, async () => Promise.reject(Object.assign(new Error('ETIMEDOUT'), { code: 'ETIMEDOUT' })), {
          fingerprint: `{"amountCents":${1000 + i},"currency":"usd"}`,
        })
        .catch(() => {}),
    );
    redis = { records: M, doneBytesPerRecord: done, unknownBytesPerRecord: unknown };
    await close();
    await server.stop();
  } catch (error) {
    redis = { skipped: String(error?.message ?? error) };
  }
console.log(JSON.stringify({ memory, redis }));
