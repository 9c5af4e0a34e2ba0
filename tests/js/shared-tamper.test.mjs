// Issue 17, in one process: one key buys only its own order, options come from own properties only,
// stores and registries are bounded, and messages/snapshots from outside are clamped. Each test is
// the red-team repro that succeeded against the first release; it must fail there and pass here.
// (Redis cases: shared-redis-limits.test.mjs; Chromium tab/storage cases: tests/browser/shared-tamper.)
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  chargeCustomer,
  createCheckoutClient,
  IdempotencyStore,
  CircuitBreaker,
  BreakerRegistry,
  IdempotencyKeyReuseError,
  StoreFullError,
  DuplicateRequestError,
  OutcomeUnknownError,
  isSteadfastError,
  shareBreakerAcrossTabs,
  persistentCheckoutKey,
  createSharedIdempotencyStore,
  memoryStateStore,
} from 'steadfast';
import { memoryStorage } from '../support/storage.mjs';

const POLICY = Object.freeze({ maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 });
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/** A gateway that debits a ledger (no idempotency of its own: what we must not rely on). */
function ledgerGateway({ delayMs = 0 } = {}) {
  const ledger = [];
  const fn = async (charge) => {
    if (delayMs) await sleep(delayMs);
    ledger.push({ key: charge.idempotencyKey, amountCents: charge.amountCents, customer: charge.customerId });
    return { reference: `ch_${ledger.length}`, amountCents: charge.amountCents, customer: charge.customerId };
  };
  return { ledger, fn };
}

const passThrough = { execute: (fn) => Promise.resolve().then(fn) };

