// Two checks of the idempotency rules across their two homes:
//
// 1. The twin: the Redis Lua script (lib/shared/lua.js IDEMPOTENCY_LUA) is the one accepted copy of
//    src/core/idempotency.rs `Records`. The memory state store's handle runs Records (through the
//    wasm core); the Redis handle runs the script. Both are driven with the same random operation
//    sequences (begin with fingerprints, complete, resolve with and without compare-and-set, peek,
//    the reconciliation list, a small maxRecords) and must give the same answer at every step.
//
// 2. The debit model: many clients run one key concurrently while reconcile() settles it from the
//    gateway's ledger, through the public SharedIdempotencyStore (memory and Redis) and
//    IdempotencyStore. Debits are counted: at most one per key, except where a late owner's
//    completion was surfaced (Redis, owner past its lease), which is exactly what onLateCompletion
//    reports — never silently.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStateStore, redisStateStore, createSharedIdempotencyStore, IdempotencyStore, reconcile } from 'steadfast';
import { redisForTests } from '../shared/redis-server.mjs';

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const RUNS = Number(process.env.TWIN_RUNS ?? 60);
const redis = redisForTests();

/** xorshift32: reproducible sequences. */
function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}
const pick = (r, xs) => xs[Math.floor(r() * xs.length)];

const KEYS = ['a', 'b', 'order 42'];
const FPS = [undefined, 'f:100 usd', 'f:999 usd'];

/** What must agree between the two handles (times are each side's own clock). */
function shape(answer) {
  if (answer === undefined) return undefined;
  if (typeof answer === 'string') return answer;
  const { status, result } = answer;
  return status === 'done' ? { status, result } : { status };
}

test('idempotency twin: the Lua script and the core give the same answer to the same operations', { timeout: 300_000 }, async (t) => {
  let steps = 0;
  const seen = new Set();
  for (let run = 0; run < RUNS; run++) {
    const r = rng(run + 1);
    const maxRecords = pick(r, [2, 3, 1000]);
    const options = { ttlMs: 3_600_000, inFlightLeaseMs: 3_600_000, unknownTtlMs: 3_600_000, maxRecords };
    const sides = [
      memoryStateStore().idempotency(options),
      redisStateStore({ client: redis.conn.client, prefix: `twin${run}`, timeoutMs: 5000 }).idempotency(options),
    ];
    const running = []; // [{ key, tokens: [memoryToken, redisToken] }]
    let value = 0;
    for (let step = 0; step < 40; step++) {
      const op = pick(r, ['begin', 'begin', 'begin', 'complete', 'complete', 'resolve', 'reopen', 'reopen', 'peek', 'list']);
      const key = pick(r, KEYS);
      const where = `run ${run} step ${step} ${op} ${key}`;
      let answers;
      if (op === 'begin') {
        const fp = pick(r, FPS);
        const got = await Promise.all(sides.map((s, i) => s.begin(key, fp, `tok-${run}-${step}-${i}`)));
        if (got[0].status === 'run' && got[1].status === 'run') running.push({ key, tokens: got.map((g) => g.token) });
        answers = got.map(shape);
      } else if (op === 'complete') {
        if (running.length === 0) continue;
        const { key: k, tokens } = running.splice(Math.floor(r() * running.length), 1)[0];
        const outcome = pick(r, ['done', 'unknown', 'failed', 'failed', 'refuted']);
        value += 1;
        answers = await Promise.all(sides.map((s, i) => s.complete(k, tokens[i], outcome, outcome === 'done' ? { value } : 'timeout')));
      } else if (op === 'resolve') {
        const outcome = pick(r, ['done', 'failed']);
        const cas = pick(r, ['none', 'right', 'wrong']);
        value += 1;
        answers = await Promise.all(
          sides.map(async (s) => {
            const rec = await s.peek(key);
            const at = cas === 'none' ? undefined : cas === 'right' ? rec?.startedAt : (rec?.startedAt ?? 0) - 1;
            return s.resolve(key, outcome, { value }, at);
          }),
        );
      } else if (op === 'reopen') {
        // Reconciliation's re-send: compare-and-set from unknown to in flight, same request only.
        const fp = pick(r, FPS);
        const cas = pick(r, ['none', 'right', 'wrong']);
        const got = await Promise.all(
          sides.map(async (s, i) => {
            const rec = await s.peek(key);
            const at = cas === 'none' ? undefined : cas === 'right' ? rec?.startedAt : (rec?.startedAt ?? 0) - 1;
            return s.reopen(key, fp, `re-${run}-${step}-${i}`, at);
          }),
        );
        if (got[0].status === 'reopened' && got[1].status === 'reopened') running.push({ key, tokens: got.map((g) => g.token) });
        answers = got.map(shape);
      } else if (op === 'peek') {
        answers = (await Promise.all(sides.map((s) => s.peek(key)))).map(shape);
      } else {
        answers = (await Promise.all(sides.map((s) => s.unknownKeys()))).map((ks) => [...ks].sort());
      }
      assert.deepEqual(answers[1], answers[0], `${where}: Redis (actual) vs core (expected)`);
      seen.add(`${op}:${JSON.stringify(answers[0])?.slice(0, 24)}`);
      steps += 1;
    }
  }
  const kinds = [...seen].map(
    (s) =>
      s.split(':')[0] +
      ':' +
      (s
        .match(/"status":"([a-z-]+)"|^\w+:"([a-z-]+)"/)
        ?.slice(1)
        .find(Boolean) ?? ''),
  );
  for (const needed of [
    'begin:run',
    'begin:done',
    'begin:in-flight',
    'begin:unknown',
    'begin:mismatch',
    'begin:full',
    'resolve:resolved',
    'resolve:wrong-state',
    'resolve:not-found',
    'reopen:reopened',
    'reopen:mismatch',
    'reopen:wrong-state',
    'reopen:not-found',
    'complete:parked',
  ]) {
    assert.ok(kinds.includes(needed), `the sequences reached ${needed}`);
  }
  t.diagnostic(`${steps} steps over ${RUNS} sequences, every answer equal`);
});

