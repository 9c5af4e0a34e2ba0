// Regressions for what the 1,000,000-case fuzz run and the soak found (each failed before its fix).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IdempotencyStore, CircuitBreaker, isTransientError, isSteadfastError, withRetry, DeadlineExceededError } from 'steadfast';

test('a user clock returning a non-number is a TypeError naming the option, not an engine error', async () => {
  const store = new IdempotencyStore({ clock: () => Symbol('t') });
  await assert.rejects(
    store.run('a', async () => 1),
    (e) => e instanceof TypeError && e.code === 'INVALID_OPTION' && /clock/.test(e.message) && isSteadfastError(e),
  );
  const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 10, clock: () => 10n });
  assert.throws(
    () => breaker.currentState,
    (e) => e instanceof TypeError && /clock/.test(e.message),
  );
  // The same store keeps working with a sane clock afterwards (nothing trapped).
  assert.equal(new IdempotencyStore({ clock: () => 1 }).peek('a'), undefined);
});

test('peek() of an invalid key is an INVALID_KEY RangeError, like run() and resolve()', () => {
  const store = new IdempotencyStore();
  assert.throws(
    () => store.peek('a'.repeat(256)),
    (e) => e instanceof RangeError && e.code === 'INVALID_KEY',
  );
  assert.throws(
    () => store.peek('tab\there'),
    (e) => e instanceof RangeError && e.code === 'INVALID_KEY',
  );
  assert.equal(store.peek('a'.repeat(255)), undefined);
});

test('size counts live records: done records past their TTL are gone without another run()', async () => {
  let now = 0;
  const store = new IdempotencyStore({ ttlMs: 1_000, clock: () => now });
  for (let i = 0; i < 5; i++) await store.run(`k${i}`, async () => i);
  assert.equal(store.size, 5);
  now = 1_000;
  assert.equal(store.size, 0);
  assert.equal(store.peek('k0'), undefined);
});

test('a throwing onStateChange on the half-open transition still runs and reports the probe', async () => {
  let now = 0;
  const boom = new Error('listener bug');
  let calls = 0;
  const breaker = new CircuitBreaker({
    failureThreshold: 1,
    openDurationMs: 100,
    clock: () => now,
    onStateChange: (s) => {
      if (s === 'half-open') throw boom;
    },
  });
  await breaker.execute(async () => Promise.reject(new Error('down'))).catch(() => {});
  assert.equal(breaker.currentState, 'open');
  now = 100;
  const p = breaker.execute(async () => (calls++, 'ok'));
  assert.ok(p instanceof Promise, 'a rejection, not a synchronous throw');
  await assert.rejects(p, (e) => e === boom);
  assert.equal(calls, 1, 'the probe ran');
  assert.equal(breaker.currentState, 'closed', 'and its success was recorded');
});

test('Stripe-Should-Retry on an error overrides the status rule', async () => {
  const inUse = Object.assign(new Error('409'), { status: 409, headers: new Headers({ 'stripe-should-retry': 'true' }) });
  const noRetry = Object.assign(new Error('503'), { status: 503, response: { headers: new Headers({ 'stripe-should-retry': 'false' }) } });
  assert.equal(isTransientError(inUse), true);
  assert.equal(isTransientError(noRetry), false);
  assert.equal(isTransientError({ status: 409 }), false);
  // So a 409 "key in use" parks the key as unknown instead of freeing it: its debit may still land.
  const store = new IdempotencyStore();
  await assert.rejects(
    store.run('k-409', async () => Promise.reject(inUse)),
    (e) => e.code === 'OUTCOME_UNKNOWN' && e.cause === inUse && e.key === 'k-409',
  );
  assert.equal(store.peek('k-409')?.status, 'unknown');
});

test("a deadline that passes during attempt 2 reports attempt 2, with attempt 1's error as cause", async () => {
  const first = Object.assign(new Error('503 on attempt 1'), { status: 503 });
  let calls = 0;
  const err = await withRetry(
    (ctx) => {
      calls += 1;
      if (ctx.attempt === 1) return Promise.reject(first);
      return new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
    },
    { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 1, jitter: 'none', maxElapsedMs: 40 },
  ).catch((e) => e);
  assert.equal(calls, 2);
  assert.ok(err instanceof DeadlineExceededError, `got ${err}`);
  assert.equal(err.attempt, 2);
  assert.equal(err.cause, first);
});
