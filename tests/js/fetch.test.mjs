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
        const call = resilientFetch(`${s.url}/x`, { method: 'POST', body: '{}' }, { ...isolated(), idempotencyKey: 'k-4xx' });
        if (status === 409) {
          // 409: the gateway is still processing the key — an unknown, never a plain answer.
          await assert.rejects(call, (e) => e.code === 'OUTCOME_UNKNOWN' && e.cause.status === 409 && e.attempts === 1);
        } else assert.equal((await call).status, status);
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
    const s = await scripted([
      { status: 409, headers: { 'stripe-should-retry': 'true' } },
      { status: 503, headers: { 'stripe-should-retry': 'false' } },
    ]);
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
        resilientFetch(`${s.url}/x`, undefined, {
          ...isolated(),
          retry: { maxAttempts: 50, baseDelayMs: 40, maxDelayMs: 40, jitter: 'none' },
          deadlineMs: 150,
        }),
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
      const p = resilientFetch(
        `${s.url}/x`,
        { signal: ac.signal },
        { ...isolated(), retry: { maxAttempts: 5, baseDelayMs: 10_000, maxDelayMs: 10_000, jitter: 'none' } },
      );
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
  for (const [what, replies] of [
    ['a 503, then the caller aborts during the retry sleep', [{ status: 503 }]],
    ['no answer, then the caller aborts', [{ status: 503 }, { hang: true }, { status: 503 }]],
  ]) {
    test(`an origin's half-open probe the caller abandons (${what}) does not close the circuit`, async () => {
      const s = await scripted(replies);
      try {
        const registry = new BreakerRegistry({ failureThreshold: 1, openDurationMs: 50 });
        const once = { breaker: registry, budget: false, retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 } };
        assert.equal((await resilientFetch(`${s.url}/x`, undefined, once)).status, 503);
        const b = registry.get(s.url);
        assert.equal(b.currentState, 'open');
        await new Promise((ok) => setTimeout(ok, 70));
        assert.equal(b.currentState, 'half-open');
        const caller = new AbortController();
        const probe = resilientFetch(
          `${s.url}/x`,
          { signal: caller.signal },
          {
            ...once,
            retry: { maxAttempts: 3, baseDelayMs: 5_000, maxDelayMs: 5_000, jitter: 'none' },
          },
        );
        while (s.seen.length < 2) await new Promise((ok) => setTimeout(ok, 5));
        await new Promise((ok) => setTimeout(ok, 20)); // answered and sleeping, or hanging
        caller.abort();
        await assert.rejects(probe, (e) => e === caller.signal.reason);
        assert.equal(s.seen.length, 2);
        assert.equal(b.currentState, 'half-open', 'the abandoned probe gave its slot back: nothing was learnt');
        // The next probe meets the dead origin and opens the circuit again.
        assert.equal((await resilientFetch(`${s.url}/x`, undefined, once)).status, 503);
        assert.equal(b.currentState, 'open');
      } finally {
        await s.close();
      }
    });
  }
  test('a registry given its own isExcluded still excludes the caller abort, and asks it about the rest', async () => {
    const s = await scripted([{ status: 503 }, { status: 429 }, { status: 503 }]);
    try {
      const seenByPredicate = [];
      const registry = new BreakerRegistry({
        failureThreshold: 1,
        openDurationMs: 60_000,
        isExcluded: (e) => {
          seenByPredicate.push(e?.status ?? e?.name);
          return e?.status === 503;
        },
      });
      const opts = { breaker: registry, budget: false, retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 } };
      assert.equal((await resilientFetch(`${s.url}/x`, undefined, opts)).status, 503);
      assert.equal(registry.get(s.url).currentState, 'closed', 'the 503 was excluded by the caller-given rule');
      const caller = new AbortController();
      caller.abort();
      await assert.rejects(resilientFetch(`${s.url}/x`, { signal: caller.signal }, opts));
      assert.deepEqual(seenByPredicate, [503], 'the caller abort never reached the predicate');
    } finally {
      await s.close();
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
    await assert.rejects(
      resilientFetch('http://127.0.0.1:9/', undefined, { attemptTimeoutMs: -1 }),
      (e) => e instanceof RangeError && /attemptTimeoutMs/.test(e.message) && isSteadfastError(e),
    );
    await assert.rejects(resilientFetch('http://127.0.0.1:9/', undefined, { breaker: 'yes' }), (e) => e instanceof TypeError && /breaker/.test(e.message));
    await assert.rejects(resilientFetch(42), (e) => e instanceof TypeError && /input/.test(e.message));
    await assert.rejects(
      resilientFetch('http://127.0.0.1:9/', undefined, { retry: { jitter: 'wild' } }),
      (e) => e instanceof RangeError && /jitter/.test(e.message),
    );
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
      resilientFetch(
        `${gw.url}/v1/charges`,
        { method: 'POST', headers: { 'Idempotency-Key': 'unk-2' }, body: JSON.stringify({ amountCents: 5, currency: 'usd' }) },
        { breaker: false, budget: false, retry: { ...fast, maxAttempts: 1 }, attemptTimeoutMs: 100 },
      ),
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
      await assert.rejects(
        c.charge({ amountCents: 300, currency: 'usd' }, { idempotencyKey: 'bad-1' }),
        (e) => e instanceof CheckoutRequestError && e.status === 400,
      );
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

// ---------------------------------------------------------------------------------------------
// Issue 12: browser-shaped network errors, nothing-sent vs unknown, reconciliation's settle window.
import vm from 'node:vm';
import {
  isTransientError,
  isFetchNetworkError,
  withRetry,
  reconcile,
  IdempotencyStore,
  OfflineError,
  createSharedIdempotencyStore,
  chargeCustomer,
} from 'steadfast';
import { freePort } from '../shared/redis-server.mjs';

/** A port nothing listens on (bound, then closed). */
const deadPort = freePort;

describe('network errors as the engines report them', () => {
  const engines = [
    'Failed to fetch', // Chromium
    'NetworkError when attempting to fetch resource.', // Firefox
    'Load failed', // WebKit
    'fetch failed', // undici
    'network error',
    'terminated',
    'The Internet connection appears to be offline.',
    'Network request failed',
    'error sending request for url (http://x/)',
  ];
  for (const message of engines) {
    test(`TypeError(${JSON.stringify(message)}) is a transient network error`, () => {
      const e = new TypeError(message);
      assert.equal(isFetchNetworkError(e), true);
      assert.equal(isTransientError(e), true);
    });
  }
  test('WebKit\'s "Load failed" counts with or without a stack (is-network-error requires none: we differ on purpose)', () => {
    const stackless = new TypeError('Load failed');
    Object.defineProperty(stackless, 'stack', { value: undefined });
    assert.equal(isFetchNetworkError(stackless), true);
    assert.equal(isFetchNetworkError(new TypeError('Load failed')), true);
  });
  test('a TypeError from another realm (a worker, an iframe, vm) is recognised', () => {
    const foreign = vm.runInNewContext('new TypeError("Failed to fetch")');
    assert.ok(!(foreign instanceof TypeError));
    assert.equal(isFetchNetworkError(foreign), true);
    assert.equal(isTransientError(foreign), true);
  });
  test('not network errors: other TypeErrors, other names, plain objects, hostile values', () => {
    for (const [i, e] of [
      new TypeError('x is not a function'),
      new TypeError('Failed to fetch '),
      new Error('Failed to fetch'), // the name matters: fetch rejects with TypeError
      new RangeError('fetch failed'),
      { name: 'TypeError', message: 'Failed to fetch' }, // not an Error
      'Failed to fetch',
      null,
      undefined,
      new Proxy(
        {},
        {
          get() {
            throw new Error('hostile');
          },
          getPrototypeOf() {
            throw new Error('hostile');
          },
        },
      ),
    ].entries()) {
      assert.equal(isFetchNetworkError(e), false, `case ${i}`);
    }
    assert.equal(isTransientError(new TypeError('x is not a function')), false);
  });
  test('undici: "fetch failed" with a system error as its cause, as Node 24 really throws it', async () => {
    const port = await deadPort();
    const e = await fetch(`http://127.0.0.1:${port}/`).then(
      () => undefined,
      (err) => err,
    );
    assert.equal(e?.message, 'fetch failed');
    assert.equal(e?.cause?.code, 'ECONNREFUSED');
    assert.equal(isFetchNetworkError(e), true);
    assert.equal(isTransientError(e), true);
  });
  test('isTransientError: offline and an open circuit are not transient (nothing was sent: a store frees the key)', () => {
    assert.equal(isTransientError(new OfflineError()), false);
    assert.equal(isTransientError(new CircuitOpenError(5)), false);
  });
});

describe('nothing sent vs maybe sent', () => {
  test('a refused connection: resilientFetch rethrows it (no OutcomeUnknownError); the checkout answers unavailable and frees the key', async () => {
    const port = await deadPort();
    const url = `http://127.0.0.1:${port}/v1/charges`;
    const e = await resilientFetch(url, { method: 'POST', body: '{}' }, { ...isolated(), idempotencyKey: 'refused-1' }).then(
      () => undefined,
      (err) => err,
    );
    assert.ok(e && !(e instanceof OutcomeUnknownError), `got ${e?.name}`);
    assert.equal(e.cause?.code, 'ECONNREFUSED');
    const c = createCheckoutClient({ endpoint: url, retry: fast, breaker: false });
    const out = await c.charge({ amountCents: 100, currency: 'usd' }, { idempotencyKey: 'refused-2' });
    assert.deepEqual(out, { status: 'unavailable', reason: 'connection-refused', retryAfterMs: 1_000, key: 'refused-2' });
    assert.equal(c.store.peek('refused-2'), undefined, 'the key is free, not parked as unknown');
    const again = await c.charge({ amountCents: 100, currency: 'usd' }, { idempotencyKey: 'refused-2' });
    assert.equal(again.status, 'unavailable', 'and the next click tries again (still nothing there)');
  });
  test('an earlier attempt that timed out is not hidden by a later refused connection: unknown', async () => {
    const s = await scripted([{ hang: true }]);
    const port = await deadPort();
    let calls = 0;
    const fetchImpl = (req, init) => {
      calls += 1;
      return calls === 1 ? fetch(`${s.url}/v1/charges`, init) : fetch(`http://127.0.0.1:${port}/`, init);
    };
    try {
      const e = await resilientFetch(
        `${s.url}/v1/charges`,
        { method: 'POST', body: '{}' },
        { ...isolated(), fetch: fetchImpl, idempotencyKey: 'mixed-1', attemptTimeoutMs: 50 },
      ).then(
        () => undefined,
        (err) => err,
      );
      assert.ok(e instanceof OutcomeUnknownError, `got ${e?.name}: ${e?.message}`);
      assert.equal(e.attempts, 3);
      assert.equal(s.seen.length, 1, 'the first attempt reached the server');
    } finally {
      await s.close();
    }
  });
  test('offline before sending (navigator.onLine === false): OfflineError, nothing sent; the checkout answers unavailable', async () => {
    const s = await scripted([{ status: 200, body: { id: 'ch_x' } }]);
    const had = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
    Object.defineProperty(globalThis, 'navigator', { value: { onLine: false }, configurable: true, writable: true });
    try {
      await assert.rejects(
        resilientFetch(`${s.url}/x`, undefined, isolated()),
        (e) => e instanceof OfflineError && e.code === 'OFFLINE' && isSteadfastError(e),
      );
      const c = createCheckoutClient({ endpoint: `${s.url}/v1/charges`, retry: fast });
      const out = await c.charge({ amountCents: 100, currency: 'usd' }, { idempotencyKey: 'off-1' });
      assert.equal(out.status, 'unavailable');
      assert.equal(out.reason, 'offline');
      assert.equal(c.store.peek('off-1'), undefined);
      assert.equal(s.seen.length, 0, 'nothing was sent');
    } finally {
      if (had) Object.defineProperty(globalThis, 'navigator', had);
      else delete globalThis.navigator;
      await s.close();
    }
  });
  test('a ReadableStream body is sent once (not retried) unless bufferBody', async () => {
    const s = await scripted([{ status: 503 }, { status: 200 }]);
    try {
      const body = new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode('{"a":1}'));
          c.close();
        },
      });
      const res = await resilientFetch(`${s.url}/x`, { method: 'PUT', body, duplex: 'half' }, isolated());
      assert.equal(res.status, 503, 'a PUT is retryable, but its stream could be read once');
      assert.equal(s.seen.length, 1);
      await assert.rejects(resilientFetch(`${s.url}/x`, undefined, { bufferBody: 'yes' }), (e) => e instanceof TypeError && /bufferBody/.test(e.message));
    } finally {
      await s.close();
    }
  });
  test('a caller abort mid-charge rejects with its reason and parks the key as unknown (it may have been sent)', async () => {
    const s = await scripted([{ hang: true }]);
    try {
      const c = createCheckoutClient({ endpoint: `${s.url}/v1/charges`, retry: fast, breaker: false });
      const ac = new AbortController();
      const reason = new Error('user left');
      const p = c.charge({ amountCents: 100, currency: 'usd' }, { idempotencyKey: 'abort-1', signal: ac.signal });
      setTimeout(() => ac.abort(reason), 50);
      await assert.rejects(p, (e) => e === reason);
      assert.equal(c.store.peek('abort-1')?.status, 'unknown');
      const aborted = new AbortController();
      aborted.abort(new Error('already'));
      await assert.rejects(c.charge({ amountCents: 100, currency: 'usd' }, { idempotencyKey: 'abort-2', signal: aborted.signal }), /already/);
      assert.equal(c.store.peek('abort-2'), undefined, 'aborted before sending: the key is free');
    } finally {
      await s.close();
    }
  });
});

