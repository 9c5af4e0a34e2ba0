// Each gateway dialect against a local gateway that follows that provider's documented semantics
// (tests/support/dialect-gateway.mjs): the key's header and syntax, a key in progress, a key reused
// for another charge, the replay marker, the key limit and the retention window.
// Run: node --test tests/js/dialects.test.mjs (after scripts/install-tarball.sh)
import { test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import {
  createCheckoutClient,
  resilientFetch,
  gatewayDialect,
  isReplayed,
  IdempotencyKeyReuseError,
  IdempotencyKeyExpiredError,
  OutcomeUnknownError,
  isSteadfastError,
} from 'steadfast';
import http from 'node:http';
import { startDialectGateway } from '../support/dialect-gateway.mjs';

const test = (name, fn) => nodeTest(name, { timeout: 20_000 }, fn);
const CHARGE = { amountCents: 4999, currency: 'usd' };
const DIALECTS = ['stripe', 'ietf', 'adyen', 'paypal', 'checkout'];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function gateway(t, options) {
  const gw = await startDialectGateway(options);
  t.after(() => gw.close());
  return gw;
}

/** A checkout client of its own (its own store: another tab, another process). */
const client = (gw, dialect, extra = {}) => createCheckoutClient({ endpoint: gw.url, dialect, breaker: false, retry: { maxAttempts: 1 }, ...extra });

for (const dialect of DIALECTS) {
  test(`${dialect}: the key travels in the dialect's header and syntax, and the gateway charges once`, async (t) => {
    const gw = await gateway(t, { dialect });
    const key = 'order-1-"quoted"';
    const outcome = await client(gw, dialect).charge(CHARGE, { idempotencyKey: key });
    assert.equal(outcome.status, 'succeeded');
    const d = gatewayDialect(dialect);
    assert.deepEqual(gw.seen.rawKeys, [d.syntax === 'sf-string' ? '"order-1-\\"quoted\\""' : key]);
    assert.equal(gw.seen.processed, 1);
  });

  test(`${dialect}: a second client with the same key gets the first charge, marked replayed where the gateway marks it`, async (t) => {
    const gw = await gateway(t, { dialect });
    const first = await client(gw, dialect).charge(CHARGE, { idempotencyKey: 'k-replay' });
    const again = await client(gw, dialect).charge(CHARGE, { idempotencyKey: 'k-replay' });
    assert.equal(gw.seen.processed, 1, 'charged once');
    assert.equal(again.status, 'succeeded');
    assert.equal(again.reference, first.reference);
    assert.equal(first.replayed, undefined, 'the first answer is not a replay');
    assert.equal(again.replayed, gatewayDialect(dialect).replayHeader === undefined ? undefined : true);
  });

  test(`${dialect}: a key longer than the dialect accepts is refused before anything is sent`, async (t) => {
    const gw = await gateway(t, { dialect });
    const { maxKeyLength } = gatewayDialect(dialect);
    const c = client(gw, dialect);
    await assert.rejects(
      c.charge(CHARGE, { idempotencyKey: 'k'.repeat(maxKeyLength + 1) }),
      (e) => e instanceof RangeError && e.option === 'idempotencyKey' && e.message.includes(String(maxKeyLength)),
    );
    assert.equal(gw.seen.requests, 0);
    assert.equal((await c.charge(CHARGE, { idempotencyKey: 'k'.repeat(maxKeyLength) })).status, 'succeeded');
  });

  test(`${dialect}: past the retention window an unknown key is never re-sent (it would be a new charge)`, async (t) => {
    const retentionMs = 150;
    const gw = await gateway(t, { dialect, retentionMs, holdMs: 120 });
    const c = client(gw, { base: dialect, retentionMs }, { attemptTimeoutMs: 40 });
    const first = await c.charge(CHARGE, { idempotencyKey: 'k-old' });
    assert.equal(first.status, 'unknown');
    await sleep(retentionMs + 20);
    const requests = gw.seen.requests;
    const outcome = await c.reconcile('k-old');
    assert.equal(outcome.status, 'unknown');
    assert.equal(outcome.reason, 'key-expired');
    assert.ok(outcome.error instanceof IdempotencyKeyExpiredError);
    assert.ok(isSteadfastError(outcome.error, 'IDEMPOTENCY_KEY_EXPIRED'));
    assert.equal(outcome.error.retentionMs, retentionMs);
    assert.equal(gw.seen.requests, requests, 'nothing re-sent');
    // The first attempt is processed once its hold ends, which a loaded machine may delay past this
    // point: wait for it (bounded), then check it was the only one.
    for (const until = Date.now() + 2_000; gw.seen.processed === 0 && Date.now() < until;) await sleep(10);
    assert.equal(gw.seen.processed, 1);
    assert.equal(gw.seen.requests, requests, 'still nothing re-sent');
  });
}

for (const dialect of DIALECTS.filter((d) => gatewayDialect(d).inProgressStatus !== undefined)) {
  test(`${dialect}: the gateway's "in progress" answer (${gatewayDialect(dialect).inProgressStatus}) leaves the charge unknown, never unavailable`, async (t) => {
    const gw = await gateway(t, { dialect, holdMs: 200 });
    const a = client(gw, dialect).charge(CHARGE, { idempotencyKey: 'k-busy' });
    await sleep(30);
    const b = await client(gw, dialect).charge(CHARGE, { idempotencyKey: 'k-busy' });
    assert.equal(b.status, 'unknown', 'the gateway holds the key: money may move');
    assert.equal((await a).status, 'succeeded');
    assert.equal(gw.seen.processed, 1);
  });
}

for (const dialect of DIALECTS.filter((d) => gatewayDialect(d).reuseStatuses.length > 0)) {
  test(`${dialect}: a key reused for another charge rejects with IdempotencyKeyReuseError`, async (t) => {
    const gw = await gateway(t, { dialect });
    await client(gw, dialect).charge(CHARGE, { idempotencyKey: 'k-reuse' });
    await assert.rejects(client(gw, dialect).charge({ ...CHARGE, amountCents: 1 }, { idempotencyKey: 'k-reuse' }), IdempotencyKeyReuseError);
    assert.equal(gw.seen.processed, 1);
  });
}

test('resilientFetch: a replayed error is final, not retried; isReplayed reads the marker', async (t) => {
  const gw = await gateway(t, { dialect: 'stripe', answer: () => 500 });
  const init = { method: 'POST', body: JSON.stringify(CHARGE), headers: { 'content-type': 'application/json' } };
  const opts = { dialect: 'stripe', idempotencyKey: 'k-500', breaker: false, budget: false, retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 } };
  await assert.rejects(resilientFetch(gw.url, init, opts), OutcomeUnknownError);
  assert.equal(gw.seen.requests, 2, 'the first 500 is retried once; its replay is the gateway saying so again');
  const replay = await fetch(gw.url, { ...init, headers: { ...init.headers, 'idempotency-key': 'k-500' } });
  assert.equal(isReplayed(replay, 'stripe'), true);
  assert.equal(isReplayed(replay, 'ietf'), false);
});

