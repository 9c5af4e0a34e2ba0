// The Redis store's scale options on one node: the reconciliation list resumes after a failed page
// (never restarts), records under the earlier single-slot layout or another bucket count are not
// silently forgotten (the store refuses), persistence is checked like the eviction policy, bad
// options are named, and a script flushed from Redis is sent again by EVAL (no SCRIPT LOAD).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRedisIdempotencyStore, redisStateStore, SharedIdempotencyStore, StateStoreUnavailableError, StoreAmnesiaError } from 'steadfast';
import { redisForTests } from '../shared/redis-server.mjs';

const redis = redisForTests();
const cmd = (...args) => redis.conn.client.sendCommand(args.map(String));
let n = 0;
const fresh = () => `scale${++n}`;
const timeout = () => Object.assign(new Error('ETIMEDOUT'), { code: 'ETIMEDOUT' });

/** A node-redis-shaped client whose `failAt`-th listing call fails once (a client-side timeout). */
function flaky(failAt) {
  let listings = 0;
  return {
    sendCommand(args) {
      if (args[0] === 'EVALSHA' && args.includes('unknown') && ++listings === failAt) return Promise.reject(new Error('socket timeout'));
      return redis.conn.client.sendCommand(args);
    },
  };
}

test('the reconciliation list resumes after a failed page, bucket by bucket, and pages by cursor', async () => {
  const prefix = fresh();
  const s = createRedisIdempotencyStore({ client: redis.conn.client, prefix, timeoutMs: 5000, buckets: 8, persistence: 'ignore' });
  const keys = Array.from({ length: 40 }, (_, i) => `u-${i}`);
  for (const k of keys) await s.run(k, async () => Promise.reject(timeout())).catch(() => {});
  const all = await s.unknownKeys();
  assert.deepEqual([...all].sort(), [...keys].sort());
  // A client-side failure in the middle of the pass: the pass goes on from that page.
  const f = createRedisIdempotencyStore({ client: flaky(4), prefix, timeoutMs: 5000, buckets: 8, persistence: 'ignore' });
  assert.deepEqual(await f.unknownKeys(), all, 'the same list, oldest first, despite the failed page');
  // The paged form: a cursor per page, undefined at the end; every key once.
  const seen = [];
  let pages = 0;
  for (let cursor = ''; cursor !== undefined; pages++) {
    const page = await s.unknownKeysPage(cursor);
    seen.push(...page.keys);
    cursor = page.cursor;
  }
  assert.equal(pages, 8, 'one page per bucket here');
  assert.deepEqual([...seen].sort(), [...keys].sort());
  await assert.rejects(s.unknownKeysPage('not a cursor'), (e) => e instanceof TypeError && /cursor/.test(e.message));
});

test('records under the single-slot layout of earlier versions are not forgotten: the store refuses until told', async () => {
  const prefix = fresh();
  await cmd('ZADD', `${prefix}:{idem}:unknown`, Date.now(), 'old-order');
  let ran = false;
  const s = createRedisIdempotencyStore({ client: redis.conn.client, prefix, timeoutMs: 5000, persistence: 'ignore' });
  await assert.rejects(
    s.run('k', async () => (ran = true)),
    (e) => e instanceof StateStoreUnavailableError && e.op === 'layout' && /legacyLayout/.test(e.message),
  );
  assert.equal(ran, false);
  const ok = createRedisIdempotencyStore({ client: redis.conn.client, prefix, timeoutMs: 5000, persistence: 'ignore', legacyLayout: 'ignore' });
  assert.equal(await ok.run('k', async () => 'ran'), 'ran');
});

test('another bucket count over the same records is refused (keys would be looked up in the wrong bucket)', async () => {
  const prefix = fresh();
  const four = createRedisIdempotencyStore({ client: redis.conn.client, prefix, timeoutMs: 5000, buckets: 4, persistence: 'ignore' });
  assert.equal(await four.run('k', async () => 1), 1);
  const eight = createRedisIdempotencyStore({ client: redis.conn.client, prefix, timeoutMs: 5000, buckets: 8, persistence: 'ignore' });
  await assert.rejects(
    eight.run('k', async () => 2),
    (e) => e instanceof StateStoreUnavailableError && e.op === 'layout' && /buckets: 4/.test(e.message),
  );
});