describe('one key buys only its own order', () => {
  test('checkout client: a $1,000 order sent while a $1 charge with the same key is in flight is refused, not answered from the $1 charge', async () => {
    const bodies = [];
    const fetch = async (url, init) => {
      bodies.push(JSON.parse(init.body));
      await sleep(20);
      return new Response(JSON.stringify({ id: `ch_${bodies.length}` }), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const client = createCheckoutClient({ endpoint: 'https://pay.example/v1/charges', fetch, retry: { maxAttempts: 1 } });
    const small = client.charge({ amountCents: 100, currency: 'usd' }, { idempotencyKey: 'order-k' });
    const big = client.charge({ amountCents: 100_000, currency: 'usd' }, { idempotencyKey: 'order-k' });
    const same = client.charge({ currency: 'usd', amountCents: 100 }, { idempotencyKey: 'order-k' }); // a real double click
    const [a, b, c] = await Promise.allSettled([small, big, same]);
    assert.equal(a.status, 'fulfilled');
    assert.equal(a.value.status, 'succeeded');
    assert.equal(b.status, 'rejected');
    assert.ok(b.reason instanceof IdempotencyKeyReuseError, `got ${b.reason}`);
    assert.equal(c.status, 'fulfilled', 'the identical request (keys in another order) shares the pending charge');
    assert.equal(c.value, a.value);
    assert.deepEqual(bodies, [{ amountCents: 100, currency: 'usd' }], 'one gateway call, for the $1 order');
  });

  test('chargeCustomer: another customer reusing a key (same amount) is refused, never handed the first result', async () => {
    const gw = ledgerGateway();
    const deps = { store: new IdempotencyStore(), breaker: passThrough, gateway: gw.fn, policy: POLICY };
    const alice = await chargeCustomer({ idempotencyKey: 'k1', amountCents: 5000, currency: 'usd', customerId: 'alice' }, deps);
    assert.equal(alice.customer, 'alice');
    await assert.rejects(chargeCustomer({ idempotencyKey: 'k1', amountCents: 5000, currency: 'usd', customerId: 'bob' }, deps), IdempotencyKeyReuseError);
    // Concurrently, in flight: the second order is refused as a different request, not "in flight".
    const slow = ledgerGateway({ delayMs: 20 });
    const d2 = { ...deps, gateway: slow.fn };
    const first = chargeCustomer({ idempotencyKey: 'k2', amountCents: 100, currency: 'usd', customerId: 'alice' }, d2);
    await assert.rejects(chargeCustomer({ idempotencyKey: 'k2', amountCents: 100_000, currency: 'usd', customerId: 'alice' }, d2), IdempotencyKeyReuseError);
    await first;
    // The same charge replays (same fields, any order).
    assert.deepEqual(await chargeCustomer({ customerId: 'alice', currency: 'usd', amountCents: 5000, idempotencyKey: 'k1' }, deps), alice);
    assert.equal(gw.ledger.length + slow.ledger.length, 2);
  });

  test('scope binds a client-supplied key to its principal', async () => {
    const gw = ledgerGateway();
    const store = new IdempotencyStore();
    const deps = (scope) => ({ store, breaker: passThrough, gateway: gw.fn, policy: POLICY, scope });
    await chargeCustomer({ idempotencyKey: 'client-key', amountCents: 700, currency: 'eur' }, deps('tenant-a'));
    await assert.rejects(chargeCustomer({ idempotencyKey: 'client-key', amountCents: 700, currency: 'eur' }, deps('tenant-b')), IdempotencyKeyReuseError);
    assert.equal(await store.run('other', async () => 1, { fingerprint: 'x', scope: 'a' }), 1);
    await assert.rejects(
      store.run('other', async () => 2, { fingerprint: 'x', scope: 'b' }),
      IdempotencyKeyReuseError,
    );
    await assert.rejects(
      store.run('other', async () => 2, { fingerprint: 'x' }),
      IdempotencyKeyReuseError,
    );
    assert.equal(await store.run('other', async () => 3, { scope: 'a', fingerprint: 'x' }), 1);
    assert.equal(gw.ledger.length, 1);
    await assert.rejects(
      store.run('k', async () => 1, { scope: 42 }),
      (e) => e instanceof TypeError && e.code === 'INVALID_OPTION',
    );
  });

  test("keys 'k' and 'k ' are not two records: keys with leading or trailing spaces are refused", async () => {
    const store = new IdempotencyStore();
    assert.equal(await store.run('k', async () => 'first'), 'first');
    for (const k of ['k ', ' k', '\tk']) {
      let ran = false;
      await assert.rejects(
        store.run(k, async () => (ran = true)),
        (e) => e instanceof RangeError && e.code === 'INVALID_KEY',
      );
      assert.equal(ran, false);
    }
    const shared = createSharedIdempotencyStore();
    await assert.rejects(
      shared.run('k ', async () => 1),
      (e) => e.code === 'INVALID_KEY',
    );
  });
});

describe('options are read from own properties only', () => {
  const polluted = async (name, value, fn) => {
    Object.defineProperty(Object.prototype, name, { value, configurable: true, writable: true, enumerable: false });
    try {
      await fn();
    } finally {
      delete Object.prototype[name];
    }
  };

  test('a polluted Object.prototype.idempotencyKey does not make three orders share one debit', async () => {
    await polluted('idempotencyKey', 'polluted-key', async () => {
      const gw = ledgerGateway();
      const deps = { store: new IdempotencyStore(), breaker: passThrough, gateway: gw.fn, policy: POLICY };
      for (const amountCents of [100, 200, 300]) {
        await assert.rejects(chargeCustomer({ amountCents, currency: 'usd' }, deps), (e) => e.code === 'INVALID_OPTION' && e.option === 'idempotencyKey');
      }
      const keys = [];
      const fetch = async (url, init) => {
        keys.push(new Headers(init.headers).get('idempotency-key'));
        return new Response('{"id":"ch"}', { status: 200 });
      };
      const client = createCheckoutClient({ endpoint: 'https://pay.example/v1/charges', fetch, retry: { maxAttempts: 1 } });
      for (const amountCents of [100, 200, 300]) assert.equal((await client.charge({ amountCents, currency: 'usd' })).status, 'succeeded');
      assert.equal(new Set(keys).size, 3, 'three orders, three keys');
      assert.ok(!keys.includes('polluted-key'));
    });
  });

  test('a polluted ttlMs does not turn replay protection off', async () => {
    await polluted('ttlMs', 1, async () => {
      let t = 0;
      const store = new IdempotencyStore({ clock: () => t });
      let calls = 0;
      await store.run('k', async () => ++calls);
      t = 10_000;
      assert.equal(await store.run('k', async () => ++calls), 1, 'replayed (the 24 h default applies)');
      assert.equal(calls, 1);
    });
  });

  test('a polluted state does not restore a permanently open breaker', async () => {
    await polluted('state', { version: 1, kind: 'consecutive', state: 'isolated', probeSuccesses: 0, consecutiveFailures: 0, window: [] }, async () => {
      const b = new CircuitBreaker({ failureThreshold: 3, openDurationMs: 1000 });
      assert.equal(b.currentState, 'closed');
      assert.equal(await b.execute(async () => 'ran'), 'ran');
    });
  });
});

describe('limits', () => {
  test('maxRecords: a full store refuses new keys (StoreFullError, nothing runs) and never evicts in-flight or unknown records', async () => {
    let t = 0;
    const store = new IdempotencyStore({ maxRecords: 3, ttlMs: 1000, clock: () => t });
    assert.equal(store.maxRecords, 3);
    let release;
    const inflight = store.run('a', () => new Promise((ok) => (release = ok)));
    await assert.rejects(store.run('b', async () => Promise.reject(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }))));
    await store.run('c', async () => 'done-c');
    let ran = false;
    await assert.rejects(
      store.run('d', async () => (ran = true)),
      (e) => {
        assert.ok(e instanceof StoreFullError && isSteadfastError(e));
        assert.equal(e.code, 'STORE_FULL');
        assert.equal(e.maxRecords, 3);
        assert.equal(e.key, 'd');
        return true;
      },
    );
    assert.equal(ran, false);
    // Every existing key still answers as before.
    await assert.rejects(
      store.run('a', async () => 1),
      DuplicateRequestError,
    );
    await assert.rejects(
      store.run('b', async () => 1),
      OutcomeUnknownError,
    );
    assert.equal(await store.run('c', async () => 'again'), 'done-c');
    // Done records make room once expired, not before; unknown/in-flight never do.
    t = 999;
    await assert.rejects(
      store.run('d', async () => 1),
      StoreFullError,
    );
    t = 1000;
    assert.equal(await store.run('d', async () => 'd'), 'd');
    assert.equal(store.peek('b').status, 'unknown');
    release('a');
    assert.equal(await inflight, 'a');
    assert.throws(
      () => new IdempotencyStore({ maxRecords: 0 }),
      (e) => e instanceof RangeError && e.option === 'maxRecords',
    );
    assert.throws(() => new IdempotencyStore({ maxRecords: 2.5 }), RangeError);
  });

  test('the per-origin breaker registry is bounded (17k origins do not grow it)', () => {
    const registry = new BreakerRegistry({ windowSize: 100, failureRateThreshold: 0.5, openDurationMs: 1000, maxOrigins: 50 });
    for (let i = 0; i < 17_000; i++) registry.get(`https://o${i}.example`);
    assert.equal(registry.origins().length, 50);
    const byDefault = new BreakerRegistry();
    for (let i = 0; i < 5000; i++) byDefault.get(`https://o${i}.example`);
    assert.equal(byDefault.origins().length, 1000);
    assert.throws(() => new BreakerRegistry({ windowSize: 10, failureRateThreshold: 0.5, openDurationMs: 1, maxOrigins: 0 }), RangeError);
  });

  test('an open origin survives eviction while a closed one can go', async () => {
    const registry = new BreakerRegistry({ failureThreshold: 1, openDurationMs: 60_000, maxOrigins: 2 });
    await registry
      .get('https://dead.example')
      .execute(() => Promise.reject(Object.assign(new Error('reset'), { code: 'ECONNRESET' })))
      .catch(() => {});
    assert.equal(registry.get('https://dead.example').currentState, 'open');
    registry.get('https://live.example');
    registry.get('https://new.example');
    assert.deepEqual(registry.origins().sort(), ['https://dead.example', 'https://new.example']);
    assert.equal(registry.get('https://dead.example').currentState, 'open');
  });

  test('windows are bounded: windowSize above 100,000 is a RangeError naming the option', () => {
    assert.throws(
      () => new CircuitBreaker({ windowSize: 100_001, failureRateThreshold: 0.5, openDurationMs: 1 }),
      (e) => e instanceof RangeError && e.option === 'windowSize' && /100000/.test(e.message),
    );
  });

  test('the memory state store keeps a bounded number of breaker names', async () => {
    const store = memoryStateStore();
    const cfg = { kind: 'consecutive', failureThreshold: 2, openDurationMs: 60_000, probesToClose: 1 };
    const fail = async (h) => h.record((await h.acquire()).permit, true);
    const open = store.breaker('name-0', cfg);
    await fail(open);
    await fail(open); // name-0 is open: it is kept
    await fail(store.breaker('name-1', cfg)); // one failure of two: closed, so it may be dropped
    for (let i = 2; i < 10_050; i++) store.breaker(`name-${i}`, cfg);
    assert.equal((await store.breaker('name-0', cfg).state()).state, 'open', 'the open breaker was not dropped');
    const again = store.breaker('name-1', cfg);
    await fail(again);
    assert.equal((await again.state()).state, 'closed', 'name-1 was dropped at the 10,000-name bound and started afresh');
  });
});