test('resilientFetch: a re-send past the retention window rejects with IdempotencyKeyExpiredError', async (t) => {
  const gw = await gateway(t, { dialect: 'checkout', answer: () => 503, holdMs: 60 });
  const opts = {
    dialect: { base: 'checkout', retentionMs: 30 },
    idempotencyKey: 'k-slow',
    breaker: false,
    budget: false,
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 },
  };
  await assert.rejects(
    resilientFetch(gw.url, { method: 'POST', body: '{}' }, opts),
    (e) => e instanceof IdempotencyKeyExpiredError && e.key === 'k-slow' && e.dialect === 'custom(checkout)',
  );
  assert.equal(gw.seen.requests, 1);
});

test('resilientFetch with a dialect sends the key in its header and syntax', async (t) => {
  const gw = await gateway(t, { dialect: 'ietf' });
  const res = await resilientFetch(gw.url, { method: 'POST', body: '{}' }, { dialect: 'ietf', idempotencyKey: 'k 1', breaker: false });
  assert.equal(res.status, 200);
  assert.deepEqual(gw.seen.rawKeys, ['"k 1"']);
});

test('bad dialects are clear errors naming the option and the value', () => {
  assert.throws(
    () => gatewayDialect('nope'),
    (e) => e instanceof RangeError && e.option === 'dialect' && /'stripe'/.test(e.message),
  );
  assert.throws(
    () => gatewayDialect(42),
    (e) => e instanceof TypeError && e.option === 'dialect',
  );
  assert.throws(
    () => gatewayDialect({ header: 'Bad Header' }),
    (e) => e instanceof RangeError && e.option === 'header' && e.message.includes('Bad Header'),
  );
  assert.throws(
    () => gatewayDialect({ retentionMs: -1 }),
    (e) => e instanceof RangeError && e.option === 'retentionMs',
  );
  assert.throws(
    () => gatewayDialect({ maxKeyLength: 300 }),
    (e) => e instanceof RangeError && e.option === 'maxKeyLength',
  );
  assert.throws(
    () => gatewayDialect({ inProgressStatus: 200 }),
    (e) => e instanceof RangeError && e.option === 'inProgressStatus',
  );
  assert.throws(
    () => gatewayDialect({ reuseStatuses: [422, 409, 400] }),
    (e) => e instanceof TypeError && e.option === 'reuseStatuses',
  );
  assert.throws(
    () => gatewayDialect({ syntax: 'quoted' }),
    (e) => e instanceof RangeError && e.option === 'syntax',
  );
  assert.throws(
    () => gatewayDialect({ headr: 'X' }),
    (e) => e instanceof TypeError && e.option === 'dialect.headr',
  );
  assert.throws(() => createCheckoutClient({ endpoint: 'http://127.0.0.1:1/', dialect: 'nope' }), RangeError);
  const mine = gatewayDialect({ base: 'ietf', name: 'mine', header: 'X-Key', retentionMs: 1000 });
  assert.equal(mine.header, 'X-Key');
  assert.equal(mine.syntax, 'sf-string');
  assert.equal(mine.retentionMs, 1000);
  assert.equal(mine.name, 'mine');
});

