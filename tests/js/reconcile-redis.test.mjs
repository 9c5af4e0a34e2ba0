// The unknown record's reconciliation metadata through the Redis store (the Lua script keeps it):
// attempts, lastAttemptAt and settleAfterMs survive the round trip, reconcile() defers a "failed"
// inside the window, and a record whose owner's lease lapsed counts its window from the lease's end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRedisIdempotencyStore, reconcile, OutcomeUnknownError } from 'steadfast';
import { redisForTests } from '../shared/redis-server.mjs';

const redis = redisForTests();

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
