// withRetry and the jitter functions, through the built package imported by name.
// Time is node:test's mock timers (setTimeout + Date) or the `clock`/`random` options: no real sleeps
// beyond a 0 ms timer, so nothing here can flake on a slow machine.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  withRetry,
  fullJitter,
  equalJitter,
  decorrelatedJitter,
  seedRandom,
  isTransientError,
  RetryBudget,
  DeadlineExceededError,
  RetryBudgetExhaustedError,
  SteadfastError,
  pipeline,
} from 'steadfast';

/** Let every pending promise continuation run (setImmediate is not mocked by these tests). */
const flush = () => new Promise((resolve) => setImmediate(resolve));

/** Mock setTimeout and Date; returns an async tick that also drains promise continuations. */
function fakeTime(t, now = 0) {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now });
  return async (ms) => {
    t.mock.timers.tick(ms);
    await flush();
  };
}

const transient = (n) => Object.assign(new Error(`503 #${n}`), { status: 503 });

/** An fn that fails with a transient error `failures` times, then resolves `value`. */
function flaky(failures, value = 'ok') {
  const calls = [];
  const fn = async (ctx) => {
    calls.push(ctx);
    if (calls.length <= failures) throw transient(calls.length);
    return value;
  };
  return { fn, calls };
}

const pendingTimeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('withRetry: attempts and errors', () => {
  test('returns the first success without sleeping; ctx carries attempt 1 and no signal', async (t) => {
    fakeTime(t);
    const { fn, calls } = flaky(0, 42);
    assert.equal(await withRetry(fn, { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1000 }), 42);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].attempt, 1);
    assert.equal(calls[0].signal, undefined);
  });

  test('a synchronous fn (value or throw) is accepted', async () => {
    const policy = { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 };
    assert.equal(await withRetry(() => 'sync', policy), 'sync');
    let n = 0;
    const v = await withRetry(() => {
      if (++n === 1) throw transient(1);
      return 'second';
    }, policy);
    assert.equal(v, 'second');
    assert.equal(n, 2);
  });

  test('retries transient errors up to maxAttempts, then rethrows the LAST error as is', async (t) => {
    const tick = fakeTime(t);
    const errors = [];
    const p = withRetry(
      async () => {
        const e = transient(errors.length + 1);
        errors.push(e);
        throw e;
      },
      { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1000, jitter: 'none' },
    );
    const settled = p.then(
      () => assert.fail('should reject'),
      (e) => e,
    );
    await flush();
    assert.equal(errors.length, 1);
    await tick(100);
    assert.equal(errors.length, 2);
    await tick(200);
    assert.equal(errors.length, 3);
    const e = await settled;
    assert.equal(e, errors[2]);
    await tick(10_000);
    assert.equal(errors.length, 3, 'no 4th attempt');
  });

  test('a non-retryable error (400, declined card) is thrown at once, unwrapped', async () => {
    const declined = Object.assign(new Error('card_declined'), { status: 402 });
    let calls = 0;
    const onRetry = () => assert.fail('onRetry must not run');
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          throw declined;
        },
        { maxAttempts: 5, baseDelayMs: 0, maxDelayMs: 0, onRetry },
      ),
      (e) => e === declined,
    );
    assert.equal(calls, 1);
  });

  test('isRetryable replaces the default classification', async () => {
    const seen = [];
    let calls = 0;
    const teapot = Object.assign(new Error('teapot'), { status: 418 });
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          throw teapot;
        },
        {
          maxAttempts: 3,
          baseDelayMs: 0,
          maxDelayMs: 0,
          isRetryable: (e) => {
            seen.push(e);
            return true;
          },
        },
      ),
      (e) => e === teapot,
    );
    assert.equal(calls, 3);
    assert.deepEqual(seen, [teapot, teapot, teapot]);
    // and the reverse: a 503 that isRetryable refuses is not retried
    calls = 0;
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          throw transient(1);
        },
        { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0, isRetryable: () => false },
      ),
      { status: 503 },
    );
    assert.equal(calls, 1);
  });

  test('onRetry gets { attempt, delayMs, error } before each sleep; a throwing onRetry rejects the call', async () => {
    const infos = [];
    const { fn } = flaky(2);
    await withRetry(fn, {
      maxAttempts: 3,
      baseDelayMs: 0,
      maxDelayMs: 0,
      onRetry: (i) => infos.push(i),
    });
    assert.deepEqual(
      infos.map((i) => [i.attempt, i.delayMs, i.error.message]),
      [
        [1, 0, '503 #1'],
        [2, 0, '503 #2'],
      ],
    );
    const boom = new Error('onRetry failed');
    const f2 = flaky(5);
    await assert.rejects(
      withRetry(f2.fn, {
        maxAttempts: 3,
        baseDelayMs: 0,
        maxDelayMs: 0,
        onRetry: () => {
          throw boom;
        },
      }),
      (e) => e === boom,
    );
    assert.equal(f2.calls.length, 1);
  });

  test('ctx.attempt counts 1, 2, 3 across retries', async () => {
    const { fn, calls } = flaky(2);
    await withRetry(fn, { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 });
    assert.deepEqual(
      calls.map((c) => c.attempt),
      [1, 2, 3],
    );
  });

  test('the policy is validated and frozen once: mutating it later throws and changes nothing', async () => {
    const policy = { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 };
    await withRetry(async () => 1, policy);
    assert.ok(Object.isFrozen(policy));
    assert.throws(() => {
      policy.maxAttempts = 10;
    }, TypeError);
    const { fn, calls } = flaky(5);
    await assert.rejects(withRetry(fn, policy), { status: 503 });
    assert.equal(calls.length, 2);
  });
});