test('every field of a dialect reads back as given, non-ASCII text included', () => {
  for (const name of DIALECTS) {
    const d = gatewayDialect(name);
    assert.equal(d.name, name);
    assert.equal(typeof d.header, 'string');
    assert.ok(d.header.length > 0 && Object.isFrozen(d.reuseStatuses));
  }
  const stripe = gatewayDialect('stripe');
  assert.deepEqual(
    { ...stripe, reuseStatuses: [...stripe.reuseStatuses] },
    {
      name: 'stripe',
      header: 'Idempotency-Key',
      syntax: 'raw',
      maxKeyLength: 255,
      retentionMs: 86_400_000,
      inProgressStatus: 409,
      reuseStatuses: [400, 422],
      reuseErrorType: 'idempotency_error',
      replayHeader: 'Idempotent-Replayed',
    },
  );
  // The name and the reuse error type are free text: lengths count UTF-16 units, as JS does.
  const mine = gatewayDialect({ base: 'adyen', name: 'Zahlung ü 💳\u0001', reuseErrorType: 'clé_réutilisée 🔁', replayHeader: 'X-Replayed' });
  assert.equal(mine.name, 'Zahlung ü 💳\u0001');
  assert.equal(mine.reuseErrorType, 'clé_réutilisée 🔁');
  assert.equal(mine.replayHeader, 'X-Replayed');
  assert.equal(mine.header, 'Idempotency-Key');
  assert.equal(mine.maxKeyLength, 64);
  assert.equal(mine.retentionMs, 31 * 86_400_000);
  assert.equal(mine.inProgressStatus, undefined);
  assert.deepEqual([...mine.reuseStatuses], []);
  const empty = gatewayDialect({ base: 'ietf', name: '' });
  assert.equal(empty.name, '');
  assert.equal(empty.retentionMs, Infinity);
  assert.equal(empty.replayHeader, undefined);
});

// A key header that fetch drops, sets itself or forbids (or that the client sets: Content-Type)
// never reaches the gateway: a client that kept it would retry a charge that may have been
// processed without its key, each attempt a new charge there. It is refused when the dialect is
// read, naming the option and the value, and nothing is sent.
const FORBIDDEN_KEY_HEADERS = [
  'Host',
  'Connection',
  'Content-Length',
  'Content-Type',
  'Cookie',
  'Origin',
  'Referer',
  'Transfer-Encoding',
  'Keep-Alive',
  'TE',
  'Sec-Idempotency-Key',
  'Proxy-Idempotency-Key',
  'X-HTTP-Method-Override',
];

test('a key header fetch manages or forbids (or Content-Type) is refused by createCheckoutClient and resilientFetch; nothing is sent', async (t) => {
  const posts = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      posts.push(req.headers);
      if (posts.length === 1) return req.socket.destroy(); // processed, the answer lost: a retry follows
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"reference":"ch_1"}');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${server.address().port}/v1/charges`;
  const options = { endpoint: url, breaker: false, attemptTimeoutMs: 500, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 } };
  for (const header of FORBIDDEN_KEY_HEADERS) {
    for (const spelt of [header, header.toLowerCase(), header.toUpperCase()]) {
      assert.throws(
        () => createCheckoutClient({ ...options, dialect: { base: 'stripe', header: spelt } }),
        (e) => e instanceof RangeError && e.code === 'INVALID_OPTION' && e.option === 'header' && e.message.includes(JSON.stringify(spelt)),
        spelt,
      );
      await assert.rejects(
        resilientFetch(url, { method: 'POST', body: '{}' }, { dialect: { header: spelt }, idempotencyKey: 'k-1' }),
        (e) => e instanceof RangeError && e.code === 'INVALID_OPTION' && e.option === 'header' && e.message.includes('resilientFetch'),
        spelt,
      );
      assert.throws(() => gatewayDialect({ header: spelt }), RangeError, spelt);
    }
  }
  assert.equal(posts.length, 0, 'nothing was sent under a refused dialect');
  // A header of the caller's own: the key reaches the gateway on every attempt, and it charges once.
  const c = createCheckoutClient({ ...options, dialect: { base: 'stripe', header: 'X-Idempotency-Key' } });
  const outcome = await c.charge(CHARGE, { idempotencyKey: 'KEY-123' });
  assert.equal(outcome.status, 'succeeded');
  assert.deepEqual(
    posts.map((h) => h['x-idempotency-key']),
    ['KEY-123', 'KEY-123'],
  );
});
