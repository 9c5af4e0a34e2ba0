// Hedging against real HTTP on 127.0.0.1: a server with a slow tail (some requests hang), and the
// key-honouring gateway (tests/support/gateway.mjs). Asserted from the server's side: how many copies
// it saw, that a losing copy's connection was closed by the client, that a charge hedged under one
// key debits once; and from the caller's: the latency, the budget, the events, no listener left.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { getEventListeners } from 'node:events';
import {
  resilientFetch,
  withRetry,
  pipeline,
  hedge,
  wrap,
  events,
  RetryBudget,
  IdempotencyStore,
  CircuitBreaker,
  HedgeNotSafeError,
  chargeCustomer,
  createCheckoutClient,
  createSharedIdempotencyStore,
  isSteadfastError,
  isTransientError,
  memoryStateStore,
} from 'steadfast';
import { startGateway } from '../support/gateway.mjs';

/**
 * A server whose n-th request waits `delays[n]` ms before answering 200 (the last entry repeats), or
 * `[ms, status]`; `Infinity` hangs until the client lets go. Records each request and whether the client closed it
 * before its answer.
 */
async function slowTail(delays) {
  const seen = [];
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    const n = seen.length;
    const [delay, status] = [delays[Math.min(n, delays.length - 1)]].flat().concat(200);
    const entry = { n, method: req.method, key: req.headers['idempotency-key'], abandoned: false, socket: req.socket };
    seen.push(entry);
    let timer;
    res.on('close', () => {
      clearTimeout(timer);
      if (!res.writableEnded) entry.abandoned = true;
    });
    req.resume();
    // A hanging request still ends by itself after 5 s, so a failing test cannot hang the suite.
    timer = setTimeout(
      () => {
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(`answer ${n}`);
      },
      delay === Infinity ? 5_000 : delay,
    );
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    seen,
    sockets,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(r);
      }),
  };
}

/** Wait until `cond()` holds (polling), or fail after `ms`. */
async function until(cond, ms, what) {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Collect hedge events while `fn` runs. */
async function hedgeEvents(fn) {
  const seen = [];
  const stop = events.onHedge((e) => seen.push(e));
  try {
    return { value: await fn(), seen };
  } finally {
    stop();
  }
}

describe('resilientFetch hedge against a slow tail', () => {
  test('a GET stuck in the tail is answered by its hedge; the loser is aborted and its socket closed', async () => {
    const s = await slowTail([Infinity, 5]);
    try {
      const caller = new AbortController();
      const started = Date.now();
      const { value: res, seen } = await hedgeEvents(() =>
        resilientFetch(`${s.url}/item`, { signal: caller.signal }, { hedge: { delayMs: 30 }, breaker: false, budget: false }),
      );
      const took = Date.now() - started;
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'answer 1', 'the hedge (second request) answered');
      assert.ok(took < 1_000, `answered in ${took} ms, not after the 5 s tail`);
      assert.equal(s.seen.length, 2, 'exactly one hedge was sent');
      await until(() => s.seen[0].abandoned, 1_000, 'the server sees the losing request closed by the client');
      await until(() => s.seen[0].socket.destroyed, 1_000, "the loser's socket is closed, not left open");
      assert.deepEqual(
        seen.map((e) => [e.kind, e.copy]),
        [
          ['started', 1],
          ['won', 1],
          ['cancelled', 0],
        ],
      );
      assert.equal(getEventListeners(caller.signal, 'abort').length, 0, "no listener left on the caller's signal");
    } finally {
      await s.close();
    }
  });

  test('a POST without an Idempotency-Key is refused before anything is sent', async () => {
    const s = await slowTail([5]);
    try {
      await assert.rejects(
        resilientFetch(`${s.url}/charges`, { method: 'POST', body: '{}' }, { hedge: { delayMs: 10 }, breaker: false, budget: false }),
        (e) => e instanceof HedgeNotSafeError && isSteadfastError(e, 'HEDGE_NOT_SAFE') && e.method === 'POST',
      );
      assert.equal(s.seen.length, 0, 'nothing was sent');
    } finally {
      await s.close();
    }
  });

  test('a hedge is paid from the retry budget, and a dry budget stops new copies but not running ones', async () => {
    // Two slow copies (150 ms), hedges every 20 ms, room for one: the third copy is refused, and the
    // two that run are left to answer.
    const s = await slowTail([150, 150, 5]);
    try {
      const budget = new RetryBudget({ capacity: 1, refillPerSec: 0.001 });
      const { value: res, seen } = await hedgeEvents(() =>
        resilientFetch(`${s.url}/item`, undefined, { hedge: { delayMs: 20, maxHedges: 2 }, breaker: false, budget }),
      );
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'answer 0', 'the first copy, left running, answered');
      assert.equal(s.seen.length, 2, 'the budget refused the third copy');
      assert.ok(budget.available < 1, `the hedge withdrew from the budget (available ${budget.available})`);
      assert.deepEqual(
        seen.map((e) => e.kind),
        ['started', 'refused', 'won', 'cancelled'],
      );
      // The same budget now refuses a retry: hedges and retries draw on one budget.
      const flaky = await slowTail([5]);
      try {
        let calls = 0;
        await assert.rejects(
          withRetry(
            () => {
              calls += 1;
              throw Object.assign(new Error('503'), { status: 503 });
            },
            { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1, budget },
          ),
          (e) => isSteadfastError(e, 'RETRY_BUDGET_EXHAUSTED'),
        );
        assert.equal(calls, 1);
      } finally {
        await flaky.close();
      }
    } finally {
      await s.close();
    }
  });
});

