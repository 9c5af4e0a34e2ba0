// The Redis store's scale options on one node: the reconciliation list resumes after a failed page
// (never restarts), records under the earlier single-slot layout or another bucket count are not
// silently forgotten (the store refuses), persistence is checked like the eviction policy, bad
// options are named, and a script flushed from Redis is sent again by EVAL (no SCRIPT LOAD).
// First use's two phases, interleaved with other stores (each client's commands held at a chosen
// point): a store reading between another's writes is not fooled, and a store paused between its
// phases writes over neither the amnesia mark of a loss found meanwhile nor an acknowledgement.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRedisIdempotencyStore, redisStateStore, SharedIdempotencyStore, StateStoreUnavailableError, StoreAmnesiaError } from 'steadfast';
import { redisForTests, connectClient } from '../shared/redis-server.mjs';

const redis = redisForTests();
const cmd = (...args) => redis.conn.client.sendCommand(args.map(String));
let n = 0;
const fresh = () => `scale${++n}`;
const timeout = () => Object.assign(new Error('ETIMEDOUT'), { code: 'ETIMEDOUT' });

/**
 * The epoch key that a command writes a generation-`gen` marker to, or undefined. First use writes
 * generation 0 with SET ... NX, and generation 1 through the idempotency script's 'initialize' op
 * (its last argument is the marker it writes).
 */
function markerWrite(args, gen) {
  const a = args.map(String);
  if (a[0] === 'SET' && a[1].endsWith(':epoch') && a[2].startsWith(`${gen}:`)) return a[1];
  if ((a[0] === 'EVALSHA' || a[0] === 'EVAL') && a.includes('initialize') && a[a.length - 1].startsWith(`${gen}:`)) return a.find((k) => k.endsWith(':epoch'));
  return undefined;
}

/**
 * `client` (node-redis or ioredis) with every command that `hold(args)` picks held until
 * `release()`; `reached` resolves when the first of them arrives.
 */
function holding(client, hold) {
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  let arrived;
  const reached = new Promise((resolve) => (arrived = resolve));
  const pass = (args, go) => {
    if (!hold(args)) return go();
    arrived();
    return gate.then(go);
  };
  const wrapped =
    typeof client.call === 'function'
      ? { call: (...args) => pass(args, () => client.call(...args)), evalsha: (...args) => client.evalsha(...args) }
      : { sendCommand: (args) => pass(args, () => client.sendCommand(args)) };
  return { client: wrapped, reached, release };
}

