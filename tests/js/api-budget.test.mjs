// RetryBudget (token bucket and ratio) through the built package imported by name, on a manual clock.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { RetryBudget, withRetry, RetryBudgetExhaustedError, isSteadfastError, isTransientError } from 'steadfast';
import { manualClock as clockAt } from '../support/clock.mjs';

/** This file's clocks start at 1_000_000 ms unless a test says otherwise. */
const manualClock = (start = 1_000_000) => clockAt(start);

const drain = (budget, max = 10_000) => {
  let n = 0;
  while (n < max && budget.tryConsume()) n++;
  return n;
};

describe('token bucket', () => {
  test('starts full, spends one token per retry, refuses when empty', () => {
    const clock = manualClock();
    const b = new RetryBudget({ capacity: 3, refillPerSec: 0, clock });
    assert.equal(b.available, 3);
    assert.equal(drain(b), 3);
    assert.equal(b.available, 0);
    assert.equal(b.tryConsume(), false);
    clock.advance(1e9);
    assert.equal(b.tryConsume(), false, 'refillPerSec 0 never refills');
  });

  test('refills lazily at refillPerSec, never above capacity', () => {
    const clock = manualClock();
    const b = new RetryBudget({ capacity: 3, refillPerSec: 2, clock });
    drain(b);
    clock.advance(499);
    assert.equal(b.tryConsume(), false);
    clock.advance(1);
    assert.equal(b.tryConsume(), true, 'one token after 500 ms at 2/s');
    assert.equal(b.tryConsume(), false);
    clock.advance(60_000);
    assert.equal(b.available, 3);
  });

  test('a clock that goes backwards does not mint tokens', () => {
    const clock = manualClock(10_000);
    const b = new RetryBudget({ capacity: 1, refillPerSec: 1, clock });
    assert.equal(b.tryConsume(), true);
    clock.advance(-10_000);
    assert.equal(b.tryConsume(), false);
    clock.advance(10_999);
    assert.equal(b.tryConsume(), false);
    clock.advance(1);
    assert.equal(b.tryConsume(), true);
  });

  test('recordRequest() is a harmless no-op for a bucket', () => {
    const b = new RetryBudget({ capacity: 1, refillPerSec: 0, clock: manualClock() });
    for (let i = 0; i < 100; i++) b.recordRequest();
    assert.equal(drain(b), 1);
  });

  test('the budget object is frozen', () => {
    const b = new RetryBudget({ capacity: 1, refillPerSec: 0 });
    assert.ok(Object.isFrozen(b));
  });
});

describe('ratio budget', () => {
  test('retries ≤ ratio × requests in the window (no reserve)', () => {
    const clock = manualClock();
    const b = new RetryBudget({ ratio: 0.5, minRetriesPerSec: 0, windowMs: 1000, clock });
    assert.equal(b.tryConsume(), false, 'no requests yet, no reserve');
    for (let i = 0; i < 4; i++) b.recordRequest();
    assert.equal(b.available, 2);
    assert.equal(drain(b), 2);
    b.recordRequest();
    b.recordRequest();
    assert.equal(drain(b), 1, '6 requests × 0.5 = 3 retries in all');
  });

  test('exact for decimal ratios: 0.1 × 10 requests = exactly 1 retry', () => {
    const clock = manualClock();
    const b = new RetryBudget({ ratio: 0.1, minRetriesPerSec: 0, windowMs: 10_000, clock });
    for (let i = 0; i < 9; i++) b.recordRequest();
    assert.equal(b.tryConsume(), false);
    b.recordRequest();
    assert.equal(b.tryConsume(), true);
    assert.equal(b.tryConsume(), false);
  });

  test('minRetriesPerSec is a reserve over the window for quiet callers', () => {
    const clock = manualClock();
    const b = new RetryBudget({ ratio: 0, minRetriesPerSec: 2, windowMs: 5000, clock });
    assert.equal(drain(b), 10, '2/s × 5 s');
  });

  test('requests and retries slide out of the window', () => {
    const clock = manualClock(0);
    const b = new RetryBudget({ ratio: 1, minRetriesPerSec: 0, windowMs: 1000, clock });
    for (let i = 0; i < 5; i++) b.recordRequest();
    assert.equal(drain(b), 5);
    clock.advance(1000);
    assert.equal(b.available, 0, 'the old requests no longer earn retries');
    for (let i = 0; i < 3; i++) b.recordRequest();
    assert.equal(drain(b), 3, 'and the old retries no longer count against the new requests');
  });

  test('defaults: ratio 0.2, 10 retries/s reserve over 10 s', () => {
    const clock = manualClock();
    const b = new RetryBudget({ ratio: 0.2, clock });
    assert.equal(b.available, 100);
    const d = new RetryBudget({ windowMs: 10_000, clock });
    for (let i = 0; i < 50; i++) d.recordRequest();
    assert.equal(d.available, 110);
  });

  test('withRetry records each call as a request, so callers earn their retries', async () => {
    const clock = manualClock();
    const budget = new RetryBudget({ ratio: 0.5, minRetriesPerSec: 0, windowMs: 60_000, clock });
    const policy = { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0, budget };
    for (let i = 0; i < 4; i++) assert.equal(await withRetry(async () => i, policy), i);
    assert.equal(budget.available, 2);
    const outcomes = [];
    for (let i = 0; i < 3; i++) {
      let n = 0;
      outcomes.push(
        await withRetry(async () => {
          if (n++ === 0) throw Object.assign(new Error('503'), { status: 503 });
          return 'ok';
        }, policy).then(
          (v) => v,
          (e) => e.code,
        ),
      );
    }
    // 7 requests × 0.5 = 3 retries
    assert.deepEqual(outcomes, ['ok', 'ok', 'ok']);
    let calls = 0;
    const e = await withRetry(async () => {
      calls++;
      throw Object.assign(new Error('503'), { status: 503 });
    }, policy).catch((x) => x);
    // 8 requests × 0.5 = 4 retries; 3 spent: one more is allowed, then attempts are exhausted
    assert.equal(calls, 2);
    assert.equal(e.status, 503);
    const last = await withRetry(async () => {
      throw Object.assign(new Error('503'), { status: 503 });
    }, policy).catch((x) => x);
    // 9 requests × 0.5 = 4.5 → 4 retries, all spent
    assert.ok(last instanceof RetryBudgetExhaustedError);
  });
});

describe('RetryBudgetExhaustedError', () => {
  test('is transient exactly when its cause is', () => {
    const t = new RetryBudgetExhaustedError(Object.assign(new Error('503'), { status: 503 }), 2);
    const p = new RetryBudgetExhaustedError(Object.assign(new Error('400'), { status: 400 }), 2);
    assert.equal(isTransientError(t), true);
    assert.equal(isTransientError(p), false);
    assert.ok(isSteadfastError(t));
    assert.equal(t.attempt, 2);
    assert.match(t.message, /budget/i);
  });
});
