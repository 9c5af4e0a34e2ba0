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
  RateLimiter,
  chargeCustomer,
  createCheckoutClient,
  bulkhead,
  createSharedBreaker,
  createSharedIdempotencyStore,
  hedge,
  memoryStateStore,
  pipeline,
  redisStateStore,
  resilientFetch,
  retry,
  withRetry,
  wrap,
} from 'steadfast';
import { redisForTests } from '../shared/redis-server.mjs';

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

/** chargeCustomer's deps over `store`, against the hostile gateway (started below). */
const depsFor = (store) => ({
  store,
  breaker: new CircuitBreaker({ windowSize: 10, failureRateThreshold: 0.5, openDurationMs: 30_000 }),
  gateway: gatewayClient(gw.url),
  policy,
});

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
        const deps = depsFor(store);
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

  test('a charge of another cart meeting a pending reconcile of the key is refused, never joined', async () => {
    const client = createCheckoutClient({ endpoint: gw.url, retry: policy, breaker: false });
    const key = 'co-404-join';
    assert.equal((await client.charge({ amountCents: 10, currency: 'usd' }, { idempotencyKey: key })).status, 'unknown');
    const pending = client.reconcile(key);
    await assert.rejects(client.charge({ amountCents: 100000, currency: 'usd' }, { idempotencyKey: key }), { code: 'KEY_REUSED' });
    // The same cart joins the pending reconcile: one request, one answer.
    const same = client.charge({ amountCents: 10, currency: 'usd' }, { idempotencyKey: key });
    assert.deepEqual(await same, await pending);
    assert.equal(gw.debits(key), 1);
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
  const redis = redisForTests();
  for (const later of [409, 401, 404, 402]) {
    test(`chargeCustomer over Redis, attempt 1 debits and drops, then ${later}: parked, one debit`, async () => {
      const store = createSharedIdempotencyStore({ store: redisStateStore({ client: redis.conn.client, prefix: `hist${later}` }) });
      const key = `rd-${later}`;
      const deps = depsFor(store);
      const charge = { idempotencyKey: key, amountCents: 1000, currency: 'usd' };
      await assert.rejects(chargeCustomer(charge, deps), { code: 'OUTCOME_UNKNOWN' });
      assert.equal((await store.peek(key))?.status, 'unknown');
      await assert.rejects(chargeCustomer(charge, deps), { code: 'OUTCOME_UNKNOWN' });
      assert.equal(gw.debits(key), 1);
      assert.deepEqual(await store.unknownKeys(), [key]);
    });
  }

  test('a reconcile whose store fails mid-way never answers "nothing was charged"', async () => {
    const base = redisStateStore({ client: redis.conn.client, prefix: 'histblip' });
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
    const store = createSharedIdempotencyStore({ store: redisStateStore({ client: redis.conn.client, prefix: 'histre' }) });
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

describe('sequences one step off the path', () => {
  /** A server whose answer per request is `handler(req, res, n)`. */
  async function server(handler) {
    let n = 0;
    const sockets = new Set();
    const s = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => handler(req, res, ++n));
    });
    s.on('connection', (c) => {
      sockets.add(c);
      c.on('close', () => sockets.delete(c));
    });
    await new Promise((ok) => s.listen(0, '127.0.0.1', ok));
    return {
      url: `http://127.0.0.1:${s.address().port}/v1/charges`,
      count: () => n,
      close: () => {
        for (const c of sockets) c.destroy();
        return new Promise((ok) => s.close(ok));
      },
    };
  }

  test('headers arrive, the body stalls: charge() settles unknown within the attempt timeout, not later', async () => {
    const s = await server((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"refer'); // and nothing more
    });
    try {
      const client = createCheckoutClient({ endpoint: s.url, retry: { ...policy, maxAttempts: 1 }, breaker: false, attemptTimeoutMs: 100 });
      const t0 = Date.now();
      const out = await client.charge({ amountCents: 5, currency: 'usd' }, { idempotencyKey: 'stall-1' });
      assert.deepEqual(out, { status: 'unknown', key: 'stall-1' });
      assert.ok(Date.now() - t0 < 1500, `settled in ${Date.now() - t0} ms`);
      assert.equal(client.store.peek('stall-1').status, 'unknown', 'parked, on the worklist — not in flight');
      // A second click does not join anything pending: it answers at once, with nothing sent.
      assert.deepEqual(await client.charge({ amountCents: 5, currency: 'usd' }, { idempotencyKey: 'stall-1' }), { status: 'unknown', key: 'stall-1' });
      assert.equal(s.count(), 1);
    } finally {
      await s.close();
    }
  });

  test('a 429 whose Retry-After passes the deadline: unavailable, the key is free (nothing was processed)', async () => {
    const s = await server((req, res) => res.writeHead(429, { 'retry-after': '3600' }).end());
    try {
      // maxDelayMs 10 s: the Retry-After (capped there) would end past the 500 ms deadline.
      const client = createCheckoutClient({ endpoint: s.url, retry: { ...policy, maxDelayMs: 10_000 }, breaker: false, deadlineMs: 500 });
      const out = await client.charge({ amountCents: 5, currency: 'usd' }, { idempotencyKey: 'thr-2' });
      assert.equal(out.status, 'unavailable', JSON.stringify(out));
      assert.equal(out.reason, 'rate-limited');
      assert.equal(client.store.peek('thr-2'), undefined, 'never parked');
      assert.equal(s.count(), 1);
    } finally {
      await s.close();
    }
  });

  test('only 429s, retries spent: unavailable (rate-limited), not unknown', async () => {
    const s = await server((req, res) => res.writeHead(429).end());
    try {
      const client = createCheckoutClient({ endpoint: s.url, retry: policy, breaker: false });
      const out = await client.charge({ amountCents: 5, currency: 'usd' }, { idempotencyKey: 'thr-3' });
      assert.deepEqual([out.status, out.reason], ['unavailable', 'rate-limited']);
      assert.equal(s.count(), 3);
      assert.deepEqual(client.store.unknownKeys(), []);
    } finally {
      await s.close();
    }
  });

  test('a key the primary may have processed is reconciled against the primary only, even when its circuit is open', async () => {
    const secondary = await server((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"reference":"ch_second"}'));
    try {
      const primaryBreaker = new CircuitBreaker({ windowSize: 10, failureRateThreshold: 0.5, openDurationMs: 30_000 });
      const client = createCheckoutClient({ endpoint: gw.url, secondaryEndpoint: secondary.url, retry: policy, breaker: primaryBreaker });
      const key = 'co-404-failover';
      assert.equal((await client.charge({ amountCents: 7, currency: 'usd' }, { idempotencyKey: key })).status, 'unknown');
      assert.equal(client.store.peek(key).endpoint, gw.url, 'the record knows where it may have been processed');
      primaryBreaker.isolate();
      const out = await client.reconcile(key);
      assert.equal(out.status, 'unknown');
      assert.equal(secondary.count(), 0, 'never re-sent to the secondary: it would charge again');
      assert.equal(gw.debits(key), 1);
      // A fresh charge while the primary is open does fail over (nothing was processed anywhere).
      assert.equal((await client.charge({ amountCents: 7, currency: 'usd' }, { idempotencyKey: 'fresh-1' })).status, 'succeeded');
      assert.equal(secondary.count(), 1);
    } finally {
      await secondary.close();
    }
  });

  test('a store that noticed Redis lost its data refuses to start the charge: unavailable, nothing sent', async () => {
    const forgetful = {
      run: async () => Promise.reject(Object.assign(new Error('Redis lost the store data'), { code: 'STORE_AMNESIA' })),
      peek: async () => undefined,
      resolve: async () => {},
      unknownKeys: async () => [],
    };
    const client = createCheckoutClient({ endpoint: gw.url, retry: policy, breaker: false, store: forgetful });
    const out = await client.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'amnesia-1' });
    assert.deepEqual([out.status, out.reason], ['unavailable', 'store-unavailable']);
    assert.equal(gw.requests('amnesia-1'), 0);
  });

  test('a store full of unknowns answers new customers unavailable (store-full), with the way out documented', async () => {
    const client = createCheckoutClient({ endpoint: gw.url, retry: policy, breaker: false, store: new IdempotencyStore({ maxRecords: 1 }) });
    assert.equal((await client.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'co-404-full' })).status, 'unknown');
    const out = await client.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'another' });
    assert.deepEqual([out.status, out.reason], ['unavailable', 'store-full']);
    assert.equal(gw.requests('another'), 0);
  });
});