/** What the gateway function executed, per key, and a charge of `key` through `store` that counts. */
function ledger() {
  const executed = new Map();
  const pay = (store, key) =>
    store.run(
      key,
      async () => {
        executed.set(key, (executed.get(key) ?? 0) + 1);
        return `charged ${key}`;
      },
      { fingerprint: '4999 usd' },
    );
  return { executed, pay };
}
const amnesic = (e) => e instanceof StoreAmnesiaError && e.code === 'STORE_AMNESIA' && e.name === 'StoreAmnesiaError';

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
  let releaseB;
  const bHeld = new Promise((resolve) => (releaseB = resolve));
  let bHolding = false;
  const bClient = {
    sendCommand(args) {
      if (!bHolding && markerWrite(args, 0) !== undefined) {
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
      if (markerWrite(args, 1)?.includes('{idem:0}') === false) {
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

for (const kind of ['node-redis', 'ioredis']) {
  test(`${kind}: a store paused between the two phases of first use keeps the amnesia mark of a loss found meanwhile`, async () => {
    // A starts first use and stalls after its first phase (a long GC pause, a slow socket). B
    // finishes A's markers and charges order-1; Redis then loses everything, and B, finding the
    // loss, marks every bucket. A's second phase comes last. Had it written generation 1 over the
    // marks, A and every store started afterwards would take the empty Redis for a healthy one and
    // charge order-1 a second time.
    const prefix = fresh();
    const buckets = 4;
    const conn = await connectClient(kind, redis.server.port);
    try {
      const { executed, pay } = ledger();
      const options = { prefix, timeoutMs: 5000, buckets, persistence: 'ignore' };
      const marks = () => Promise.all(Array.from({ length: buckets }, (_, b) => cmd('GET', `${prefix}:{idem:${b}}:epoch`)));
      const paused = holding(conn.client, (args) => markerWrite(args, 1) !== undefined);
      const a = createRedisIdempotencyStore({ client: paused.client, ...options });
      const aRun = pay(a, 'order-a');
      aRun.catch(() => {}); // judged below, once A's second phase has run
      await paused.reached;
      assert.ok(
        (await marks()).every((m) => /^0:/.test(m)),
        "A's first phase is on every bucket, its second held",
      );

      const b = createRedisIdempotencyStore({ client: conn.client, ...options });
      assert.equal(await pay(b, 'order-1'), 'charged order-1', 'B finished the markers and charged');
      await cmd('FLUSHALL'); // Redis lost everything (a restart without persistence)
      await assert.rejects(pay(b, 'order-1'), amnesic, 'B knew the marker: it finds the loss');
      const left = await marks();
      assert.ok(
        left.every((m) => m?.startsWith('amnesia:')),
        `B left the amnesia mark on every bucket: ${left}`,
      );

      paused.release();
      await assert.rejects(aRun, amnesic, "A's second phase met the marks: A refuses");
      assert.deepEqual(await marks(), left, 'the marks are still in Redis');
      const c = createRedisIdempotencyStore({ client: conn.client, ...options });
      await assert.rejects(pay(c, 'order-1'), amnesic, 'a store started afterwards refuses too');
      assert.deepEqual([...executed], [['order-1', 1]], 'order-1 charged once; nothing else ran');

      // The operator settles order-1 against the gateway, then acknowledges: every store runs again.
      assert.deepEqual(await c.acknowledgeAmnesia(), { generation: 2 });
      assert.equal(await pay(c, 'order-2'), 'charged order-2');
      assert.equal(await pay(a, 'order-a'), 'charged order-a', 'A adopted the acknowledgement');
      assert.equal(await pay(b, 'order-2'), 'charged order-2', 'replayed: B adopted it too');
      assert.deepEqual(
        [...executed],
        [
          ['order-1', 1],
          ['order-2', 1],
          ['order-a', 1],
        ],
      );
    } finally {
      await conn.close();
    }
  });
}

test('a store paused between the two phases of first use adopts an acknowledgement made meanwhile (never rolls it back)', async () => {
  // As above, but the operator acknowledges the loss before A's second phase runs: the buckets hold
  // generation 2. A adopts it; generation 1 written over it would make every store that knows
  // generation 2 refuse again (a marker older than it knew), and need a second acknowledgement.
  const prefix = fresh();
  const buckets = 4;
  const { executed, pay } = ledger();
  const options = { prefix, timeoutMs: 5000, buckets, persistence: 'ignore' };
  const marks = () => Promise.all(Array.from({ length: buckets }, (_, b) => cmd('GET', `${prefix}:{idem:${b}}:epoch`)));
  const paused = holding(redis.conn.client, (args) => markerWrite(args, 1) !== undefined);
  const a = createRedisIdempotencyStore({ client: paused.client, ...options });
  const aRun = pay(a, 'order-a');
  aRun.catch(() => {});
  await paused.reached;
  const b = createRedisIdempotencyStore({ client: redis.conn.client, ...options });
  assert.equal(await pay(b, 'order-1'), 'charged order-1');
  await cmd('FLUSHALL');
  await assert.rejects(pay(b, 'order-1'), amnesic);
  assert.deepEqual(await b.acknowledgeAmnesia(), { generation: 2 });
  const acknowledged = await marks();
  assert.ok(
    acknowledged.every((m) => m === acknowledged[0] && m.startsWith('2:')),
    `generation 2 on every bucket: ${acknowledged}`,
  );

  paused.release();
  assert.equal(await aRun, 'charged order-a', 'A adopted generation 2 and ran');
  assert.deepEqual(await marks(), acknowledged, 'the acknowledgement is still in Redis');
  assert.equal(await pay(b, 'order-a'), 'charged order-a', 'replayed: B, which acknowledged, runs on');
  assert.deepEqual(
    [...executed],
    [
      ['order-1', 1],
      ['order-a', 1],
    ],
  );
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
