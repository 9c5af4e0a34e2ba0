// The shared-state layer without Redis: the in-memory state store (the default: nothing to
// configure for one process) behind the same drivers, and the tab helpers on Node's BroadcastChannel
// and a Storage stand-in (the real browser run is tests/browser/shared-tabs.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CircuitBreaker,
  CircuitOpenError,
  createSharedBreaker,
  createSharedIdempotencyStore,
  memoryStateStore,
  shareBreakerAcrossTabs,
  persistentCheckoutKey,
} from 'steadfast';
import { OUTCOME_CASES } from '../shared/breaker-outcomes.mjs';

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const fail = () => Promise.reject(new Error('HTTP 503'));
const tick = () => new Promise((ok) => setTimeout(ok, 10));
/** BroadcastChannel delivery is asynchronous and slower on a loaded machine: wait for it (bounded). */
async function until(condition, ms = 2_000) {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await tick();
}

test('memory store: breakers with one name share one state in the process', async () => {
  const store = memoryStateStore();
  const seen = [];
  const a = createSharedBreaker({ store, name: 'gw', failureThreshold: 2, openDurationMs: 60_000, onStateChange: (s) => seen.push(s) });
  const b = createSharedBreaker({ store, name: 'gw', failureThreshold: 2, openDurationMs: 60_000 });
  await assert.rejects(a.execute(fail), /503/);
  await assert.rejects(b.execute(fail), /503/);
  let ran = false;
  await assert.rejects(
    a.execute(async () => {
      ran = true;
    }),
    CircuitOpenError,
  );
  assert.equal(ran, false);
  assert.equal(
    await a.execute(
      async () => 1,
      () => 'fallback',
    ),
    'fallback',
  );
  assert.deepEqual(seen, ['open']);
  await b.reset();
  assert.equal(await a.execute(async () => 'ok'), 'ok');
  assert.equal(await a.state(), 'closed');
  await a.isolate();
  assert.equal(await b.state(), 'isolated');
});

test('memory store: the default store needs no configuration', async () => {
  const a = createSharedBreaker({ name: 'default-1', windowSize: 4, failureRateThreshold: 0.5, openDurationMs: 60_000 });
  for (let i = 0; i < 4; i += 1) await a.execute(fail).catch(() => {});
  assert.equal(await createSharedBreaker({ name: 'default-1', windowSize: 4, failureRateThreshold: 0.5, openDurationMs: 60_000 }).state(), 'open');
  assert.throws(() => createSharedBreaker({ name: 'x' }), /windowSize|failureThreshold/);
});

test('memory store: idempotency answers like IdempotencyStore, asynchronously', async () => {
  const s = createSharedIdempotencyStore();
  let calls = 0;
  const charge = async () => ({ id: `ch_${++calls}` });
  assert.deepEqual(await s.run('k', charge, { fingerprint: '1 usd' }), { id: 'ch_1' });
  assert.deepEqual(await s.run('k', charge, { fingerprint: '1 usd' }), { id: 'ch_1' }, 'replay');
  await assert.rejects(s.run('k', charge, { fingerprint: '2 usd' }), (e) => e.code === 'KEY_REUSED');
  let release;
  const slow = s.run('slow', () => new Promise((ok) => (release = ok)));
  await assert.rejects(s.run('slow', charge), (e) => e.code === 'DUPLICATE_IN_FLIGHT');
  assert.equal((await s.peek('slow')).status, 'in-flight');
  release('done');
  assert.equal(await slow, 'done');
  await assert.rejects(
    s.run('t', async () => {
      throw Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' });
    }),
  );
  await assert.rejects(s.run('t', charge), (e) => e.code === 'OUTCOME_UNKNOWN');
  assert.deepEqual(await s.unknownKeys(), ['t']);
  assert.equal((await s.peek('t')).status, 'unknown');
  await s.resolve('t', { status: 'done', result: { id: 'ch_settled' } });
  assert.deepEqual(await s.run('t', charge), { id: 'ch_settled' });
  assert.equal(calls, 1);
});

test('tabs: a trip in one breaker opens its peers on the channel; the tab whose probe succeeds closes them', async () => {
  const make = (channel) => {
    let share;
    const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 150, onStateChange: (s) => share.onStateChange(s) });
    share = shareBreakerAcrossTabs(breaker, { channel });
    return { breaker, share };
  };
  const channel = `test-${process.pid}-${Date.now()}`;
  const a = make(channel);
  const b = make(channel);
  try {
    await a.breaker.execute(fail).catch(() => {});
    await until(() => b.breaker.currentState === 'open');
    assert.equal(b.breaker.currentState, 'open');
    assert.equal(b.breaker.toJSON().openUntil, a.breaker.toJSON().openUntil, 'same deadline');
    const c = make(channel); // joins during the cooldown
    await until(() => c.breaker.currentState === 'open');
    assert.equal(c.breaker.currentState, 'open');
    // A reset is this tab's own: it proves no probe, so its peers stay open.
    a.breaker.reset();
    await sleep(30);
    assert.equal(b.breaker.currentState, 'open');
    await a.breaker.execute(fail).catch(() => {}); // a trips again
    await until(() => a.breaker.currentState === 'half-open' && b.breaker.currentState === 'half-open');
    assert.equal(await a.breaker.execute(async () => 'ok'), 'ok'); // a's probe succeeds
    await until(() => b.breaker.currentState === 'closed' && c.breaker.currentState === 'closed');
    assert.equal(b.breaker.currentState, 'closed');
    assert.equal(c.breaker.currentState, 'closed');
    c.share.close();
  } finally {
    a.share.close();
    b.share.close();
  }
  assert.throws(() => shareBreakerAcrossTabs({}, {}), /CircuitBreaker/);
});