describe('withRetry: async classifiers', () => {
  test('an isRetryable that rejects rejects the call (never silently "no retry")', async () => {
    const boom = new Error('classifier failed');
    await assert.rejects(
      withRetry(
        () => {
          throw new Error('x');
        },
        {
          ...fast,
          isRetryable: async () => {
            throw boom;
          },
        },
      ),
      (e) => e === boom,
    );
  });
  test('an isRetryable Promise resolving false stops at once', async () => {
    let calls = 0;
    await assert.rejects(
      withRetry(
        () => {
          calls += 1;
          throw new Error('x');
        },
        { ...fast, isRetryable: () => Promise.resolve(false) },
      ),
      /x/,
    );
    assert.equal(calls, 1);
  });
  test('a store whose isTransient returns a Promise parks the key (it cannot wait: unknown is the safe answer)', async () => {
    const store = new IdempotencyStore({ isTransient: async () => false });
    await store.run('p-1', () => Promise.reject(new Error('x'))).catch(() => {});
    assert.equal(store.peek('p-1')?.status, 'unknown');
  });
});

describe('reconcile: the settle window', () => {
  const unknownStore = async (clock, options) => {
    const store = new IdempotencyStore({ clock });
    await store
      .run('k', () => Promise.reject(new OutcomeUnknownError('k', 0, { attempts: 2, lastAttemptAt: clock(), settleAfterMs: 1_000 })), options)
      .catch(() => {});
    return store;
  };
  test('the lookup receives the record; "failed" inside the window is deferred, after it applied; "done" at once', async () => {
    let now = 10_000;
    const clock = () => now;
    const store = await unknownStore(clock);
    const seen = [];
    const lookup = (key, record) => {
      seen.push(record);
      return { status: 'failed' };
    };
    now = 10_400;
    const early = await reconcile(store, lookup, { clock });
    assert.deepEqual(
      { ...early, errors: undefined },
      { checked: 1, done: 0, failed: 0, deferred: 1, stillUnknown: 0, retryAfterMs: 600, settleAllAfterMs: 600, errors: undefined },
    );
    assert.deepEqual(seen[0], { status: 'unknown', error: seen[0].error, startedAt: 10_000, lastAttemptAt: 10_000, attempts: 2, settleAfterMs: 1_000 });
    assert.ok(Object.isFrozen(seen[0]));
    assert.equal(store.peek('k')?.status, 'unknown');
    now = 11_000;
    const late = await reconcile(store, lookup, { clock });
    assert.equal(late.failed, 1);
    assert.equal(store.peek('k'), undefined, 'freed only after the window');
    const again = await unknownStore(clock);
    const done = await reconcile(again, () => ({ status: 'done', result: 'r' }), { clock });
    assert.equal(done.done, 1, '"done" needs no window');
  });
  test('"failed" is judged when the lookup was asked: asked inside the window, answered after it, the key stays unknown', async () => {
    let now = 10_000;
    const clock = () => now;
    const store = await unknownStore(clock); // last attempt at 10,000, window 1,000 ms: open until 11,000
    now = 10_800; // 200 ms of the window left when the lookup is asked
    const askedAt = [];
    // A slow listing: it answers "no charge" 700 ms later, past the window, but that answer only
    // covers what the gateway knew at 10,800 (a debit could land in the 200 ms left).
    const slow = async () => {
      askedAt.push(now);
      await Promise.resolve();
      now += 700;
      return { status: 'failed' };
    };
    const early = await reconcile(store, slow, { clock });
    assert.deepEqual(askedAt, [10_800]);
    assert.deepEqual(
      { ...early, errors: early.errors.length },
      { checked: 1, done: 0, failed: 0, deferred: 1, stillUnknown: 0, retryAfterMs: 200, settleAllAfterMs: 200, errors: 0 },
      'deferred: the window was still open when the lookup was asked (200 ms left, counted from then)',
    );
    assert.equal(store.peek('k')?.status, 'unknown', 'not freed by an answer about a time inside the window');
    // Asked after the window (now 11,500), the same answer frees the key.
    const late = await reconcile(store, () => ({ status: 'failed' }), { clock });
    assert.deepEqual([late.failed, late.deferred], [1, 0]);
    assert.equal(store.peek('k'), undefined);
  });
  test('an in-process store on a clock of its own is judged on that clock, not on Date.now', async () => {
    // The store's times are on its clock, hours behind Date.now (a monotonic clock from 0, a test
    // clock): judged on Date.now, the window would look long past and the key be freed at once.
    let now = 10_000;
    const store = await unknownStore(() => now); // window open until 11,000 on the store's clock
    now = 10_400;
    const early = await reconcile(store, () => ({ status: 'failed' })); // no clock given: the store's
    assert.deepEqual([early.failed, early.deferred, early.retryAfterMs], [0, 1, 600]);
    assert.equal(store.peek('k')?.status, 'unknown', 'not freed inside the window of its own clock');
    now = 11_000;
    assert.equal((await reconcile(store, () => ({ status: 'failed' }))).failed, 1);
    assert.equal(store.peek('k'), undefined);
  });
  test('a clock that throws leaves a "failed" key unknown and reported; a "done" answer is still applied', async () => {
    let now = 10_000;
    const clock = () => now;
    const broken = () => {
      throw new Error('clock down');
    };
    const store = await unknownStore(clock);
    now = 50_000; // long after the window: only the broken clock stands in the way
    const failed = await reconcile(store, () => ({ status: 'failed' }), { clock: broken });
    assert.deepEqual([failed.failed, failed.deferred, failed.stillUnknown, failed.errors.length], [0, 0, 1, 1]);
    assert.deepEqual([failed.errors[0].key, failed.errors[0].error.message], ['k', 'clock down']);
    assert.equal(store.peek('k')?.status, 'unknown', 'nothing freed');
    const done = await reconcile(store, () => ({ status: 'done', result: 'r' }), { clock: broken });
    assert.deepEqual([done.done, done.errors.length], [1, 0], '"done" needs no clock');
    assert.equal(store.peek('k')?.status, 'done');
  });
  test('a record without its own window uses the settleAfterMs option (default 120 s); bad values are RangeErrors', async () => {
    let now = 0;
    const clock = () => now;
    const store = new IdempotencyStore({ clock });
    await store.run('k', () => Promise.reject(Object.assign(new Error('t'), { name: 'TimeoutError' }))).catch(() => {});
    assert.equal(store.peek('k')?.lastAttemptAt, 0, 'no attempt time reported: the failure time stands in');
    now = 119_999;
    assert.equal((await reconcile(store, () => ({ status: 'failed' }), { clock })).deferred, 1);
    assert.equal((await reconcile(store, () => ({ status: 'failed' }), { clock, settleAfterMs: 5_000 })).failed, 1);
    await assert.rejects(
      reconcile(store, () => undefined, { settleAfterMs: -1 }),
      (e) => e instanceof RangeError && /settleAfterMs/.test(e.message),
    );
  });
  test('chargeCustomer records attempts and its settleAfterMs on an unknown key', async () => {
    const store = new IdempotencyStore();
    const breaker = new CircuitBreaker({ failureThreshold: 100, openDurationMs: 1 });
    const gateway = () => Promise.reject(Object.assign(new Error('timeout'), { name: 'TimeoutError' }));
    await chargeCustomer({ idempotencyKey: 'cc-1', amountCents: 5, currency: 'usd' }, { store, breaker, gateway, policy: fast, settleAfterMs: 4_000 }).catch(
      () => {},
    );
    const rec = store.peek('cc-1');
    assert.equal(rec?.attempts, 3);
    assert.equal(rec?.settleAfterMs, 4_000);
    await assert.rejects(
      chargeCustomer({ idempotencyKey: 'cc-2', amountCents: 5, currency: 'usd' }, { store, breaker, gateway, policy: fast, settleAfterMs: -5 }),
      RangeError,
    );
  });
  test('a shared store keeps the same metadata', async () => {
    const store = createSharedIdempotencyStore();
    await store.run('sh-1', () => Promise.reject(new OutcomeUnknownError('sh-1', 0, { attempts: 4, lastAttemptAt: 123, settleAfterMs: 50 }))).catch(() => {});
    const rec = await store.peek('sh-1');
    assert.equal(rec?.status, 'unknown');
    assert.deepEqual([rec.attempts, rec.lastAttemptAt, rec.settleAfterMs], [4, 123, 50]);
    const report = await reconcile(store, () => ({ status: 'failed' }));
    assert.equal(report.failed, 1, 'its window (50 ms after 123) has long passed');
  });
});