test('persistence: a Redis with neither AOF nor RDB is refused with persistence: refuse, reported once by default', async () => {
  let ran = false;
  const strict = createRedisIdempotencyStore({ client: redis.conn.client, prefix: fresh(), timeoutMs: 5000, persistence: 'refuse' });
  await assert.rejects(
    strict.run('k', async () => (ran = true)),
    (e) => e instanceof StateStoreUnavailableError && e.op === 'persistence' && /appendonly/.test(e.message),
  );
  assert.equal(ran, false);
  const warnings = [];
  const w = createRedisIdempotencyStore({ client: redis.conn.client, prefix: fresh(), timeoutMs: 5000, onWarning: (m) => warnings.push(m) });
  await w.run('a', async () => 1);
  await w.run('b', async () => 1);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /neither AOF/);
  await cmd('CONFIG', 'SET', 'appendonly', 'yes');
  try {
    const durable = createRedisIdempotencyStore({ client: redis.conn.client, prefix: fresh(), timeoutMs: 5000, persistence: 'refuse' });
    assert.equal(await durable.run('k', async () => 'ran'), 'ran');
  } finally {
    await cmd('CONFIG', 'SET', 'appendonly', 'no');
  }
});

test('FLUSHALL is noticed: StoreAmnesiaError (nothing runs) until acknowledgeAmnesia(); a flushed script is sent again by EVAL', async () => {
  const prefix = fresh();
  const s = createRedisIdempotencyStore({ client: redis.conn.client, prefix, timeoutMs: 5000, persistence: 'ignore' });
  assert.equal(await s.run('paid', async () => 'once'), 'once');
  await cmd('SCRIPT', 'FLUSH');
  assert.equal(await s.run('paid', async () => 'twice'), 'once', 'replayed after SCRIPT FLUSH (EVAL fallback)');
  await cmd('FLUSHALL');
  let ran = false;
  await assert.rejects(
    s.run('paid', async () => (ran = true)),
    (e) => e instanceof StoreAmnesiaError && e.code === 'STORE_AMNESIA' && e.name === 'StoreAmnesiaError' && e.prefix === prefix,
  );
  await assert.rejects(s.unknownKeys(), StoreAmnesiaError);
  await assert.rejects(s.peek('paid'), StoreAmnesiaError);
  assert.equal(ran, false);
  assert.deepEqual(await s.acknowledgeAmnesia(), { generation: 2 });
  assert.equal(await s.run('paid', async () => 'after'), 'after', 'the operator settled it: the store runs again');
  assert.deepEqual(await new SharedIdempotencyStore().acknowledgeAmnesia(), { generation: 0 }, 'a memory store never forgets');
});

test('a store starting while another initialises the markers is not fooled by reading between its writes; a lost bucket still is', async () => {
  const prefix = fresh();
  const buckets = 4;
  // B's first read of the markers: bucket 0's GET goes at once, the others wait until A's first use
  // has finished. B then sees bucket 0 before A marked it and the rest after A was done: the
  // interleaving two processes starting together can meet on a loaded machine.
  let release;
  const held = new Promise((resolve) => (release = resolve));
  let epochReads = 0; // B's first read is its first `buckets` GETs of a marker
  const tornClient = {
    sendCommand(args) {
      const marker = args[0] === 'GET' && String(args[1]).endsWith(':epoch');
      if (marker && ++epochReads <= buckets && !String(args[1]).includes('{idem:0}')) return held.then(() => redis.conn.client.sendCommand(args));
      return redis.conn.client.sendCommand(args);
    },
  };
  const b = createRedisIdempotencyStore({ client: tornClient, prefix, timeoutMs: 5000, buckets, persistence: 'ignore' });
  const a = createRedisIdempotencyStore({ client: redis.conn.client, prefix, timeoutMs: 5000, buckets, persistence: 'ignore' });
  const bRun = b.run('order-b', async () => 'b');
  await new Promise((r) => setTimeout(r, 50)); // B's bucket-0 GET has been answered (no marker yet)
  assert.equal(await a.run('order-a', async () => 'a'), 'a', 'A initialised the markers and ran');
  release();
  assert.equal(await bRun, 'b', 'B read again and found every marker: no amnesia');
  assert.equal(await b.run('order-a', async () => 'again'), 'a', 'B sees what A stored');

  // A marker that is really gone is still amnesia for a process that starts after it, read twice.
  await cmd('DEL', `${prefix}:{idem:2}:epoch`);
  const c = createRedisIdempotencyStore({ client: redis.conn.client, prefix, timeoutMs: 5000, buckets, persistence: 'ignore' });
  let ran = false;
  await assert.rejects(
    c.run('order-c', async () => (ran = true)),
    (e) => e instanceof StoreAmnesiaError && /1 of 4 buckets lost their epoch marker/.test(e.message),
  );
  assert.equal(ran, false);
});