describe('withRetry: delays', () => {
  // unit 0.5 everywhere: full = 0.5·c, equal = 0.75·c, none = c, decorrelated = base + 0.5·(3·prev − base)
  const cases = [
    ['full', [50, 100, 200, 400]],
    ['equal', [75, 150, 300, 600]],
    ['none', [100, 200, 400, 800]],
    ['decorrelated', [200, 350, 575, 912.5]],
  ];
  for (const [jitter, expected] of cases) {
    test(`jitter '${jitter}' with random() = 0.5 sleeps exactly ${expected.join(', ')} ms`, async (t) => {
      const tick = fakeTime(t);
      const delays = [];
      const { fn, calls } = flaky(4);
      const p = withRetry(fn, {
        maxAttempts: 5,
        baseDelayMs: 100,
        maxDelayMs: 10_000,
        jitter,
        random: () => 0.5,
        onRetry: (i) => delays.push(i.delayMs),
      });
      await flush();
      for (const [i, d] of expected.entries()) {
        assert.equal(calls.length, i + 1);
        assert.equal(delays[i], d);
        await tick(d - 1);
        assert.equal(calls.length, i + 1, `attempt ${i + 2} must not start 1 ms early`);
        await tick(1);
        assert.equal(calls.length, i + 2, `attempt ${i + 2} starts after exactly ${d} ms`);
      }
      assert.equal(await p, 'ok');
    });
  }

  test("a policy that leaves numbers out gets the core's defaults, a left-out bound ordered around the given one", async (t) => {
    const tick = fakeTime(t);
    const run = async (policy, failures) => {
      const delays = [];
      const { fn, calls } = flaky(failures);
      const p = withRetry(fn, { jitter: 'none', ...policy, onRetry: (i) => delays.push(i.delayMs) }).catch((e) => e);
      for (let i = 0; i < 12; i++) await tick(60_000);
      return { result: await p, delays, calls: calls.length };
    };
    // Nothing given: 3 attempts, 100 ms doubling under a 10 s cap.
    const none = await run({}, 5);
    assert.equal(none.calls, 3);
    assert.deepEqual(none.delays, [100, 200]);
    assert.equal(none.result.status, 503, 'the last error, after 3 attempts');
    assert.equal((await run({ maxAttempts: 5 }, 4)).result, 'ok');
    assert.deepEqual((await run({ maxAttempts: 8 }, 7)).delays, [100, 200, 400, 800, 1600, 3200, 6400]);
    assert.deepEqual((await run({ maxAttempts: 9 }, 8)).delays.at(-1), 10_000, 'the default cap');
    // Only a base above the default cap: the cap is that base (not a RangeError about an option never given).
    assert.deepEqual((await run({ baseDelayMs: 20_000 }, 2)).delays, [20_000, 20_000]);
    // Only a cap below the default base: the base is that cap.
    assert.deepEqual((await run({ maxDelayMs: 50 }, 2)).delays, [50, 50]);
    // What the caller gave is still checked as given.
    const bad = (policy) => Promise.resolve().then(() => withRetry(async () => 'ok', policy));
    await assert.rejects(bad({ maxDelayMs: -5 }), (e) => e instanceof RangeError && e.option === 'maxDelayMs');
    await assert.rejects(bad({ baseDelayMs: 500, maxDelayMs: 100 }), (e) => e instanceof RangeError && e.option === 'maxDelayMs');
  });

  test('delays are capped by maxDelayMs', async () => {
    const delays = [];
    const { fn } = flaky(4);
    // base 0 with a 0 cap would hide the cap; use random 0 for "full" so sleeps are 0 but check 'none' caps
    await withRetry(fn, {
      maxAttempts: 5,
      baseDelayMs: 0,
      maxDelayMs: 0,
      jitter: 'none',
      onRetry: (i) => delays.push(i.delayMs),
    });
    assert.deepEqual(delays, [0, 0, 0, 0]);
    const capped = [];
    const f2 = flaky(4);
    const t0 = Date.now();
    await withRetry(f2.fn, {
      maxAttempts: 5,
      baseDelayMs: 1,
      maxDelayMs: 3,
      jitter: 'none',
      onRetry: (i) => capped.push(i.delayMs),
    });
    assert.deepEqual(capped, [1, 2, 3, 3]);
    assert.ok(Date.now() - t0 < 1000);
  });

  test('random() outside [0, 1) is a RangeError naming the option', async () => {
    const { fn } = flaky(1);
    await assert.rejects(withRetry(fn, { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0, random: () => 1 }), (e) => {
      assert.ok(e instanceof RangeError);
      assert.equal(e.code, 'INVALID_OPTION');
      assert.match(e.message, /random/);
      return true;
    });
  });

  test('the default generator is reproducible through seedRandom', async () => {
    const run = async () => {
      seedRandom(1234);
      const delays = [];
      const { fn } = flaky(3);
      await withRetry(fn, { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 4, onRetry: (i) => delays.push(i.delayMs) });
      return delays;
    };
    const a = await run();
    const b = await run();
    assert.deepEqual(a, b);
    assert.equal(a.length, 3);
    assert.ok(a.every((d, i) => d >= 0 && d < 2 ** i));
  });
});

