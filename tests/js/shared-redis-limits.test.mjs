// Issue 17 against a real redis-server (tests/shared/redis-server.mjs: 127.0.0.1, private port, no
// persistence): the fingerprint is the core's SHA-256/128 in Redis too, records are bounded and all
// carry TTLs, the reconciliation list is paged (no call grows with the number of unknown records),
// an evicting maxmemory-policy is refused, resolve compares and sets, a late owner's completion is
// surfaced, ioredis keyPrefix is respected and breaker names cannot collide.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  createRedisIdempotencyStore,
  createRedisBreaker,
  redisStateStore,
  SharedIdempotencyStore,
  IdempotencyKeyReuseError,
  StoreFullError,
  StateStoreUnavailableError,
  OutcomeUnknownError,
  IdempotencyStateError,
  reconcile,
} from 'steadfast';
import { redisForTests } from '../shared/redis-server.mjs';

const OUT = fileURLToPath(new URL('../.out/', import.meta.url));
const FIGURES = `${OUT}shared-figures.json`;
const figures = {};
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const UNKNOWN_N = Number(process.env.UNKNOWN_N ?? 200_000);
const redis = redisForTests();
let prefixes = 0;
const fresh = () => `t${++prefixes}`;

after(() => {
  mkdirSync(OUT, { recursive: true });
  const old = existsSync(FIGURES) ? JSON.parse(readFileSync(FIGURES, 'utf8')) : {};
  writeFileSync(FIGURES, JSON.stringify({ ...old, ...figures }, null, 2));
});

const cmd = (...args) => redis.conn.client.sendCommand(args.map(String));
const store = (opts = {}) => createRedisIdempotencyStore({ client: redis.conn.client, prefix: fresh(), timeoutMs: 5000, ...opts });
const transient = () => Object.assign(new Error('ETIMEDOUT'), { code: 'ETIMEDOUT' });

test('fingerprints: the core SHA-256/128 of the request (every process computes the same digest); strict in every status', async () => {
  const prefix = fresh();
  const s = createRedisIdempotencyStore({ client: redis.conn.client, prefix, timeoutMs: 5000, buckets: 1 });
  assert.equal(await s.run('k', async () => 'one', { fingerprint: '100 usd' }), 'one');
  const stored = await cmd('HGET', `${prefix}:{idem:0}:r:k`, 'fp');
  assert.equal(stored, createHash('sha256').update('f:100 usd').digest('hex').slice(0, 32));
  await assert.rejects(
    s.run('k', async () => 'two', { fingerprint: '100000 usd' }),
    IdempotencyKeyReuseError,
  );
  await assert.rejects(
    s.run('k', async () => 'two'),
    IdempotencyKeyReuseError,
  );
  // In flight too: the $1,000 order is refused as a different request, not told "in flight".
  let release;
  const slow = s.run('k2', () => new Promise((ok) => (release = ok)), { fingerprint: '1 usd' });
  await sleep(5);
  await assert.rejects(
    s.run('k2', async () => 'x', { fingerprint: '1000 usd' }),
    IdempotencyKeyReuseError,
  );
  release('paid');
  assert.equal(await slow, 'paid');
  assert.equal(await s.run('k2', async () => 'again', { fingerprint: '1 usd' }), 'paid');
});

test('maxRecords in Redis: new keys are refused when full, live records are never evicted, expired done records make room', async () => {
  const s = store({ maxRecords: 3, ttlMs: 300, buckets: 1 });
  await s.run('a', async () => 1);
  await assert.rejects(s.run('b', async () => Promise.reject(transient())));
  let release;
  const inflight = s.run('c', () => new Promise((ok) => (release = ok)));
  await sleep(5);
  let ran = false;
  await assert.rejects(
    s.run('d', async () => (ran = true)),
    (e) => e instanceof StoreFullError && e.maxRecords === 3 && e.code === 'STORE_FULL',
  );
  assert.equal(ran, false);
  await assert.rejects(
    s.run('b', async () => 1),
    OutcomeUnknownError,
  );
  await sleep(350); // 'a' (done) expires; 'b' (unknown) and 'c' (in flight) stay
  assert.equal(await s.run('d', async () => 'd'), 'd');
  assert.equal((await s.peek('b')).status, 'unknown');
  release(3);
  assert.equal(await inflight, 3);
});

