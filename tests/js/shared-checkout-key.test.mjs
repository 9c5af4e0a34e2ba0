// persistentCheckoutKey keeps a maybe-charged cart's key: each test is one sequence — a charge ends
// unknown (the gateway debited, the answer was lost), a fault, a reload, a charge again — and asserts
// the gateway saw ONE key and debited once, and that the second charge answered from the stored
// unknown state without a request. The faults: a key older than maxAgeMs at its first charge, the
// clock set back, maxEntries eviction, another tab's prune during the charge, a storage read that throws.
import { test, describe, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { CircuitBreaker, createCheckoutClient, persistentCheckoutKey, isSteadfastError, StateStoreUnavailableError, StoreFullError } from 'steadfast';
import { memoryStorage } from '../support/storage.mjs';

const CART = Object.freeze({ amountCents: 4999, currency: 'usd' });
const DAY = 86_400_000;

/** Web Locks (exclusive, ifAvailable, query) for one origin. */
function fakeLocks() {
  const held = new Set();
  const queues = new Map();
  return {
    async request(name, opts, fn) {
      if (opts.ifAvailable && held.has(name)) return fn(null);
      while (held.has(name)) await new Promise((ok) => (queues.get(name) ?? queues.set(name, []).get(name)).push(ok));
      held.add(name);
      try {
        return await fn({ name, mode: 'exclusive' });
      } finally {
        held.delete(name);
        queues.get(name)?.shift()?.();
      }
    },
    async query() {
      return { held: [...held].map((name) => ({ name, mode: 'exclusive' })), pending: [] };
    },
  };
}

/** A gateway that honours idempotency keys: the first request for a key debits; 'drop' loses the answer (503 after the debit). */
function gateway() {
  const g = { mode: 'ok', posts: [], debits: new Map(), hold: undefined };
  g.fetch = async (url, init = {}) => {
    if (g.hold) await g.hold;
    const key = new Headers(init.headers).get('idempotency-key');
    g.posts.push(key);
    if (g.debits.has(key)) return new Response(JSON.stringify({ id: g.debits.get(key) }), { status: 200 });
    g.debits.set(key, `ch_${g.debits.size + 1}`);
    if (g.mode === 'drop') return new Response('{}', { status: 503 });
    return new Response(JSON.stringify({ id: g.debits.get(key) }), { status: 200 });
  };
  g.client = () =>
    createCheckoutClient({ endpoint: 'https://pay.example/v1/charges', fetch: g.fetch, retry: { maxAttempts: 1 }, breaker: false, attemptTimeoutMs: 60_000 });
  return g;
}

// Date.now, moved by the tests (restored after each).
const realNow = Date.now;
let offset = 0;
const jump = (ms) => {
  offset += ms;
  Date.now = () => realNow() + offset;
};
afterEach(() => {
  offset = 0;
  Date.now = realNow;
});

/**
 * The tail of every sequence: the reload keeps the key and reads unknown, a plain charge sends
 * nothing, a resume re-sends the same key and is replayed (`resumed: 'expired'`: the key is past the
 * gateway's retention, so the client refuses to re-send it). One key, one debit.
 */
async function afterReload(g, first, reload, { resumed = 'succeeded', keys = [first.key] } = {}) {
  assert.equal(reload.key, first.key, 'the reload keeps the maybe-charged key');
  assert.equal((await reload.state()).status, 'unknown');
  const posts = g.posts.length;
  const again = await reload.charge(g.client(), CART);
  assert.deepEqual(again, { status: 'unknown', key: first.key }, 'answered from the stored unknown state');
  assert.equal(g.posts.length, posts, 'no request for the plain charge');
  const resume = await reload.charge(g.client(), CART, { resume: true });
  if (resumed === 'expired') {
    assert.equal(resume.status, 'unknown');
    assert.equal(g.posts.length, posts, 'a key past retention is not re-sent');
  } else assert.equal(resume.status, resumed);
  assert.deepEqual(new Set(g.posts), new Set(keys), 'the gateway saw one key per cart');
  assert.equal(g.debits.size, keys.length, 'one debit per cart');
}

/**
 * Tab A's charge of `cartId`, held at the gateway (its lock held, its entry in flight) until
 * `release()`; the gateway then debits and loses the answer.
 */
async function heldCharge(cartId) {
  const g = gateway();
  const storage = memoryStorage();
  const locks = fakeLocks();
  let release;
  g.hold = new Promise((ok) => (release = ok));
  g.mode = 'drop';
  const tabA = await persistentCheckoutKey({ cartId, storage, locks });
  const pending = tabA.charge(g.client(), CART);
  await new Promise((ok) => setTimeout(ok, 10));
  return { g, storage, locks, tabA, pending, release };
}

/**
 * A page whose charge of `cartId` ended unknown (the gateway debited, the answer was lost), on a
 * storage and locks of its own: the gateway (back to answering), the storage, the locks, the page.
 */
async function endedUnknown(cartId) {
  const g = gateway();
  const storage = memoryStorage();
  const locks = fakeLocks();
  const page = await persistentCheckoutKey({ cartId, storage, locks });
  g.mode = 'drop';
  assert.equal((await page.charge(g.client(), CART)).status, 'unknown');
  g.mode = 'ok';
  return { g, storage, locks, page };
}

/**
 * A primary and a secondary gateway, each its own ledger (the same key at the other one is a second
 * debit), behind one fetch that counts requests as they arrive (a held one included), and a client
 * over both with `breaker` for the primary.
 */
function twoGateways() {
  const primary = gateway();
  const secondary = gateway();
  const arrived = { primary: 0, secondary: 0 };
  const fetch = (url, init) => {
    const to = String(url).startsWith('https://backup.example/') ? 'secondary' : 'primary';
    arrived[to] += 1;
    return (to === 'secondary' ? secondary : primary).fetch(url, init);
  };
  const client = (breaker) =>
    createCheckoutClient({
      endpoint: 'https://pay.example/v1/charges',
      secondaryEndpoint: 'https://backup.example/v1/charges',
      fetch,
      retry: { maxAttempts: 1 },
      breaker,
      attemptTimeoutMs: 60_000,
    });
  /** A breaker whose circuit is held open: the charge fails over to the secondary. */
  const open = () => {
    const b = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
    b.isolate();
    return b;
  };
  return { primary, secondary, arrived, client, open };
}

describe('persistentCheckoutKey keeps a maybe-charged cart', () => {
  test('a key older than maxAgeMs at its first charge: the unknown entry keeps its key and createdAt, and the reload reuses it', async () => {
    const g = gateway();
    const storage = memoryStorage();
    const locks = fakeLocks();
    const page = await persistentCheckoutKey({ cartId: 'cart-1', storage, locks });
    jump(DAY + 60_000); // the tab stayed open overnight, then Pay
    g.mode = 'drop';
    const first = await page.charge(g.client(), CART);
    assert.equal(first.status, 'unknown');
    const stored = JSON.parse(storage.getItem('steadfast:checkout:cart-1'));
    assert.equal(stored.key, page.key);
    assert.equal(typeof stored.createdAt, 'number');
    g.mode = 'ok';
    jump(60_000);
    await afterReload(g, page, await persistentCheckoutKey({ cartId: 'cart-1', storage, locks }));
  });

  test('a settled key first used after maxAgeMs since its creation still replays (its age counts from first use)', async () => {
    const g = gateway();
    const storage = memoryStorage();
    const page = await persistentCheckoutKey({ cartId: 'cart-1', storage, locks: fakeLocks() });
    jump(DAY + 60_000);
    assert.equal((await page.charge(g.client(), CART)).status, 'succeeded');
    jump(60_000);
    const reload = await persistentCheckoutKey({ cartId: 'cart-1', storage, locks: fakeLocks() });
    assert.equal(reload.key, page.key);
    const replay = await reload.charge(g.client(), CART);
    assert.equal(replay.replayed, true);
    assert.equal(g.posts.length, 1);
  });

  test('the clock set back by 2 minutes: the unknown entry is not judged invalid, and the reload reuses its key', async () => {
    const { g, storage, locks, page } = await endedUnknown('cart-1');
    jump(-120_000);
    await afterReload(g, page, await persistentCheckoutKey({ cartId: 'cart-1', storage, locks }));
  });

  test('an unknown entry older than maxAgeMs is not aged out by prune', async () => {
    const { g, storage, locks, page } = await endedUnknown('cart-1');
    jump(2 * DAY);
    await persistentCheckoutKey({ cartId: 'other', storage, locks }); // another cart's prune
    await afterReload(g, page, await persistentCheckoutKey({ cartId: 'cart-1', storage, locks }), { resumed: 'expired' });
  });

  test('maxEntries eviction (default 100) skips an unknown cart: newer settled-or-new carts go first', async () => {
    const { g, storage, locks, page } = await endedUnknown('cart-A');
    for (let i = 0; i < 100; i++) {
      jump(1);
      await persistentCheckoutKey({ cartId: `other-${i}`, storage, locks });
    }
    const ours = [...storage.map.keys()].filter((k) => k.startsWith('steadfast:checkout:'));
    assert.ok(ours.length <= 101, `still bounded: ${ours.length}`);
    await afterReload(g, page, await persistentCheckoutKey({ cartId: 'cart-A', storage, locks }));
  });

  test('storage full of unknown carts: a new cart is refused with StoreFullError (reported), none is evicted', async () => {
    const g = gateway();
    const storage = memoryStorage();
    const locks = fakeLocks();
    const reported = [];
    const onStorageError = (e) => reported.push(e.name);
    g.mode = 'drop';
    const pages = [];
    for (let i = 0; i < 3; i++) {
      const page = await persistentCheckoutKey({ cartId: `cart-${i}`, storage, locks, maxEntries: 3 });
      assert.equal((await page.charge(g.client(), CART)).status, 'unknown');
      pages.push(page);
    }
    g.mode = 'ok';
    const error = await persistentCheckoutKey({ cartId: 'cart-new', storage, locks, maxEntries: 3, onStorageError }).catch((e) => e);
    assert.ok(error instanceof StoreFullError, `got ${error}`);
    assert.ok(isSteadfastError(error, 'STORE_FULL'));
    assert.deepEqual(reported, ['StoreFullError']);
    assert.equal(storage.getItem('steadfast:checkout:cart-new'), null, 'nothing written for the refused cart');
    const keys = pages.map((p) => p.key);
    await afterReload(g, pages[0], await persistentCheckoutKey({ cartId: 'cart-0', storage, locks, maxEntries: 3 }), { keys });
    for (const p of pages.slice(1))
      assert.equal((await (await persistentCheckoutKey({ cartId: p.cartId, storage, locks, maxEntries: 3 })).state()).status, 'unknown');
  });

  test("another tab's prune during a charge (its lock held) does not evict it, and the outcome is recorded with its key", async () => {
    const { g, storage, locks, tabA, pending, release } = await heldCharge('cart-A');
    for (let i = 0; i < 101; i++) {
      jump(1);
      await persistentCheckoutKey({ cartId: `other-${i}`, storage, locks }); // tab B
    }
    assert.equal(JSON.parse(storage.getItem('steadfast:checkout:cart-A')).status, 'in-flight', 'kept while in flight');
    release();
    assert.equal((await pending).status, 'unknown');
    g.hold = undefined;
    g.mode = 'ok';
    await afterReload(g, tabA, await persistentCheckoutKey({ cartId: 'cart-A', storage, locks }));
  });

  test('the entry removed during a charge (clear() elsewhere): the outcome written still carries the key and createdAt', async () => {
    const { g, storage, locks, tabA, pending, release } = await heldCharge('cart-A');
    storage.removeItem('steadfast:checkout:cart-A');
    release();
    assert.equal((await pending).status, 'unknown');
    const stored = JSON.parse(storage.getItem('steadfast:checkout:cart-A'));
    assert.deepEqual([stored.key, stored.status, typeof stored.createdAt], [tabA.key, 'unknown', 'number']);
    g.hold = undefined;
    g.mode = 'ok';
    await afterReload(g, tabA, await persistentCheckoutKey({ cartId: 'cart-A', storage, locks }));
  });

  test('a storage read that throws is not "absent": nothing is removed or replaced, the load rejects (typed, reported), the next load reuses the key', async () => {
    const { g, storage, locks, page } = await endedUnknown('cart-1');
    const before = storage.getItem('steadfast:checkout:cart-1');
    let failReads = 2; // prune's read and the cart's own
    const flaky = {
      ...storage,
      get length() {
        return storage.length;
      },
      getItem: (k) => {
        if (k === 'steadfast:checkout:cart-1' && failReads-- > 0) throw new DOMException('The operation is insecure.', 'SecurityError');
        return storage.getItem(k);
      },
    };
    const reported = [];
    const error = await persistentCheckoutKey({ cartId: 'cart-1', storage: flaky, locks, onStorageError: (e) => reported.push(e.name) }).catch((e) => e);
    assert.ok(error instanceof StateStoreUnavailableError, `got ${error}`);
    assert.ok(isSteadfastError(error, 'STORE_UNAVAILABLE'));
    assert.equal(error.op, 'read');
    assert.equal(error.cause?.name, 'SecurityError');
    assert.deepEqual(reported, ['SecurityError', 'SecurityError']);
    assert.equal(storage.getItem('steadfast:checkout:cart-1'), before, 'the entry is untouched');
    assert.equal(g.posts.length, 1, 'nothing sent');
    await afterReload(g, page, await persistentCheckoutKey({ cartId: 'cart-1', storage: flaky, locks }));
  });

  test('a storage read that throws at charge() time rejects before anything is sent', async () => {
    const g = gateway();
    const storage = memoryStorage();
    let fail = false;
    const flaky = {
      ...storage,
      get length() {
        return storage.length;
      },
      getItem: (k) => {
        if (fail) throw new DOMException('The operation is insecure.', 'SecurityError');
        return storage.getItem(k);
      },
    };
    const page = await persistentCheckoutKey({ cartId: 'cart-1', storage: flaky, locks: fakeLocks() });
    fail = true;
    await assert.rejects(page.charge(g.client(), CART), StateStoreUnavailableError);
    await assert.rejects(page.state(), StateStoreUnavailableError);
    assert.equal(g.posts.length, 0);
  });

  /**
   * The failover sequence both tests below run: the primary's circuit open, the charge fails over
   * to the secondary, which debits and holds its answer; `meanwhile()` runs while it is held; the
   * page goes away (a new page has locks of its own); after the reload the primary is healthy
   * again and the resumed key must go where it may have been processed: one debit, at the secondary.
   */
  async function failoverCutShort(meanwhile = () => {}) {
    const { primary, secondary, arrived, client, open } = twoGateways();
    secondary.mode = 'drop';
    let release;
    secondary.hold = new Promise((ok) => (release = ok));
    const storage = memoryStorage();
    const page = await persistentCheckoutKey({ cartId: 'cart-1', storage, locks: fakeLocks() });
    const pending = page.charge(client(open()), CART);
    meanwhile();
    await new Promise((ok) => setTimeout(ok, 10));
    assert.deepEqual(arrived, { primary: 0, secondary: 1 }, 'failed over: sent to the secondary only');
    const reload = await persistentCheckoutKey({ cartId: 'cart-1', storage, locks: fakeLocks() });
    assert.equal((await reload.state()).status, 'unknown', 'interrupted mid-charge: unknown');
    secondary.mode = 'ok';
    release();
    const resumed = await reload.charge(client(new CircuitBreaker({ failureThreshold: 5, openDurationMs: 1000 })), CART, { resume: true });
    assert.equal(arrived.primary, 0, 'never sent to the primary: it would have been a second debit');
    assert.equal(resumed.status, 'succeeded');
    assert.deepEqual([primary.debits.size, secondary.debits.size], [0, 1], 'one debit');
    await pending.catch(() => {});
  }

  test('a charge failed over to the secondary and interrupted there (the page closed) is resumed at the secondary only', () => failoverCutShort());

  test('a failover after beforeunload (the page went on running) is recorded before it is sent, and resumed at the secondary only', async () => {
    // The page fires beforeunload while the charge runs and is not torn down at once (a cancelled
    // leave prompt, a link that only downloads, Firefox and WebKit running JS after it): the
    // failover's request still goes out, so where it goes must still be recorded first.
    const page$ = new EventTarget();
    globalThis.addEventListener = page$.addEventListener.bind(page$);
    globalThis.removeEventListener = page$.removeEventListener.bind(page$);
    try {
      await failoverCutShort(() => page$.dispatchEvent(new Event('beforeunload')));
    } finally {
      delete globalThis.addEventListener;
      delete globalThis.removeEventListener;
    }
  });

  test('a failover whose endpoint cannot be recorded is not sent; a first request whose write fails still goes out (reported)', async () => {
    const { primary, arrived, client, open } = twoGateways();
    const storage = memoryStorage();
    let refuse; // which writes fail: () => boolean, given the entry written
    const flaky = {
      ...storage,
      get length() {
        return storage.length;
      },
      setItem: (k, v) => {
        if (refuse?.(JSON.parse(v))) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
        return storage.setItem(k, v);
      },
    };
    const reported = [];
    const page = await persistentCheckoutKey({ cartId: 'cart-1', storage: flaky, locks: fakeLocks(), onStorageError: (e) => reported.push(e.name) });
    refuse = (entry) => entry.sendingTo !== undefined; // every write that records an endpoint
    const failover = await page.charge(client(open()), CART).catch((e) => e);
    assert.equal(failover?.name, 'QuotaExceededError', 'the charge fails with the write that could not record the failover');
    assert.equal(arrived.secondary, 0, 'nothing sent to an endpoint the entry does not name');
    const other = await persistentCheckoutKey({ cartId: 'cart-2', storage: flaky, locks: fakeLocks(), onStorageError: (e) => reported.push(e.name) });
    const plain = await other.charge(client(new CircuitBreaker({ failureThreshold: 5, openDurationMs: 1000 })), CART);
    assert.equal(plain.status, 'succeeded', 'the primary is where a resume goes anyway: its request went out');
    assert.equal(primary.debits.size, 1);
    assert.ok(reported.includes('QuotaExceededError'), 'the failed write was reported');
  });
});
