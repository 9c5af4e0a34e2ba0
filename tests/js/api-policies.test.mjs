// Issue 16: composable policies (timeout, bulkhead, fallback, retryOnResult, PermanentError, wrap,
// pipeline) and the event hub, against the installed package.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  withRetry,
  wrap,
  pipeline,
  retry,
  timeout,
  bulkhead,
  fallback,
  events,
  CircuitBreaker,
  CircuitOpenError,
  IdempotencyStore,
  RetryBudget,
  RetryBudgetExhaustedError,
  PermanentError,
  TimeoutError,
  BulkheadRejectedError,
  DEFAULT_RETRY_POLICY,
  isSteadfastError,
  isTransientError,
} from 'steadfast';

const fast = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 };
const transient = (status = 503) => Object.assign(new Error(String(status)), { status });
const never = () => new Promise(() => {});

describe('retryOnResult', () => {
  test('retries a rejected result, then returns the accepted one', async () => {
    let n = 0;
    const seen = [];
    const r = await withRetry(() => ++n, { ...fast, retryOnResult: (v) => v < 3, onRetry: (i) => seen.push([i.attempt, i.result, i.error]) });
    assert.equal(r, 3);
    assert.deepEqual(seen, [
      [1, 1, undefined],
      [2, 2, undefined],
    ]);
  });
  test('out of attempts: the last result is returned, not an error', async () => {
    let n = 0;
    assert.equal(await withRetry(() => ++n, { ...fast, maxAttempts: 2, retryOnResult: () => true }), 2);
  });
  test('thrown errors still follow isRetryable', async () => {
    let n = 0;
    const e = new Error('400');
    e.status = 400;
    await assert.rejects(
      withRetry(
        () => {
          n++;
          throw e;
        },
        { ...fast, retryOnResult: () => true },
      ),
      (x) => x === e,
    );
    assert.equal(n, 1);
  });
  test('with a signal and a deadline too (the guarded path)', async () => {
    let n = 0;
    const c = new AbortController();
    assert.equal(await withRetry(() => ++n, { ...fast, maxElapsedMs: 5_000, signal: c.signal, retryOnResult: (v) => v < 2 }), 2);
    n = 0;
    assert.equal(
      await retry({ ...fast, retryOnResult: (v) => v < 3 }).execute(() => ++n, { signal: c.signal }),
      3,
      'through a retry() policy with a pipeline signal',
    );
  });
  test('a retried result spends the budget like an error', async () => {
    const budget = new RetryBudget({ capacity: 1, refillPerSec: 0 });
    await assert.rejects(
      withRetry(() => 'busy', { ...fast, budget, retryOnResult: (v) => v === 'busy' }),
      RetryBudgetExhaustedError,
    );
  });
});

describe('PermanentError (bail)', () => {
  test('stops at once and rejects with the cause, whatever isRetryable says', async () => {
    let n = 0;
    const cause = transient(503);
    await assert.rejects(
      withRetry(
        () => {
          n++;
          throw new PermanentError(cause);
        },
        { ...fast, isRetryable: () => true },
      ),
      (x) => x === cause,
    );
    assert.equal(n, 1);
  });
  test('thrown on a later attempt', async () => {
    let n = 0;
    const cause = new Error('card declined');
    await assert.rejects(
      withRetry(() => {
        n++;
        throw n < 2 ? transient() : new PermanentError(cause);
      }, fast),
      (x) => x === cause,
    );
    assert.equal(n, 2);
  });
  test('is a SteadfastError with code PERMANENT', () => {
    const e = new PermanentError(new Error('x'));
    assert.ok(isSteadfastError(e, 'PERMANENT') && e.name === 'PermanentError');
  });
});

describe('timeout(ms)', () => {
  test('rejects with TimeoutError and aborts the signal it gave fn', async () => {
    let signal;
    const e = await timeout(5)
      .execute((ctx) => {
        signal = ctx.signal;
        return never();
      })
      .catch((x) => x);
    assert.ok(e instanceof TimeoutError && e.timeoutMs === 5 && e.code === 'TIMEOUT');
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason, e);
    assert.equal(isTransientError(e), true, 'a timeout is worth retrying');
  });
  test('a fast call passes through; its signal never aborts', async () => {
    let signal;
    assert.equal(
      await timeout(1_000).execute((ctx) => {
        signal = ctx.signal;
        return 'ok';
      }),
      'ok',
    );
    assert.equal(signal.aborted, false);
  });
  test('the caller signal aborts it too', async () => {
    const c = new AbortController();
    const p = timeout(10_000).execute(never, { signal: c.signal });
    c.abort(new Error('user left'));
    await assert.rejects(p, /user left/);
  });
  test('RangeError for a bad ms', () => {
    assert.throws(() => timeout(-1), RangeError);
    assert.throws(() => timeout('5'), TypeError);
  });
});

