// resilientFetch and createCheckoutClient against real HTTP on 127.0.0.1: the local Stripe-like
// gateway (tests/support/gateway.mjs) for charges, and a tiny scripted server for status tables,
// Retry-After forms and timeouts. Every test asserts what the server saw, not just what we returned.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  resilientFetch,
  createCheckoutClient,
  BreakerRegistry,
  CircuitBreaker,
  CircuitOpenError,
  OutcomeUnknownError,
  RetryBudget,
  CheckoutRequestError,
  isSteadfastError,
} from 'steadfast';
import { startGateway } from '../support/gateway.mjs';

const fast = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 20 };

/** A server that answers each request with the next scripted reply; records what it received. */
async function scripted(replies) {
  const seen = [];
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, key: req.headers['idempotency-key'], body, at: Date.now() });
      const r = replies.length > 1 ? replies.shift() : replies[0];
      if (r.hang) return; // never answer
      res.writeHead(r.status, { 'content-type': 'application/json', ...(r.headers ?? {}) });
      res.end(JSON.stringify(r.body ?? {}));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    seen,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((ok) => server.close(ok));
    },
  };
}

const isolated = () => ({ breaker: false, budget: false, retry: fast });

describe('resilientFetch: which responses are retried', () => {
  for (const status of [408, 429, 500, 502, 503, 504]) {
    test(`GET ${status} is retried, then the final response is returned untouched`, async () => {
      const s = await scripted([{ status }, { status }, { status: 200, body: { ok: true } }]);
      try {
        const res = await resilientFetch(`${s.url}/x`, undefined, isolated());
        assert.equal(res.status, 200);
        assert.deepEqual(await res.json(), { ok: true }); // body unread until now
        assert.equal(s.seen.length, 3);
      } finally {
        await s.close();
      }
    });
  }
  for (const status of [400, 401, 402, 403, 404, 409, 422]) {
    test(`${status} is never retried, even for a keyed POST`, async () => {
      const s = await scripted([{ status, body: { error: {} } }, { status: 200 }]);
      try {
        const res = await resilientFetch(`${s.url}/x`, { method: 'POST', body: '{}' }, { ...isolated(), idempotencyKey: 'k-4xx' });
        assert.equal(res.status, status);
        assert.equal(s.seen.length, 1);
      } finally {
        await s.close();
      }
    });
  }
  test('a POST without an Idempotency-Key is not retried; with one, every attempt carries the same key', async () => {
    const s = await scripted([{ status: 503 }, { status: 503 }, { status: 200 }]);
    try {
      const res = await resilientFetch(`${s.url}/c`, { method: 'POST', body: '{}' }, isolated());
      assert.equal(res.status, 503);
      assert.equal(s.seen.length, 1);
      s.seen.length = 0;
      const res2 = await resilientFetch(`${s.url}/c`, { method: 'POST', body: '{}' }, { ...isolated(), idempotencyKey: 'auto' });
      assert.equal(res2.status, 200);
      assert.equal(s.seen.length, 2);
      assert.match(s.seen[0].key, /^[0-9a-f-]{36}$/);
      assert.equal(s.seen[1].key, s.seen[0].key);
    } finally {
      await s.close();
    }
  });
  test('Stripe-Should-Retry overrides the status rule both ways', async () => {
    const s = await scripted([{ status: 409, headers: { 'stripe-should-retry': 'true' } }, { status: 503, headers: { 'stripe-should-retry': 'false' } }]);
    try {
      const res = await resilientFetch(`${s.url}/x`, undefined, isolated());
      assert.equal(res.status, 503);
      assert.equal(s.seen.length, 2, 'retried the 409, not the 503');
    } finally {
      await s.close();
    }
  });
});

