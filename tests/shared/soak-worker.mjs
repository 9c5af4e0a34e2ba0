// One process of the Redis soak tests (tests/js/shared-redis-cluster.test.mjs,
// shared-redis-failover.test.mjs): its own client (STEADFAST_ADAPTER: 'ioredis', 'node-redis',
// 'ioredis-cluster', 'node-redis-cluster'), its own idempotency store, charges against the parent's
// ledger (the "gateway": it debits, and sometimes times out after debiting), driven over IPC.
import { createRedisIdempotencyStore, createRedisBreaker } from 'steadfast';

const adapter = process.env.STEADFAST_ADAPTER;
const seeds = JSON.parse(process.env.STEADFAST_SEEDS); // [{ host, port }]
const ledger = Number(process.env.STEADFAST_LEDGER);
const options = JSON.parse(process.env.STEADFAST_OPTIONS ?? '{}');
const quiet = () => {};
let client;
if (adapter === 'ioredis-cluster') {
  const { Cluster } = await import('ioredis');
  client = new Cluster(seeds, { redisOptions: { maxRetriesPerRequest: 1 }, clusterRetryStrategy: () => 100, enableOfflineQueue: true });
  client.on('error', quiet);
  await new Promise((ok) => client.once('ready', ok));
} else if (adapter === 'node-redis-cluster') {
  const { createCluster } = await import('redis');
  client = createCluster({
    rootNodes: seeds.map((s) => ({ url: `redis://${s.host}:${s.port}` })),
    defaults: { socket: { reconnectStrategy: () => 100, connectTimeout: 500 } },
  });
  client.on('error', quiet);
  await client.connect();
} else if (adapter === 'ioredis') {
  const { Redis } = await import('ioredis');
  client = new Redis({ ...seeds[0], maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  client.on('error', quiet);
} else {
  const { createClient } = await import('redis');
  client = createClient({ url: `redis://${seeds[0].host}:${seeds[0].port}`, socket: { reconnectStrategy: () => 50, connectTimeout: 500 } });
  client.on('error', quiet);
  await client.connect();
}
const store = createRedisIdempotencyStore({ client, persistence: 'ignore', ...options });
const gateway = async (key) => {
  const r = await fetch(`http://127.0.0.1:${ledger}/debit?key=${encodeURIComponent(key)}`, { method: 'POST' });
  if (r.status === 504) throw Object.assign(new Error('ETIMEDOUT'), { code: 'ETIMEDOUT' });
  return r.text();
};
const describe = (e) => ({ name: e?.name, code: e?.code, message: String(e?.message ?? e) });
const commands = {
  /** Charge every key once, `gapMs` apart; per key { ok } or { code, name }. Also the ms each charge took. */
  async charge({ keys, gapMs = 0 }) {
    const out = {};
    const ms = [];
    await Promise.all(
      keys.map(async (key, i) => {
        await new Promise((ok) => setTimeout(ok, i * gapMs));
        const t0 = performance.now();
        try {
          out[key] = { ok: await store.run(key, () => gateway(key)) };
          ms.push(performance.now() - t0);
        } catch (e) {
          out[key] = describe(e);
        }
      }),
    );
    return { out, ms };
  },
  /** One charge at a time: what a charge costs alone. */
  async chargeEach({ keys }) {
    const ms = [];
    for (const key of keys) {
      const t0 = performance.now();
      await store.run(key, () => gateway(key));
      ms.push(performance.now() - t0);
    }
    return { ms };
  },
  async peek({ keys }) {
    const out = {};
    for (const key of keys) {
      try {
        out[key] = (await store.peek(key))?.status ?? 'none';
      } catch (e) {
        out[key] = describe(e).code;
      }
    }
    return out;
  },
  unknownKeys: () => store.unknownKeys(),
  acknowledge: () => store.acknowledgeAmnesia(),
  async breaker({ name, op }) {
    const b = createRedisBreaker({ client, persistence: 'ignore', ...options, name, failureThreshold: 2, openDurationMs: 60_000, whenUnavailable: 'reject' });
    if (op === 'fail') {
      for (let i = 0; i < 2; i++) await b.execute(() => Promise.reject(new Error('down'))).catch(() => {});
    }
    return b.state();
  },
};
process.on('message', async ({ id, cmd, args }) => {
  try {
    process.send({ id, result: await commands[cmd](args ?? {}) });
  } catch (e) {
    process.send({ id, error: describe(e) });
  }
});
process.send({ event: 'ready' });
