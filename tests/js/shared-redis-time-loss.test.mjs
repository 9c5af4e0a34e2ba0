// The Redis idempotency store's times and its memory, as sequences against a real redis-server,
// counting what the gateway function executed per key:
// - every time a record keeps is Redis TIME, and reconcile() judges a settle window on Redis's
//   clock: a pod or a reconciler whose wall clock is 10 minutes off frees no key early;
// - Redis that goes back in time (a crash restored from an older RDB snapshot) is noticed by a
//   process that saw a later write, and the mark it leaves makes a process started afterwards
//   refuse too; so does an empty restart; RDB snapshots alone count as not durable;
// - a record that lost its status field is never taken for a free key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import { createCheckoutClient, createRedisIdempotencyStore, reconcile, OutcomeUnknownError, StoreAmnesiaError, StateStoreUnavailableError } from 'steadfast';
import { redisForTests, startRedis, connectClient, freePort } from '../shared/redis-server.mjs';

const redis = redisForTests();
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
let n = 0;
const fresh = (name) => `${name}-${process.pid}-${++n}`;
const quiet = { persistence: 'ignore', onWarning: () => {} };

/** What the gateway function executed, per key. */
function gatewayLedger() {
  const executed = new Map();
  return { executed, charge: (key) => executed.set(key, (executed.get(key) ?? 0) + 1) };
}

/** node-redis clients on `port`, made on demand and closed together. */
function clientsOn(port) {
  const conns = [];
  return {
    connect: async () => {
      const c = await connectClient('node-redis', port);
      conns.push(c);
      return c.client;
    },
    closeAll: async () => {
      for (const c of conns) await c.close();
    },
  };
}

/** A charge of `key` through `store` that the ledger counts, answering `charged <key>`. */
const payer =
  (charge, fingerprint = '4999 usd') =>
  (store, key) =>
    store.run(
      key,
      async () => {
        charge(key);
        return `charged ${key}`;
      },
      { fingerprint },
    );

/** `fn()` with this process's wall clock (Date.now) `skewMs` off; the monotonic clock untouched. */
async function withClockSkew(skewMs, fn) {
  const real = Date.now;
  Date.now = () => real.call(Date) + skewMs;
  try {
    return await fn();
  } finally {
    Date.now = real;
  }
}

const timeout = () => Object.assign(new Error('attempt timed out'), { name: 'TimeoutError' });

test('a pod whose clock is 10 minutes behind parks a key: a reconciler on a correct clock still waits out its settle window', async () => {
  const prefix = fresh('skew-behind');
  const { executed, charge } = gatewayLedger();
  const podA = createRedisIdempotencyStore({ client: redis.conn.client, prefix, ...quiet });
  const reconciler = createRedisIdempotencyStore({ client: redis.conn.client, prefix, ...quiet });
  // Pod A: the request reaches the gateway, the answer never comes.
  const parked = await withClockSkew(-600_000, () =>
    podA
      .run(
        'order-1',
        async () => {
          charge('order-1');
          throw timeout();
        },
        { fingerprint: '4999 usd', settleAfterMs: 10_000 },
      )
      .catch((e) => e),
  );
  assert.ok(parked instanceof OutcomeUnknownError, `pod A parked the key: ${parked}`);
  const record = await reconciler.peek('order-1');
  assert.equal(record.status, 'unknown');
  assert.ok(Math.abs(record.lastAttemptAt - Date.now()) < 5_000, `the last attempt is kept in Redis time (${record.lastAttemptAt - Date.now()} ms off)`);
  // The gateway has not debited yet: its listing says "no charge", inside the 10 s window.
  const report = await reconcile(reconciler, () => ({ status: 'failed' }));
  assert.deepEqual([report.failed, report.deferred], [0, 1], `a failed answer inside the window is deferred: ${JSON.stringify(report)}`);
  // The customer clicks again with the same key.
  await assert.rejects(payer(charge, '4999 usd')(reconciler, 'order-1'), (e) => e instanceof OutcomeUnknownError && e.code === 'OUTCOME_UNKNOWN');
  assert.deepEqual([...executed], [['order-1', 1]]);
});

