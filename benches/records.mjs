// Bytes per idempotency record, in memory and in Redis (README: Guarantees, limits). Run with
// `node --expose-gc benches/records.mjs [records] [redisRecords]` after `make build` and
// `scripts/install-tarball.sh` (imports the installed package by name, from tests/node_modules).
//
// Memory: N done records in one IdempotencyStore, each a UUID key, a fingerprint and a checkout-like
// result object; JS heap after GC and wasm linear memory (64 KiB pages), before and after, over N.
// Redis: M done and M unknown records through the real Lua script; INFO memory used_memory, over M.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

if (typeof globalThis.gc !== 'function') throw new Error('records.mjs needs node --expose-gc');
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(ROOT, 'tests', 'js', 'x.mjs'));
const pkgDir = dirname(require.resolve('steadfast/package.json'));
const steadfast = await import(pathToFileURL(join(pkgDir, 'index.node.js')).href);
const core = await import(pathToFileURL(join(pkgDir, 'steadfast_core.js')).href);
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
const memory = { records: store.size - 1, heapBytesPerRecord: Math.round((h1 - h0) / N), wasmBytesPerRecord: Math.round((w1 - w0) / N) };

let redis;
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