describe('checkout.reconcile()', () => {
  let gw;
  before(async () => {
    gw = await startGateway({ seed: 21 });
  });
  after(async () => {
    await gw.close();
  });
  const client = (extra = {}) =>
    createCheckoutClient({ endpoint: `${gw.url}/v1/charges`, retry: { ...fast, maxAttempts: 1 }, attemptTimeoutMs: 200, ...extra });

  test('re-sends the same key: a decline inside the settle window settles nothing; after it, it settles declined and frees the key', async () => {
    gw.forceNext('status503');
    const c = client({ settleAfterMs: 60 });
    assert.equal((await c.charge({ amountCents: 9, currency: 'usd' }, { idempotencyKey: 'rc-1' })).status, 'unknown');
    gw.forceNext('decline');
    const early = await c.reconcile('rc-1');
    assert.equal(early.status, 'unknown', 'the first attempt may still be processed: a decline now proves nothing');
    assert.ok(early.retryAfterMs > 0 && early.retryAfterMs <= 60, `says when it can settle (${early.retryAfterMs})`);
    await new Promise((r) => setTimeout(r, 70));
    gw.forceNext('decline');
    const out = await c.reconcile('rc-1');
    assert.equal(out.status, 'declined');
    assert.equal(c.store.peek('rc-1'), undefined);
  });
  test('while the gateway still processes the key (409) it stays unknown, with a fresh attempt time', async () => {
    gw.forceNext('slow'); // 200 ms: the client (200 ms timeout) gives up first
    const c = client({ attemptTimeoutMs: 50 });
    assert.equal((await c.charge({ amountCents: 9, currency: 'usd' }, { idempotencyKey: 'rc-2' })).status, 'unknown');
    const first = c.store.peek('rc-2').lastAttemptAt;
    // lastAttemptAt of a given-up attempt is the abort, in whole ms: let the clock move on, or the
    // re-sent request may start in the same millisecond (the flake this once was).
    await new Promise((r) => setTimeout(r, 3));
    const out = await c.reconcile('rc-2');
    assert.deepEqual({ ...out, retryAfterMs: typeof out.retryAfterMs }, { status: 'unknown', key: 'rc-2', retryAfterMs: 'number' }, 'the 409: still running');
    assert.ok(c.store.peek('rc-2').lastAttemptAt > first, 'the window now counts from the re-sent request');
    await new Promise((r) => setTimeout(r, 250));
    assert.equal((await c.reconcile('rc-2')).status, 'succeeded');
    assert.equal(gw.chargesByKey().get('rc-2'), 1);
  });
  test('a key this client did not make needs its charge (after a reload); without one it is a TypeError', async () => {
    const c = client();
    await assert.rejects(c.reconcile('never-seen'), (e) => e instanceof TypeError && /charge/.test(e.message));
    const out = await c.reconcile('reloaded-1', { amountCents: 12, currency: 'usd' });
    assert.equal(out.status, 'succeeded');
    await assert.rejects(c.reconcile(42), TypeError);
  });
  test('reconcile() with no key settles every unknown key, one after another', async () => {
    gw.forceNext('status503', 2);
    const c = client();
    await c.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'all-1' });
    await c.charge({ amountCents: 2, currency: 'usd' }, { idempotencyKey: 'all-2' });
    assert.deepEqual(c.store.unknownKeys(), ['all-1', 'all-2']);
    const outs = await c.reconcile();
    assert.deepEqual(
      outs.map((o) => [o.key, o.status]),
      [
        ['all-1', 'succeeded'],
        ['all-2', 'succeeded'],
      ],
    );
  });
});