test('a keyed POST refused by its hedge while the first copy was cancelled is unknown, not refused', async () => {
  // The first copy hangs (it may be debiting); the hedge is answered 402 at once. The 402 says
  // nothing about the first copy, which was let go unanswered: the charge may have gone through.
  const s = await slowTail([Infinity, [0, 402]]);
  try {
    await assert.rejects(
      resilientFetch(
        `${s.url}/charges`,
        { method: 'POST', headers: { 'Idempotency-Key': 'hedge-402' }, body: '{}' },
        { hedge: { delayMs: 20 }, breaker: false, budget: false, retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } },
      ),
      (e) => isSteadfastError(e, 'OUTCOME_UNKNOWN') && e.key === 'hedge-402' && e.attempts === 2,
    );
    assert.deepEqual(
      s.seen.map((r) => r.key),
      ['hedge-402', 'hedge-402'],
      'the same key on both copies',
    );
  } finally {
    await s.close();
  }
});

test('a cancelled copy counts as possibly processed at once, even under a fetch that ignores its signal', async () => {
  // A fetch (a polyfill, a wrapper) that never settles an aborted request: the loser's own attempt
  // never reports back, and the charge must still not be judged by the hedge's 402 alone.
  let calls = 0;
  const fetch = () => (calls++ === 0 ? new Promise(() => {}) : Promise.resolve(new Response('declined', { status: 402 })));
  await assert.rejects(
    resilientFetch(
      'http://127.0.0.1:9/charges',
      { method: 'POST', headers: { 'Idempotency-Key': 'hedge-ignored' }, body: '{}' },
      { fetch, hedge: { delayMs: 5 }, breaker: false, budget: false, retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } },
    ),
    (e) => isSteadfastError(e, 'OUTCOME_UNKNOWN') && e.key === 'hedge-ignored',
  );
  assert.equal(calls, 2);
});

