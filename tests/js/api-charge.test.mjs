// chargeCustomer: idempotency outside, breaker in the middle, retry inside — through the built
// package imported by name, against an in-memory gateway that keeps a ledger (what "charged twice"
// would look like).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  chargeCustomer,
  newIdempotencyKey,
  IdempotencyStore,
  CircuitBreaker,
  CircuitOpenError,
  OutcomeUnknownError,
  IdempotencyKeyReuseError,
  RetryBudget,
  RetryBudgetExhaustedError,
  isSteadfastError,
} from 'steadfast';
import { manualClock as clockAt } from '../support/clock.mjs';

const POLICY = Object.freeze({ maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 });

/**
 * A gateway that debits a ledger. `script` is a list of behaviours consumed one per call
 * ('ok' | '503' | '429' | 'timeout' | 'debit-then-timeout' | 'decline'); after it runs out: 'ok'.
 */
function fakeGateway(script = []) {
  const gw = {
    calls: [],
    ledger: [],
    async charge(charge, ctx) {
      gw.calls.push({ key: charge.idempotencyKey, attempt: ctx.attempt });
      const what = script.shift() ?? 'ok';
      const debit = () => {
        const reference = `ch_${gw.ledger.length + 1}`;
        gw.ledger.push({ key: charge.idempotencyKey, amountCents: charge.amountCents, reference });
        return { reference, amountCents: charge.amountCents };
      };
      switch (what) {
        case 'ok':
          return debit();
        case '503':
          throw Object.assign(new Error('503 Service Unavailable'), { status: 503 });
        case '429':
          throw Object.assign(new Error('429 Too Many Requests'), { status: 429, retryAfterMs: 0 });
        case 'timeout':
          throw Object.assign(new Error('ETIMEDOUT'), { code: 'ETIMEDOUT' });
        case 'debit-then-timeout':
          debit();
          throw Object.assign(new Error('ETIMEDOUT after debit'), { code: 'ETIMEDOUT' });
        case 'decline':
          throw Object.assign(new Error('card_declined'), { status: 402, code: 'card_declined' });
        default:
          throw new Error(`bad script ${what}`);
      }
    },
  };
  gw.fn = (charge, ctx) => gw.charge(charge, ctx);
  return gw;
}

/** This file's clocks start at 1_700_000_000_000 ms unless a test says otherwise. */
const manualClock = (start = 1_700_000_000_000) => clockAt(start);

function setup({ script, breaker, policy = POLICY } = {}) {
  const clock = manualClock();
  const gw = fakeGateway(script);
  const deps = {
    store: new IdempotencyStore({ clock }),
    breaker: new CircuitBreaker(breaker ?? { windowSize: 10, failureRateThreshold: 0.5, openDurationMs: 30_000, clock }),
    gateway: gw.fn,
    policy,
  };
  return { gw, deps, clock };
}

const charge = (key = newIdempotencyKey()) => ({ idempotencyKey: key, amountCents: 4999, currency: 'usd' });