describe('jitter functions', () => {
  const N = 4000;
  const sample = (f) => {
    seedRandom(7);
    const xs = Array.from({ length: N }, f);
    return { min: Math.min(...xs), max: Math.max(...xs), mean: xs.reduce((a, b) => a + b, 0) / N };
  };

  test('fullJitter(4, 1000, 30000) is uniform in [0, 8000)', () => {
    const s = sample(() => fullJitter(4, 1000, 30_000));
    assert.ok(s.min >= 0 && s.min < 100, `min ${s.min}`);
    assert.ok(s.max < 8000 && s.max > 7900, `max ${s.max}`);
    assert.ok(Math.abs(s.mean - 4000) < 250, `mean ${s.mean}`);
  });

  test('fullJitter caps the exponential ceiling at maxDelayMs and starts at attempt 1', () => {
    const s = sample(() => fullJitter(20, 1000, 30_000));
    assert.ok(s.max < 30_000 && s.max > 29_000, `max ${s.max}`);
    const first = sample(() => fullJitter(1, 1000, 30_000));
    assert.ok(first.max < 1000 && first.max > 990, `attempt 1 max ${first.max}`);
  });

  test('equalJitter(4, 1000, 30000) is in [4000, 8000): a guaranteed floor', () => {
    const s = sample(() => equalJitter(4, 1000, 30_000));
    assert.ok(s.min >= 4000 && s.min < 4100, `min ${s.min}`);
    assert.ok(s.max < 8000 && s.max > 7900, `max ${s.max}`);
  });

  test('decorrelatedJitter(8000, 1000, 30000) is in [1000, 24000) and capped at maxDelayMs', () => {
    const s = sample(() => decorrelatedJitter(8000, 1000, 30_000));
    assert.ok(s.min >= 1000 && s.min < 1200, `min ${s.min}`);
    assert.ok(s.max < 24_000 && s.max > 23_500, `max ${s.max}`);
    const capped = sample(() => decorrelatedJitter(20_000, 1000, 30_000));
    assert.equal(capped.max, 30_000);
    assert.ok(capped.min >= 1000);
  });

  test('the seed article simulation: 10,000 clients with full jitter peak ~10x lower than a fixed delay', () => {
    seedRandom(99);
    const buckets = new Array(10).fill(0);
    for (let i = 0; i < 10_000; i++) buckets[Math.floor(fullJitter(1, 1000, 30_000) / 100)]++;
    const peak = Math.max(...buckets);
    assert.ok(peak < 1200, `peak per 100 ms ${peak}`);
    assert.equal(
      buckets.reduce((a, b) => a + b, 0),
      10_000,
    );
  });
});