describe('a keyed POST hedged against a key-honouring gateway', () => {
  let gw;
  before(async () => {
    gw = await startGateway({ seed: 31 });
  });
  after(async () => {
    await gw.close();
  });

  test('the first copy debits and hangs; the hedge, same key, gets the replay: one debit, answered fast', async () => {
    gw.forceNext('debitThenTimeout');
    const before = gw.requests();
    const started = Date.now();
    const { value: res, seen } = await hedgeEvents(() =>
      resilientFetch(
        `${gw.url}/v1/charges`,
        {
          method: 'POST',
          headers: { 'Idempotency-Key': 'hedge-1', 'content-type': 'application/json' },
          body: JSON.stringify({ amountCents: 4999, currency: 'usd' }),
        },
        { hedge: { delayMs: 50 }, breaker: false, budget: false, retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 }, attemptTimeoutMs: 3_000 },
      ),
    );
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('idempotent-replayed'), 'true', 'the hedge was recognised as the same charge');
    assert.ok(Date.now() - started < 2_000, 'answered by the hedge, not after the attempt timeout');
    assert.equal(gw.requests() - before, 2, 'two copies reached the gateway');
    assert.equal(gw.chargesByKey().get('hedge-1'), 1, 'exactly one debit');
    assert.deepEqual(
      seen.map((e) => e.kind),
      ['started', 'won', 'cancelled'],
    );
  });
});

describe('withRetry and pipeline hedges', () => {
  /** A copy that answers after `ms`, or rejects with its signal's reason when aborted. */
  const answerAfter = (ms, value, signal) =>
    new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve(value), ms);
      signal.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
    });

  test('refused unless the call is declared safe or carries a key', async () => {
    let ran = 0;
    await assert.rejects(
      withRetry(() => ran++, { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, hedge: { delayMs: 1 } }),
      (e) => e instanceof HedgeNotSafeError,
    );
    assert.equal(ran, 0);
    const p = pipeline({ hedge: { delayMs: 1 } });
    await assert.rejects(
      p.execute(() => ran++),
      (e) => e instanceof HedgeNotSafeError,
    );
    assert.equal(await p.execute(() => 'keyed', { idempotencyKey: 'k-1' }), 'keyed');
  });

  test('every copy carries the same key; a definitive refusal with a cancelled copy leaves the charge unknown', async () => {
    const store = new IdempotencyStore();
    const keys = [];
    const declined = Object.assign(new Error('card declined'), { status: 402 });
    await assert.rejects(
      store.run('order-7', () =>
        withRetry(
          (ctx) => {
            keys.push(ctx.idempotencyKey);
            // The first copy is slow (it may be debiting); the hedge is refused at once.
            return ctx.hedge === 0 ? answerAfter(300, 'charged', ctx.signal) : Promise.reject(declined);
          },
          { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, hedge: { delayMs: 10, idempotencyKey: 'order-7' } },
        ),
      ),
    );
    assert.deepEqual(keys, ['order-7', 'order-7']);
    // The cancelled first copy may have been processed: the key is parked, not freed.
    assert.deepEqual(store.unknownKeys(), ['order-7']);
  });

  test('a pipeline shares one budget between its retry and its hedge', async () => {
    const budget = new RetryBudget({ capacity: 1, refillPerSec: 0.001 });
    const p = pipeline({
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1, budget },
      hedge: { delayMs: 10, budget, safe: true },
    });
    let calls = 0;
    const out = await p.execute((ctx) => {
      calls += 1;
      return ctx.hedge === 0 ? answerAfter(1_000, 'slow', ctx.signal) : 'hedge';
    });
    assert.equal(out, 'hedge');
    assert.ok(budget.available < 1, 'the hedge was paid from the shared budget');
    await assert.rejects(
      p.execute(() => {
        calls += 1;
        throw Object.assign(new Error('503'), { status: 503 });
      }),
      (e) => isSteadfastError(e, 'RETRY_BUDGET_EXHAUSTED'),
    );
    assert.equal(calls, 3, 'no retry after the hedge spent the budget');
  });

  test('bad hedge options are a RangeError naming the option', async () => {
    for (const [hedgeOptions, name] of [
      [{ delayMs: -1, safe: true }, 'delayMs'],
      [{ quantile: 1.5, safe: true }, 'quantile'],
      [{ maxHedges: 0, safe: true }, 'maxHedges'],
      [{ minDelayMs: 50, maxDelayMs: 10, safe: true }, 'maxDelayMs'],
    ]) {
      await assert.rejects(
        withRetry(() => 1, { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, hedge: hedgeOptions }),
        (e) => e instanceof RangeError && e.message.includes(name),
        name,
      );
    }
    assert.throws(
      () => hedge({ safe: 'yes' }),
      (e) => e instanceof TypeError && e.message.includes('safe'),
    );
  });
});