test('two stores starting together on an empty Redis: the one that loses bucket 0 is not fooled by the winner still writing', async () => {
  // B tries to mark bucket 0 first, but its SET NX is held until A (which wins bucket 0) has
  // written its second phase on bucket 0 only. B's SET NX then loses, B reads bucket 0 at
  // generation 1 and the other buckets still at generation 0: A's writes in progress, not data
  // lost. Before this was understood, B latched a StoreAmnesiaError on a fresh deploy.
  const prefix = fresh();
  const buckets = 4;
  const isMarkerSet = (args, gen) => args[0] === 'SET' && String(args[1]).endsWith(':epoch') && String(args[2]).startsWith(`${gen}:`);
  let releaseB;
  const bHeld = new Promise((resolve) => (releaseB = resolve));
  let bHolding = false;
  const bClient = {
    sendCommand(args) {
      if (!bHolding && isMarkerSet(args, 0)) {
        bHolding = true;
        return bHeld.then(() => redis.conn.client.sendCommand(args));
      }
      return redis.conn.client.sendCommand(args);
    },
  };
  let releaseA;
  const aHeld = new Promise((resolve) => (releaseA = resolve));
  let aReached;
  const aAtPhase2 = new Promise((resolve) => (aReached = resolve));
  const aClient = {
    sendCommand(args) {
      if (isMarkerSet(args, 1) && !String(args[1]).includes('{idem:0}')) {
        aReached();
        return aHeld.then(() => redis.conn.client.sendCommand(args));
      }
      return redis.conn.client.sendCommand(args);
    },
  };
  const options = { prefix, timeoutMs: 5000, buckets, persistence: 'ignore' };
  const b = createRedisIdempotencyStore({ client: bClient, ...options });
  const a = createRedisIdempotencyStore({ client: aClient, ...options });
  const bRun = b.run('order-b', async () => 'b');
  for (let i = 0; i < 500 && !bHolding; i++) await new Promise((r) => setTimeout(r, 2));
  assert.ok(bHolding, "B's first marker write is held");
  const aRun = a.run('order-a', async () => 'a');
  await aAtPhase2;
  for (let i = 0; i < 500 && (await cmd('GET', `${prefix}:{idem:0}:epoch`))?.startsWith('1:') !== true; i++) await new Promise((r) => setTimeout(r, 2));
  assert.match(await cmd('GET', `${prefix}:{idem:0}:epoch`), /^1:/, "A's second phase has reached bucket 0");
  assert.match(await cmd('GET', `${prefix}:{idem:1}:epoch`), /^0:/, 'and not bucket 1');
  releaseB();
  assert.equal(await bRun, 'b', 'B finished the markers A was writing and ran: no amnesia');
  releaseA();
  assert.equal(await aRun, 'a');
  const marks = await Promise.all([0, 1, 2, 3].map((i) => cmd('GET', `${prefix}:{idem:${i}}:epoch`)));
  assert.equal(new Set(marks).size, 1, 'every bucket carries one marker');
  assert.match(marks[0], /^1:/);
  assert.equal(await a.run('order-b', async () => 'twice'), 'b', 'A sees what B stored');
});

test('bad scale options are named', () => {
  const client = redis.conn.client;
  for (const [option, value] of [
    ['buckets', 0],
    ['buckets', 1.5],
    ['waitReplicas', -1],
    ['waitTimeoutMs', 0],
    ['persistence', 'sometimes'],
    ['firstUse', 'maybe'],
    ['legacyLayout', 'migrate'],
  ]) {
    assert.throws(
      () => redisStateStore({ client, prefix: 'x', [option]: value }),
      (e) => (e instanceof RangeError || e instanceof TypeError) && e.option === option && e.message.includes(option),
      `${option}: ${value}`,
    );
  }
  assert.throws(
    () => redisStateStore({ client: { call() {} }, prefix: 'x' }),
    (e) => e instanceof TypeError && e.option === 'client' && /cluster/.test(e.message),
  );
});