describe('withRetry: Retry-After', () => {
  const policy = (extra = {}) => ({ maxAttempts: 2, baseDelayMs: 100, maxDelayMs: 10_000, jitter: 'none', ...extra });

  async function firstDelay(error, extra) {
    const delays = [];
    let n = 0;
    const p = withRetry(
      async () => {
        if (n++ === 0) throw error;
        return 'ok';
      },
      policy({ ...extra, onRetry: (i) => delays.push(i.delayMs) }),
    );
    return { p, delays };
  }

  test('error.retryAfterMs is a floor on the delay', async (t) => {
    const tick = fakeTime(t);
    const { p, delays } = await firstDelay(Object.assign(transient(1), { retryAfterMs: 700 }));
    await flush();
    assert.deepEqual(delays, [700]);
    await tick(700);
    assert.equal(await p, 'ok');
  });

  test('a Retry-After shorter than the backoff does not shorten it', async (t) => {
    fakeTime(t);
    const { delays } = await firstDelay(Object.assign(transient(1), { retryAfterMs: 10 }));
    await flush();
    assert.deepEqual(delays, [100]);
  });

  test('Retry-After is capped by maxDelayMs', async (t) => {
    fakeTime(t);
    const { delays } = await firstDelay(Object.assign(transient(1), { retryAfterMs: 60_000 }), { maxDelayMs: 5000 });
    await flush();
    assert.deepEqual(delays, [5000]);
  });

  test("a headers object with 'retry-after' in delta-seconds", async (t) => {
    fakeTime(t);
    const { delays } = await firstDelay(Object.assign(transient(1), { headers: { 'retry-after': '3' } }));
    await flush();
    assert.deepEqual(delays, [3000]);
  });

  test("'retry-after' as an HTTP-date, measured from the policy clock", async (t) => {
    fakeTime(t);
    const now = Date.UTC(2025, 0, 15, 12, 0, 0);
    const date = new Date(now + 4000).toUTCString();
    const { delays } = await firstDelay(Object.assign(transient(1), { headers: { 'retry-after': date } }), {
      clock: () => now,
    });
    await flush();
    assert.deepEqual(delays, [4000]);
  });

  test('a fetch Headers object on error.response (429)', async (t) => {
    fakeTime(t);
    const err = Object.assign(new Error('429'), { response: { status: 429, headers: new Headers({ 'Retry-After': '2' }) } });
    assert.equal(isTransientError(err), true);
    const { delays } = await firstDelay(err);
    await flush();
    assert.deepEqual(delays, [2000]);
  });

  test('an unparseable Retry-After is ignored', async (t) => {
    fakeTime(t);
    const { delays } = await firstDelay(Object.assign(transient(1), { headers: { 'retry-after': 'soon' } }));
    await flush();
    assert.deepEqual(delays, [100]);
  });

  test('a Retry-After beyond the deadline gives up with DeadlineExceededError', async (t) => {
    fakeTime(t);
    const err = Object.assign(transient(1), { retryAfterMs: 5000 });
    const { p } = await firstDelay(err, { maxElapsedMs: 3000 });
    await assert.rejects(p, (e) => {
      assert.ok(e instanceof DeadlineExceededError);
      assert.equal(e.cause, err);
      return true;
    });
  });
});