describe('two charges that end with one error object are judged each by its own attempts', () => {
  // A gateway client that rejects with a shared constant (a cached SDK error, a mock): charge A's
  // attempt 1 timed out (it may have debited) and its retry meets the decline; charge B meets the
  // decline at once. Both declines land together, in every order of a few microtasks.
  const DECLINED = Object.assign(new Error('card_declined'), { status: 402 });
  const fast = { maxAttempts: 3, baseDelayMs: 2, maxDelayMs: 2, jitter: 'none' };
  const breakers = {
    CircuitBreaker: () => new CircuitBreaker({ failureThreshold: 100, openDurationMs: 1000 }),
    SharedCircuitBreaker: () => createSharedBreaker({ name: `b-${Math.random()}`, store: memoryStateStore(), failureThreshold: 100, openDurationMs: 1000 }),
  };
  const redis = redisForTests();
  let prefixes = 0;
  const stores = {
    IdempotencyStore: () => new IdempotencyStore(),
    'a shared store': () => createSharedIdempotencyStore({ store: memoryStateStore() }),
    'a Redis store': () => createSharedIdempotencyStore({ store: redisStateStore({ client: redis.conn.client, prefix: `shared-error-${++prefixes}` }) }),
  };
  const paths = {
    chargeCustomer: (store, breaker, gateway, key, amountCents) =>
      chargeCustomer({ idempotencyKey: key, amountCents, currency: 'usd' }, { store, breaker, gateway, policy: fast }),
    'store.run(() => withRetry(...))': (store, breaker, gateway, key) => store.run(key, () => withRetry((ctx) => gateway(undefined, ctx), fast)),
    // Started after an await: no run is being started then, so the retry reports by its error.
    'store.run(async () => { await …; return withRetry(...) })': (store, breaker, gateway, key) =>
      store.run(key, async () => {
        await null;
        return withRetry((ctx) => gateway(undefined, ctx), fast);
      }),
  };
  for (const [pathName, path] of Object.entries(paths)) {
    for (const [storeName, makeStore] of Object.entries(stores)) {
      for (const [breakerName, makeBreaker] of Object.entries(breakers)) {
        if (pathName !== 'chargeCustomer' && breakerName !== 'CircuitBreaker') continue; // no breaker on that path
        test(`${pathName}, ${storeName}, ${breakerName}: the charge that may have debited stays parked`, async () => {
          for (let spin = 0; spin < 12; spin++) {
            const store = makeStore();
            const breaker = makeBreaker();
            let release;
            const gate = new Promise((ok) => (release = ok));
            const microtasks = async (n) => {
              for (let i = 0; i < n; i++) await null;
            };
            const gatewayA = async (charge, ctx) => {
              if (ctx.attempt === 1) throw Object.assign(new Error('socket hang up'), { code: 'ETIMEDOUT' });
              await gate;
              throw DECLINED;
            };
            const gatewayB = async () => {
              await gate;
              await microtasks(spin);
              throw DECLINED;
            };
            const a = path(store, breaker, gatewayA, `a-${spin}`, 100).then(
              () => assert.fail('A resolved'),
              (e) => e,
            );
            await new Promise((ok) => setTimeout(ok, 20)); // A waits in attempt 2
            const b = path(store, breaker, gatewayB, `b-${spin}`, 200).then(
              () => assert.fail('B resolved'),
              (e) => e,
            );
            await new Promise((ok) => setTimeout(ok, 5));
            release();
            const [ea, eb] = await Promise.all([a, b]);
            assert.equal(ea.code, 'OUTCOME_UNKNOWN', `spin ${spin}: A's timed-out attempt may have debited`);
            assert.ok((await store.unknownKeys()).includes(`a-${spin}`), `spin ${spin}: A's key stays parked`);
            // A retry that reports by its error parks B too when B, open meanwhile, ends with the
            // very same object (the safe side): B is judged only where each retry has its run.
            if (!pathName.includes('await')) assert.equal(eb, DECLINED, `spin ${spin}: B was declined, its key is free`);
          }
        });
      }
    }
  }
});

