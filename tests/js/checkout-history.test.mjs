// The checkout client reads every answer with the charge's whole history, across endpoints and
// reloads, over real HTTP: a key that may have been processed is re-sent only where it may have been
// processed, a re-send after a reload starts from "may have been processed", and a 2xx is a success
// only when it names the charge (docs/checkout-contract.md, docs/guarantees.md).
// Run: node --test tests/js/checkout-history.test.mjs (after scripts/install-tarball.sh)
import { test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  createCheckoutClient,
  createSharedIdempotencyStore,
  memoryStateStore,
  persistentCheckoutKey,
  CircuitBreaker,
  UnknownEndpointError,
  isSteadfastError,
} from 'steadfast';
import { memoryStorage } from '../support/storage.mjs';

const test = (name, fn) => nodeTest(name, { timeout: 20_000 }, fn);
const CART = { amountCents: 4999, currency: 'usd', orderId: 'o-1' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const retry = { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 };

/**
 * A gateway over node:http that debits once per key it has not seen. `mode` says what it does with
 * each POST: 'ok' (answers the debit), 'drop' (debits, then drops the connection: the answer is
 * lost), 'front402'/'front404' (something in front of it answers; nothing reaches the ledger), or a
 * function `(post) => ({ status, body })`. `posts` keeps every POST's key, as received.
 */
async function ledger(t, mode = 'ok') {
  const g = { mode, posts: [], debits: new Map() };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const key = req.headers['idempotency-key'];
      g.posts.push({ method: req.method, key, body });
      const answer = (status, text) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(text);
      };
      if (typeof g.mode === 'function') {
        const a = g.mode(g.posts.at(-1));
        return answer(a.status, typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
      }
      if (g.mode === 'front402') return answer(402, '{"error":{"type":"card_error","decline_code":"fraud_proxy"}}');
      if (g.mode === 'front404') return answer(404, '{"error":"not found"}');
      if (!g.debits.has(key)) g.debits.set(key, `ch_${g.debits.size + 1}`);
      if (g.mode === 'drop') return req.socket.destroy();
      return answer(200, JSON.stringify({ reference: g.debits.get(key) }));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  g.port = server.address().port;
  g.url = `http://127.0.0.1:${g.port}/v1/charges`;
  return g;
}

const options = (g, extra) => ({ endpoint: g.url, attemptTimeoutMs: 300, breaker: false, retry, ...extra });

/** A charge made at `B` (the primary's circuit open: failover), debited there and its answer lost. */
async function chargedAtSecondary(t) {
  const A = await ledger(t, 'ok');
  const B = await ledger(t, 'drop');
  const store = createSharedIdempotencyStore({ store: memoryStateStore() });
  const breaker = new CircuitBreaker({ failureThreshold: 5, openDurationMs: 1000 });
  const c1 = createCheckoutClient({ ...options(A), secondaryEndpoint: B.url, breaker, store });
  breaker.isolate();
  const first = await c1.charge(CART, { idempotencyKey: 'k-secondary' });
  assert.equal(first.status, 'unknown');
  assert.equal(A.posts.length, 0);
  assert.deepEqual(
    B.posts.map((p) => p.key),
    ['k-secondary', 'k-secondary'],
  );
  B.mode = 'ok'; // a re-send there replays the debit
  return { A, B, store };
}

test('reconcile() re-sends a charge made at the secondary only there, however the reconciling client spells that URL', async (t) => {
  const { A, B, store } = await chargedAtSecondary(t);
  const spelt = `HTTP://127.0.0.1:${B.port}/v1/charges`;
  const c2 = createCheckoutClient({ endpoint: A.url, secondaryEndpoint: spelt, store, attemptTimeoutMs: 300, breaker: false });
  const outcome = await c2.reconcile('k-secondary', CART);
  assert.deepEqual(outcome, { status: 'succeeded', reference: 'ch_1', key: 'k-secondary' });
  assert.equal(A.posts.length, 0, 'nothing went to the primary');
  assert.deepEqual(
    B.posts.map((p) => p.key),
    ['k-secondary', 'k-secondary', 'k-secondary'],
  );
  assert.equal(A.debits.size + B.debits.size, 1, 'one debit for the one key');
});

test('reconcile() refuses a key that may have been processed at an endpoint the client does not have: UnknownEndpointError, nothing sent', async (t) => {
  const { A, B, store } = await chargedAtSecondary(t);
  const c2 = createCheckoutClient({ endpoint: A.url, store, attemptTimeoutMs: 300, breaker: false });
  const outcome = await c2.reconcile('k-secondary', CART);
  assert.equal(outcome.status, 'unknown');
  assert.equal(outcome.reason, 'unknown-endpoint');
  assert.equal(outcome.retryAfterMs, Infinity);
  assert.ok(outcome.error instanceof UnknownEndpointError);
  assert.equal(outcome.error.name, 'UnknownEndpointError');
  assert.ok(isSteadfastError(outcome.error, 'UNKNOWN_ENDPOINT'));
  assert.equal(outcome.error.endpoint, B.url);
  assert.deepEqual(outcome.error.endpoints, [A.url]);
  // Every unknown key at once: this client did not make it (it does not know the charge): skipped.
  const all = await c2.reconcile();
  assert.deepEqual(
    all.map((o) => [o.key, o.status, o.reason]),
    [['k-secondary', 'skipped', 'not-this-client']],
  );
  assert.equal(A.posts.length, 0, 'never failed over to the primary');
  assert.equal(B.posts.length, 2, 'nothing re-sent');
  assert.equal((await store.peek('k-secondary')).status, 'unknown', 'the key stays unknown');
});

test('after a reload, a resumed unknown charge answered 402 or 404 by something in front of the gateway stays unknown', async (t) => {
  for (const front of ['front402', 'front404']) {
    const g = await ledger(t, 'drop');
    const storage = memoryStorage();
    const page1 = await persistentCheckoutKey({ cartId: `cart-${front}`, storage, locks: null });
    assert.equal((await page1.charge(createCheckoutClient(options(g)), CART)).status, 'unknown');
    const page2 = await persistentCheckoutKey({ cartId: `cart-${front}`, storage, locks: null });
    assert.equal(page2.key, page1.key);
    assert.equal((await page2.state()).status, 'unknown');
    g.mode = front;
    const outcome = await page2.charge(createCheckoutClient(options(g)), CART, { resume: true });
    assert.deepEqual(outcome, { status: 'unknown', key: page1.key }, front);
    assert.equal((await page2.state()).status, 'unknown', `${front}: the key is not freed`);
    assert.deepEqual(
      g.posts.map((p) => p.key),
      [page1.key, page1.key, page1.key],
      `${front}: one re-send, the same key`,
    );
    assert.equal(g.debits.size, 1);
  }
});

test('after a reload, a resumed charge is declined only by a decline sent after the settle window from its last attempt', async (t) => {
  const g = await ledger(t, 'drop');
  const storage = memoryStorage();
  const settle = { settleAfterMs: 150 };
  const page1 = await persistentCheckoutKey({ cartId: 'cart-window', storage, locks: null });
  assert.equal((await page1.charge(createCheckoutClient(options(g, settle)), CART)).status, 'unknown');
  const entry = JSON.parse(storage.getItem('steadfast:checkout:cart-window'));
  assert.equal(typeof entry.lastAttemptAt, 'number', 'the entry keeps when the last attempt was');
  g.mode = 'front402';
  const page2 = await persistentCheckoutKey({ cartId: 'cart-window', storage, locks: null });
  assert.equal((await page2.charge(createCheckoutClient(options(g, settle)), CART, { resume: true })).status, 'unknown', 'inside the window');
  await sleep(200);
  const page3 = await persistentCheckoutKey({ cartId: 'cart-window', storage, locks: null });
  const late = await page3.charge(createCheckoutClient(options(g, settle)), CART, { resume: true });
  assert.deepEqual(
    late,
    { status: 'declined', reason: 'fraud_proxy', key: page1.key },
    'after the window: a gateway that honours keys would have replayed a debit',
  );
  assert.equal((await page3.state()).status, 'declined');
  assert.equal(g.posts.length, 4);
  assert.ok(g.posts.every((p) => p.key === page1.key));
});

test('reconcile(key, charge) on a client that did not make the charge starts from "may have been processed"; the window counts from its re-send', async (t) => {
  const g = await ledger(t, 'drop');
  const settle = { settleAfterMs: 150 };
  const c1 = createCheckoutClient(options(g, settle));
  assert.equal((await c1.charge(CART, { idempotencyKey: 'order-o-1' })).status, 'unknown');
  g.mode = 'front402';
  const c2 = createCheckoutClient(options(g, settle)); // after a reload: this client did not make it
  assert.equal((await c2.reconcile('order-o-1', CART)).status, 'unknown', 'the earlier attempt time is not known: no decline settles it now');
  assert.equal((await c2.store.peek('order-o-1'))?.status, 'unknown', 'the key is not freed');
  // A 404 from something in front of the gateway frees nothing either.
  g.mode = 'front404';
  assert.equal((await c2.reconcile('order-o-1')).status, 'unknown');
  await sleep(200);
  g.mode = 'front402';
  assert.deepEqual(await c2.reconcile('order-o-1'), { status: 'declined', reason: 'fraud_proxy', key: 'order-o-1' });
  assert.deepEqual(
    g.posts.map((p) => p.key),
    Array(5).fill('order-o-1'),
  );
});

test('charge() maybeProcessed: a re-send never fails over, and its fields are validated', async (t) => {
  const A = await ledger(t, 'front404');
  const c = createCheckoutClient(options(A));
  const outcome = await c.charge(CART, { idempotencyKey: 'k-mp', maybeProcessed: { lastAttemptAt: Date.now() } });
  assert.deepEqual(outcome, { status: 'unknown', key: 'k-mp' });
  const elsewhere = await c.charge(CART, { idempotencyKey: 'k-mp2', maybeProcessed: { endpoint: 'http://127.0.0.1:1/v1/charges' } });
  assert.equal(elsewhere.reason, 'unknown-endpoint');
  assert.ok(elsewhere.error instanceof UnknownEndpointError);
  assert.equal(A.posts.length, 1);
  await assert.rejects(
    c.charge(CART, { maybeProcessed: { lastAttemptAt: -1 } }),
    (e) => e instanceof RangeError && /maybeProcessed\.lastAttemptAt/.test(e.message),
  );
  await assert.rejects(
    c.charge(CART, { maybeProcessed: { lastAttemptAt: 'soon' } }),
    (e) => e instanceof TypeError && /maybeProcessed\.lastAttemptAt/.test(e.message),
  );
  await assert.rejects(c.charge(CART, { maybeProcessed: { endpoint: 42 } }), (e) => e instanceof TypeError && /maybeProcessed\.endpoint/.test(e.message));
  await assert.rejects(c.charge(CART, { maybeProcessed: { lastAttempt: 1 } }), TypeError);
  assert.equal(A.posts.length, 1, 'bad options send nothing');
});

test('a 2xx carrying a card_error is declined (the key freed) unless an earlier attempt may have been processed', async (t) => {
  const decline = { status: 200, body: { error: { type: 'card_error', decline_code: 'insufficient_funds' } } };
  const g = await ledger(t, () => decline);
  const c = createCheckoutClient(options(g));
  assert.deepEqual(await c.charge(CART, { idempotencyKey: 'k-200-decline' }), { status: 'declined', reason: 'insufficient_funds', key: 'k-200-decline' });
  assert.equal(await c.store.peek('k-200-decline'), undefined, 'the key is free');
  // The attempt before it timed out (it may have been debited): the 2xx decline says nothing about it.
  let n = 0;
  const h = await ledger(t, 'drop');
  h.mode = () => {
    n += 1;
    return n === 1 ? { status: 503, body: {} } : decline;
  };
  const d = createCheckoutClient(options(h));
  assert.deepEqual(await d.charge(CART, { idempotencyKey: 'k-503-then-decline' }), { status: 'unknown', key: 'k-503-then-decline' });
  assert.equal((await d.store.peek('k-503-then-decline')).status, 'unknown');
  assert.equal(h.posts.length, 2);
});

test('a 2xx that names no charge (empty, not JSON, no reference) is unknown: parked, not recorded as a success', async (t) => {
  for (const [label, body] of [
    ['empty', ''],
    ['not JSON', '<html>ok</html>'],
    ['no reference', '{"status":"ok"}'],
    ['empty reference', '{"reference":""}'],
    ['a reference and a decline', '{"reference":"ch_1","error":{"type":"card_error"}}'],
  ]) {
    const g = await ledger(t, () => ({ status: 200, body }));
    const c = createCheckoutClient(options(g));
    const key = `k-2xx-${label.replaceAll(' ', '-')}`;
    assert.deepEqual(await c.charge(CART, { idempotencyKey: key }), { status: 'unknown', key }, label);
    assert.equal((await c.store.peek(key)).status, 'unknown', label);
    assert.deepEqual(await c.charge(CART, { idempotencyKey: key }), { status: 'unknown', key }, `${label}: again, without a request`);
    assert.equal(g.posts.length, 1, label);
  }
});
