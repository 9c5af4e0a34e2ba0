// A charge's fate is decided by its whole history, not by its last answer. Every test here is a
// sequence against a real HTTP server on 127.0.0.1 whose ledger counts debits: attempt 1 reaches
// the gateway, debits and loses its answer (the socket is destroyed after the debit); attempt 2 is
// answered by something in front of the gateway with a status that proves nothing about attempt 1
// (409 still processing, 401 from an auth proxy, 404 from a load balancer mid-deploy, 400 from a
// WAF, 402, 422, a 302 to a GET). Then: what does the next try do? At most one debit, and the key
// stays parked until an answer ABOUT the key settles it — in memory, the shared store (memory and
// Redis), chargeCustomer, resilientFetch and the checkout client.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  IdempotencyStore,
  CircuitBreaker,
  chargeCustomer,
  createCheckoutClient,
  createSharedIdempotencyStore,
  memoryStateStore,
  redisStateStore,
  resilientFetch,
  withRetry,
} from 'steadfast';
import { startRedis, connectClient } from '../shared/redis-server.mjs';

const LATER = [409, 401, 404, 400, 402, 422, 302];

/**
 * A gateway with a hostile front: `script(key, n)` says what the n-th request (1-based) of a key
 * meets: 'debit-drop' (debit, then destroy the socket), 'debit' (debit, 200 with a reference), a
 * status (answered without processing; 302 redirects to /elsewhere, which answers 200 to a GET),
 * or 'replay' (the gateway honours keys: a debited key answers its first result again, else
 * processes it).
 */