describe('two hedged charges that end with one error object are judged each by its own copies', () => {
  // A gateway client that rejects with a shared constant (a cached SDK error, a mock). Charge A:
  // its first copy reached the gateway and hangs (it may be debiting), its hedge meets the decline,
  // so A lets the first copy go. Charge B: its first two copies are throttled (429: nothing was
  // processed), its third meets the same decline. The declines land together, in every order of a
  // few microtasks. A's key must stay parked whatever B did meanwhile: else the next try charges twice.
  const once = { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 };
  const copies = { delayMs: 5, maxHedges: 2 };
  const race = hedge(copies);
  const later = async (n) => {
    for (let i = 0; i < n; i++) await null;
  };
  const paths = {
    'store.run(() => withRetry(fn, { hedge }))': (store, key, fn) =>
      store.run(key, () => withRetry(fn, { ...once, hedge: { ...copies, idempotencyKey: key } })),
    'pipeline({ idempotency, retry, hedge })': (store, key, fn) =>
      pipeline({ idempotency: store, retry: once, hedge: copies }).execute(fn, { idempotencyKey: key }),
    'store.run(() => hedge().execute(fn))': (store, key, fn) => store.run(key, () => race.execute(fn, { idempotencyKey: key })),
    'withRetry(() => hedge().execute(fn), { rateLimiter })': (store, key, fn) =>
      store.run(key, () => withRetry(() => race.execute(fn, { idempotencyKey: key }), { ...once, rateLimiter: new RateLimiter() })),
    'wrap(retry, a queued bulkhead, hedge)': (store, key, fn) => {
      const door = bulkhead(1, 1);
      door.execute(() => new Promise((ok) => setTimeout(ok, 2))); // A's attempt waits for the door
      return store.run(key, () => wrap(retry(once), door, race).execute(fn, { idempotencyKey: key }));
    },
    'wrap(retry, a shared breaker, hedge)': (store, key, fn) => {
      const breaker = createSharedBreaker({ name: `hb-${key}`, store: memoryStateStore(), failureThreshold: 100, openDurationMs: 1000 });
      return store.run(key, () => wrap(retry(once), breaker, race).execute(fn, { idempotencyKey: key }));
    },
    // Started after an await: no run or attempt is being started then, so the hedge reports by its error.
    'a hedge() started after an await, inside withRetry': (store, key, fn) =>
      store.run(key, () =>
        withRetry(async () => {
          await later(1);
          return race.execute(fn, { idempotencyKey: key });
        }, once),
      ),
    'a hedge() started after an await, inside store.run': (store, key, fn) =>
      store.run(key, async () => {
        await later(1);
        return race.execute(fn, { idempotencyKey: key });
      }),
  };
  const stores = {
    IdempotencyStore: () => new IdempotencyStore(),
    'a shared store': () => createSharedIdempotencyStore({ store: memoryStateStore() }),
  };
  for (const [pathName, path] of Object.entries(paths)) {
    // An error of its own per path: the stores' fallback for a retry started late is keyed by the error too.
    const DECLINED = Object.assign(new Error('not found'), { status: 404 });
    const byItsError = pathName.includes('after an await');
    for (const [storeName, makeStore] of Object.entries(stores)) {
      test(`${pathName}, ${storeName}: the charge whose copy was let go stays parked`, async () => {
        for (let spin = 0; spin < 12; spin++) {
          const store = makeStore();
          let debitsA = 0;
          let release;
          const gate = new Promise((ok) => (release = ok));
          const copyA = async (ctx) => {
            if (ctx.hedge === 0) {
              debitsA += 1; // it reached the gateway, and hangs until it is let go
              return new Promise((_, reject) => {
                const t = setTimeout(() => reject(new Error('never let go')), 2_000);
                ctx.signal.addEventListener('abort', () => (clearTimeout(t), reject(ctx.signal.reason)), { once: true });
              });
            }
            await gate;
            throw DECLINED;
          };
          const copyB = async (ctx) => {
            await gate;
            if (ctx.hedge < 2) throw Object.assign(new Error('throttled'), { status: 429 });
            for (let i = 0; i < spin; i++) await null;
            throw DECLINED;
          };
          const a = path(store, `a-${spin}`, copyA).then(
            () => assert.fail('A resolved'),
            (e) => e,
          );
          await new Promise((ok) => setTimeout(ok, 8)); // A's hedge is out
          const b = path(store, `b-${spin}`, copyB).then(
            () => assert.fail('B resolved'),
            (e) => e,
          );
          await new Promise((ok) => setTimeout(ok, 30)); // B's three copies are out
          release();
          const [ea, eb] = await Promise.all([a, b]);
          assert.equal(ea.code, 'OUTCOME_UNKNOWN', `spin ${spin}: A's first copy was let go unanswered (${ea})`);
          assert.ok((await store.unknownKeys()).includes(`a-${spin}`), `spin ${spin}: A's key stays parked`);
          await assert.rejects(
            store.run(`a-${spin}`, async () => {
              debitsA += 1;
              return 'charged again';
            }),
            { code: 'OUTCOME_UNKNOWN' },
          );
          assert.equal(debitsA, 1, `spin ${spin}: no blind retry of A`);
          // B's copies were throttled or declined: nothing was processed, its key is free. A hedge
          // that reports by its error parks B too when B ends with the very same object while A's
          // evidence stands (the safe side), so B is judged only where each hedge has its owner.
          if (!byItsError) {
            assert.equal(eb, DECLINED, `spin ${spin}: B was declined (${eb})`);
            assert.equal(await store.peek(`b-${spin}`), undefined, `spin ${spin}: B's key is free`);
          }
        }
      });
    }
  }
});

