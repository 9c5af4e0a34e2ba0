// The Redis idempotency store's times and its memory, as sequences against a real redis-server,
// counting what the gateway function executed per key:
// - every time a record keeps is Redis TIME, and reconcile() judges a settle window on Redis's
//   clock: a pod or a reconciler whose wall clock is 10 minutes off frees no key early;
// - Redis that goes back in time (a crash restored from an older RDB snapshot) is noticed by a
//   process that saw a later write, and the mark it leaves makes a process started afterwards
//   refuse too; so does an empty restart; RDB snapshots alone count as not durable;
// - a record that lost its status field is never taken for a free key;
// - a rollback hidden by later writes (processes started after the restore write the counter past
//   the value a process saw) is noticed by that process: the write at its counter is another one;
//   an owner's completion across it still parks its lost record; and processes writing the same
//   buckets concurrently never take each other's writes for a rollback.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import {
  createCheckoutClient,
  createRedisIdempotencyStore,
  reconcile,
  DuplicateRequestError,
  OutcomeUnknownError,
  StoreAmnesiaError,
  StateStoreUnavailableError,
} from 'steadfast';
import { redisForTests, startRedis, connectClient, freePort } from '../shared/redis-server.mjs';
import { rng } from '../support/rng.mjs';

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

/**
 * `body({ connect, crash })` against a redis-server that snapshots to a directory of its own, on a
 * free port: `connect()` gives a client, `crash()` kills the server (SIGKILL) and starts it again on
 * the same port and snapshot. Everything is closed and removed afterwards.
 */
