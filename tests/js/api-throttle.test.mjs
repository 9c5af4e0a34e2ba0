// Issue 18 through the built package, imported by name: the weighted RetryQuota (presets, classes,
// refunds, as a `budget` of withRetry / resilientFetch / the checkout client) and the adaptive
// RateLimiter (validation, off until a 429, Retry-After, wired into withRetry, resilientFetch and
// the checkout client). The real-server test is tests/js/throttle-server.test.mjs.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { RetryQuota, RateLimiter, retryErrorClass, withRetry, resilientFetch, createCheckoutClient, RetryBudgetExhaustedError } from 'steadfast';
import { manualClock as clockAt } from '../support/clock.mjs';

const http = (status, headers = {}) => Object.assign(new Error(`HTTP ${status}`), { status, headers });
const timeout = () => Object.assign(new Error('timed out'), { name: 'TimeoutError' });

/** This file's clocks start at 1_000 ms unless a test says otherwise. */
const manualClock = (start = 1_000) => clockAt(start);

describe('RetryQuota', () => {
  test('presets: ours and the AWS SDK standard mode', () => {
    const ours = new RetryQuota();
    assert.equal(ours.capacity, 500);
    assert.equal(ours.available, 500);
    const aws = new RetryQuota({ preset: 'aws' });
    // 500 / 10 per 5xx (AWS counts 500/502/503/504 as transient, cost 10).
    let n = 0;
    while (aws.tryConsume(http(503))) n++;
    assert.equal(n, 50);
    n = 0;
    while (ours.tryConsume(http(503))) n++;
    assert.equal(n, 100, 'ours charges a 5xx 5');
  });

  test('charges by class and refunds on success', () => {
    const q = new RetryQuota({ capacity: 30, timeoutCost: 10, throttledCost: 3, serverErrorCost: 5, successRefund: 1 });
    assert.equal(retryErrorClass(timeout()), 'timeout');
    assert.equal(retryErrorClass(http(429)), 'throttled');
    assert.equal(retryErrorClass(http(408)), 'timeout');
    assert.equal(retryErrorClass(http(502)), 'serverError');
    assert.equal(retryErrorClass(new TypeError('fetch failed')), 'timeout');
    assert.equal(q.tryConsume(timeout()), true);
    assert.equal(q.available, 20);
    assert.equal(q.tryConsume(http(429)), true);
    assert.equal(q.available, 17);
    assert.equal(q.tryConsume(http(500)), true);
    assert.equal(q.available, 12);
    assert.equal(q.tryConsume(timeout()), true);
    assert.equal(q.available, 2);
    assert.equal(q.tryConsume(http(500)), false, 'cannot cover 5 with 2');
    assert.equal(q.available, 2, 'a refusal takes nothing');
    q.recordSuccess(10);
    assert.equal(q.available, 12);
    q.recordSuccess();
    assert.equal(q.available, 13);
    for (let i = 0; i < 100; i++) q.recordSuccess();
    assert.equal(q.available, 30, 'never above capacity');
  });

  test('validation names the option and the value', () => {
    assert.throws(
      () => new RetryQuota({ capacity: 0 }),
      (e) => e instanceof RangeError && /capacity/.test(e.message) && /0/.test(e.message),
    );
    assert.throws(
      () => new RetryQuota({ timeoutCost: 1.5 }),
      (e) => e instanceof RangeError && /timeoutCost/.test(e.message) && /integer from 0/.test(e.message),
    );
    assert.throws(
      () => new RetryQuota({ throttledCost: -1 }),
      (e) => e instanceof RangeError && /throttledCost/.test(e.message),
    );
    assert.throws(
      () => new RetryQuota({ preset: 'gcp' }),
      (e) => e instanceof RangeError && /preset/.test(e.message) && /gcp/.test(e.message),
    );
    assert.throws(() => new RetryQuota({ successRefund: '1' }), TypeError);
    assert.throws(() => new RetryQuota().recordSuccess(-1), TypeError);
  });

  test('as the budget of withRetry: a sick dependency drains it, successes refill it', async () => {
    const quota = new RetryQuota({ capacity: 20, serverErrorCost: 5, successRefund: 1 });
    const policy = { maxAttempts: 10, baseDelayMs: 0, maxDelayMs: 0, budget: quota };
    let calls = 0;
    await assert.rejects(
      withRetry(() => {
        calls++;
        throw http(503);
      }, policy),
      (e) => e instanceof RetryBudgetExhaustedError && e.cause.status === 503,
    );
    assert.equal(calls, 5, 'four retries of 5 drain 20, the fifth is refused');
    assert.equal(quota.available, 0);
    // A call that fails once, then succeeds: its retry is refused (quota empty) ...
    await assert.rejects(
      withRetry(() => Promise.reject(http(503)), policy),
      RetryBudgetExhaustedError,
    );
    // ... first-attempt successes refill it by 1 each (the fast path and the guarded path).
    for (let i = 0; i < 5; i++) await withRetry(() => 'ok', policy);
    await withRetry(() => 'ok', { ...policy, maxElapsedMs: 10_000 });
    assert.equal(quota.available, 6);
    // A success after a retry refunds that retry's cost: 6 − 5 + 5.
    let n = 0;
    assert.equal(await withRetry(() => (n++ === 0 ? Promise.reject(http(500)) : 'ok'), { ...policy }), 'ok');
    assert.equal(quota.available, 6);
  });

  test('as the budget of resilientFetch and the checkout client', async () => {
    const quota = new RetryQuota({ capacity: 10, throttledCost: 5 });
    let calls = 0;
    const fetch = async () => {
      calls++;
      return new Response('busy', { status: 429 });
    };
    await assert.rejects(
      resilientFetch('https://api.example.test/x', undefined, {
        fetch,
        budget: quota,
        breaker: false,
        retry: { maxAttempts: 5, baseDelayMs: 0, maxDelayMs: 0 },
      }),
      // Two retries of 5 each, then the quota refuses (as an exhausted RetryBudget does).
      (e) => e instanceof RetryBudgetExhaustedError && e.cause.status === 429,
    );
    assert.equal(calls, 3);
    assert.equal(quota.available, 0);
    assert.throws(() => createCheckoutClient({ endpoint: 'https://api.example.test/c', budget: {} }), TypeError);
    const client = createCheckoutClient({ endpoint: 'https://api.example.test/c', budget: quota, fetch: async () => Response.json({ id: 'ch_1' }) });
    const out = await client.charge({ amountCents: 100, currency: 'usd' });
    assert.equal(out.status, 'succeeded');
    assert.equal(quota.available, 1, 'the success refunded 1');
  });
});