test('property: bounded copies and concurrency, a definitive answer wins, every loser is let go', async () => {
  const { default: fc } = await import('fast-check');
  const copyPlan = fc.record({ ms: fc.integer({ min: 0, max: 25 }), outcome: fc.constantFrom('ok', 'transient', 'permanent') });
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 0, max: 10 }),
      fc.array(copyPlan, { minLength: 5, maxLength: 5 }),
      async (maxHedges, maxInFlight, delayMs, plan) => {
        const copies = [];
        let running = 0;
        let mostRunning = 0;
        const fn = ({ hedge: index, signal }) =>
          new Promise((resolve, reject) => {
            const copy = { index, settled: false, aborted: false };
            copies.push(copy);
            running += 1;
            mostRunning = Math.max(mostRunning, running);
            const { ms, outcome } = plan[index];
            const end = () => {
              running -= 1;
              copy.settled = true;
            };
            const t = setTimeout(() => {
              end();
              if (outcome === 'ok') resolve(`copy ${index}`);
              else reject(Object.assign(new Error(outcome), { status: outcome === 'transient' ? 503 : 400, copy: index }));
            }, ms);
            signal.addEventListener('abort', () => {
              clearTimeout(t);
              end();
              copy.aborted = true;
              reject(signal.reason);
            });
          });
        const outcome = await withRetry(fn, { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, hedge: { delayMs, maxHedges, maxInFlight, safe: true } }).then(
          (value) => ({ value }),
          (error) => ({ error }),
        );
        assert.ok(copies.length <= maxHedges + 1, `${copies.length} copies, at most ${maxHedges + 1}`);
        assert.ok(mostRunning <= Math.min(maxInFlight, maxHedges + 1), `${mostRunning} at once, at most ${maxInFlight}`);
        assert.ok(
          copies.every((c) => c.settled),
          'no copy is left running',
        );
        const answered = copies.filter((c) => !c.aborted);
        if (outcome.value !== undefined) {
          const winner = Number(outcome.value.split(' ')[1]);
          assert.equal(plan[winner].outcome, 'ok');
          assert.ok(answered.some((c) => c.index === winner));
        } else {
          const { copy } = outcome.error;
          // A permanent failure wins like an answer; otherwise every copy failed retryably.
          if (plan[copy].outcome !== 'permanent') assert.ok(answered.every((c) => plan[c.index].outcome === 'transient'));
          assert.ok(answered.every((c) => plan[c.index].outcome !== 'ok'));
        }
      },
    ),
    { numRuns: 60 },
  );
});

/**
 * A gateway driven by the test: each call (a copy) is recorded with its key and held open until the
 * test settles it (`answer(i, error)`, `succeed(i, value)`), or rejects with its signal's reason
 * when the copy is let go. `debits` counts the calls that reached it: any of them may have charged.
 */
function heldGateway() {
  const calls = [];
  const call = (ctx, key) =>
    new Promise((resolve, reject) => {
      const entry = { key, copy: ctx.hedge, resolve, reject, settled: false, aborted: false };
      calls.push(entry);
      // A copy nobody settles still ends by itself, so a failing test cannot hang the suite.
      const t = setTimeout(() => reject(new Error('held too long')), 3_000);
      ctx.signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(t);
          entry.aborted = true;
          reject(ctx.signal.reason);
        },
        { once: true },
      );
    });
  return {
    calls,
    call,
    debits: () => calls.length,
    answer: (i, error) => calls[i].reject(error),
    succeed: (i, value) => calls[i].resolve(value),
  };
}