/** A gateway that debits a ledger, with no idempotency of its own. */
function ledger() {
  const debits = new Map();
  return {
    debits,
    count: (key) => debits.get(key) ?? 0,
    debit(key) {
      debits.set(key, (debits.get(key) ?? 0) + 1);
    },
  };
}

// The simulated gateway debits synchronously inside the call: once a call has returned or thrown,
// nothing of it is in transit, so the ledger may be believed at once (no settle window).
const SETTLED = { settleAfterMs: 0 };

async function debitModel(name, makeStore, { cases, lapses }) {
  let total = 0;
  let lateSeen = 0;
  for (let c = 0; c < cases; c++) {
    const r = rng(1000 + c);
    const gw = ledger();
    const late = [];
    const store = makeStore(c, late);
    const key = `pay-${c}`;
    const client = async () => {
      await sleep(Math.floor(r() * 4));
      const what = pick(r, ['ok', 'ok', 'timeout-after-debit', 'timeout-before-debit', 'decline', lapses ? 'hang-then-ok' : 'ok']);
      return store
        .run(key, async () => {
          if (what === 'hang-then-ok')
            await sleep(60); // past a 20 ms lease
          else await sleep(Math.floor(r() * 3));
          if (what === 'timeout-before-debit') throw Object.assign(new Error('ETIMEDOUT'), { code: 'ETIMEDOUT' });
          if (what === 'decline') throw Object.assign(new Error('card_declined'), { status: 402 });
          gw.debit(key);
          if (what === 'timeout-after-debit') throw Object.assign(new Error('ETIMEDOUT'), { code: 'ETIMEDOUT' });
          return 'charged';
        })
        .catch((e) => e.code ?? e.message);
    };
    // The ledger is the source of truth: done if the key was debited, failed if not.
    const lookup = async (k) => (gw.count(k) > 0 ? { status: 'done', result: 'charged' } : { status: 'failed' });
    const reconciler = async () => {
      for (let i = 0; i < 4; i++) {
        await sleep(Math.floor(r() * 30));
        await reconcile(store, lookup, SETTLED);
      }
    };
    await Promise.all([...Array.from({ length: 6 }, client), reconciler(), reconciler()]);
    await sleep(lapses ? 80 : 5);
    await reconcile(store, lookup, SETTLED);
    const debits = gw.count(key);
    const lateDone = late.filter((e) => e.outcome === 'done').length;
    total += debits;
    lateSeen += lateDone;
    assert.ok(debits <= 1 + lateDone, `${name} case ${c}: ${debits} debits for one key, ${lateDone} late completions surfaced`);
    // Whatever happened, the record now agrees with the ledger.
    const rec = await store.peek(key);
    if (debits > 0 && rec !== undefined) assert.notEqual(rec.status, 'in-flight', `${name} case ${c}: settled`);
    if (rec?.status === 'done') assert.ok(debits > 0, `${name} case ${c}: done without a debit`);
  }
  return { total, lateSeen };
}

test('debit model: concurrent run / resolve / reconcile on one key never debits twice (memory stores)', { timeout: 300_000 }, async (t) => {
  const a = await debitModel('IdempotencyStore', () => new IdempotencyStore(), { cases: 60, lapses: false });
  const b = await debitModel('SharedIdempotencyStore(memory)', () => createSharedIdempotencyStore(), { cases: 60, lapses: false });
  assert.equal(a.lateSeen + b.lateSeen, 0);
  t.diagnostic(`debits: ${a.total} over 60 keys (IdempotencyStore), ${b.total} over 60 keys (shared, memory)`);
});

test('debit model on Redis with owners past their lease: a second debit happens only with a late completion surfaced', { timeout: 300_000 }, async (t) => {
  const m = await debitModel(
    'SharedIdempotencyStore(redis)',
    (c, late) =>
      createSharedIdempotencyStore({
        store: redisStateStore({ client: redis.conn.client, prefix: `model${c}`, timeoutMs: 5000 }),
        inFlightLeaseMs: 20,
        onLateCompletion: (e) => late.push(e),
      }),
    { cases: 40, lapses: true },
  );
  t.diagnostic(`debits: ${m.total} over 40 keys; late owner completions surfaced: ${m.lateSeen}`);
});