describe('a retried call inside another layer is judged by all its own attempts', () => {
  // The inner call (a withRetry, a retry() stage) meets a debit whose answer is lost, retries, and
  // gives up on a definitive answer: the layer around it sees only that last error. The charge may
  // have been processed: its key stays parked, whichever layer ran it and however the race ended.
  const once = { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 };
  let gw2;
  before(async () => {
    // Keys 'late-*': the first request debits and loses its answer, every later one is throttled
    // (429: nothing processed). Keys 'n402-*': the first debits and loses its answer, then 402.
    gw2 = await hostileGateway((key, n) => (n === 1 ? 'debit-drop' : key.startsWith('late-') ? 429 : 402));
  });
  after(() => gw2.close());
  const stores = {
    IdempotencyStore: () => new IdempotencyStore(),
    'a shared store': () => createSharedIdempotencyStore({ store: memoryStateStore() }),
  };
  for (const [storeName, makeStore] of Object.entries(stores)) {
    test(`${storeName}: store.run over withRetry over withRetry (a debit lost, then a 402): parked`, async () => {
      const store = makeStore();
      const key = `n402-nested-${storeName.length}`;
      const charge = gatewayClient(gw2.url);
      const inner = () => withRetry(() => charge({ idempotencyKey: key, amountCents: 100, currency: 'usd' }), once);
      const e = await store
        .run(key, () => withRetry(inner, once))
        .then(
          () => assert.fail('resolved'),
          (err) => err,
        );
      assert.equal(gw2.requests(key), 2, 'the lost debit, then the 402');
      assert.equal(e.code, 'OUTCOME_UNKNOWN', `the first attempt may have been processed (${e})`);
      assert.equal((await store.peek(key))?.status, 'unknown', 'parked, not freed by the 402');
    });

    test(`${storeName}: wrap(retry, retry) in a store run: parked`, async () => {
      const store = makeStore();
      const key = `n402-wrap-${storeName.length}`;
      const charge = gatewayClient(gw2.url);
      const e = await store
        .run(key, () => wrap(retry(once), retry(once)).execute(() => charge({ idempotencyKey: key, amountCents: 100, currency: 'usd' })))
        .then(
          () => assert.fail('resolved'),
          (err) => err,
        );
      assert.equal(gw2.requests(key), 2);
      assert.equal(e.code, 'OUTCOME_UNKNOWN', `${e}`);
      assert.equal((await store.peek(key))?.status, 'unknown');
    });

    for (const late of [false, true]) {
      test(`${storeName}: a hedge over retried copies${late ? ', started after an await' : ''}: the copy whose debit was lost keeps the key parked`, async () => {
        // Copy 0 waits, then meets two 429s; copy 1 (the hedge) meets the lost debit, then a 429,
        // and fails first. The race ends with copy 0's 429: the key must not be judged by it.
        const store = makeStore();
        const key = `late-hedge-${late}-${storeName.length}`;
        const charge = gatewayClient(gw2.url);
        const fn = async (ctx) => {
          if (ctx.hedge === 0 && ctx.attempt === 1) await new Promise((ok) => setTimeout(ok, 40));
          return charge({ idempotencyKey: key, amountCents: 100, currency: 'usd' });
        };
        const policy = wrap(hedge({ delayMs: 5, maxHedges: 1 }), retry(once));
        const e = await store
          .run(key, async () => {
            if (late) await null;
            return policy.execute(fn, { idempotencyKey: key });
          })
          .then(
            () => assert.fail('resolved'),
            (err) => err,
          );
        assert.equal(gw2.requests(key), 4, 'two attempts per copy');
        assert.equal(gw2.debits(key), 1, 'the hedge debited');
        assert.equal(e.code, 'OUTCOME_UNKNOWN', `the hedge's first attempt may have been processed (${e})`);
        assert.equal((await store.peek(key))?.status, 'unknown', 'parked, not freed by the last 429');
      });
    }
  }
});