const tick = (ms) => new Promise((ok) => setTimeout(ok, ms));
const status = (s) => Object.assign(new Error(`HTTP ${s}`), { status: s });
const timedOut = () => Object.assign(new Error('socket hang up'), { code: 'ETIMEDOUT' });

describe('a store run hedged without a retry around the hedge', () => {
  const copies = { delayMs: 5 };
  const ways = {
    'store.run(() => hedge().execute(fn))': (store, key, fn) => store.run(key, () => hedge(copies).execute(fn, { idempotencyKey: key })),
    'pipeline({ idempotency, hedge })': (store, key, fn) => pipeline({ idempotency: store, hedge: copies }).execute(fn, { idempotencyKey: key }),
  };
  const stores = {
    IdempotencyStore: () => new IdempotencyStore(),
    'a shared store': () => createSharedIdempotencyStore({ store: memoryStateStore() }),
  };
  for (const [way, run] of Object.entries(ways)) {
    for (const [storeName, makeStore] of Object.entries(stores)) {
      test(`${way}, ${storeName}: the first copy let go unanswered, the hedge declined: parked, never sent blind`, async () => {
        const store = makeStore();
        const gw = heldGateway();
        const key = 'solo-1';
        const out = run(store, key, (ctx) => gw.call(ctx, ctx.idempotencyKey)).then(
          () => assert.fail('resolved'),
          (e) => e,
        );
        await tick(20); // both copies are at the gateway
        assert.equal(gw.debits(), 2);
        gw.answer(1, status(402)); // the hedge is declined; the first copy, maybe debiting, is let go
        const e = await out;
        assert.ok(gw.calls[0].aborted, 'the first copy was let go');
        assert.equal(e.code, 'OUTCOME_UNKNOWN', `the first copy may have charged (${e})`);
        assert.equal(e.cause?.status, 402);
        assert.deepEqual(await store.unknownKeys(), [key]);
        await assert.rejects(
          run(store, key, (ctx) => gw.call(ctx, ctx.idempotencyKey)),
          { code: 'OUTCOME_UNKNOWN' },
        );
        assert.equal(gw.debits(), 2, 'nothing was sent again');
        assert.deepEqual(
          gw.calls.map((c) => c.key),
          [key, key],
          'one key on every copy',
        );
      });
    }
  }
});

describe("every copy's answer reaches the history, whatever ends the race", () => {
  // Copy 0 fails in a way that may have charged, after copy 1 has started; then copy 1 ends the
  // race with a definitive answer. The charge is judged by both copies, never by copy 1 alone.
  const onlyOnce = { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 };
  const copies = { delayMs: 5 };
  const classifiers = {
    // copy 0 timed out (retryable) before copy 1 was declined
    'a copy that timed out before another was declined': {
      isRetryable: isTransientError,
      script: async (gw) => {
        gw.answer(0, timedOut());
        await tick(5);
        gw.answer(1, status(402));
      },
    },
    // copy 0 was throttled, then the classifier threw on copy 1's timeout
    "a copy whose classifier threw on its timeout, after another's 429": {
      isRetryable: (e) => {
        if (e?.code === 'ETIMEDOUT') throw new Error('classifier bug');
        return isTransientError(e);
      },
      script: async (gw) => {
        gw.answer(0, status(429));
        await tick(5);
        gw.answer(1, timedOut());
      },
    },
    // copy 0's timeout is still being classified (asynchronously) when copy 1's decline ends the race
    "a copy still being classified when another's decline ends the race": {
      isRetryable: async (e) => {
        if (e?.code === 'ETIMEDOUT') await tick(40);
        return isTransientError(e);
      },
      script: async (gw) => {
        gw.answer(0, timedOut());
        await tick(5);
        gw.answer(1, status(402));
      },
    },
  };
  for (const [name, { isRetryable, script }] of Object.entries(classifiers)) {
    const ways = {
      'withRetry(fn, { hedge })': (store, key, fn) =>
        store.run(key, () =>
          withRetry(fn, {
            ...onlyOnce,
            isRetryable,
            hedge: { ...copies, idempotencyKey: key },
          }),
        ),
      'hedge().execute(fn)': (store, key, fn) =>
        store.run(key, () =>
          hedge({ ...copies, isRetryable }).execute(fn, {
            idempotencyKey: key,
          }),
        ),
    };
    for (const [way, run] of Object.entries(ways)) {
      test(`${way}: ${name}: parked`, async () => {
        const store = new IdempotencyStore();
        const gw = heldGateway();
        const out = run(store, 'k', (ctx) => gw.call(ctx, ctx.idempotencyKey)).then(
          () => assert.fail('resolved'),
          (e) => e,
        );
        await tick(20);
        assert.equal(gw.debits(), 2);
        await script(gw);
        const e = await out;
        assert.equal(e.code, 'OUTCOME_UNKNOWN', `copy 0 may have charged (${e})`);
        assert.deepEqual(store.unknownKeys(), ['k']);
      });
    }
  }
});