describe('resilientFetch: time', () => {
  test('Retry-After in seconds is honoured as a floor', async () => {
    const s = await scripted([{ status: 429, headers: { 'retry-after': '1' } }, { status: 200 }]);
    try {
      const res = await resilientFetch(`${s.url}/x`, undefined, { ...isolated(), retry: { ...fast, maxDelayMs: 5_000 } });
      assert.equal(res.status, 200);
      const gap = s.seen[1].at - s.seen[0].at;
      assert.ok(gap >= 950, `waited ${gap} ms`);
    } finally {
      await s.close();
    }
  });
  test('Retry-After as an HTTP-date is honoured, capped by maxDelayMs', async () => {
    const date = new Date(Date.now() + 60_000).toUTCString();
    const s = await scripted([{ status: 503, headers: { 'retry-after': date } }, { status: 200 }]);
    try {
      const res = await resilientFetch(`${s.url}/x`, undefined, { ...isolated(), retry: { ...fast, maxDelayMs: 150 } });
      assert.equal(res.status, 200);
      const gap = s.seen[1].at - s.seen[0].at;
      assert.ok(gap >= 140 && gap < 2_000, `waited ${gap} ms (a minute was asked, 150 ms is the cap)`);
    } finally {
      await s.close();
    }
  });
  test('a per-attempt timeout aborts a hanging GET and the retry succeeds', async () => {
    const s = await scripted([{ hang: true }, { status: 200 }]);
    try {
      const res = await resilientFetch(`${s.url}/x`, undefined, { ...isolated(), attemptTimeoutMs: 50 });
      assert.equal(res.status, 200);
      assert.equal(s.seen.length, 2);
    } finally {
      await s.close();
    }
  });
  test('the overall deadline stops retrying', async () => {
    const s = await scripted([{ status: 503 }]);
    try {
      const t0 = Date.now();
      await assert.rejects(
        resilientFetch(`${s.url}/x`, undefined, { ...isolated(), retry: { maxAttempts: 50, baseDelayMs: 40, maxDelayMs: 40, jitter: 'none' }, deadlineMs: 150 }),
        (e) => e.code === 'DEADLINE_EXCEEDED',
      );
      assert.ok(Date.now() - t0 < 1_000);
      assert.ok(s.seen.length >= 2 && s.seen.length <= 5, `${s.seen.length} attempts`);
    } finally {
      await s.close();
    }
  });
  test('the caller aborting mid-sleep rejects with its reason and sends nothing more', async () => {
    const s = await scripted([{ status: 503 }]);
    try {
      const ac = new AbortController();
      const reason = new Error('user left the page');
      const p = resilientFetch(`${s.url}/x`, { signal: ac.signal }, { ...isolated(), retry: { maxAttempts: 5, baseDelayMs: 10_000, maxDelayMs: 10_000, jitter: 'none' } });
      setTimeout(() => ac.abort(reason), 50);
      await assert.rejects(p, (e) => e === reason);
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(s.seen.length, 1);
    } finally {
      await s.close();
    }
  });
});

describe('resilientFetch: breakers and budget', () => {
  test('one breaker per origin: a dead host does not trip another host', async () => {
    const dead = await scripted([{ status: 503 }]);
    const alive = await scripted([{ status: 200 }]);
    try {
      const breaker = new BreakerRegistry({ failureThreshold: 2, openDurationMs: 60_000 });
      const opts = { breaker, budget: false, retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 } };
      await resilientFetch(`${dead.url}/a`, undefined, opts);
      await resilientFetch(`${dead.url}/a`, undefined, opts);
      await assert.rejects(resilientFetch(`${dead.url}/a`, undefined, opts), CircuitOpenError);
      assert.equal(dead.seen.length, 2, 'the open breaker sent nothing');
      assert.equal((await resilientFetch(`${alive.url}/b`, undefined, opts)).status, 200);
      assert.deepEqual(breaker.origins().sort(), [dead.url, alive.url].sort());
    } finally {
      await dead.close();
      await alive.close();
    }
  });
  test('an empty budget fails fast with the last error as cause', async () => {
    const s = await scripted([{ status: 503 }]);
    try {
      const budget = new RetryBudget({ capacity: 0, refillPerSec: 0 });
      await assert.rejects(resilientFetch(`${s.url}/x`, undefined, { breaker: false, budget, retry: fast }), (e) => e.code === 'RETRY_BUDGET_EXHAUSTED');
      assert.equal(s.seen.length, 1);
    } finally {
      await s.close();
    }
  });
  test('bad options are TypeError/RangeError naming the option', async () => {
    await assert.rejects(resilientFetch('http://127.0.0.1:9/', undefined, { attemptTimeoutMs: -1 }), (e) => e instanceof RangeError && /attemptTimeoutMs/.test(e.message) && isSteadfastError(e));
    await assert.rejects(resilientFetch('http://127.0.0.1:9/', undefined, { breaker: 'yes' }), (e) => e instanceof TypeError && /breaker/.test(e.message));
    await assert.rejects(resilientFetch(42), (e) => e instanceof TypeError && /input/.test(e.message));
    await assert.rejects(resilientFetch('http://127.0.0.1:9/', undefined, { retry: { jitter: 'wild' } }), (e) => e instanceof RangeError && /jitter/.test(e.message));
  });
});