describe('reconcile(): a bad lookup costs one key', async () => {
  const { reconcile } = await import('steadfast');
  const parked = async (n) => {
    const store = new IdempotencyStore();
    for (let i = 0; i < n; i++) {
      await store.run(`k${i}`, async () => Promise.reject(Object.assign(new Error('t'), { code: 'ETIMEDOUT' }))).catch(() => {});
    }
    return store;
  };
  test("a throwing status getter or a lookup that never settles is that key's error; the others settle", async () => {
    const store = await parked(3);
    const report = await reconcile(
      store,
      (key) => {
        if (key === 'k0')
          return {
            get status() {
              throw new Error('hostile');
            },
          };
        if (key === 'k1') return new Promise(() => {});
        return { status: 'done', result: 'ch' };
      },
      { lookupTimeoutMs: 50 },
    );
    assert.equal(report.done, 1);
    assert.deepEqual(report.errors.map((e) => e.key).sort(), ['k0', 'k1']);
    assert.equal(report.errors.find((e) => e.key === 'k1').error.code, 'LOOKUP_TIMEOUT');
    assert.deepEqual(store.unknownKeys(), ['k0', 'k1']);
  });
  test("settleAfterMs can only widen a record's window; the report says when the whole batch can settle", async () => {
    let now = 1_000_000;
    const store = new IdempotencyStore({ clock: () => now });
    for (let i = 0; i < 10; i++) {
      now += 1000;
      await store.run(`w${i}`, async () => Promise.reject(Object.assign(new Error('t'), { code: 'ETIMEDOUT' })), { settleAfterMs: 60_000 }).catch(() => {});
    }
    now += 1000; // the keys' last attempts were 10 s … 1 s ago; their own windows are 60 s
    const narrow = await reconcile(store, () => ({ status: 'failed' }), { settleAfterMs: 10, clock: () => now });
    assert.equal(narrow.failed, 0, 'a shorter window given to reconcile() never frees a key early');
    assert.equal(narrow.deferred, 10);
    assert.equal(narrow.retryAfterMs, 60_000 - 10_000);
    const wide = await reconcile(store, () => ({ status: 'failed' }), { settleAfterMs: 120_000, clock: () => now });
    assert.equal(wide.deferred, 10);
    assert.equal(wide.retryAfterMs, 120_000 - 10_000, 'a wider window given to reconcile() is honoured');
    assert.equal(wide.settleAllAfterMs, 120_000 - 1000, 'the whole batch, not only the first key');
  });
});