describe('seed behaviours', () => {
  test('a transient blip is absorbed and every attempt carries the same key', async () => {
    const { gw, deps } = setup({ script: ['503', 'timeout', 'ok'] });
    const c = charge();
    const result = await chargeCustomer(c, deps);
    assert.deepEqual(result, { reference: 'ch_1', amountCents: 4999 });
    assert.deepEqual(gw.calls, [
      { key: c.idempotencyKey, attempt: 1 },
      { key: c.idempotencyKey, attempt: 2 },
      { key: c.idempotencyKey, attempt: 3 },
    ]);
    assert.equal(gw.ledger.length, 1);
    assert.equal(deps.store.peek(c.idempotencyKey).status, 'done');
    assert.equal(deps.breaker.currentState, 'closed');
  });

  test('a repeated request is replayed, not charged twice', async () => {
    const { gw, deps } = setup();
    const c = charge();
    const first = await chargeCustomer(c, deps);
    const again = await chargeCustomer({ ...c }, deps); // the user double-clicked: same key, same charge
    assert.equal(again, first);
    assert.equal(gw.calls.length, 1);
    assert.equal(gw.ledger.length, 1);
  });

  test('an unresolved timeout blocks a second attempt with the same key', async () => {
    const { gw, deps } = setup({ script: ['debit-then-timeout', 'timeout', 'timeout'] });
    const c = charge();
    // The rejection says what it left behind: the key is parked; the last error is the cause.
    await assert.rejects(chargeCustomer(c, deps), (e) => e instanceof OutcomeUnknownError && e.key === c.idempotencyKey && e.cause.code === 'ETIMEDOUT');
    assert.equal(gw.calls.length, 3, 'the retries inside were spent');
    assert.equal(gw.ledger.length, 1, 'the money may have moved');
    assert.equal(deps.store.peek(c.idempotencyKey).status, 'unknown');
    const e = await chargeCustomer(c, deps).then(
      () => assert.fail('must not charge again'),
      (x) => x,
    );
    assert.ok(e instanceof OutcomeUnknownError);
    assert.equal(gw.calls.length, 3, 'no request reached the gateway');
    assert.equal(gw.ledger.length, 1, 'not charged twice');
    assert.deepEqual(deps.store.unknownKeys(), [c.idempotencyKey]);
    // reconciliation finds the debit in the settlement feed
    deps.store.resolve(c.idempotencyKey, { status: 'done', result: { reference: gw.ledger[0].reference, amountCents: 4999 } });
    assert.deepEqual(await chargeCustomer(c, deps), { reference: 'ch_1', amountCents: 4999 });
    assert.equal(gw.calls.length, 3);
  });

  test('the breaker stops new keys once the gateway is known-dead', async () => {
    const { gw, deps } = setup({
      script: Array(100).fill('503'),
      breaker: { failureThreshold: 2, openDurationMs: 30_000, clock: manualClock() },
    });
    const k1 = charge();
    const k2 = charge();
    await assert.rejects(chargeCustomer(k1, deps), (e) => e.code === 'OUTCOME_UNKNOWN' && e.cause.status === 503);
    await assert.rejects(chargeCustomer(k2, deps), (e) => e.code === 'OUTCOME_UNKNOWN' && e.cause.status === 503);
    assert.equal(gw.calls.length, 6, 'two charges × three attempts');
    assert.equal(deps.breaker.currentState, 'open');
    const k3 = charge();
    const e = await chargeCustomer(k3, deps).then(
      () => assert.fail('must fail fast'),
      (x) => x,
    );
    assert.ok(e instanceof CircuitOpenError);
    assert.equal(gw.calls.length, 6, 'the third key never reached the gateway, not even once');
    assert.equal(deps.store.peek(k3.idempotencyKey), undefined, 'nothing was sent, so the key is free (not unknown)');
    // the failing charges themselves are unknown: a 503 may hide a debit
    assert.deepEqual(new Set(deps.store.unknownKeys()), new Set([k1.idempotencyKey, k2.idempotencyKey]));
  });
});