describe('checkout client against the test gateway', () => {
  let gw;
  before(async () => {
    gw = await startGateway({ seed: 11 });
  });
  after(async () => {
    await gw.close();
  });
  const client = (extra = {}) => createCheckoutClient({ endpoint: `${gw.url}/v1/charges`, retry: fast, attemptTimeoutMs: 200, ...extra });

  test('a transient blip is absorbed with one key, one debit', async () => {
    gw.forceNext('status503', 2);
    const keys = [];
    const out = await client({ onAttempt: (a) => keys.push(a.key) }).charge({ amountCents: 4999, currency: 'usd' });
    assert.equal(out.status, 'succeeded');
    assert.equal(keys.length, 3);
    assert.ok(keys.every((k) => k === out.key));
    assert.equal(gw.chargesByKey().get(out.key), 1);
  });
  test('a decline is an outcome, not an exception, and frees the key', async () => {
    gw.forceNext('decline');
    const c = client();
    const out = await c.charge({ amountCents: 100, currency: 'usd' }, { idempotencyKey: 'decline-1' });
    assert.deepEqual({ status: out.status, reason: out.reason }, { status: 'declined', reason: 'generic_decline' });
    assert.equal(c.store.peek('decline-1'), undefined);
    assert.equal(gw.chargesByKey().get('decline-1') ?? 0, 0);
  });
  test('debit then timeout: retried with the SAME key, the gateway replays, still one debit', async () => {
    gw.forceNext('debitThenTimeout');
    const out = await client().charge({ amountCents: 700, currency: 'usd' }, { idempotencyKey: 'dtt-1' });
    assert.equal(out.status, 'succeeded');
    assert.equal(gw.chargesByKey().get('dtt-1'), 1);
  });
  test('a POST that timed out on every attempt is unknown, and the key refuses a blind retry', async () => {
    // One attempt only: with a retry, the gateway would replay the stored debit under the same key
    // and the client would learn the outcome (the 'debit then timeout' test above).
    gw.forceNext('debitThenTimeout');
    const c = client({ retry: { ...fast, maxAttempts: 1 } });
    const out = await c.charge({ amountCents: 800, currency: 'usd' }, { idempotencyKey: 'unk-1' });
    assert.deepEqual(out, { status: 'unknown', key: 'unk-1' });
    assert.deepEqual(c.store.unknownKeys(), ['unk-1']);
    const before = gw.requests();
    assert.deepEqual(await c.charge({ amountCents: 800, currency: 'usd' }, { idempotencyKey: 'unk-1' }), { status: 'unknown', key: 'unk-1' });
    assert.equal(gw.requests(), before, 'no request sent for an unknown key');
    assert.equal(gw.chargesByKey().get('unk-1'), 1, 'the money did move: that is why it is unknown');
  });
  test('resilientFetch reports a keyed POST timeout as OutcomeUnknownError with the key', async () => {
    gw.forceNext('debitThenTimeout');
    await assert.rejects(
      resilientFetch(`${gw.url}/v1/charges`, { method: 'POST', headers: { 'Idempotency-Key': 'unk-2' }, body: JSON.stringify({ amountCents: 5, currency: 'usd' }) }, { breaker: false, budget: false, retry: { ...fast, maxAttempts: 1 }, attemptTimeoutMs: 100 }),
      (e) => e instanceof OutcomeUnknownError && e.key === 'unk-2' && e.cause?.name === 'TimeoutError',
    );
  });
  test('a double click (same key, concurrent) charges once', async () => {
    gw.forceNext('slow');
    const c = client({ attemptTimeoutMs: 2_000 });
    const [a, b] = await Promise.all([
      c.charge({ amountCents: 300, currency: 'usd' }, { idempotencyKey: 'dbl-1' }),
      c.charge({ amountCents: 300, currency: 'usd' }, { idempotencyKey: 'dbl-1' }),
    ]);
    assert.equal(a, b);
    assert.equal(a.status, 'succeeded');
    assert.equal(gw.chargesByKey().get('dbl-1'), 1);
  });
  test('a 400 from the gateway is a programming error and throws CheckoutRequestError', async () => {
    const s = await scripted([{ status: 400, body: { error: { type: 'invalid_request_error' } } }]);
    try {
      const c = createCheckoutClient({ endpoint: `${s.url}/v1/charges`, retry: fast });
      await assert.rejects(c.charge({ amountCents: 300, currency: 'usd' }, { idempotencyKey: 'bad-1' }), (e) => e instanceof CheckoutRequestError && e.status === 400);
      assert.equal(s.seen.length, 1);
      assert.equal(c.store.peek('bad-1'), undefined, 'a rejected request frees its key');
    } finally {
      await s.close();
    }
  });
  test('an open primary breaker fails over to the secondary with the SAME key', async () => {
    const secondary = await startGateway({ seed: 2 });
    try {
      const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
      breaker.isolate();
      const c = createCheckoutClient({ endpoint: `${gw.url}/v1/charges`, secondaryEndpoint: `${secondary.url}/v1/charges`, breaker, retry: fast });
      const out = await c.charge({ amountCents: 999, currency: 'usd' }, { idempotencyKey: 'fo-1' });
      assert.equal(out.status, 'succeeded');
      assert.equal(gw.chargesByKey().get('fo-1') ?? 0, 0);
      assert.equal(secondary.chargesByKey().get('fo-1'), 1);
    } finally {
      await secondary.close();
    }
  });
});