test('createCheckoutClient({ settleAfterMs }) is the window an unknown keeps; the default is 2 × attemptTimeoutMs', async () => {
  const s = await scripted([{ status: 503 }]);
  try {
    const own = createCheckoutClient({ endpoint: `${s.url}/v1/charges`, retry: { ...fast, maxAttempts: 1 }, settleAfterMs: 7_000, breaker: false });
    await own.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'sw-1' });
    assert.equal(own.store.peek('sw-1')?.settleAfterMs, 7_000);
    const dflt = createCheckoutClient({ endpoint: `${s.url}/v1/charges`, retry: { ...fast, maxAttempts: 1 }, attemptTimeoutMs: 300, breaker: false });
    await dflt.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'sw-2' });
    assert.equal(dflt.store.peek('sw-2')?.settleAfterMs, 600);
    assert.throws(
      () => createCheckoutClient({ endpoint: s.url, settleAfterMs: -1 }),
      (e) => e instanceof RangeError && /settleAfterMs/.test(e.message),
    );
    assert.throws(
      () => createCheckoutClient({ endpoint: s.url, settleAfterMs: '1' }),
      (e) => e instanceof TypeError && /settleAfterMs/.test(e.message),
    );
  } finally {
    await s.close();
  }
});

test("a dropped keyed POST parks the key with the client's own settleAfterMs (not resilientFetch's default)", async () => {
  const gw = await startGateway({ seed: 5 });
  try {
    gw.forceNext('debitThenReset');
    const c = createCheckoutClient({
      endpoint: `${gw.url}/v1/charges`,
      retry: { ...fast, maxAttempts: 1 },
      attemptTimeoutMs: 300,
      settleAfterMs: 9_000,
      breaker: false,
    });
    assert.equal((await c.charge({ amountCents: 3, currency: 'usd' }, { idempotencyKey: 'sw-3' })).status, 'unknown');
    const rec = c.store.peek('sw-3');
    assert.equal(rec?.settleAfterMs, 9_000);
    assert.equal(rec?.attempts, 1);
  } finally {
    await gw.close();
  }
});