describe('withRetry: deadline (maxElapsedMs)', () => {
  test('stops with DeadlineExceededError when the next sleep would cross the deadline', async (t) => {
    const tick = fakeTime(t, 1_000_000);
    const { fn, calls } = flaky(10);
    const p = withRetry(fn, { maxAttempts: 10, baseDelayMs: 100, maxDelayMs: 10_000, jitter: 'none', maxElapsedMs: 250 });
    const settled = p.then(
      () => assert.fail('should reject'),
      (e) => e,
    );
    await flush();
    assert.equal(calls.length, 1);
    await tick(100); // attempt 2 at 100 ms; the next delay (200) would end at 300 > 250
    const e = await settled;
    assert.equal(calls.length, 2);
    assert.ok(e instanceof DeadlineExceededError);
    assert.ok(e instanceof SteadfastError);
    assert.equal(e.name, 'DeadlineExceededError');
    assert.equal(e.code, 'DEADLINE_EXCEEDED');
    assert.equal(e.maxElapsedMs, 250);
    assert.equal(e.cause.message, '503 #2');
    assert.equal(e.attempt, 2);
    assert.equal(e.inFlight, false, 'a refused retry: no attempt was cut off');
    await tick(10_000);
    assert.equal(calls.length, 2, 'nothing runs after giving up');
  });

  test('a deadline that passes during a sleep cuts no attempt off (inFlight: false)', async (t) => {
    const tick = fakeTime(t, 1_000_000);
    const { fn, calls } = flaky(10);
    // A clock that stands still: the core thinks each 100 ms sleep fits, the deadline timer knows better.
    const p = withRetry(fn, { maxAttempts: 10, baseDelayMs: 100, maxDelayMs: 100, jitter: 'none', maxElapsedMs: 150, clock: () => 0 });
    const settled = p.then(
      () => assert.fail('should reject'),
      (e) => e,
    );
    await flush();
    await tick(100); // attempt 2 fails at 100; its sleep would end at 200
    await tick(50);
    const e = await settled;
    assert.equal(calls.length, 2);
    assert.ok(e instanceof DeadlineExceededError);
    assert.equal(e.inFlight, false);
    assert.equal(e.attempt, 2);
    assert.equal(e.cause.message, '503 #2');
  });

  test('a hanging attempt is aborted through ctx.signal when the deadline passes', async (t) => {
    const tick = fakeTime(t);
    let seen;
    const p = withRetry(
      (ctx) =>
        new Promise((_, reject) => {
          seen = ctx.signal;
          ctx.signal.addEventListener('abort', () => reject(new Error('socket closed by abort')));
        }),
      { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 10, maxElapsedMs: 500 },
    );
    const settled = p.then(
      () => assert.fail('should reject'),
      (e) => e,
    );
    await flush();
    assert.equal(seen.aborted, false);
    await tick(499);
    assert.equal(seen.aborted, false);
    await tick(1);
    assert.equal(seen.aborted, true);
    const e = await settled;
    assert.ok(e instanceof DeadlineExceededError, `got ${e}`);
    assert.equal(seen.reason, e);
    assert.equal(e.maxElapsedMs, 500);
    assert.equal(e.inFlight, true, 'the attempt was cut off: it may have reached the server');
  });

  test('a success before the deadline clears the (real) deadline timer', async () => {
    const before = pendingTimeouts();
    assert.equal(await withRetry(async () => 'fast', { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0, maxElapsedMs: 60_000 }), 'fast');
    assert.equal(pendingTimeouts(), before);
  });

  test('maxElapsedMs: Infinity means no deadline', async () => {
    const { fn } = flaky(2);
    assert.equal(await withRetry(fn, { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0, maxElapsedMs: Infinity }), 'ok');
  });
});