describe('pipeline', () => {
  test('a declined card is not retried and frees the key', async () => {
    const { gw, deps } = setup({ script: ['decline'] });
    const c = charge();
    await assert.rejects(chargeCustomer(c, deps), { code: 'card_declined' });
    assert.equal(gw.calls.length, 1);
    assert.equal(deps.store.peek(c.idempotencyKey), undefined);
    // the user fixes the card and tries again with the same key
    assert.deepEqual(await chargeCustomer(c, deps), { reference: 'ch_1', amountCents: 4999 });
  });

  test('reusing a key for a different amount is an error, not a replay', async () => {
    const { gw, deps } = setup();
    const c = charge();
    await chargeCustomer(c, deps);
    const e = await chargeCustomer({ ...c, amountCents: 5999 }, deps).then(
      () => assert.fail('must reject'),
      (x) => x,
    );
    assert.ok(e instanceof IdempotencyKeyReuseError);
    assert.equal(e.code, 'KEY_REUSED');
    await assert.rejects(chargeCustomer({ ...c, currency: 'eur' }, deps), IdempotencyKeyReuseError);
    assert.equal(gw.calls.length, 1);
  });

  test('the fingerprint ignores field order at every level, on small and wide charges, and sees every field', async () => {
    // Seeded shuffles (no Math.random: a failure must reproduce). Field names include ones that
    // sort differently as numbers and as strings ('10' < '9'), and a wide charge (> 16 fields).
    let seed = 7;
    const rand = (n) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const shuffled = (obj) => {
      const entries = Object.entries(obj);
      for (let i = entries.length - 1; i > 0; i--) {
        const j = rand(i + 1);
        [entries[i], entries[j]] = [entries[j], entries[i]];
      }
      return Object.fromEntries(entries.map(([k, v]) => [k, v && typeof v === 'object' && !Array.isArray(v) ? shuffled(v) : v]));
    };
    const wide = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${String.fromCharCode(97 + ((i * 7) % 26))}${i}`, i]));
    const bodies = [
      { amountCents: 4999, currency: 'usd', customer: 'cus_1' },
      { amountCents: 4999, currency: 'usd', 9: 'nine', 10: 'ten', B: 1, a: 2, cart: { z: 1, y: [1, { d: 1, c: 2 }], x: 'é' } },
      { amountCents: 4999, currency: 'usd', ...wide },
    ];
    for (const body of bodies) {
      const { gw, deps } = setup();
      const idempotencyKey = newIdempotencyKey();
      const first = await chargeCustomer({ idempotencyKey, ...body }, deps);
      for (let round = 0; round < 5; round++) {
        assert.equal(await chargeCustomer(shuffled({ idempotencyKey, ...body }), deps), first, 'the same charge in another order replays');
      }
      for (const field of Object.keys(body)) {
        const changed = typeof body[field] === 'number' ? body[field] + 1 : 'changed';
        await assert.rejects(chargeCustomer(shuffled({ idempotencyKey, ...body, [field]: changed }), deps), IdempotencyKeyReuseError, field);
      }
      assert.equal(gw.calls.length, 1);
    }
  });

  test('concurrent duplicates of one charge reach the gateway once', async () => {
    const { gw, deps } = setup();
    const c = charge();
    const results = await Promise.allSettled([chargeCustomer(c, deps), chargeCustomer(c, deps), chargeCustomer(c, deps)]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    assert.ok(results.filter((r) => r.status === 'rejected').every((r) => r.reason.code === 'DUPLICATE_IN_FLIGHT'));
    assert.equal(gw.ledger.length, 1);
  });

  test('with the breaker open, a fallback is not involved: the key stays free for a later retry', async () => {
    const clock = manualClock();
    const { gw, deps } = setup({ breaker: { failureThreshold: 1, openDurationMs: 1000, clock } });
    deps.breaker.isolate();
    const c = charge();
    await assert.rejects(chargeCustomer(c, deps), CircuitOpenError);
    deps.breaker.reset();
    assert.deepEqual(await chargeCustomer(c, deps), { reference: 'ch_1', amountCents: 4999 });
    assert.equal(gw.calls.length, 1);
  });

  test('one breaker outcome per charge, however many retries happened inside', async () => {
    const clock = manualClock();
    // consecutive threshold 2: a charge that needed 2 retries must not count as 3 failures
    const { deps } = setup({ script: ['503', '503', 'ok', '503', '503', 'ok'], breaker: { failureThreshold: 2, openDurationMs: 1000, clock } });
    await chargeCustomer(charge(), deps);
    await chargeCustomer(charge(), deps);
    assert.equal(deps.breaker.currentState, 'closed');
  });

  test('a retry budget inside the pipeline fails fast and parks the key as unknown (its cause was transient)', async () => {
    const budget = new RetryBudget({ capacity: 0, refillPerSec: 0 });
    const { gw, deps } = setup({ script: ['503'], policy: { ...POLICY, budget } });
    const c = charge();
    await assert.rejects(
      chargeCustomer(c, deps),
      (e) => e.code === 'OUTCOME_UNKNOWN' && e.cause instanceof RetryBudgetExhaustedError && e.cause.cause.status === 503,
    );
    assert.equal(gw.calls.length, 1);
    assert.equal(deps.store.peek(c.idempotencyKey).status, 'unknown');
  });

  // Regression: a bad policy once threw only inside breaker.execute → withRetry, so the breaker
  // recorded a programmer error as a gateway failure (failureThreshold 1 opened the circuit).
  test('a bad policy is rejected before anything runs and does not count against the breaker', async () => {
    const clock = manualClock();
    const { gw, deps } = setup({ breaker: { failureThreshold: 1, openDurationMs: 1000, clock } });
    await assert.rejects(
      chargeCustomer(charge(), { ...deps, policy: { maxAttempts: 0, baseDelayMs: 0, maxDelayMs: 0 } }),
      (e) => e instanceof RangeError && /maxAttempts/.test(e.message),
    );
    await assert.rejects(chargeCustomer(charge(), { ...deps, policy: null }), TypeError);
    assert.equal(gw.calls.length, 0);
    assert.equal(deps.breaker.currentState, 'closed');
  });

  test('bad charges and deps are rejected before anything runs', async () => {
    const { gw, deps } = setup();
    const cases = [
      [{ ...charge(), amountCents: 0 }, deps, RangeError, /amountCents/],
      [{ ...charge(), amountCents: 49.99 }, deps, RangeError, /amountCents.*49\.99/],
      [{ ...charge(), amountCents: '4999' }, deps, TypeError, /amountCents/],
      [{ ...charge(), currency: '' }, deps, TypeError, /currency/],
      [{ ...charge(), idempotencyKey: 7 }, deps, TypeError, /idempotencyKey/],
      [charge(), { ...deps, store: {} }, TypeError, /store/],
      [charge(), { ...deps, breaker: null }, TypeError, /breaker/],
      [charge(), { ...deps, gateway: 'https://gw' }, TypeError, /gateway/],
      [null, deps, TypeError, /chargeCustomer/],
      [charge(), undefined, TypeError, /chargeCustomer/],
    ];
    for (const [c, d, type, re] of cases) {
      await assert.rejects(
        async () => chargeCustomer(c, d),
        (e) => {
          assert.ok(e instanceof type, `${re}: got ${e}`);
          assert.equal(e.code, 'INVALID_OPTION');
          assert.ok(isSteadfastError(e));
          assert.match(e.message, re);
          return true;
        },
      );
    }
    assert.equal(gw.calls.length, 0);
    assert.equal(deps.store.size, 0);
  });
});
