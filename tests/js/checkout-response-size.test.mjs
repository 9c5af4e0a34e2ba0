// A gateway, or a proxy in front of it, that answers a charge with a body without end (a misrouted
// download, a hostile endpoint) must not grow the page until it crashes mid-charge: the checkout
// client reads at most `maxResponseBytes` of an answer. A longer body is abandoned (the connection
// is freed, the attempt timeout is not waited for), and the attempt got no answer: it may have been
// processed, so the charge is `unknown` and its key stays parked. Real HTTP on 127.0.0.1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createCheckoutClient, newIdempotencyKey } from 'steadfast';

const FAST = Object.freeze({ maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 });
const CHARGE = Object.freeze({ amountCents: 1200, currency: 'usd' });

/** The test gateway: each request's answer is chosen by its path; it counts requests and closed connections. */
let server;
let base;
const seen = { requests: 0, closedEarly: 0, declaredClosed: 0 };
before(async () => {
  const mb = Buffer.alloc(1 << 20, 0x61);
  server = http.createServer((req, res) => {
    seen.requests++;
    req.resume();
    const path = new URL(req.url, 'http://x').pathname;
    if (path === '/endless') {
      // A 200 whose body never ends, as fast as the socket takes it, until the client lets go.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"reference":"ch_endless","pad":"');
      const pump = () => {
        while (!res.destroyed && res.write(mb));
      };
      res.on('drain', pump);
      res.on('close', () => {
        if (!res.writableEnded) seen.closedEarly++;
      });
      pump();
      return;
    }
    if (path === '/declared') {
      // Says up front that it is longer than the client takes (nothing more is sent).
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(64 << 20) });
      res.write('{"reference":"ch_declared"');
      res.on('close', () => seen.declaredClosed++);
      return;
    }
    // /sized/<n>: a 200 naming the charge, padded to exactly n bytes.
    const n = Number(path.split('/')[2]);
    const head = '{"reference":"ch_sized","pad":"';
    const body = head + 'a'.repeat(n - head.length - 2) + '"}';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => server.close());

test('an endless 200 is abandoned at maxResponseBytes: unknown, every attempt cut short, a second click sends nothing', { timeout: 20_000 }, async () => {
  // The attempt timeout is far longer than the test's: only the cap can end these attempts.
  const client = createCheckoutClient({ endpoint: `${base}/endless`, attemptTimeoutMs: 120_000, retry: FAST, breaker: false, maxResponseBytes: 64 * 1024 });
  const key = newIdempotencyKey();
  const before = { ...seen };
  const heapBefore = process.memoryUsage().heapUsed;
  const outcome = await client.charge(CHARGE, { idempotencyKey: key });
  assert.deepEqual(outcome, { status: 'unknown', key }, 'a 2xx whose body was not read is no answer: maybe charged');
  assert.equal(seen.requests - before.requests, FAST.maxAttempts, 'retried under the same key, as a cut-off body is');
  assert.ok(process.memoryUsage().heapUsed - heapBefore < 256 << 20, 'the body was not buffered');
  assert.equal(client.store.peek(key)?.status, 'unknown', 'the key is parked');
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(seen.closedEarly - before.closedEarly, FAST.maxAttempts, 'each connection was let go while the server was still sending');
  const again = await client.charge(CHARGE, { idempotencyKey: key });
  assert.deepEqual(again, { status: 'unknown', key });
  assert.equal(seen.requests - before.requests, FAST.maxAttempts, 'the second click sent nothing');
});

test('the default cap (1 MiB) applies with no option given', { timeout: 20_000 }, async () => {
  const client = createCheckoutClient({ endpoint: `${base}/endless`, attemptTimeoutMs: 120_000, retry: { maxAttempts: 1 }, breaker: false });
  const key = newIdempotencyKey();
  assert.deepEqual(await client.charge(CHARGE, { idempotencyKey: key }), { status: 'unknown', key });
});

test('a Content-Length past the cap is refused before the body is read', { timeout: 20_000 }, async () => {
  const client = createCheckoutClient({ endpoint: `${base}/declared`, attemptTimeoutMs: 120_000, retry: { maxAttempts: 1 }, breaker: false });
  const key = newIdempotencyKey();
  assert.deepEqual(await client.charge(CHARGE, { idempotencyKey: key }), { status: 'unknown', key });
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(seen.declaredClosed, 1, 'the connection was let go');
});

test('a body of exactly maxResponseBytes is read; one byte more is not', async () => {
  const cap = 4096;
  const at = createCheckoutClient({ endpoint: `${base}/sized/${cap}`, retry: { maxAttempts: 1 }, breaker: false, maxResponseBytes: cap });
  const ok = await at.charge(CHARGE, { idempotencyKey: newIdempotencyKey() });
  assert.equal(ok.status, 'succeeded', JSON.stringify(ok).slice(0, 200));
  assert.equal(ok.reference, 'ch_sized');
  const over = createCheckoutClient({ endpoint: `${base}/sized/${cap + 1}`, retry: { maxAttempts: 1 }, breaker: false, maxResponseBytes: cap });
  const key = newIdempotencyKey();
  assert.deepEqual(await over.charge(CHARGE, { idempotencyKey: key }), { status: 'unknown', key });
});

test("a custom fetch whose Response has no stream is held to the cap by its text's length", async () => {
  const bodyOf = (n) => `{"reference":"ch_custom","pad":"${'a'.repeat(n)}"}`;
  const fake = (text) => async () => ({
    ok: true,
    status: 200,
    type: 'basic',
    headers: new Headers({ 'content-type': 'application/json' }),
    body: {},
    text: async () => text,
  });
  const small = createCheckoutClient({ endpoint: `${base}/unused`, fetch: fake(bodyOf(10)), retry: { maxAttempts: 1 }, breaker: false, maxResponseBytes: 100 });
  assert.equal((await small.charge(CHARGE, { idempotencyKey: newIdempotencyKey() })).status, 'succeeded');
  const big = createCheckoutClient({ endpoint: `${base}/unused`, fetch: fake(bodyOf(200)), retry: { maxAttempts: 1 }, breaker: false, maxResponseBytes: 100 });
  assert.equal((await big.charge(CHARGE, { idempotencyKey: newIdempotencyKey() })).status, 'unknown');
});

test('maxResponseBytes must be an integer >= 1', () => {
  const make = (maxResponseBytes) => () => createCheckoutClient({ endpoint: `${base}/sized/100`, maxResponseBytes });
  for (const bad of [0, -1, 1.5, NaN, Infinity]) {
    assert.throws(make(bad), (e) => e instanceof RangeError && e.code === 'INVALID_OPTION' && /maxResponseBytes/.test(e.message), String(bad));
  }
  for (const bad of ['1024', null, {}]) {
    assert.throws(make(bad), (e) => e instanceof TypeError && e.code === 'INVALID_OPTION' && /maxResponseBytes/.test(e.message), String(bad));
  }
});
