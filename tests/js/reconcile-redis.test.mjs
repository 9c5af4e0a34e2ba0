// The unknown record's reconciliation metadata through the Redis store (the Lua script keeps it):
// attempts, lastAttemptAt and settleAfterMs survive the round trip, reconcile() defers a "failed"
// inside the window (judged when the lookup was asked, on Redis TIME), and a record whose owner's
// lease lapsed counts its window from the lease's end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRedisIdempotencyStore, reconcile, OutcomeUnknownError } from 'steadfast';
import { redisForTests } from '../shared/redis-server.mjs';

const redis = redisForTests();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('Redis: an unknown record keeps attempts, lastAttemptAt and settleAfterMs; reconcile honours them', async () => {
  const store = createRedisIdempotencyStore({ client: redis.conn.client, prefix: `meta-${Date.now()}` });
  const now = Date.now();
  await store.run('r-1', () => Promise.reject(new OutcomeUnknownError('r-1', now, { attempts: 3, lastAttemptAt: now, settleAfterMs: 60_000 }))).catch(() => {});
  const rec = await store.peek('r-1');
  assert.equal(rec?.status, 'unknown');
  assert.deepEqual([rec.attempts, rec.settleAfterMs], [3, 60_000]);
  // Kept in Redis time, from the attempt's age: never before the record's start, never after now.
  assert.ok(rec.lastAttemptAt >= rec.startedAt && rec.lastAttemptAt <= Date.now() + 5, `lastAttemptAt ${rec.lastAttemptAt}, startedAt ${rec.startedAt}`);
  const early = await reconcile(store, () => ({ status: 'failed' }));
  assert.equal(early.deferred, 1, 'inside its 60 s window');
  assert.equal((await store.peek('r-1'))?.status, 'unknown');
  const later = await reconcile(store, () => ({ status: 'failed' }), { clock: () => rec.lastAttemptAt + 60_001 });
  assert.equal(later.failed, 1);
  assert.equal(await store.peek('r-1'), undefined);
});

test('Redis: a "failed" answer is judged when the lookup was asked (Redis TIME): asked inside the window, answered after it, the key stays unknown', async () => {
  const store = createRedisIdempotencyStore({ client: redis.conn.client, prefix: `asked-${Date.now()}` });
  const windowMs = 300;
  const t0 = Date.now();
  await store.run('r-3', () => Promise.reject(new OutcomeUnknownError('r-3', t0, { attempts: 1, lastAttemptAt: t0, settleAfterMs: windowMs }))).catch(() => {});
  assert.equal((await store.peek('r-3'))?.status, 'unknown');
  await sleep(100); // ~200 ms of the window left
  const asked = [];
  // A slow listing: asked inside the window, it answers "no charge" ~400 ms later, past it. Its
  // answer covers only what the gateway knew when asked: a debit could still land after that.
  const slow = async () => {
    asked.push(Date.now() - t0);
    await sleep(400);
    return { status: 'failed' };
  };
  const early = await reconcile(store, slow);
  assert.equal(asked.length, 1);
  assert.ok(asked[0] < windowMs - 50, `the lookup was asked inside the window (${asked[0]} ms after the attempt): the test's premise`);
  assert.ok(Date.now() - t0 > windowMs + 50, 'and answered after it');
  assert.deepEqual(
    [early.checked, early.failed, early.deferred, early.stillUnknown, early.errors.length],
    [1, 0, 1, 0, 0],
    `deferred: the window was open when the lookup was asked: ${JSON.stringify(early)}`,
  );
  assert.ok(early.retryAfterMs > 0 && early.retryAfterMs <= windowMs, `retryAfterMs ${early.retryAfterMs}`);
  assert.equal((await store.peek('r-3'))?.status, 'unknown', 'not freed');
  // Asked after the window, the same answer frees the key.
  const later = await reconcile(store, () => ({ status: 'failed' }));
  assert.deepEqual([later.failed, later.deferred], [1, 0], JSON.stringify(later));
  assert.equal(await store.peek('r-3'), undefined);
});

test('Redis: a store clock (Redis TIME) that fails leaves a "failed" key unknown and reported, nothing freed', async () => {
  const store = createRedisIdempotencyStore({ client: redis.conn.client, prefix: `clockfail-${Date.now()}` });
  const t0 = Date.now() - 10_000;
  await store.run('r-4', () => Promise.reject(new OutcomeUnknownError('r-4', t0, { attempts: 1, lastAttemptAt: t0, settleAfterMs: 50 }))).catch(() => {});
  await sleep(60);
  const clockOf = Symbol.for('steadfast.storeClock');
  const real = store[clockOf];
  store[clockOf] = async () => {
    throw new Error('TIME unavailable');
  };
  try {
    const report = await reconcile(store, () => ({ status: 'failed' }));
    assert.deepEqual([report.failed, report.deferred, report.stillUnknown, report.errors.length], [0, 0, 1, 1], JSON.stringify(report));
    assert.equal(report.errors[0].error.message, 'TIME unavailable');
    assert.equal((await store.peek('r-4'))?.status, 'unknown');
  } finally {
    store[clockOf] = real;
  }
  assert.equal((await reconcile(store, () => ({ status: 'failed' }))).failed, 1, 'with its clock back, past the window');
});

test("Redis: a lapsed lease counts its settle window from the lease's end, not the start", async () => {
  const store = createRedisIdempotencyStore({ client: redis.conn.client, prefix: `lapse-${Date.now()}`, inFlightLeaseMs: 50 });
  let release;
  const hung = store.run('r-2', () => new Promise((ok) => (release = ok))); // the owner hangs mid-charge
  await new Promise((r) => setTimeout(r, 120));
  const [key] = await store.unknownKeys();
  assert.equal(key, 'r-2');
  const rec = await store.peek('r-2');
  assert.ok(rec.lastAttemptAt >= rec.startedAt + 50, `lastAttemptAt ${rec.lastAttemptAt} vs startedAt ${rec.startedAt}`);
  release('late');
  await hung;
});