test('persistentCheckoutKey: one key per cart across "reloads", settled outcomes replay', async () => {
  const data = new Map();
  const storage = { getItem: (k) => data.get(k) ?? null, setItem: (k, v) => data.set(k, String(v)), removeItem: (k) => data.delete(k) };
  const first = await persistentCheckoutKey({ cartId: 'c1', storage, locks: null });
  const again = await persistentCheckoutKey({ cartId: 'c1', storage, locks: null });
  assert.equal(again.key, first.key);
  assert.equal((await first.state()).status, 'new');
  const seen = [];
  const client = { charge: async (charge, o) => (seen.push(o.idempotencyKey), { status: 'succeeded', reference: 'ch_1', key: o.idempotencyKey }) };
  assert.equal((await first.charge(client, { amountCents: 100, currency: 'usd' })).status, 'succeeded');
  const replay = await again.charge(client, { amountCents: 100, currency: 'usd' });
  assert.equal(replay.replayed, true);
  assert.deepEqual(seen, [first.key]);
  // A charge that ended in an unknown outcome is refused until resumed.
  const other = await persistentCheckoutKey({ cartId: 'c2', storage, locks: null });
  const lost = {
    charge: async () => {
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    },
  };
  await assert.rejects(other.charge(lost, { amountCents: 1, currency: 'usd' }));
  assert.deepEqual(await other.charge(client, { amountCents: 1, currency: 'usd' }), { status: 'unknown', key: other.key });
  assert.equal((await other.charge(client, { amountCents: 1, currency: 'usd' }, { resume: true })).status, 'succeeded');
  first.clear();
  assert.notEqual((await persistentCheckoutKey({ cartId: 'c1', storage, locks: null })).key, first.key);
});

test("persistentCheckoutKey: a reload with a changed cart never resumes, replays or settles under the old cart's key", async () => {
  const data = new Map();
  const storage = { getItem: (k) => data.get(k) ?? null, setItem: (k, v) => data.set(k, String(v)), removeItem: (k) => data.delete(k) };
  const cartA = { amountCents: 1000, currency: 'usd', items: ['a'] };
  const cartB = { amountCents: 100000, currency: 'usd', items: ['a', 'tv'] };
  const sent = [];
  const lost = {
    charge: async (charge, o) => {
      sent.push(o.idempotencyKey);
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    },
  };
  const page1 = await persistentCheckoutKey({ cartId: 'cart-x', storage, locks: null });
  await assert.rejects(page1.charge(lost, cartA));
  assert.equal((await page1.state()).status, 'unknown');
  // The page reloads; the cart now holds a TV.
  const page2 = await persistentCheckoutKey({ cartId: 'cart-x', storage, locks: null });
  assert.equal(page2.key, page1.key);
  const honest = { charge: async (charge, o) => (sent.push(o.idempotencyKey), { status: 'succeeded', reference: 'ch_A', key: o.idempotencyKey }) };
  await assert.rejects(page2.charge(honest, cartB, { resume: true }), (e) => e.code === 'KEY_REUSED' && e.key === page1.key);
  assert.deepEqual(sent, [page1.key], "nothing was sent for cart B under cart A's key");
  // The same cart resumes; then a changed cart is not answered with cart A's success either.
  assert.equal((await page2.charge(honest, cartA, { resume: true })).status, 'succeeded');
  await assert.rejects(page2.charge(honest, cartB), { code: 'KEY_REUSED' });
  assert.equal((await page2.charge(honest, cartA)).replayed, true);
  // A stored fingerprint that is not one is untrusted input: the entry is replaced, not believed.
  data.set([...data.keys()][0], JSON.stringify({ ...JSON.parse([...data.values()][0]), fp: 'x' }));
  assert.notEqual((await persistentCheckoutKey({ cartId: 'cart-x', storage, locks: null })).key, page1.key);
});

for (const [name, run] of OUTCOME_CASES) {
  test(`memory store: ${name}`, () => run(memoryStateStore(), 'outcomes'));
}

test('memory store: a custom store handle without release keeps an excluded probe until its lease lapses', async () => {
  const inner = memoryStateStore();
  const store = {
    kind: 'custom',
    breaker(name, config) {
      const h = inner.breaker(name, config);
      return { acquire: () => h.acquire(), record: (p, f) => h.record(p, f), state: () => h.state(), isolate: () => h.isolate(), reset: () => h.reset() };
    },
    idempotency: (o) => inner.idempotency(o),
  };
  const declined = Object.assign(new Error('declined'), { decline: true });
  const b = createSharedBreaker({ store, name: 'no-release', failureThreshold: 1, openDurationMs: 40, isExcluded: (e) => e?.decline === true });
  await assert.rejects(b.execute(fail), /503/);
  await sleep(60);
  await assert.rejects(
    b.execute(() => Promise.reject(declined)),
    /declined/,
  );
  await assert.rejects(
    b.execute(() => 'x'),
    CircuitOpenError,
    'the probe slot is still held',
  );
  await sleep(100); // the lease: 2 x openDurationMs
  assert.equal(await b.execute(() => 'probe'), 'probe');
  assert.equal(await b.state(), 'closed');
});