describe('withRetry: abort via policy.signal', () => {
  test('abort mid-attempt rejects with signal.reason and leaves no listener or timer', async () => {
    const controller = new AbortController();
    const reason = new Error('user navigated away');
    let ctxSignal;
    const before = pendingTimeouts();
    const p = withRetry(
      (ctx) => {
        ctxSignal = ctx.signal;
        return new Promise(() => {}); // a request that never answers
      },
      { maxAttempts: 3, baseDelayMs: 30_000, maxDelayMs: 30_000, signal: controller.signal },
    );
    await flush();
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
    controller.abort(reason);
    await assert.rejects(p, (e) => e === reason);
    assert.equal(ctxSignal.aborted, true);
    assert.equal(ctxSignal.reason, reason);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
    assert.equal(getEventListeners(ctxSignal, 'abort').length, 0);
    assert.equal(pendingTimeouts(), before);
  });

  test('abort mid-sleep rejects with signal.reason, clears the 30 s timer, and does not call fn again', async () => {
    const controller = new AbortController();
    const before = pendingTimeouts();
    let calls = 0;
    let sleeping;
    const slept = new Promise((resolve) => (sleeping = resolve));
    const p = withRetry(
      async () => {
        calls++;
        throw transient(calls);
      },
      {
        maxAttempts: 3,
        baseDelayMs: 30_000,
        maxDelayMs: 30_000,
        jitter: 'none',
        signal: controller.signal,
        onRetry: () => setImmediate(sleeping),
      },
    );
    await slept;
    assert.equal(pendingTimeouts(), before + 1, 'the backoff sleep is a pending timer');
    controller.abort('stop');
    await assert.rejects(p, (e) => e === 'stop');
    assert.equal(calls, 1);
    assert.equal(pendingTimeouts(), before, 'the sleep timer was cleared');
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  });

  test('an already-aborted signal rejects without calling fn', async () => {
    let calls = 0;
    const signal = AbortSignal.abort(new Error('already'));
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
        },
        { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0, signal },
      ),
      { message: 'already' },
    );
    assert.equal(calls, 0);
  });

  test("an aborted policy signal in a pipeline leaves no listener on the caller's signal", async () => {
    const shutdown = AbortSignal.abort(new Error('shutting down'));
    const stage = pipeline({ retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, signal: shutdown } });
    const caller = new AbortController(); // a long-lived signal passed to every call
    let calls = 0;
    for (let i = 0; i < 20; i++) {
      await assert.rejects(
        stage.execute(() => ++calls, { signal: caller.signal }),
        { message: 'shutting down' },
      );
    }
    assert.equal(calls, 0);
    assert.equal(getEventListeners(caller.signal, 'abort').length, 0);
  });

  test('a late rejection of the abandoned attempt is absorbed (no unhandled rejection)', async (t) => {
    const unhandled = [];
    const onUnhandled = (e) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    t.after(() => process.off('unhandledRejection', onUnhandled));
    const controller = new AbortController();
    let rejectLate;
    const p = withRetry(() => new Promise((_, reject) => (rejectLate = reject)), {
      maxAttempts: 2,
      baseDelayMs: 0,
      maxDelayMs: 0,
      signal: controller.signal,
    });
    await flush();
    controller.abort('gone');
    await assert.rejects(p, (e) => e === 'gone');
    rejectLate(new Error('late'));
    await flush();
    await flush();
    assert.deepEqual(unhandled, []);
  });

  test('the signal reaches fn as ctx.signal and success removes the listener', async () => {
    const controller = new AbortController();
    let got;
    const v = await withRetry(
      async (ctx) => {
        got = ctx.signal;
        return 'done';
      },
      { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0, signal: controller.signal },
    );
    assert.equal(v, 'done');
    assert.equal(typeof got?.addEventListener, 'function');
    assert.equal(got.aborted, false);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  });

  test('a process that aborts a 60 s backoff exits promptly (nothing keeps the event loop alive)', async () => {
    const script = `
      import { withRetry } from 'steadfast';
      const c = new AbortController();
      const p = withRetry(async () => { throw Object.assign(new Error('x'), { status: 503 }); },
        { maxAttempts: 5, baseDelayMs: 60000, maxDelayMs: 60000, jitter: 'none', signal: c.signal, maxElapsedMs: 600000,
          onRetry: () => setImmediate(() => c.abort(new Error('bye'))) });
      p.catch((e) => { console.log('rejected:' + e.message); });
    `;
    const cwd = fileURLToPath(new URL('.', import.meta.url));
    const started = Date.now();
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await new Promise((resolve) => child.on('exit', (c, s) => resolve(c ?? s)));
    clearTimeout(killer);
    assert.equal(code, 0, out);
    assert.match(out, /rejected:bye/);
    assert.ok(Date.now() - started < 10_000, 'the child was not kept alive by a leaked timer');
  });
});