test("a reconciler whose clock is 10 minutes ahead does not settle a lapsed lease inside its window: it judges on Redis's clock", async () => {
  const prefix = fresh('skew-ahead');
  const { executed, charge } = gatewayLedger();
  const podA = createRedisIdempotencyStore({ client: redis.conn.client, prefix, inFlightLeaseMs: 300, ...quiet });
  const reconciler = createRedisIdempotencyStore({ client: redis.conn.client, prefix, inFlightLeaseMs: 300, ...quiet });
  let release;
  // Pod A hangs mid-charge (its request is at the gateway); its lease lapses to unknown.
  const hung = podA.run(
    'order-1',
    () => {
      charge('order-1');
      return new Promise((ok) => (release = ok));
    },
    { fingerprint: 'fp' },
  );
  await sleep(500);
  const report = await withClockSkew(600_000, () => reconcile(reconciler, () => ({ status: 'failed' })));
  assert.deepEqual([report.checked, report.failed, report.deferred], [1, 0, 1], `deferred, inside the default 120 s window: ${JSON.stringify(report)}`);
  assert.ok(report.retryAfterMs > 100_000, `retry after the window, on Redis's clock: ${report.retryAfterMs}`);
  await assert.rejects(payer(charge, 'fp')(reconciler, 'order-1'), OutcomeUnknownError);
  // A clock given to reconcile() still replaces the store's (tests pass one).
  const forced = await reconcile(reconciler, () => ({ status: 'failed' }), { clock: () => Date.now() + 600_000 });
  assert.equal(forced.failed, 1);
  release('late');
  await hung;
  assert.deepEqual([...executed], [['order-1', 1]]);
});

test("the checkout client's reconcile() judges a Redis record's settle window on Redis's clock: a client 10 minutes ahead frees nothing", async () => {
  // The gateway debits the first POST and drops its answer; every later one is declined (402) by
  // something that knows nothing of it: inside the settle window that decline proves nothing.
  const debits = new Map();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const key = req.headers['idempotency-key'];
      if (!debits.has(key)) {
        debits.set(key, 1);
        req.socket.destroy();
        return;
      }
      res.writeHead(402, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'card_error', decline_code: 'insufficient_funds' } }));
    });
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  try {
    const store = createRedisIdempotencyStore({ client: redis.conn.client, prefix: fresh('checkout-skew'), ...quiet });
    const options = { endpoint: `http://127.0.0.1:${server.address().port}/v1/charges`, store, breaker: false, retry: { maxAttempts: 1 } };
    const cart = { amountCents: 4999, currency: 'usd' };
    const first = await createCheckoutClient(options).charge(cart);
    assert.equal(first.status, 'unknown');
    // A client on a clock 10 minutes ahead reconciles inside the 120 s window.
    const again = await withClockSkew(600_000, () => createCheckoutClient(options).reconcile(first.key, cart));
    assert.equal(again.status, 'unknown', `the decline inside the window settles nothing: ${JSON.stringify(again)}`);
    assert.equal((await store.peek(first.key))?.status, 'unknown', 'the key stays parked');
    assert.equal(debits.get(first.key), 1);
  } finally {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  }
});

test('a record that lost its status field is never free: refused as unknown, listed, and settled by reconciliation', async () => {
  const prefix = fresh('no-status');
  const { executed, charge } = gatewayLedger();
  const store = createRedisIdempotencyStore({ client: redis.conn.client, prefix, buckets: 1, ...quiet });
  const run = () =>
    store.run(
      'order-1',
      async () => {
        charge('order-1');
        return { id: 'ch_1' };
      },
      { fingerprint: '4999 usd' },
    );
  assert.deepEqual(await run(), { id: 'ch_1' });
  const rk = `${prefix}:{idem:0}:r:order-1`;
  await redis.conn.client.sendCommand(['HDEL', rk, 'st']);
  await assert.rejects(run(), (e) => e instanceof OutcomeUnknownError && e.code === 'OUTCOME_UNKNOWN' && e.name === 'OutcomeUnknownError');
  await assert.rejects(run(), OutcomeUnknownError, 'still refused');
  assert.deepEqual(await store.unknownKeys(), ['order-1'], 'listed for reconciliation');
  await redis.conn.client.sendCommand(['HSET', rk, 'st', 'Q']);
  await assert.rejects(run(), OutcomeUnknownError, 'a status it never writes: the same');
  const report = await reconcile(store, () => ({ status: 'done', result: { id: 'ch_1' } }));
  assert.equal(report.done, 1);
  assert.deepEqual(await run(), { id: 'ch_1' }, 'replayed');
  assert.deepEqual([...executed], [['order-1', 1]]);
});

test("RDB snapshots alone are not durable: refused with persistence: 'refuse', reported once by default", async () => {
  const cmd = (...args) => redis.conn.client.sendCommand(args.map(String));
  await cmd('CONFIG', 'SET', 'save', '3600 1');
  try {
    let ran = false;
    await assert.rejects(
      createRedisIdempotencyStore({ client: redis.conn.client, prefix: fresh('rdb'), persistence: 'refuse' }).run('k', async () => (ran = true)),
      (e) => e instanceof StateStoreUnavailableError && e.code === 'STORE_UNAVAILABLE' && e.op === 'persistence' && /RDB snapshots/.test(e.message),
    );
    assert.equal(ran, false);
    const warnings = [];
    const store = createRedisIdempotencyStore({ client: redis.conn.client, prefix: fresh('rdb'), onWarning: (m) => warnings.push(m) });
    await store.run('a', async () => 1);
    await store.run('b', async () => 1);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /RDB snapshots \(save\) but no AOF/);
  } finally {
    await cmd('CONFIG', 'SET', 'save', '');
  }
});