describe('RateLimiter', () => {
  test('validation names the option and the value', () => {
    assert.throws(
      () => new RateLimiter({ beta: 1 }),
      (e) => e instanceof RangeError && /beta/.test(e.message),
    );
    assert.throws(
      () => new RateLimiter({ minRatePerSec: 0 }),
      (e) => e instanceof RangeError && /minRatePerSec/.test(e.message),
    );
    assert.throws(
      () => new RateLimiter({ smooth: 2 }),
      (e) => e instanceof RangeError && /smooth/.test(e.message),
    );
    assert.throws(
      () => new RateLimiter({ maxHoldMs: -1 }),
      (e) => e instanceof RangeError && /maxHoldMs/.test(e.message),
    );
    assert.throws(
      () => new RateLimiter({ preset: 'tcp' }),
      (e) => e instanceof RangeError && /preset/.test(e.message),
    );
    assert.throws(() => new RateLimiter({ clock: 1 }), TypeError);
    assert.deepEqual(
      ['cubic', 'aws', 'aimd'].map((preset) => new RateLimiter({ preset }).preset),
      ['cubic', 'aws', 'aimd'],
    );
    return Promise.all([
      assert.rejects(
        withRetry(() => 1, { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0, rateLimiter: {} }),
        (e) => e instanceof TypeError && /rateLimiter/.test(e.message),
      ),
      assert.rejects(
        withRetry(() => 1, { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0, adaptive: 'yes' }),
        (e) => e instanceof TypeError && /adaptive/.test(e.message),
      ),
      assert.rejects(resilientFetch('https://x.test/', undefined, { rateLimiter: 1 }), (e) => e instanceof TypeError && /rateLimiter/.test(e.message)),
      assert.rejects(resilientFetch('https://x.test/', undefined, { adaptive: 1 }), (e) => e instanceof TypeError && /adaptive/.test(e.message)),
    ]);
  });

  test('off until the first 429, which switches pacing on at 0.7 × the measured rate', () => {
    const clock = manualClock();
    const l = new RateLimiter({ clock });
    for (let i = 0; i < 300; i++) {
      l.record({ throttled: false, sentAtMs: clock() });
      clock.advance(10);
    }
    assert.equal(l.enabled, false);
    const measured = l.measuredRatePerSec;
    assert.ok(measured > 95 && measured < 105, String(measured));
    l.record({ throttled: true, sentAtMs: clock() });
    assert.equal(l.enabled, true);
    assert.ok(Math.abs(l.ratePerSec - 0.7 * l.measuredRatePerSec) < 1e-9, `${l.ratePerSec} vs ${l.measuredRatePerSec}`);
  });

  test('withRetry feeds every attempt through it: a 429 switches it on, first attempts included', async () => {
    // minRatePerSec 50: a lone 429 with no history paces at the floor (AWS: 0.5/s, a 2 s wait).
    const limiter = new RateLimiter({ minRatePerSec: 50 });
    let calls = 0;
    const policy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1, rateLimiter: limiter };
    const v = await withRetry(() => (++calls === 1 ? Promise.reject(http(429)) : 'ok'), policy);
    assert.equal(v, 'ok');
    assert.equal(calls, 2);
    assert.equal(limiter.enabled, true, 'the 429 reached the limiter');
    // `adaptive: true` gives a policy its own limiter; run() paces a single call.
    assert.equal(await withRetry(() => 7, { ...policy, rateLimiter: undefined, adaptive: true }), 7);
    assert.equal(await limiter.run(() => 8), 8);
  });

  test('a Retry-After holds every send; an abort ends the wait', async () => {
    const clock = manualClock();
    const l = new RateLimiter({ clock });
    l.record({ throttled: true, retryAfterMs: 60_000 });
    const controller = new AbortController();
    const waiting = l.acquire(controller.signal);
    let settled = false;
    waiting.then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(settled, false, 'held by the Retry-After');
    controller.abort(new Error('stop'));
    await assert.rejects(waiting, /stop/);
  });

  test('resilientFetch and the checkout client pace through it and report 429s with Retry-After', async () => {
    const limiter = new RateLimiter({ minRatePerSec: 50 });
    let calls = 0;
    const fetch = async () => (++calls === 1 ? new Response('', { status: 429, headers: { 'retry-after': '0' } }) : new Response('ok'));
    const res = await resilientFetch('https://api.example.test/y', undefined, {
      fetch,
      rateLimiter: limiter,
      breaker: false,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 },
    });
    assert.equal(res.status, 200);
    assert.equal(limiter.enabled, true);
    const seen = new RateLimiter({ minRatePerSec: 50 });
    const client = createCheckoutClient({
      endpoint: 'https://api.example.test/c',
      rateLimiter: seen,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 },
      fetch: async () => (seen.enabled ? Response.json({ id: 'ch_2' }) : new Response('', { status: 429 })),
    });
    const out = await client.charge({ amountCents: 100, currency: 'usd' }, { idempotencyKey: 'k-throttle-1' });
    assert.equal(out.status, 'succeeded');
    assert.equal(seen.enabled, true);
  });

  test('adaptive: true keeps at most 1,000 origins, and a throttled origin outlives idle ones', async () => {
    // The internal counter, through the same module instance the package loaded (same file URL).
    const { adaptiveLimiterOrigins } = await import(new URL('../node_modules/steadfast/lib/fetch.js', import.meta.url).href);
    const opts = { breaker: false, budget: false, adaptive: true, retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 } };
    // The throttled origin: a 429 with Retry-After: 60 switches its limiter on and holds its sends.
    const held = await resilientFetch('https://throttled.example.test/', undefined, {
      ...opts,
      fetch: async () => new Response('', { status: 429, headers: { 'retry-after': '60' } }),
    });
    assert.equal(held.status, 429);
    const ok = async () => new Response('ok');
    for (let i = 0; i < 1_500; i++) await resilientFetch(`https://o${i}.example.test/`, undefined, { ...opts, fetch: ok });
    assert.equal(adaptiveLimiterOrigins(), 1_000);
    // Still held: its limiter was not the one evicted (a fresh one would send at once).
    let sent = 0;
    const controller = new AbortController();
    const next = resilientFetch(
      'https://throttled.example.test/',
      { signal: controller.signal },
      {
        ...opts,
        fetch: async () => (sent++, new Response('ok')),
      },
    );
    await new Promise((r) => setTimeout(r, 30));
    controller.abort(new Error('gave up waiting'));
    await assert.rejects(next, /gave up waiting/);
    assert.equal(sent, 0, 'the Retry-After still holds this origin');
  });
});
