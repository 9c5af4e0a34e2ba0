// The caller's own classifiers are code too, and code throws: `isRetryable: (e) => e.response.status
// >= 500` meets a network error with no `response`; `retryOnResult: (r) => r.status.code ===
// 'busy'` meets a result without `status`. Such a throw ends the call with the classifier's error,
// as before; but the attempt it was asked about happened, and may have debited (a timeout, or a
// result in hand). Every test: attempt 1 reaches the gateway and may have been processed, then the
// classifier throws. And then: the key stays parked, and the next try sends nothing.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { CircuitBreaker, IdempotencyStore, chargeCustomer, pipeline, withRetry } from 'steadfast';

const BASE = Object.freeze({ maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 });
const timeout = () => Object.assign(new Error('socket timeout'), { code: 'ETIMEDOUT' });
const declined = () => Object.assign(new Error('card declined'), { status: 402 });

/** Classifiers with the bugs real ones have. */
const BROKEN = {
  'isRetryable throws': { isRetryable: (e) => e.response.status >= 500 },
  'isRetryable rejects': { isRetryable: async (e) => e.response.status >= 500 },
};

/** A gateway whose every call debits, then fails with `make()` (or, without it, answers a result). */
function gateway(make) {
  const g = {
    debits: 0,
    call: () => {
      g.debits++;
      return make === undefined ? Promise.resolve({ id: `ch_${g.debits}` }) : Promise.reject(make());
    },
  };
  return g;
}

async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail('expected a rejection');
}

/** The key's record after `run`, then a second run with the same key: it must not reach the gateway. */
async function parkedThenRefused(store, key, runAgain, g) {
  assert.equal(store.peek(key)?.status, 'unknown', 'the key is parked');
  const debits = g.debits;
  const again = await rejection(runAgain());
  assert.equal(again.code, 'OUTCOME_UNKNOWN');
  assert.equal(g.debits, debits, 'the next try sent nothing');
}

describe('a classifier that throws never erases an attempt that may have been processed', () => {
  for (const [name, broken] of Object.entries(BROKEN)) {
    test(`${name} after a timeout: withRetry rejects with the classifier's error, and a store around it parks the key`, async () => {
      const g = gateway(timeout);
      const bare = await rejection(withRetry(g.call, { ...BASE, ...broken }));
      assert.ok(bare instanceof TypeError, `the classifier's own error: ${bare?.message}`);
      assert.equal(g.debits, 1, 'not retried: the classifier did not say yes');

      const store = new IdempotencyStore();
      const h = gateway(timeout);
      const run = () => store.run('order-1', () => withRetry(h.call, { ...BASE, ...broken }));
      const e = await rejection(run());
      assert.equal(e.code, 'OUTCOME_UNKNOWN', `parked, got ${e?.name}: ${e?.message}`);
      assert.ok(e.cause instanceof TypeError, 'the classifier error is the cause');
      await parkedThenRefused(store, 'order-1', run, h);
    });

    test(`${name} after a timeout: chargeCustomer parks the key`, async () => {
      const store = new IdempotencyStore();
      const g = gateway(timeout);
      const deps = { store, breaker: new CircuitBreaker({ failureThreshold: 100, openDurationMs: 60_000 }), gateway: g.call, policy: { ...BASE, ...broken } };
      const charge = { idempotencyKey: 'order-2', amountCents: 1200, currency: 'usd' };
      const e = await rejection(chargeCustomer(charge, deps));
      assert.equal(e.code, 'OUTCOME_UNKNOWN', `parked, got ${e?.name}: ${e?.message}`);
      await parkedThenRefused(store, 'order-2', () => chargeCustomer(charge, deps), g);
    });

    test(`${name} after a timeout: a pipeline parks the key`, async () => {
      const store = new IdempotencyStore();
      const g = gateway(timeout);
      const p = pipeline({ idempotency: store, retry: { ...BASE, ...broken } });
      const e = await rejection(p.execute(g.call, { idempotencyKey: 'order-3' }));
      assert.equal(e.code, 'OUTCOME_UNKNOWN', `parked, got ${e?.name}: ${e?.message}`);
      await parkedThenRefused(store, 'order-3', () => p.execute(g.call, { idempotencyKey: 'order-3' }), g);
    });

    test(`${name} on a decline: the decline decides, the key is freed`, async () => {
      const store = new IdempotencyStore();
      const g = gateway(declined);
      const e = await rejection(store.run('order-4', () => withRetry(g.call, { ...BASE, ...broken })));
      assert.ok(e instanceof TypeError, `rejects with the classifier's error: ${e?.name}`);
      assert.equal(store.peek('order-4'), undefined, 'a 402 says this attempt was refused: nothing may have been processed');
    });
  }

  const checker = (r) => r.status.code === 'busy'; // a result without `status`: a TypeError

  for (const [path, extra] of [
    ['the first result (no signal, no deadline)', {}],
    ['the first result, with a deadline', { maxElapsedMs: 60_000 }],
  ]) {
    test(`retryOnResult throws on ${path}: not retried, rejects with its error, and a store parks the key`, async () => {
      const g = gateway();
      const bare = await rejection(withRetry(g.call, { ...BASE, ...extra, retryOnResult: checker }));
      assert.ok(bare instanceof TypeError, `the checker's own error: ${bare?.message}`);
      assert.equal(g.debits, 1, 'a result nobody could judge is not sent again');

      const store = new IdempotencyStore();
      const h = gateway();
      const run = () => store.run('order-5', () => withRetry(h.call, { ...BASE, ...extra, retryOnResult: checker }));
      const e = await rejection(run());
      assert.equal(e.code, 'OUTCOME_UNKNOWN', `the gateway answered a result: maybe charged, got ${e?.name}: ${e?.message}`);
      assert.ok(e.cause instanceof TypeError);
      await parkedThenRefused(store, 'order-5', run, h);
    });
  }

  test('retryOnResult throws on a later result (after one it asked to retry): the key is parked', async () => {
    let n = 0;
    const onSecond = (r) => {
      n++;
      if (n === 1) return true; // retry the first result
      return r.status.code === 'busy';
    };
    const store = new IdempotencyStore();
    const g = gateway();
    const e = await rejection(store.run('order-6', () => withRetry(g.call, { ...BASE, retryOnResult: onSecond })));
    assert.equal(e.code, 'OUTCOME_UNKNOWN');
    assert.equal(g.debits, 2);
    assert.equal(store.peek('order-6')?.status, 'unknown');
  });

  test('a working retryOnResult still retries and returns what it accepts', async () => {
    let n = 0;
    const r = await withRetry(() => Promise.resolve(++n < 3 ? 'busy' : 'done'), { ...BASE, retryOnResult: (v) => v === 'busy' });
    assert.equal(r, 'done');
    assert.equal(n, 3);
  });
});
