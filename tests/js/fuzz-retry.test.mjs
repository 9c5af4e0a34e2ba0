// Fuzz, properties 4 and 5: RetryBudget sequences, and withRetry with scripted failures and hostile
// hooks (the rule every call is held to, and FUZZ_RUNS / FUZZ_SEED: fuzz-options.test.mjs and ./fuzz/harness.mjs).
import { test } from 'node:test';
import {
  DeadlineExceededError,
  RetryBudget,
  RetryBudgetExhaustedError,
  UserBoom,
  assert,
  assertAllowed,
  assertExecuted,
  attempt,
  count,
  fc,
  freshWorks,
  int,
  ok,
  params,
  runs,
  timeoutFor,
  weirdNumber,
  withRetry,
} from './fuzz/harness.mjs';

// ---------------------------------------------------------------------------------------------
// Property 4: RetryBudget sequences with a deterministic clock.

test(`fuzz 4: RetryBudget sequences (${runs('budget')} cases)`, { timeout: timeoutFor('budget') }, async () => {
  const arb = fc.record({
    shape: fc.oneof(
      fc.record({
        capacity: fc.oneof(int(0, 5), fc.double({ min: 0, max: 5, noNaN: true })),
        refillPerSec: fc.oneof(int(0, 20), fc.double({ min: 0, max: 20, noNaN: true })),
      }),
      fc.record({ ratio: fc.double({ min: 0, max: 3, noNaN: true }), minRetriesPerSec: int(0, 5), windowMs: int(1, 5000) }, { requiredKeys: ['ratio'] }),
    ),
    ops: fc.array(fc.oneof(fc.constant('consume'), fc.constant('request'), int(0, 3000), fc.constantFrom(1e9, 0.001, 0.5)), { minLength: 1, maxLength: 60 }),
  });
  await fc.assert(
    fc.property(arb, ({ shape, ops }) => {
      count('budget');
      let now = 5_000;
      const b = new RetryBudget({ ...shape, clock: () => now });
      const bucket = 'capacity' in shape;
      let last = b.available;
      for (const op of ops) {
        if (op === 'consume') {
          const before = b.available;
          const got = b.tryConsume();
          assert.equal(typeof got, 'boolean');
          if (bucket) {
            assert.equal(got, before >= 1, `tryConsume ${got} with ${before} available`);
            const after = b.available;
            assert.ok(Math.abs(after - (got ? before - 1 : before)) < 1e-9, `available ${before} -> ${after} after tryConsume ${got}`);
          }
        } else if (op === 'request') {
          b.recordRequest();
        } else {
          now += op;
          if (bucket) assert.ok(b.available >= last - 1e-9, 'time passing lost tokens');
        }
        const a = b.available;
        assert.ok(typeof a === 'number' && Number.isFinite(a) && a >= 0, `available ${a}`);
        // `available` is reported rounded to a millionth of a token.
        if (bucket) assert.ok(a <= shape.capacity + 1e-6, `available ${a} > capacity ${shape.capacity}`);
        last = a;
      }
    }),
    params('budget'),
  );
});

// ---------------------------------------------------------------------------------------------
// Property 5: withRetry with scripted attempts, deterministic random/clock, throwing or re-entrant hooks.

const attemptOutcome = fc.oneof(
  fc.constant({ kind: 'ok' }),
  fc.record({
    kind: fc.constant('reject'),
    status: fc.constantFrom(undefined, 400, 402, 404, 408, 409, 429, 500, 503, 599, 600, NaN, 'x', 1e9),
    retryAfterMs: fc.option(fc.oneof(weirdNumber, int(0, 3)), { nil: undefined }),
    code: fc.constantFrom(undefined, 'ECONNRESET', 'EPERM', 42),
  }),
  fc.record({ kind: fc.constant('throwSync'), status: fc.constantFrom(undefined, 503) }),
  fc.constant({ kind: 'rejectNonError' }),
);