describe('bulkhead(limit, queue)', () => {
  test('runs limit at once, queues in order, refuses beyond', async () => {
    const b = bulkhead(2, 1);
    const order = [];
    const gates = [];
    const job = (id) => () =>
      new Promise((resolve) => {
        order.push(id);
        gates.push(() => resolve(id));
      });
    const p = [1, 2, 3].map((id) => b.execute(job(id)));
    const refused = await b.execute(job(4)).catch((e) => e);
    assert.ok(refused instanceof BulkheadRejectedError && refused.limit === 2 && refused.queue === 1);
    assert.deepEqual(order, [1, 2], 'two run, one waits');
    assert.deepEqual(b.stats(), { running: 2, queued: 1 });
    gates[0]();
    assert.equal(await p[0], 1);
    await Promise.resolve();
    assert.deepEqual(order, [1, 2, 3], 'the queued call starts when a slot frees');
    gates[1]();
    gates[2]();
    assert.deepEqual(await Promise.all(p), [1, 2, 3]);
    assert.deepEqual(b.stats(), { running: 0, queued: 0 });
  });
  test('a failing call frees its slot; an aborted waiter leaves the queue', async () => {
    const b = bulkhead(1, 5);
    await assert.rejects(
      b.execute(() => Promise.reject(new Error('x'))),
      /x/,
    );
    let release;
    const first = b.execute(
      () =>
        new Promise((r) => {
          release = r;
        }),
    );
    const c = new AbortController();
    const waiting = b.execute(() => 'never', { signal: c.signal });
    assert.equal(b.stats().queued, 1);
    c.abort(new Error('gone'));
    await assert.rejects(waiting, /gone/);
    assert.equal(b.stats().queued, 0);
    release('done');
    assert.equal(await first, 'done');
  });
  test('bad limits', () => {
    assert.throws(() => bulkhead(0), RangeError);
    assert.throws(() => bulkhead(1.5), RangeError);
    assert.throws(() => bulkhead(1, -1), RangeError);
  });
});

describe('fallback', () => {
  test('a value or a function of the error; `when` filters', async () => {
    assert.equal(
      await fallback('cached').execute(() => {
        throw new Error('x');
      }),
      'cached',
    );
    assert.equal(await fallback((e) => `from ${e.message}`).execute(() => Promise.reject(new Error('y'))), 'from y');
    const only503 = fallback('cached', { when: (e) => e.status === 503 });
    assert.equal(
      await only503.execute(() => {
        throw transient(503);
      }),
      'cached',
    );
    await assert.rejects(
      only503.execute(() => {
        throw transient(400);
      }),
      /400/,
    );
    assert.equal(await fallback('cached').execute(() => 'fresh'), 'fresh');
  });
});

describe('wrap / pipeline', () => {
  test('pipeline runs in the seed order whatever the option order: retry inside the breaker, timeout per attempt', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 2, openDurationMs: 60_000 });
    const p = pipeline({ timeout: 5, retry: fast, breaker });
    let calls = 0;
    const r = await p.execute(async ({ attempt, signal }) => {
      calls++;
      assert.ok(signal !== undefined, 'each attempt has a signal');
      return attempt < 3 ? never() : `ok@${attempt}`;
    });
    assert.equal(r, 'ok@3');
    assert.equal(calls, 3);
    assert.equal(breaker.currentState, 'closed', 'the breaker saw one call (retry is inside it), which succeeded');
  });
  test('the breaker outside the retry: one failure per retried call, then it refuses', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
    const p = pipeline({ breaker, retry: fast, fallback: fallback((e) => e) });
    let calls = 0;
    const first = await p.execute(() => {
      calls++;
      throw transient();
    });
    assert.equal(calls, 3, 'retried inside');
    assert.equal(first.status, 503);
    const second = await p.execute(() => {
      calls++;
      return 'x';
    });
    assert.ok(second instanceof CircuitOpenError, 'the fallback answered the open circuit');
    assert.equal(calls, 3);
  });
  test('idempotency outside: one run per key, replays after', async () => {
    const store = new IdempotencyStore();
    const p = pipeline({ retry: fast, idempotency: store });
    let calls = 0;
    const charge = () => {
      calls++;
      return calls < 2 ? Promise.reject(transient()) : { ref: 'ch_1' };
    };
    assert.deepEqual(await p.execute(charge, { idempotencyKey: 'order-1', fingerprint: '100 usd' }), { ref: 'ch_1' });
    assert.deepEqual(await p.execute(charge, { idempotencyKey: 'order-1', fingerprint: '100 usd' }), { ref: 'ch_1' });
    assert.equal(calls, 2);
    await assert.rejects(p.execute(charge, {}), TypeError, 'the idempotency stage needs a key');
  });
  test('wrap composes in the given order and accepts any execute(fn)', async () => {
    const trace = [];
    const tag = (name) => ({
      execute: (fn) => {
        trace.push(name);
        return fn();
      },
    });
    assert.equal(await wrap(tag('a'), tag('b'), retry(fast)).execute(({ attempt }) => `attempt ${attempt}`), 'attempt 1');
    assert.deepEqual(trace, ['a', 'b']);
    assert.throws(() => wrap(42), TypeError);
    assert.throws(() => pipeline({ retyr: fast }), TypeError);
  });
  test('retry() without a policy is the default policy', async () => {
    let n = 0;
    await assert.rejects(
      retry().execute(() => {
        n++;
        throw transient();
      }),
    );
    assert.equal(n, DEFAULT_RETRY_POLICY.maxAttempts);
  });
});