describe('what a hedged copy is evidence of: refused copies never ran, cancelled ones may have', () => {
  const gatewayOf = (gw) => (charge, ctx) => gw.call(ctx, charge.idempotencyKey);
  const breaker = () => new CircuitBreaker({ failureThreshold: 100, openDurationMs: 1000 });

  test('chargeCustomer: every copy sends the charge key; the first let go, the hedge declined: parked', async () => {
    const gw = heldGateway();
    const store = new IdempotencyStore();
    const policy = { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, hedge: { delayMs: 5, safe: true } };
    const charge = { idempotencyKey: 'cc-h-1', amountCents: 500, currency: 'usd' };
    const out = chargeCustomer(charge, { store, breaker: breaker(), gateway: gatewayOf(gw), policy }).then(
      () => assert.fail('resolved'),
      (e) => e,
    );
    await tick(20);
    gw.answer(1, status(402));
    assert.equal((await out).code, 'OUTCOME_UNKNOWN');
    assert.deepEqual(
      gw.calls.map((c) => c.key),
      ['cc-h-1', 'cc-h-1'],
    );
    assert.deepEqual(store.unknownKeys(), ['cc-h-1']);
  });

  test('chargeCustomer: a hedge the budget refused was never sent; the one copy declined frees the key', async () => {
    const gw = heldGateway();
    const store = new IdempotencyStore();
    const budget = new RetryBudget({ capacity: 1, refillPerSec: 0.001 });
    assert.equal(budget.tryConsume(), true); // the budget is dry: the hedge will be refused
    const policy = { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, budget, hedge: { delayMs: 5, safe: true } };
    const charge = { idempotencyKey: 'cc-h-2', amountCents: 500, currency: 'usd' };
    const { value: e, seen } = await hedgeEvents(async () => {
      const out = chargeCustomer(charge, { store, breaker: breaker(), gateway: gatewayOf(gw), policy }).then(
        () => assert.fail('resolved'),
        (err) => err,
      );
      await tick(20);
      gw.answer(0, status(402));
      return out;
    });
    assert.deepEqual(
      seen.map((x) => x.kind),
      ['refused'],
    );
    assert.equal(gw.debits(), 1, 'the refused hedge was never sent');
    assert.equal(e.status, 402, 'declined');
    assert.equal(store.peek('cc-h-2'), undefined, 'the key is free: nothing may have been processed');
  });

  test('a copy refused by an open breaker was never sent; the copy it let go may have charged: parked', async () => {
    const gw = heldGateway();
    const store = new IdempotencyStore();
    const b = breaker();
    const policy = wrap(hedge({ delayMs: 15 }), b); // a breaker per copy
    const out = store
      .run('br', () => policy.execute((ctx) => gw.call(ctx, ctx.idempotencyKey), { idempotencyKey: 'br' }))
      .then(
        () => assert.fail('resolved'),
        (e) => e,
      );
    await tick(5);
    b.isolate(); // the circuit opens before the hedge starts: the hedge is refused, never sent
    const e = await out;
    assert.equal(gw.debits(), 1, 'the refused copy was never sent');
    assert.ok(gw.calls[0].aborted, 'the refusal ended the race: the first copy was let go');
    assert.equal(e.code, 'OUTCOME_UNKNOWN', `the copy let go may have charged (${e})`);
    assert.equal(e.cause?.code, 'CIRCUIT_OPEN');
    assert.deepEqual(store.unknownKeys(), ['br']);
  });

  test('resilientFetch: a copy that dropped before the hedge was declined leaves the POST unknown; a refused hedge does not', async () => {
    const reply = (ms, make) => (url, init) =>
      new Promise((resolve, reject) => {
        const t = setTimeout(() => make(resolve, reject), ms);
        init.signal.addEventListener('abort', () => (clearTimeout(t), reject(init.signal.reason)), { once: true });
      });
    const keys = [];
    let n = 0;
    const copiesOf = (plan) => (url, init) => {
      keys.push(new Headers(init.headers).get('idempotency-key'));
      return plan[n++](url, init);
    };
    const post = (fetch, budget) =>
      resilientFetch(
        'http://127.0.0.1:9/charges',
        { method: 'POST', headers: { 'Idempotency-Key': 'rf-h' }, body: '{}' },
        { fetch, hedge: { delayMs: 5 }, breaker: false, budget, retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } },
      );
    const dropped = reply(15, (_, reject) => reject(new TypeError('fetch failed')));
    const declined = reply(30, (resolve) => resolve(new Response('declined', { status: 402 })));
    await assert.rejects(post(copiesOf([dropped, declined]), false), (e) => isSteadfastError(e, 'OUTCOME_UNKNOWN') && e.attempts === 2);
    assert.deepEqual(keys, ['rf-h', 'rf-h']);
    // The budget refuses the hedge: one copy, declined; nothing else was sent, the 402 is the answer.
    n = 0;
    keys.length = 0;
    const dry = new RetryBudget({ capacity: 1, refillPerSec: 0.001 });
    assert.equal(dry.tryConsume(), true);
    const res = await post(copiesOf([reply(15, (resolve) => resolve(new Response('declined', { status: 402 })))]), dry);
    assert.equal(res.status, 402);
    assert.deepEqual(keys, ['rf-h']);
  });

  test('the checkout client never hedges: a hedge in its retry is a TypeError, and each charge is one request', async () => {
    assert.throws(
      () => createCheckoutClient({ endpoint: 'http://127.0.0.1:9/charges', retry: { maxAttempts: 1, hedge: { delayMs: 5 } } }),
      (e) => e instanceof TypeError && /hedge/.test(e.message),
    );
    // So is one at the top level (resilientFetch's place for it): it would be ignored.
    assert.throws(
      () => createCheckoutClient({ endpoint: 'http://127.0.0.1:9/charges', hedge: { delayMs: 5 } }),
      (e) => e instanceof TypeError && e.code === 'INVALID_OPTION' && /option hedge .*does not hedge/.test(e.message),
    );
    const sent = [];
    const fetch = (url, init) =>
      new Promise((resolve) => {
        sent.push(new Headers(init.headers).get('idempotency-key'));
        setTimeout(() => resolve(new Response(JSON.stringify({ reference: 'ch_1' }), { status: 200, headers: { 'content-type': 'application/json' } })), 40);
      });
    const client = createCheckoutClient({ endpoint: 'http://127.0.0.1:9/charges', fetch, breaker: false, retry: { maxAttempts: 1 } });
    const out = await client.charge({ amountCents: 5, currency: 'usd' }, { idempotencyKey: 'co-h' });
    assert.equal(out.status, 'succeeded');
    assert.deepEqual(sent, ['co-h']);
  });
});