describe('untrusted inputs from tabs and snapshots are clamped and validated', () => {
  test('restore() and openUntil() clamp a deadline to now + openDurationMs', async () => {
    let t = 1_000_000;
    const clock = () => t;
    const opts = { failureThreshold: 3, openDurationMs: 5000, clock };
    const restored = new CircuitBreaker({
      ...opts,
      state: { version: 1, kind: 'consecutive', state: 'open', openUntil: 1e300, probeSuccesses: 0, consecutiveFailures: 0, window: [] },
    });
    assert.equal(restored.currentState, 'open');
    assert.equal(restored.toJSON().openUntil, t + 5000);
    t += 5000;
    assert.equal(restored.currentState, 'half-open', 'a forged snapshot cannot hold it open for good');
    const b = new CircuitBreaker(opts);
    b.openUntil(1e300);
    assert.equal(b.toJSON().openUntil, t + 5000);
    assert.throws(() => b.openUntil(NaN), RangeError);
  });

  test('BroadcastChannel: a hostile open message is clamped, NaN and junk are ignored and reported, never thrown', async () => {
    const channelName = `steadfast-tamper-${process.pid}-${Date.now()}`;
    const breaker = new CircuitBreaker({ failureThreshold: 2, openDurationMs: 2000 });
    const remote = [];
    const tabs = shareBreakerAcrossTabs(breaker, { channel: channelName, onRemote: (e) => remote.push(e) });
    const attacker = new BroadcastChannel(channelName);
    const uncaught = [];
    const onUncaught = (e) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      for (const m of [
        { type: 'open', until: NaN },
        { type: 'open', until: '1e300' },
        { type: 'open' },
        null,
        42,
        { type: 'reboot' },
        { type: 'open', until: Infinity },
      ]) {
        attacker.postMessage(m);
      }
      await sleep(50);
      assert.equal(breaker.currentState, 'closed', 'nothing opened it');
      assert.equal(remote.filter((e) => e.type === 'invalid').length, 7);
      const before = Date.now();
      attacker.postMessage({ type: 'open', until: 1e300 });
      await sleep(50);
      assert.equal(breaker.currentState, 'open');
      const until = breaker.toJSON().openUntil;
      assert.ok(until <= Date.now() + 2000 && until >= before + 2000 - 100, `clamped to now + openDurationMs, got ${until - before} ms ahead`);
      assert.deepEqual(uncaught, []);
    } finally {
      process.off('uncaughtException', onUncaught);
      attacker.close();
      tabs.close();
    }
  });

  test('BroadcastChannel: a forged close never closes an open breaker; only the tab whose probe succeeded can', async () => {
    const channelName = `steadfast-close-${process.pid}-${Date.now()}`;
    const remote = [];
    const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 300 });
    const tabs = shareBreakerAcrossTabs(breaker, { channel: channelName, onRemote: (e) => remote.push(e) });
    let shareB;
    const peer = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 300, onStateChange: (st) => shareB.onStateChange(st) });
    shareB = shareBreakerAcrossTabs(peer, { channel: channelName });
    const attacker = new BroadcastChannel(channelName);
    const seen = [];
    attacker.onmessage = (e) => seen.push(e.data);
    const down = () => Promise.reject(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    try {
      await breaker.execute(down).catch(() => {});
      assert.equal(breaker.currentState, 'open');
      // During the cooldown: a bare close, a close with a made-up proof, and a lease + its own proof.
      const secret = 'a'.repeat(32);
      const lease = createHash('sha256').update(secret).digest('hex').slice(0, 32);
      for (const m of [{ type: 'closed' }, { type: 'closed', lease, proof: secret }, { type: 'probe', lease }, { type: 'closed', lease, proof: secret }])
        attacker.postMessage(m);
      await sleep(50);
      assert.equal(breaker.currentState, 'open', 'no message closes a breaker during its cooldown');
      assert.equal(remote.filter((e) => e.type === 'invalid').length, 4);
      await sleep(300); // the cooldown is over: the breaker admits a probe
      assert.equal(breaker.currentState, 'half-open');
      // The peer (opened by the trip's broadcast) takes the probe and succeeds; every tab sees its lease and proof.
      assert.equal(peer.currentState, 'half-open');
      assert.equal(await peer.execute(async () => 'probe ok'), 'probe ok');
      await sleep(50);
      assert.equal(breaker.currentState, 'closed', "the probing tab's proven close is believed");
      const proven = seen.find((m) => m?.type === 'closed');
      assert.ok(proven && typeof proven.proof === 'string', 'the close carried its proof');
      await breaker.execute(down).catch(() => {});
      assert.equal(breaker.currentState, 'open');
      await sleep(350); // past the new cooldown: a replayed proof of the earlier probe still proves nothing
      attacker.postMessage(proven);
      await sleep(50);
      assert.equal(breaker.currentState, 'half-open', 'a replayed proof does not close it');
    } finally {
      attacker.close();
      tabs.close();
      shareB.close();
    }
  });

  test('persistentCheckoutKey: storage that refuses the write after the debit does not make charge() reject a paid order', async () => {
    const map = new Map();
    let full = false;
    const storage = {
      getItem: (k) => (map.has(k) ? map.get(k) : null),
      setItem: (k, v) => {
        if (full) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
        map.set(k, String(v));
      },
      removeItem: (k) => map.delete(k),
    };
    let debits = 0;
    const fetch = async () => {
      debits += 1;
      full = true; // the quota fills up while the charge is in flight
      return new Response('{"id":"ch_paid"}', { status: 200 });
    };
    const client = createCheckoutClient({ endpoint: 'https://pay.example/v1/charges', fetch, retry: { maxAttempts: 1 } });
    const reported = [];
    const cart = await persistentCheckoutKey({ cartId: 'quota', storage, locks: null, onStorageError: (e) => reported.push(e.name) });
    const outcome = await cart.charge(client, { amountCents: 4999, currency: 'usd' });
    assert.deepEqual([outcome.status, outcome.reference, debits], ['succeeded', 'ch_paid', 1]);
    assert.deepEqual(reported, ['QuotaExceededError']);
    // The same with a gateway that fails after the request left: the real outcome (unknown), not the storage error.
    full = false;
    const lost = await persistentCheckoutKey({ cartId: 'quota-unknown', storage, locks: null });
    const down = createCheckoutClient({
      endpoint: 'https://pay.example/v1/charges',
      fetch: async () => {
        full = true;
        return new Response('{}', { status: 503 });
      },
      retry: { maxAttempts: 1 },
    });
    assert.equal((await lost.charge(down, { amountCents: 4999, currency: 'usd' })).status, 'unknown');
    // Storage that refuses before anything is sent: charge() rejects with its error and sends nothing.
    const before = await (async () => {
      full = false;
      const c = await persistentCheckoutKey({ cartId: 'quota-before', storage, locks: null });
      full = true;
      return c;
    })();
    await assert.rejects(before.charge(client, { amountCents: 1, currency: 'usd' }), (e) => e.name === 'QuotaExceededError');
    assert.equal(debits, 1, 'nothing was sent');
    await assert.rejects(persistentCheckoutKey({ cartId: 'x', storage, locks: null, onStorageError: 'log' }), TypeError);
  });

  test('persistentCheckoutKey: forged or stale stored entries are ignored, replaced and pruned', async () => {
    const map = new Map();
    const storage = memoryStorage(map);
    const now = Date.now();
    // A forged "succeeded" whose outcome does not name the key; a key that is not a key; a never-sent
    // entry older than a day; an unknown one as old (kept: its key may have been charged, only settling
    // or clear() ends it); 150 old carts.
    map.set(
      'steadfast:checkout:forged',
      JSON.stringify({ key: 'k-1', status: 'succeeded', createdAt: now, outcome: { status: 'succeeded', reference: 'ch_fake' } }),
    );
    map.set('steadfast:checkout:badkey', JSON.stringify({ key: ' spaced ', status: 'unknown', createdAt: now }));
    map.set('steadfast:checkout:stale', JSON.stringify({ key: 'k-stale', status: 'new', createdAt: now - 2 * 86_400_000 }));
    map.set('steadfast:checkout:stale-unknown', JSON.stringify({ key: 'k-stale-unknown', status: 'unknown', createdAt: now - 2 * 86_400_000 }));
    for (let i = 0; i < 150; i++)
      map.set(`steadfast:checkout:old-${i}`, JSON.stringify({ key: `k-old-${i}`, status: 'new', createdAt: now - 1000 * (150 - i) }));
    map.set('unrelated', 'kept');
    const forged = await persistentCheckoutKey({ cartId: 'forged', storage, locks: null });
    assert.notEqual(forged.key, 'k-1', 'the forged entry was not trusted');
    assert.equal((await forged.state()).status, 'new');
    const badkey = await persistentCheckoutKey({ cartId: 'badkey', storage, locks: null });
    assert.notEqual(badkey.key, ' spaced ');
    assert.ok(!map.has('steadfast:checkout:stale'), 'stale entry pruned');
    assert.ok(map.has('steadfast:checkout:stale-unknown'), 'an unknown entry is never aged out or evicted');
    const ours = [...map.keys()].filter((k) => k.startsWith('steadfast:checkout:'));
    assert.ok(ours.length <= 101, `at most maxEntries (100) carts kept, plus the new one: ${ours.length}`);
    assert.equal(map.get('unrelated'), 'kept');
    // A genuine settled entry written by this code still replays.
    const fetch = async () => new Response('{"id":"ch_1"}', { status: 200 });
    const client = createCheckoutClient({ endpoint: 'https://pay.example/v1/charges', fetch, retry: { maxAttempts: 1 } });
    const cart = await persistentCheckoutKey({ cartId: 'genuine', storage, locks: null });
    const paid = await cart.charge(client, { amountCents: 100, currency: 'usd' });
    assert.equal(paid.status, 'succeeded');
    const again = await persistentCheckoutKey({ cartId: 'genuine', storage, locks: null });
    assert.equal(again.key, cart.key);
    const replay = await again.charge(client, { amountCents: 100, currency: 'usd' });
    assert.equal(replay.replayed, true);
  });
});