describe('events', () => {
  test('several listeners, each with its own disposer', async () => {
    const a = [];
    const b = [];
    const offA = events.onRetry((e) => a.push(e.attempt));
    const offB = events.onRetry((e) => b.push(e.attempt));
    await withRetry(() => Promise.reject(transient()), fast).catch(() => {});
    offA();
    offA(); // idempotent
    await withRetry(() => Promise.reject(transient()), fast).catch(() => {});
    offB();
    await withRetry(() => Promise.reject(transient()), fast).catch(() => {});
    assert.deepEqual(a, [1, 2]);
    assert.deepEqual(b, [1, 2, 1, 2]);
  });
  test('give-up, budget refusal, breaker state, idempotency outcome', async () => {
    const seen = [];
    const offs = [
      events.onGiveUp((e) => seen.push(`giveUp:${e.reason}`)),
      events.onBudgetRefused(() => seen.push('budgetRefused')),
      events.onBreakerStateChange((e) => seen.push(`breaker:${e.state}`)),
      events.onIdempotency((e) => seen.push(`idempotency:${e.key}:${e.outcome}`)),
    ];
    try {
      await withRetry(() => Promise.reject(transient()), fast).catch(() => {});
      await withRetry(() => Promise.reject(new Error('bad request')), fast).catch(() => {});
      await withRetry(() => Promise.reject(transient()), { ...fast, budget: new RetryBudget({ capacity: 0, refillPerSec: 0 }) }).catch(() => {});
      const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
      await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => {});
      const store = new IdempotencyStore();
      await store.run('k-1', () => 'ok');
      await store.run('k-1', () => 'ok');
      await store.run('k-2', () => Promise.reject(transient())).catch(() => {});
    } finally {
      for (const off of offs) off();
    }
    assert.deepEqual(seen, [
      'giveUp:attempts',
      'giveUp:not-retryable',
      'budgetRefused',
      'giveUp:budget',
      'breaker:open',
      'idempotency:k-1:run',
      'idempotency:k-1:done',
      'idempotency:k-1:replay',
      'idempotency:k-2:run',
      'idempotency:k-2:parked-unknown',
    ]);
  });
  test('a throwing listener disturbs neither the call nor the other listeners', async () => {
    const boom = new Error('listener bug');
    // Reported through the platform's reportError (browsers, Deno); stand one in to observe it (Node's
    // test runner would otherwise count the uncaught error against the file).
    const reported = [];
    const hadReportError = Object.hasOwn(globalThis, 'reportError');
    const original = globalThis.reportError;
    globalThis.reportError = (e) => reported.push(e);
    const other = [];
    const off1 = events.onBreakerStateChange(() => {
      throw boom;
    });
    const off2 = events.onBreakerStateChange((e) => other.push(e.state));
    try {
      const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
      const e = await breaker.execute(() => Promise.reject(new Error('down'))).catch((x) => x);
      assert.equal(e.message, 'down', 'the call rejects with its own error');
      assert.equal(breaker.currentState, 'open');
      assert.deepEqual(other, ['open']);
      assert.deepEqual(reported, [boom], 'the listener error is reported');
    } finally {
      off1();
      off2();
      if (hadReportError) globalThis.reportError = original;
      else delete globalThis.reportError;
    }
  });
  test('a listener must be a function', () => {
    assert.throws(
      () => events.onRetry('x'),
      (e) => e instanceof TypeError && e.code === 'INVALID_OPTION',
    );
  });
});