test('every Redis key carries a TTL: in flight, unknown, done, breaker state and window', async () => {
  const prefix = fresh();
  const s = createRedisIdempotencyStore({
    client: redis.conn.client,
    prefix,
    timeoutMs: 5000,
    buckets: 1,
    ttlMs: 60_000,
    unknownTtlMs: 3_600_000,
    inFlightLeaseMs: 10_000,
  });
  let release;
  const p = s.run('in', () => new Promise((ok) => (release = ok)));
  await sleep(5);
  await s.run('done', async () => 1);
  await s.run('unk', async () => Promise.reject(transient())).catch(() => {});
  const ttl = async (k) => Number(await cmd('PTTL', `${prefix}:{idem:0}:r:${k}`));
  const inTtl = await ttl('in');
  assert.ok(inTtl > 3_600_000 && inTtl <= 3_610_000, `in flight: lease + unknownTtlMs, got ${inTtl}`);
  const doneTtl = await ttl('done');
  assert.ok(doneTtl > 50_000 && doneTtl <= 60_000, `done: ttlMs, got ${doneTtl}`);
  const unkTtl = await ttl('unk');
  assert.ok(unkTtl > 3_500_000 && unkTtl <= 3_600_000, `unknown: unknownTtlMs, got ${unkTtl}`);
  release(1);
  await p;
  const b = createRedisBreaker({ client: redis.conn.client, prefix, name: 'gw', windowSize: 10, failureRateThreshold: 0.5, openDurationMs: 1000 });
  await b.execute(async () => 1);
  for (const k of [`${prefix}:breaker:{2:gw}`, `${prefix}:breaker:{2:gw}:window`]) {
    const t = Number(await cmd('PTTL', k));
    assert.ok(t > 0, `${k} has a TTL (${t})`);
  }
});

/** How many times Redis ran `command` so far (INFO commandstats). */
async function commandCalls(command) {
  const info = String(await cmd('INFO', 'commandstats'));
  return Number(info.match(new RegExp(`cmdstat_${command}:calls=(\\d+)`))?.[1] ?? 0);
}

test(`the reconciliation list is paged: ${UNKNOWN_N.toLocaleString('en-US')} unknown records read in bounded calls`, { timeout: 600_000 }, async (t) => {
  const prefix = fresh();
  // Bulk-create unknown records exactly as the script lays them out (10,000 per call).
  const fill = `
    local p, from, n, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
    for i = from, from + n - 1 do
      local k = 'u' .. i
      redis.call('HSET', p .. 'r:' .. k, 'st', 'u', 'fp', '', 'at', now + i, 'tok', 'x', 'err', 'timeout')
      redis.call('PEXPIRE', p .. 'r:' .. k, 86400000)
      redis.call('ZADD', p .. 'unknown', now + i, k)
      redis.call('ZADD', p .. 'all', now + 86400000, k)
    end`;
  const base = `${prefix}:{idem:0}:`;
  const t0 = performance.now();
  for (let from = 0; from < UNKNOWN_N; from += 10_000) {
    await cmd('EVAL', fill, 0, base, from, Math.min(10_000, UNKNOWN_N - from), Date.now());
  }
  t.diagnostic(`filled ${UNKNOWN_N} unknown records in ${Math.round(performance.now() - t0)} ms`);
  const s = createRedisIdempotencyStore({ client: redis.conn.client, prefix, timeoutMs: 5000, maxRecords: 2 ** 30, buckets: 1 });
  await s.peek('warm-up'); // loads the script and checks the eviction policy
  await cmd('CONFIG', 'SET', 'slowlog-log-slower-than', 0);
  await cmd('CONFIG', 'SET', 'slowlog-max-len', 4096);
  await cmd('SLOWLOG', 'RESET');
  const calls0 = await commandCalls('evalsha');
  const t1 = performance.now();
  const keys = await s.unknownKeys();
  const listMs = performance.now() - t1;
  const calls = (await commandCalls('evalsha')) - calls0;
  const log = await cmd('SLOWLOG', 'GET', 4096);
  await cmd('CONFIG', 'SET', 'slowlog-log-slower-than', 10_000);
  assert.equal(keys.length, UNKNOWN_N);
  assert.equal(keys[0], 'u0', 'oldest first');
  assert.equal(new Set(keys).size, UNKNOWN_N);
  // Structural bound: one script call per 500 keys (each reads at most 500 members and lapses at
  // most 500 in-flight records), never one call over the whole set.
  assert.equal(calls, Math.floor(UNKNOWN_N / 500) + 1);
  const durations = log.filter((e) => String(e[3]?.[0] ?? '').toUpperCase() === 'EVALSHA').map((e) => Number(e[2]) / 1000);
  const max = Math.max(...durations);
  const median = durations.sort((a, b) => a - b)[Math.floor(durations.length / 2)];
  t.diagnostic(
    `unknownKeys(): ${UNKNOWN_N} keys in ${Math.round(listMs)} ms over ${calls} calls; per call median ${median.toFixed(2)} ms, max ${max.toFixed(2)} ms (Redis SLOWLOG)`,
  );
  figures.unknownListing = {
    unknown: UNKNOWN_N,
    totalMs: Math.round(listMs),
    calls,
    medianCallMs: Number(median.toFixed(2)),
    maxCallMs: Number(max.toFixed(2)),
  };
  await cmd('DEL', `${base}unknown`, `${base}all`);
});