test(`fuzz 5: withRetry with scripted failures and hostile hooks (${runs('retry')} cases)`, { timeout: timeoutFor('retry') }, async () => {
  const arb = fc.record({
    maxAttempts: int(1, 5),
    baseDelayMs: int(0, 1),
    extraMax: int(0, 1),
    jitter: fc.constantFrom(undefined, 'full', 'equal', 'decorrelated', 'none'),
    maxElapsedMs: fc.option(int(1, 200), { nil: undefined }),
    random: fc.constantFrom('none', 'valid', 'one', 'nan', 'negative', 'string', 'throws'),
    isRetryable: fc.constantFrom('default', 'always', 'throws', 'weird'),
    onRetry: fc.constantFrom('none', 'record', 'throws', 'reenter'),
    budget: fc.option(int(0, 3), { nil: undefined }),
    signal: fc.constantFrom('none', 'none', 'aborted', 'abortOnRetry'),
    script: fc.array(attemptOutcome, { minLength: 1, maxLength: 6 }),
  });
  await fc.assert(
    fc.asyncProperty(arb, async (c) => {
      count('retry');
      const where = 'withRetry';
      let clock = 0;
      const controller = new AbortController();
      const abortReason = new UserBoom('abort reason');
      if (c.signal === 'aborted') controller.abort(abortReason);
      const delays = [];
      let calls = 0;
      const thrown = [];
      const values = [];
      const maxDelayMs = c.baseDelayMs + c.extraMax;
      const policy = {
        maxAttempts: c.maxAttempts,
        baseDelayMs: c.baseDelayMs,
        maxDelayMs,
        ...(c.jitter === undefined ? {} : { jitter: c.jitter }),
        ...(c.maxElapsedMs === undefined ? {} : { maxElapsedMs: c.maxElapsedMs }),
        clock: () => (clock += 1),
        ...(c.random === 'none'
          ? {}
          : {
              random: () => {
                switch (c.random) {
                  case 'valid':
                    return 0.5;
                  case 'one':
                    return 1;
                  case 'nan':
                    return NaN;
                  case 'negative':
                    return -0.1;
                  case 'string':
                    return '0.5';
                  default:
                    throw new UserBoom('random');
                }
              },
            }),
        ...(c.isRetryable === 'default'
          ? {}
          : {
              isRetryable: () => {
                if (c.isRetryable === 'throws') throw new UserBoom('isRetryable');
                return c.isRetryable === 'always' ? true : 1;
              },
            }),
        ...(c.onRetry === 'none'
          ? {}
          : {
              onRetry: (info) => {
                assert.ok(Number.isFinite(info.delayMs) && info.delayMs >= 0 && info.delayMs <= maxDelayMs, `delay ${info.delayMs} outside [0, ${maxDelayMs}]`);
                assert.equal(info.attempt, calls);
                delays.push(info.delayMs);
                if (c.onRetry === 'throws') throw new UserBoom('onRetry');
                if (c.onRetry === 'reenter') withRetry(ok, policy).catch((e) => assertAllowed(e, 're-entrant withRetry', [abortReason]));
                if (c.signal === 'abortOnRetry') controller.abort(abortReason);
              },
            }),
        ...(c.budget === undefined ? {} : { budget: new RetryBudget({ capacity: c.budget, refillPerSec: 0 }) }),
        ...(c.signal === 'none' ? {} : { signal: controller.signal }),
      };
      const fn = (ctx) => {
        calls += 1;
        assert.equal(ctx.attempt, calls);
        const o = c.script[Math.min(calls - 1, c.script.length - 1)];
        if (o.kind === 'ok') {
          const v = { attempt: calls };
          values.push(v);
          return Promise.resolve(v);
        }
        const e =
          o.kind === 'rejectNonError'
            ? Object.freeze(new UserBoom('frozen'))
            : new UserBoom(`attempt ${calls}`, { status: o.status, retryAfterMs: o.retryAfterMs, code: o.code });
        thrown.push(e);
        if (o.kind === 'throwSync') throw e;
        return Promise.reject(e);
      };
      const r = await attempt(where, () => withRetry(fn, policy), [abortReason]);
      assert.ok(calls <= c.maxAttempts, `${calls} calls > maxAttempts ${c.maxAttempts}`);
      if (r.ok) {
        assert.equal(r.value, values.at(-1), 'resolved with something else than the successful attempt');
        assert.equal(c.script[Math.min(calls - 1, c.script.length - 1)].kind, 'ok');
      } else {
        const e = r.error;
        const last = thrown.at(-1);
        if (e instanceof RetryBudgetExhaustedError) assert.equal(e.cause, last);
        else if (e instanceof DeadlineExceededError) assert.ok(e.cause === undefined || thrown.includes(e.cause));
        else if (e instanceof RangeError) assert.equal(e.option, 'random');
        else if (e === abortReason) assert.ok(c.signal !== 'none');
        else assert.ok(e instanceof UserBoom, `unexpected ${e?.name}`);
        if (e instanceof UserBoom && e.message.startsWith('user code threw (attempt')) assert.equal(e, last, 'not the last error');
      }
      await freshWorks(where);
    }),
    params('retry'),
  );
});

test('fuzz: cases executed', () => assertExecuted(['budget', 'retry']));