describe('withRetry: budget', () => {
  test('an empty budget fails the retry fast with RetryBudgetExhaustedError carrying the last error', async () => {
    const budget = new RetryBudget({ capacity: 1, refillPerSec: 0 });
    const errors = [];
    await assert.rejects(
      withRetry(
        async () => {
          const e = transient(errors.length + 1);
          errors.push(e);
          throw e;
        },
        { maxAttempts: 5, baseDelayMs: 0, maxDelayMs: 0, budget },
      ),
      (e) => {
        assert.ok(e instanceof RetryBudgetExhaustedError);
        assert.equal(e.code, 'RETRY_BUDGET_EXHAUSTED');
        assert.equal(e.name, 'RetryBudgetExhaustedError');
        assert.equal(e.cause, errors[1]);
        assert.equal(e.attempt, 2);
        return true;
      },
    );
    assert.equal(errors.length, 2, 'one retry from the single token, then fail fast');
  });

  test('the first attempt never touches the budget', async () => {
    const budget = new RetryBudget({ capacity: 0, refillPerSec: 0 });
    assert.equal(await withRetry(async () => 'first', { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0, budget }), 'first');
    let calls = 0;
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          throw transient(calls);
        },
        { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0, budget },
      ),
      RetryBudgetExhaustedError,
    );
    assert.equal(calls, 1);
  });

  test('a non-retryable error does not spend a token', async () => {
    const budget = new RetryBudget({ capacity: 1, refillPerSec: 0 });
    await assert.rejects(
      withRetry(
        async () => {
          throw Object.assign(new Error('bad request'), { status: 400 });
        },
        { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0, budget },
      ),
      { status: 400 },
    );
    assert.equal(budget.available, 1);
  });

  test('the budget is shared by every call that uses it', async () => {
    const budget = new RetryBudget({ capacity: 2, refillPerSec: 0 });
    const policy = { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0, budget };
    const outcomes = [];
    for (let i = 0; i < 3; i++) {
      const { fn } = flaky(1);
      outcomes.push(
        await withRetry(fn, policy).then(
          (v) => v,
          (e) => e.code,
        ),
      );
    }
    assert.deepEqual(outcomes, ['ok', 'ok', 'RETRY_BUDGET_EXHAUSTED']);
  });
});