/** A redis-server on `port` keeping its data in `dir` (RDB `save 3600 1`, no AOF). */
const startSnapshotting = (port, dir) => startRedis({ port, args: ['--save', '3600 1', '--dir', dir, '--dbfilename', 'dump.rdb'] });
async function untilAnswers(client) {
  for (let i = 0; ; i++) {
    try {
      if ((await client.sendCommand(['PING'])) === 'PONG') return;
    } catch {
      // reconnecting, or loading the snapshot
    }
    if (i > 250) throw new Error('redis did not come back');
    await sleep(20);
  }
}

test(
  'a crash that restores an older RDB snapshot is noticed (StoreAmnesiaError) by a pod that saw a later write, and by a pod started afterwards',
  { timeout: 60_000 },
  async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'steadfast-rdb-'));
    let server = await startSnapshotting(port, dir);
    const { connect, closeAll } = clientsOn(port);
    try {
      const { executed, charge } = gatewayLedger();
      const prefix = 'shop';
      const a = await connect();
      const podA = createRedisIdempotencyStore({ client: a, prefix, ...quiet });
      const pay = payer(charge);
      assert.equal(await pay(podA, 'order-old'), 'charged order-old');
      await a.sendCommand(['SAVE']); // the periodic snapshot
      assert.equal(await pay(podA, 'order-new'), 'charged order-new');
      assert.equal(await pay(podA, 'order-new'), 'charged order-new', 'replayed');
      await server.stop('SIGKILL'); // the crash: order-new's record was written after the snapshot
      server = await startSnapshotting(port, dir);
      await untilAnswers(a);
      assert.equal(await a.sendCommand(['EXISTS', `${prefix}:{idem:0}:epoch`]), 1, "the snapshot restored the store's epoch markers");
      const amnesic = (e) => e instanceof StoreAmnesiaError && e.code === 'STORE_AMNESIA' && e.name === 'StoreAmnesiaError';
      await assert.rejects(pay(podA, 'order-new'), amnesic, 'pod A saw a later write: Redis went back in time');
      await assert.rejects(pay(podA, 'order-old'), amnesic, 'refused on every bucket');
      const podB = createRedisIdempotencyStore({ client: await connect(), prefix, onWarning: () => {} });
      await assert.rejects(pay(podB, 'order-new'), amnesic, 'a pod started after the crash refuses too: pod A marked the store');
      await assert.rejects(podB.unknownKeys(), amnesic);
      assert.deepEqual(
        [...executed],
        [
          ['order-old', 1],
          ['order-new', 1],
        ],
      );
      // The operator settles what was lost, then acknowledges: every pod accepts calls again.
      await podB.acknowledgeAmnesia();
      assert.equal(await pay(podB, 'order-next'), 'charged order-next');
      await sleep(1100); // a latched process looks again at most once a second
      assert.equal(await pay(podA, 'order-next'), 'charged order-next', 'replayed: pod A adopted the acknowledgement');
      assert.equal(executed.get('order-next'), 1);
    } finally {
      await closeAll();
      await server.stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'after an empty restart, a pod started afterwards (firstUse: initialize) refuses too: the pod that found the loss marked the store',
  { timeout: 60_000 },
  async () => {
    const port = await freePort();
    let server = await startRedis({ port });
    const { connect, closeAll } = clientsOn(port);
    try {
      const { executed, charge } = gatewayLedger();
      const prefix = 'shop';
      const pay = payer(charge);
      const a = await connect();
      const podA = createRedisIdempotencyStore({ client: a, prefix, ...quiet });
      assert.equal(await pay(podA, 'order-1'), 'charged order-1');
      assert.equal(await pay(podA, 'order-1'), 'charged order-1', 'replayed');
      await server.stop('SIGKILL');
      server = await startRedis({ port }); // no persistence: everything is gone
      await untilAnswers(a);
      await assert.rejects(pay(podA, 'order-1'), StoreAmnesiaError, 'pod A knew the epoch');
      const podB = createRedisIdempotencyStore({ client: await connect(), prefix, ...quiet });
      await assert.rejects(
        pay(podB, 'order-1'),
        (e) => e instanceof StoreAmnesiaError && e.code === 'STORE_AMNESIA',
        'a pod started after the restart refuses',
      );
      const podC = createRedisIdempotencyStore({ client: await connect(), prefix, firstUse: 'initialize', ...quiet });
      await assert.rejects(podC.peek('order-1'), StoreAmnesiaError);
      assert.deepEqual([...executed], [['order-1', 1]]);
      assert.deepEqual(await podB.acknowledgeAmnesia(), { generation: 2 });
      assert.equal(await pay(podC, 'order-2'), 'charged order-2', 'acknowledged: every pod runs again');
    } finally {
      await closeAll();
      await server.stop('SIGKILL');
    }
  },
);