test('maxmemory-policy: an evicting policy is refused (nothing runs), or warned about once with evictionPolicy: warn', async () => {
  await cmd('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
  try {
    const s = store();
    let ran = false;
    await assert.rejects(
      s.run('k', async () => (ran = true)),
      (e) => e instanceof StateStoreUnavailableError && e.op === 'policy' && /allkeys-lru/.test(e.message),
    );
    assert.equal(ran, false);
    const warnings = [];
    const w = store({ evictionPolicy: 'warn', persistence: 'ignore', onWarning: (m) => warnings.push(m) });
    assert.equal(await w.run('k', async () => 'ran'), 'ran');
    assert.equal(await w.run('k2', async () => 'ran'), 'ran');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /noeviction/);
  } finally {
    await cmd('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
  }
  assert.equal(await store().run('k', async () => 'ok'), 'ok');
});

test('resolve compares and sets: a stale answer about an earlier attempt cannot free a newer unknown one; concurrent reconcile() runs do not reject', async () => {
  const s = store();
  await s.run('k', async () => Promise.reject(transient())).catch(() => {});
  const first = await s.peek('k');
  await s.resolve('k', { status: 'failed', startedAt: first.startedAt });
  await sleep(3);
  await s.run('k', async () => Promise.reject(transient())).catch(() => {});
  const second = await s.peek('k');
  assert.notEqual(second.startedAt, first.startedAt);
  await assert.rejects(
    s.resolve('k', { status: 'failed', startedAt: first.startedAt }),
    (e) => e instanceof IdempotencyStateError && e.code === 'KEY_WRONG_STATE',
  );
  assert.equal((await s.peek('k')).status, 'unknown', 'the newer attempt is still unknown');
  // Two reconcilers at once: every key is settled once, neither run rejects.
  for (let i = 0; i < 40; i++) await s.run(`r${i}`, async () => Promise.reject(transient())).catch(() => {});
  let lookups = 0;
  const lookup = async () => {
    lookups += 1;
    await sleep(1);
    return { status: 'done', result: 'settled' };
  };
  const [a, b] = await Promise.all([reconcile(s, lookup, { concurrency: 4 }), reconcile(s, lookup, { concurrency: 4 })]);
  assert.equal(a.done + b.done, 41, 'each unknown key settled exactly once across both runs');
  assert.ok(lookups >= 41, `every key was looked up (${lookups} lookups)`);
  assert.deepEqual(await s.unknownKeys(), []);
});

test("a late owner's completion after its lapsed record was reconciled as failed is surfaced, never dropped", async () => {
  const late = [];
  const s = store({ inFlightLeaseMs: 40, onLateCompletion: (e) => late.push(e) });
  let debits = 0;
  // The owner hangs past its lease until the test lets it finish, after reconciliation (a fixed sleep
  // raced the reconciliation on a loaded machine: the owner finished first and the ledger said done).
  let finish;
  const hung = new Promise((resolve) => (finish = resolve));
  const owner = s.run('pay-1', async () => {
    await hung;
    debits += 1;
    return 'charged';
  });
  await sleep(80);
  assert.deepEqual(await s.unknownKeys(), ['pay-1'], 'the lapsed in-flight record is on the worklist');
  // The ledger shows nothing yet (the owner is still mid-call): reconciliation says failed.
  // settleAfterMs: 0 — believe the ledger at once (the owner's request is not in transit: it has not
  // been sent yet), which is exactly when a late completion must not be lost.
  const report = await reconcile(s, async () => (debits === 0 ? { status: 'failed' } : { status: 'done', result: 'charged' }), { settleAfterMs: 0 });
  assert.equal(report.failed, 1);
  finish();
  assert.equal(await owner, 'charged');
  assert.deepEqual(late, [{ key: 'pay-1', outcome: 'done' }]);
  const rec = await s.peek('pay-1');
  assert.equal(rec.status, 'unknown', 'the key is back on the worklist instead of free for a second charge');
  assert.match(rec.error, /late owner completion/);
  await assert.rejects(
    s.run('pay-1', async () => (debits += 1)),
    OutcomeUnknownError,
  );
  assert.equal(debits, 1);
});

test('ioredis keyPrefix: a crashed owner still shows up in the reconciliation list', async () => {
  const { Redis } = await import('ioredis');
  const client = new Redis({ port: redis.server.port, host: '127.0.0.1', keyPrefix: 'app:', lazyConnect: true, maxRetriesPerRequest: 1 });
  await client.connect();
  try {
    const s = createRedisIdempotencyStore({ client, prefix: fresh(), timeoutMs: 5000, inFlightLeaseMs: 20 });
    // The owner "crashes": its run never completes (the promise is abandoned).
    s.run('crashed', () => new Promise(() => {})).catch(() => {});
    await sleep(60);
    assert.deepEqual(await s.unknownKeys(), ['crashed']);
    assert.equal((await s.peek('crashed')).status, 'unknown');
  } finally {
    client.disconnect();
  }
});

test("breaker names cannot collide: a breaker named 'x:window' does not disable breaker 'x'", async () => {
  const prefix = fresh();
  const errors = [];
  const opts = {
    client: redis.conn.client,
    prefix,
    windowSize: 4,
    failureRateThreshold: 0.5,
    minimumCalls: 2,
    openDurationMs: 60_000,
    whenUnavailable: 'reject',
    onStoreError: (e) => errors.push(`${e.name} ${e.op}: ${e.error.message}`),
  };
  const x = createRedisBreaker({ ...opts, name: 'x' });
  const xw = createRedisBreaker({ ...opts, name: 'x:window' });
  for (let i = 0; i < 4; i++) await xw.execute(() => Promise.reject(new Error('down'))).catch(() => {});
  assert.equal(await xw.state(), 'open');
  for (let i = 0; i < 6; i++) assert.equal(await x.execute(async () => 'ok'), 'ok');
  assert.equal(await x.state(), 'closed');
  assert.deepEqual(errors, [], 'no store call failed (no WRONGTYPE between the two names)');
});

test('per-service default prefixes: two services on one Redis share no breaker and no key; a store with neither option is reported', async () => {
  const warnings = [];
  const opts = {
    client: redis.conn.client,
    name: 'gateway',
    windowSize: 4,
    failureRateThreshold: 0.5,
    minimumCalls: 2,
    openDurationMs: 60_000,
    whenUnavailable: 'reject',
    onWarning: (m) => warnings.push(m),
  };
  const checkout = createRedisBreaker({ ...opts, service: 'checkout' });
  const refunds = createRedisBreaker({ ...opts, service: 'refunds' });
  for (let i = 0; i < 4; i++) await checkout.execute(() => Promise.reject(new Error('down'))).catch(() => {});
  assert.equal(await checkout.state(), 'open');
  assert.equal(await refunds.execute(async () => 'ok'), 'ok', "the other service's breaker of the same name is closed");
  assert.equal(await refunds.state(), 'closed');
  assert.equal(await cmd('EXISTS', 'steadfast:checkout:breaker:{7:gateway}'), 1, 'keys live under steadfast:<service>');
  assert.equal(await cmd('EXISTS', 'steadfast:breaker:{7:gateway}'), 0, 'nothing under the shared namespace');

  const quiet = { timeoutMs: 5000, persistence: 'ignore', onWarning: (m) => warnings.push(m) };
  const a = createRedisIdempotencyStore({ client: redis.conn.client, service: 'checkout', ...quiet });
  const b = createRedisIdempotencyStore({ client: redis.conn.client, service: 'refunds', ...quiet });
  assert.equal(await a.run('order-1', async () => 'charged'), 'charged');
  assert.equal(await b.run('order-1', async () => 'refunded'), 'refunded', 'the same key in another service runs (no replay across services)');
  assert.equal(await a.run('order-1', async () => 'again'), 'charged', 'and replays in its own');
  assert.deepEqual(warnings, [], 'a named service is not warned about');

  // An explicit prefix wins over the service; neither option: the shared namespace, reported per store.
  redisStateStore({ client: redis.conn.client, service: 'checkout', prefix: fresh(), onWarning: (m) => warnings.push(m) });
  assert.deepEqual(warnings, []);
  redisStateStore({ client: redis.conn.client, onWarning: (m) => warnings.push(m) });
  redisStateStore({ client: redis.conn.client, onWarning: (m) => warnings.push(m) });
  assert.equal(warnings.length, 2);
  assert.match(warnings[0], /no 'service' or 'prefix'.*shares the namespace 'steadfast'/);
  for (const bad of ['', 'a:b', 'x'.repeat(65), 42, 'spaces are bad']) {
    assert.throws(
      () => redisStateStore({ client: redis.conn.client, service: bad }),
      (e) => e instanceof TypeError && e.option === 'service',
      `service ${String(bad)}`,
    );
  }
});

test('a shared store rejects bad limits, naming the option', () => {
  const s = redisStateStore({ client: redis.conn.client });
  assert.throws(
    () => new SharedIdempotencyStore({ store: s, maxRecords: 0 }),
    (e) => e instanceof RangeError && e.option === 'maxRecords',
  );
  assert.throws(
    () => new SharedIdempotencyStore({ store: s, unknownTtlMs: -1 }),
    (e) => e instanceof RangeError && e.option === 'unknownTtlMs',
  );
  assert.throws(
    () => redisStateStore({ client: redis.conn.client, evictionPolicy: 'ignore' }),
    (e) => e instanceof RangeError && e.option === 'evictionPolicy',
  );
});

test(
  'unknownKeys() lists every unknown key exactly once when processes with different inFlightLeaseMs lapse records out of start order',
  { timeout: 120_000 },
  async () => {
    const prefix = fresh();
    // Two processes on one namespace: one leases 300 ms, the other 30 ms. Their records start
    // interleaved, so leases lapse in another order than the records started (the list's order).
    const long = createRedisIdempotencyStore({ client: redis.conn.client, prefix, timeoutMs: 5000, inFlightLeaseMs: 300, maxRecords: 100_000, buckets: 1 });
    const short = createRedisIdempotencyStore({ client: redis.conn.client, prefix, timeoutMs: 5000, inFlightLeaseMs: 30, maxRecords: 100_000, buckets: 1 });
    const N = 6_000;
    const keys = Array.from({ length: N }, (_, i) => `mixed-${i}`);
    const hung = () => new Promise(() => {}); // the owner dies mid-call: its lease lapses into unknown
    const inflight = async () => Number(await cmd('ZCARD', `${prefix}:{idem:0}:inflight`));
    for (let i = 0; i < N; i += 200) {
      keys.slice(i, i + 200).forEach((k, j) => ((i + j) % 2 === 0 ? long : short).run(k, hung).catch(() => {}));
      while ((await inflight()) < Math.min(N, i + 200)) await sleep(1); // these have started
    }
    await sleep(400); // every lease has lapsed; none has been turned into unknown yet
    assert.equal(await inflight(), N);
    const listed = await short.unknownKeys();
    const seen = new Map();
    for (const k of listed) seen.set(k, (seen.get(k) ?? 0) + 1);
    const twice = [...seen].filter(([, n]) => n > 1).length;
    const missed = keys.filter((k) => !seen.has(k)).length;
    assert.deepEqual({ listed: listed.length, twice, missed }, { listed: N, twice: 0, missed: 0 });
    // A second pass finds the same list (nothing was left to lapse, nothing moved).
    assert.deepEqual(await long.unknownKeys(), listed);
  },
);

test('durations are bounded: ttlMs 1e17 is a RangeError naming it; the largest accepted ttlMs still completes in Redis', async () => {
  assert.throws(
    () => createRedisIdempotencyStore({ client: redis.conn.client, prefix: fresh(), ttlMs: 1e17 }),
    (e) => e instanceof RangeError && e.code === 'INVALID_OPTION' && e.option === 'ttlMs' && /10 years/.test(e.message),
  );
  const max = 315_360_000_000;
  const s = store({ ttlMs: max, unknownTtlMs: max, inFlightLeaseMs: max });
  assert.equal(await s.run('long', async () => 'kept'), 'kept');
  assert.equal(await s.run('long', async () => 'again'), 'kept', 'replayed: the record was written with its TTL');
  await assert.rejects(
    s.run('long-unknown', async () => Promise.reject(transient())),
    OutcomeUnknownError,
  );
  assert.equal((await s.peek('long-unknown')).status, 'unknown');
});