async function hostileGateway(script) {
  const debits = new Map();
  const seen = new Map();
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests.push({ method: req.method, url: req.url, key: req.headers['idempotency-key'] });
      if (req.url === '/elsewhere') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"reference":"not-a-charge"}');
        return;
      }
      const key = req.headers['idempotency-key'] ?? '';
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      const step = script(key, n);
      const debit = () => debits.set(key, (debits.get(key) ?? 0) + 1);
      if (step === 'debit-drop') {
        debit();
        req.socket.destroy();
      } else if (step === 'debit' || (step === 'replay' && !debits.has(key))) {
        if (step === 'debit' || !debits.has(key)) debit();
        res.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ reference: `ch_${key}` }));
      } else if (step === 'replay') {
        res
          .writeHead(200, { 'content-type': 'application/json', 'idempotent-replayed': 'true', connection: 'close' })
          .end(JSON.stringify({ reference: `ch_${key}` }));
      } else if (step === 302) {
        res.writeHead(302, { location: '/elsewhere', connection: 'close' }).end();
      } else {
        const body402 = step === 402 ? { error: { type: 'card_error', decline_code: 'insufficient_funds' } } : { error: { type: 'invalid_request_error' } };
        res.writeHead(step, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify(body402));
      }
    });
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${server.address().port}/v1/charges`;
  return {
    url,
    debits: (key) => debits.get(key) ?? 0,
    requests: (key) => requests.filter((r) => r.key === key).length,
    gets: () => requests.filter((r) => r.method === 'GET').length,
    close: () => new Promise((ok) => server.close(ok)),
  };
}

/** The README's gateway client: a non-2xx answer is an error carrying its status. */
function gatewayClient(url) {
  return async (charge) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': charge.idempotencyKey },
      body: JSON.stringify({ amountCents: charge.amountCents, currency: charge.currency }),
      redirect: 'manual',
    });
    if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
    return response.json();
  };
}

const policy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 };

let gw;
before(async () => {
  gw = await hostileGateway((key, n) => {
    const later = Number(key.split('-')[1]);
    if (n === 1) return 'debit-drop';
    if (key.startsWith('replay-')) return 'replay';
    return Number.isFinite(later) ? later : 404;
  });
});
after(() => gw.close());

describe('attempt 1 debits and loses its answer, attempt 2 answers X: the key stays parked', () => {
  const stores = () => [
    ['IdempotencyStore', new IdempotencyStore()],
    ['shared store (memory)', createSharedIdempotencyStore({ store: memoryStateStore() })],
  ];
  for (const later of LATER) {
    test(`chargeCustomer, then ${later}`, async () => {
      for (const [name, store] of stores()) {
        const key = `cc-${later}-${name.length}`;
        const deps = {
          store,
          breaker: new CircuitBreaker({ windowSize: 10, failureRateThreshold: 0.5, openDurationMs: 30_000 }),
          gateway: gatewayClient(gw.url),
          policy,
        };
        const charge = { idempotencyKey: key, amountCents: 1000, currency: 'usd' };
        const first = await chargeCustomer(charge, deps).then(
          () => assert.fail('resolved'),
          (e) => e,
        );
        // The rejection says what it left behind: the key is parked, the last answer is the cause.
        assert.equal(first.code, 'OUTCOME_UNKNOWN', `${name}: ${first}`);
        assert.equal(first.key, key);
        assert.ok(typeof first.retryAfterMs === 'number' && first.retryAfterMs >= 0, 'when a lookup can settle it');
        assert.equal(gw.requests(key), 2, `${name}: a timeout is retried once, then the ${later} ends the run`);
        assert.equal((await store.peek(key))?.status, 'unknown', `${name}: parked, not freed by the ${later}`);
        assert.deepEqual(await store.unknownKeys(), [key], `${name}: on the worklist`);
        // And then: the next try with the same key sends nothing.
        await assert.rejects(chargeCustomer(charge, deps), { code: 'OUTCOME_UNKNOWN' });
        assert.equal(gw.requests(key), 2, `${name}: no blind retry`);
        assert.equal(gw.debits(key), 1, `${name}: one debit`);
      }
    });
  }

  test('a plain store.run over withRetry (the README pattern) judges all attempts too', async () => {
    const store = new IdempotencyStore();
    const key = 'wr-404';
    const call = () => store.run(key, () => withRetry(() => gatewayClient(gw.url)({ idempotencyKey: key, amountCents: 5, currency: 'usd' }), policy));
    await assert.rejects(call(), (e) => e.code === 'OUTCOME_UNKNOWN' && e.cause?.status === 404);
    await assert.rejects(call(), { code: 'OUTCOME_UNKNOWN' });
    assert.equal(gw.debits(key), 1);
  });

  test('a first answer that proves nothing was processed (429s only) frees the key', async () => {
    const throttled = await hostileGateway(() => 429);
    try {
      const store = new IdempotencyStore();
      const charge = { idempotencyKey: 'thr-1', amountCents: 5, currency: 'usd' };
      const deps = {
        store,
        breaker: new CircuitBreaker({ windowSize: 10, failureRateThreshold: 0.5, openDurationMs: 30_000 }),
        gateway: gatewayClient(throttled.url),
        policy,
      };
      await assert.rejects(chargeCustomer(charge, deps), (e) => e.status === 429);
      assert.equal(store.peek('thr-1'), undefined, 'free: nothing was processed');
    } finally {
      await throttled.close();
    }
  });
});

describe('resilientFetch: a keyed POST whose earlier attempt may have been processed', () => {
  for (const later of LATER) {
    test(`rejects OutcomeUnknownError when the last answer is ${later}`, async () => {
      const key = `rf-${later}`;
      const e = await resilientFetch(
        gw.url,
        { method: 'POST', headers: { 'idempotency-key': key }, body: '{}' },
        { retry: policy, breaker: false, budget: false },
      ).then(
        (r) => assert.fail(`resolved ${r.status}`),
        (err) => err,
      );
      assert.equal(e.code, 'OUTCOME_UNKNOWN', String(e));
      assert.equal(e.attempts, 2);
      assert.equal(gw.debits(key), 1);
      assert.equal(gw.gets(), 0, 'a redirect is never followed into a GET');
    });
  }

  test('a keyed POST answered 302 alone comes back as the 302, never as the GET it redirects to', async () => {
    const redirecting = await hostileGateway(() => 302);
    try {
      const r = await resilientFetch(
        redirecting.url,
        { method: 'POST', headers: { 'idempotency-key': 'rd-1' }, body: '{}' },
        { breaker: false, budget: false },
      );
      assert.equal(r.status, 302);
      assert.equal(redirecting.gets(), 0);
    } finally {
      await redirecting.close();
    }
  });
});

describe('the checkout client', () => {
  for (const later of LATER) {
    test(`attempt 1 debits and drops, attempt 2 answers ${later}: unknown, then nothing is sent blind`, async () => {
      const client = createCheckoutClient({ endpoint: gw.url, retry: policy, breaker: false });
      const key = `co-${later}`;
      const cart = { amountCents: 1000, currency: 'usd' };
      assert.deepEqual(await client.charge(cart, { idempotencyKey: key }), { status: 'unknown', key });
      assert.deepEqual(await client.charge(cart, { idempotencyKey: key }), { status: 'unknown', key });
      assert.equal(gw.requests(key), 2);
      assert.equal(gw.debits(key), 1);
      assert.equal(gw.gets(), 0);
    });
  }

  test('reconcile re-sends on the same record: a 404 from the front leaves it unknown, a replay settles it', async () => {
    const client = createCheckoutClient({ endpoint: gw.url, retry: policy, breaker: false, settleAfterMs: 0 });
    const key = 'co-404-reconcile';
    const cart = { amountCents: 1000, currency: 'usd' };
    assert.equal((await client.charge(cart, { idempotencyKey: key })).status, 'unknown');
    const again = await client.reconcile(key);
    assert.equal(again.status, 'unknown', 'the front answered 404 again: proves nothing');
    assert.equal((await client.store.peek(key)).status, 'unknown');
    assert.equal(gw.debits(key), 1);

    const honest = createCheckoutClient({ endpoint: gw.url, retry: policy, breaker: false, settleAfterMs: 0 });
    const rkey = 'replay-1';
    assert.equal((await honest.charge(cart, { idempotencyKey: rkey })).status, 'succeeded', 'the retry was replayed by the gateway');
    assert.equal(gw.debits(rkey), 1);
  });

  test('reconcile with another cart under an unknown key is refused before anything is sent', async () => {
    const client = createCheckoutClient({ endpoint: gw.url, retry: policy, breaker: false });
    const key = 'co-404-bind';
    assert.equal((await client.charge({ amountCents: 1000, currency: 'usd' }, { idempotencyKey: key })).status, 'unknown');
    const sent = gw.requests(key);
    await assert.rejects(client.reconcile(key, { amountCents: 100000, currency: 'usd' }), { code: 'KEY_REUSED' });
    const other = createCheckoutClient({ endpoint: gw.url, retry: policy, breaker: false, store: client.store });
    await assert.rejects(other.reconcile(key, { amountCents: 100000, currency: 'usd' }), { code: 'KEY_REUSED' });
    assert.equal(gw.requests(key), sent, 'nothing was sent');
  });

  test('reconcile() skips and reports the keys this client did not make, and settles the rest', async () => {
    const store = new IdempotencyStore();
    const a = createCheckoutClient({ endpoint: gw.url, retry: policy, breaker: false, store });
    const b = createCheckoutClient({ endpoint: gw.url, retry: policy, breaker: false, store });
    assert.equal((await a.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'co-404-a' })).status, 'unknown');
    assert.equal((await b.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'co-404-b' })).status, 'unknown');
    const report = await a.reconcile();
    assert.deepEqual(
      report.map((r) => [r.key, r.status]),
      [
        ['co-404-a', 'unknown'],
        ['co-404-b', 'skipped'],
      ],
    );
  });
});

describe('the Redis store', () => {
  let redis;
  let conn;
  before(async () => {
    redis = await startRedis();
    conn = await connectClient('node-redis', redis.port);
  });
  after(async () => {
    await conn?.close();
    await redis?.stop();
  });
  for (const later of [409, 401, 404, 402]) {
    test(`chargeCustomer over Redis, attempt 1 debits and drops, then ${later}: parked, one debit`, async () => {
      const store = createSharedIdempotencyStore({ store: redisStateStore({ client: conn.client, prefix: `hist${later}` }) });
      const key = `rd-${later}`;
      const deps = {
        store,
        breaker: new CircuitBreaker({ windowSize: 10, failureRateThreshold: 0.5, openDurationMs: 30_000 }),
        gateway: gatewayClient(gw.url),
        policy,
      };
      const charge = { idempotencyKey: key, amountCents: 1000, currency: 'usd' };
      await assert.rejects(chargeCustomer(charge, deps), { code: 'OUTCOME_UNKNOWN' });
      assert.equal((await store.peek(key))?.status, 'unknown');
      await assert.rejects(chargeCustomer(charge, deps), { code: 'OUTCOME_UNKNOWN' });
      assert.equal(gw.debits(key), 1);
      assert.deepEqual(await store.unknownKeys(), [key]);
    });
  }

  test('a reconcile whose store fails mid-way never answers "nothing was charged"', async () => {
    const base = redisStateStore({ client: conn.client, prefix: 'histblip' });
    let failComplete = false;
    const flaky = {
      ...base,
      idempotency(options) {
        const h = base.idempotency(options);
        return {
          ...h,
          complete: (...a) => (failComplete ? Promise.reject(new Error('ECONNRESET: redis blip')) : h.complete(...a)),
        };
      },
    };
    const store = createSharedIdempotencyStore({ store: flaky, inFlightLeaseMs: 50 });
    const client = createCheckoutClient({ endpoint: gw.url, retry: policy, breaker: false, store, settleAfterMs: 0 });
    const key = 'co-401-blip';
    const cart = { amountCents: 1000, currency: 'usd' };
    assert.equal((await client.charge(cart, { idempotencyKey: key })).status, 'unknown');
    failComplete = true;
    const outcome = await client.reconcile(key);
    assert.notEqual(outcome.status, 'unavailable', 'never "nothing was charged"');
    await new Promise((ok) => setTimeout(ok, 80));
    assert.equal((await store.peek(key))?.status, 'unknown', 'the record survived: its lease lapsed back to unknown');
    assert.equal(gw.debits(key), 1);
  });

  test('a reopened record answered definitively goes back to unknown (the sticky rule, in Lua)', async () => {
    const store = createSharedIdempotencyStore({ store: redisStateStore({ client: conn.client, prefix: 'histre' }) });
    const key = 'reopen-1';
    await assert.rejects(
      store.run(key, async () => Promise.reject(Object.assign(new Error('t'), { code: 'ETIMEDOUT' })), { fingerprint: 'a' }),
      { code: 'OUTCOME_UNKNOWN' },
    );
    await assert.rejects(
      store.resubmit(key, async () => 'x', { fingerprint: 'b' }),
      { code: 'KEY_REUSED' },
    );
    await assert.rejects(
      store.resubmit(key, async () => Promise.reject(Object.assign(new Error('HTTP 404'), { status: 404 })), { fingerprint: 'a' }),
      { code: 'OUTCOME_UNKNOWN' },
    );
    assert.equal((await store.peek(key)).status, 'unknown');
    const declined = new Error('declined');
    await assert.rejects(
      store.resubmit(key, async () => Promise.reject(declined), { fingerprint: 'a', refutes: (e) => e === declined }),
      (e) => e === declined,
    );
    assert.equal(await store.peek(key), undefined, 'an answer about the key settles it');
  });
});