async function withSnapshottingRedis(body) {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'steadfast-rdb-'));
  let server = await startSnapshotting(port, dir);
  const { connect, closeAll } = clientsOn(port);
  const crash = async () => {
    await server.stop('SIGKILL');
    server = await startSnapshotting(port, dir);
  };
  try {
    return await body({ connect, crash });
  } finally {
    await closeAll();
    await server.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

test(
  'a crash that restores an older RDB snapshot is noticed (StoreAmnesiaError) by a pod that saw a later write, and by a pod started afterwards',
  { timeout: 60_000 },
  async () => {
    await withSnapshottingRedis(async ({ connect, crash }) => {
      const { executed, charge } = gatewayLedger();
      const prefix = 'shop';
      const a = await connect();
      const podA = createRedisIdempotencyStore({ client: a, prefix, ...quiet });
      const pay = payer(charge);
      assert.equal(await pay(podA, 'order-old'), 'charged order-old');
      await a.sendCommand(['SAVE']); // the periodic snapshot
      assert.equal(await pay(podA, 'order-new'), 'charged order-new');
      assert.equal(await pay(podA, 'order-new'), 'charged order-new', 'replayed');
      await crash(); // the crash: order-new's record was written after the snapshot
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
    });
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

/** A bucket's write counter (`:seq`), as a number (0 when it has none). */
const counterOf = async (client, prefix, b = 0) => Number((await client.sendCommand(['GET', `${prefix}:{idem:${b}}:seq`])) ?? 0);

test(
  'a rollback hidden by later writes is noticed: Redis restored from an older snapshot, then written past the counter a pod saw by a pod started afterwards',
  { timeout: 60_000 },
  async () => {
    await withSnapshottingRedis(async ({ connect, crash }) => {
      const { executed, charge } = gatewayLedger();
      const prefix = 'shop';
      const pay = payer(charge);
      // One bucket: every write below moves the one counter the pods compare.
      const opts = { prefix, buckets: 1, ...quiet };
      const a = await connect();
      const podA = createRedisIdempotencyStore({ client: a, ...opts });
      assert.equal(await pay(podA, 'order-old'), 'charged order-old');
      await a.sendCommand(['SAVE']); // the periodic snapshot
      for (let i = 0; i < 10; i++) assert.equal(await pay(podA, `order-new-${i}`), `charged order-new-${i}`);
      assert.equal(await pay(podA, 'order-new-9'), 'charged order-new-9', 'replayed (a read: pod A learns the counter it leaves)');
      const seenByA = await counterOf(a, prefix);
      await crash(); // the crash: the ten order-new records were written after the snapshot
      await untilAnswers(a);
      const restored = await counterOf(a, prefix);
      assert.ok(restored < seenByA, `the snapshot's counter (${restored}) is below what pod A saw (${seenByA})`);
      // A pod started after the restore knows nothing of the lost writes and charges new orders:
      // the counter climbs past what pod A saw. The height alone can no longer tell.
      const podB = createRedisIdempotencyStore({ client: await connect(), ...opts });
      for (let i = 0; i < 15; i++) assert.equal(await pay(podB, `order-b-${i}`), `charged order-b-${i}`);
      assert.ok((await counterOf(a, prefix)) > seenByA, 'the counter is above what pod A saw again');
      const amnesic = (e) => e instanceof StoreAmnesiaError && e.code === 'STORE_AMNESIA' && e.name === 'StoreAmnesiaError';
      // Pod A retries an order charged after the snapshot: its record is gone, and the write at the
      // counter pod A saw is pod B's, not the one pod A saw. Refused, nothing runs.
      await assert.rejects(
        pay(podA, 'order-new-3'),
        (e) => amnesic(e) && /is not the one this process saw/.test(e.message),
        'pod A: the write at the counter it saw was replaced',
      );
      await assert.rejects(pay(podA, 'order-old'), amnesic, 'latched: every call of pod A is refused');
      // The mark pod A left: pod B, which saw nothing wrong, refuses too, and so does a pod started now.
      await assert.rejects(pay(podB, 'order-b-0'), amnesic, 'pod B refuses: pod A marked the store');
      const podC = createRedisIdempotencyStore({ client: await connect(), ...opts });
      await assert.rejects(pay(podC, 'order-new-3'), amnesic, 'a pod started afterwards refuses');
      await assert.rejects(podC.unknownKeys(), amnesic);
      assert.equal(executed.get('order-new-3'), 1, 'the lost order ran once');
      assert.equal(executed.size, 1 + 10 + 15);
      // Reconciled against the gateway, acknowledged: every pod runs again, its counters afresh.
      assert.deepEqual(await podC.acknowledgeAmnesia(), { generation: 2 });
      assert.equal(await pay(podC, 'order-next'), 'charged order-next');
      await sleep(1100); // a latched process looks again at most once a second
      assert.equal(await pay(podA, 'order-next'), 'charged order-next', 'replayed: pod A adopted the acknowledgement');
      assert.equal(await pay(podB, 'order-next'), 'charged order-next', 'replayed: pod B too');
      for (let i = 0; i < 5; i++) await pay([podA, podB, podC][i % 3], `order-after-${i}`);
      assert.equal(executed.get('order-next'), 1);
    });
  },
);

test(
  "an owner's completion across a hidden rollback still lands (its lost record is parked as unknown), and its pod refuses from then on",
  { timeout: 60_000 },
  async () => {
    await withSnapshottingRedis(async ({ connect, crash }) => {
      const { executed, charge } = gatewayLedger();
      const prefix = 'shop';
      const pay = payer(charge);
      const late = [];
      const opts = { prefix, buckets: 1, ...quiet };
      const a = await connect();
      const podA = createRedisIdempotencyStore({ client: a, ...opts, onLateCompletion: (e) => late.push(e) });
      assert.equal(await pay(podA, 'order-old'), 'charged order-old');
      await a.sendCommand(['SAVE']);
      assert.equal(await pay(podA, 'order-2'), 'charged order-2');
      // Pod A's charge of order-hung is at the gateway when Redis crashes.
      let release;
      let started;
      const atGateway = new Promise((ok) => (started = ok));
      const hung = podA.run(
        'order-hung',
        () => {
          charge('order-hung');
          started();
          return new Promise((ok) => (release = ok));
        },
        { fingerprint: '4999 usd' },
      );
      await atGateway;
      await crash();
      await untilAnswers(a);
      const podB = createRedisIdempotencyStore({ client: await connect(), ...opts });
      for (let i = 0; i < 6; i++) await pay(podB, `order-b-${i}`);
      // The gateway answers: pod A's completion still runs, and parks the record that is gone.
      release('charged order-hung');
      assert.equal(await hung, 'charged order-hung', "the owner's result is returned");
      const rk = `${prefix}:{idem:0}:r:order-hung`;
      assert.equal(await a.sendCommand(['HGET', rk, 'st']), 'u', 'parked as unknown');
      assert.match(await a.sendCommand(['HGET', rk, 'err']), /late owner completion \(done\)/);
      assert.deepEqual(late, [{ key: 'order-hung', outcome: 'done' }], 'reported as a late completion');
      // Its answer told pod A of the rollback: order-2 (lost) is refused, not charged again.
      await assert.rejects(pay(podA, 'order-2'), StoreAmnesiaError);
      await assert.rejects(pay(podB, 'order-b-0'), StoreAmnesiaError, 'and every pod, by the mark pod A left');
      assert.deepEqual([executed.get('order-2'), executed.get('order-hung')], [1, 1]);
      await podB.acknowledgeAmnesia();
      assert.equal(await pay(podB, 'order-3'), 'charged order-3');
    });
  },
);

test(
  'no false alarm: six processes (node-redis and ioredis) writing the same two buckets at once, thousands of calls, never refuse',
  { timeout: 120_000 },
  async (t) => {
    const prefix = fresh('ring-busy');
    const conns = await Promise.all(
      ['node-redis', 'ioredis', 'node-redis', 'ioredis', 'node-redis', 'ioredis'].map((kind) => connectClient(kind, redis.server.port)),
    );
    try {
      const debits = new Map();
      // A short lease for half of them: other processes' begins, peeks and listings lapse records
      // (reads that write), and owners complete after their lease.
      const stores = conns.map(({ client }, i) =>
        createRedisIdempotencyStore({ client, prefix, buckets: 2, timeoutMs: 5000, inFlightLeaseMs: i % 2 === 0 ? 20 : 60_000, ...quiet }),
      );
      const unexpected = [];
      const counts = { calls: 0, run: 0, replay: 0, refusedDuplicate: 0, refusedUnknown: 0, peek: 0, reconcile: 0 };
      const lookup = async (k) => (debits.has(k) ? { status: 'done', result: `charged ${k}` } : { status: 'failed' });
      const worker = async (store, seed) => {
        const r = rng(seed);
        for (let i = 0; i < 70; i++) {
          // A few hot keys every process races on (duplicates, replays, reconciliation), the rest new.
          const key = r() < 0.3 ? `hot-${Math.floor(r() * 20)}` : `new-${seed}-${i}`;
          const what = r();
          try {
            counts.calls += 1;
            if (what < 0.08) {
              await reconcile(store, lookup, { settleAfterMs: 0 });
              counts.reconcile += 1;
            } else if (what < 0.25) {
              await store.peek(key);
              counts.peek += 1;
            } else {
              const fail = r() < 0.15;
              const slow = r() < 0.2;
              let ran = false;
              const got = await store.run(
                key,
                async () => {
                  ran = true;
                  if (slow) await sleep(30);
                  debits.set(key, (debits.get(key) ?? 0) + 1);
                  if (fail) throw Object.assign(new Error('ETIMEDOUT'), { code: 'ETIMEDOUT' });
                  return `charged ${key}`;
                },
                { fingerprint: '4999 usd', settleAfterMs: 0 },
              );
              assert.equal(got, `charged ${key}`);
              counts[ran ? 'run' : 'replay'] += 1;
            }
          } catch (e) {
            if (e instanceof DuplicateRequestError) counts.refusedDuplicate += 1;
            else if (e instanceof OutcomeUnknownError) counts.refusedUnknown += 1;
            else unexpected.push(e);
          }
        }
      };
      await Promise.all(stores.flatMap((store, i) => Array.from({ length: 8 }, (_, w) => worker(store, 1 + i * 100 + w))));
      const writes = (await counterOf(redis.conn.client, prefix, 0)) + (await counterOf(redis.conn.client, prefix, 1));
      assert.deepEqual(
        unexpected.map((e) => `${e.name}: ${e.message}`),
        [],
        'no StoreAmnesiaError, no store error',
      );
      assert.ok(writes > 4000, `thousands of writes on the two buckets (${writes})`);
      for (const b of [0, 1]) {
        assert.equal(Number(await redis.conn.client.sendCommand(['HLEN', `${prefix}:{idem:${b}}:ring`])), 64, `bucket ${b}'s ring is bounded`);
      }
      // Still healthy afterwards, in every process.
      await Promise.all(stores.map((s, i) => s.run(`after-${i}`, async () => 'ok')));
      t.diagnostic(`${writes} writes, ${JSON.stringify(counts)}`);
    } finally {
      for (const c of conns) await c.close();
    }
  },
);
