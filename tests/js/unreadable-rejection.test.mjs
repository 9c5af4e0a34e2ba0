// A gateway may reject with a value that cannot be inspected: a revoked Proxy (a membrane library
// revokes its proxies when a realm or request ends; every operation on one throws), or a Proxy
// whose traps throw for the reads steadfast makes. Nothing can be learnt from such an answer, so
// it may have been processed: each layer must still finish its own bookkeeping (a record parked
// as unknown, a breaker permit reported) and reject with what the gateway rejected with, never
// with a TypeError of its own. And then: the next try with the same key must not charge again.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  CircuitBreaker,
  IdempotencyStore,
  bulkhead,
  hedge,
  timeout,
  OutcomeUnknownError,
  chargeCustomer,
  createCheckoutClient,
  createSharedBreaker,
  createSharedIdempotencyStore,
  isSteadfastError,
  memoryStateStore,
  newIdempotencyKey,
  pipeline,
  resilientFetch,
  withRetry,
  wrap,
  retry,
} from 'steadfast';

const POLICY = Object.freeze({ maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 });

/** Every operation on it throws (a TypeError from the engine). */
function revoked() {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

/** Its prototype reads fine (instanceof works); every property read and `String()` throws. */
function throwingReads() {
  return new Proxy(new Error('hostile'), {
    get(_, name) {
      throw new Error(`read of ${String(name)}`);
    },
    getOwnPropertyDescriptor(_, name) {
      throw new Error(`descriptor of ${String(name)}`);
    },
    has(_, name) {
      throw new Error(`has ${String(name)}`);
    },
  });
}

const VALUES = [
  ['a revoked Proxy', revoked],
  ['a Proxy whose reads throw', throwingReads],
];

/** A gateway whose every call debits, then rejects with `make()`. */
function debiting(make) {
  const g = {
    debits: 0,
    rejected: [],
    call: () => {
      g.debits++;
      const value = make();
      g.rejected.push(value);
      return Promise.reject(value);
    },
  };
  return g;
}

/**
 * What `promise` rejects with (fails the test if it resolves). Boxed: an async function that
 * returned the value itself would resolve its promise with it, which reads the value's `then`.
 */
async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return { e };
  }
  assert.fail('expected a rejection');
}

describe('a rejection that cannot be inspected', () => {
  test('isSteadfastError answers false, never throws', () => {
    for (const [, make] of VALUES) {
      assert.equal(isSteadfastError(make()), false);
      assert.equal(isSteadfastError(make(), 'OUTCOME_UNKNOWN'), false);
    }
  });

  test('a state store that fails with one: the shared store and a rejecting shared breaker report STORE_UNAVAILABLE, nothing is sent', async () => {
    for (const [, make] of [...VALUES, ['a null-prototype object', () => Object.create(null)]]) {
      const failing = () => Promise.reject(make());
      const inner = memoryStateStore();
      const store = {
        kind: 'custom',
        idempotency: (options) => ({ ...inner.idempotency(options), begin: failing }),
        breaker: (name, config) => ({ ...inner.breaker(name, config), acquire: failing }),
      };
      let sent = 0;
      const send = () => {
        sent++;
        return Promise.resolve('sent');
      };
      const shared = createSharedIdempotencyStore({ store });
      const { e } = await rejection(shared.run('order-9', send));
      assert.equal(e.code, 'STORE_UNAVAILABLE', `typed, got ${Object.prototype.toString.call(e)}`);
      const breaker = createSharedBreaker({ name: `failing-${Math.random()}`, store, failureThreshold: 1, openDurationMs: 60_000, whenUnavailable: 'reject' });
      const { e: b } = await rejection(breaker.execute(send));
      assert.equal(b.code, 'STORE_UNAVAILABLE', `typed, got ${Object.prototype.toString.call(b)}`);
      assert.equal(sent, 0, 'nothing sent without a recorded start');
    }
  });

  test('a fetch option that resolves with what is not a Response: unknown, parked, and named in the error', async () => {
    const NOT_RESPONSES = [
      ['an empty object', {}],
      ['a status without headers', { status: 200, ok: true }],
      ['null', null],
      ['a string', 'ok'],
      [
        'an object whose headers throw',
        {
          status: 200,
          ok: true,
          get headers() {
            throw new Error('x');
          },
        },
      ],
    ];
    for (const [what, value] of NOT_RESPONSES) {
      let sent = 0;
      const fetch = async () => {
        sent++;
        return value;
      };
      const client = createCheckoutClient({ endpoint: 'http://127.0.0.1:9/v1/charges', fetch, retry: POLICY, breaker: false });
      const key = newIdempotencyKey();
      const charge = { amountCents: 1200, currency: 'usd' };
      assert.deepEqual(
        await client.charge(charge, { idempotencyKey: key }),
        { status: 'unknown', key },
        `${what}: the request left, nobody can read the answer`,
      );
      assert.equal(sent, 1, `${what}: not retried (a programming error)`);
      assert.deepEqual(await client.charge(charge, { idempotencyKey: key }), { status: 'unknown', key });
      assert.equal(sent, 1, `${what}: a second click sends nothing`);
      const { e } = await rejection(
        resilientFetch('http://127.0.0.1:9/v1/charges', { method: 'POST', body: '{}' }, { fetch, idempotencyKey: 'auto', breaker: false }),
      );
      assert.equal(e.code, 'OUTCOME_UNKNOWN', `${what}: resilientFetch parks a keyed POST`);
      assert.ok(e.cause instanceof TypeError && e.cause.code === 'INVALID_OPTION' && e.cause.option === 'fetch', `${what}: ${e.cause?.message}`);
      const { e: get } = await rejection(resilientFetch('http://127.0.0.1:9/v1/charges', undefined, { fetch, breaker: false }));
      assert.ok(get instanceof TypeError && /fetch option must resolve with a Response/.test(get.message), `${what}: a GET rejects with the TypeError itself`);
    }
  });

  for (const [what, make] of VALUES) {
    describe(what, () => {
      test('withRetry rejects with the gateway value itself, after retrying it as a maybe-processed answer', async () => {
        const g = debiting(make);
        const { e } = await rejection(withRetry(g.call, POLICY));
        assert.equal(g.debits, 3, 'an answer that cannot be read is transient: retried under the policy');
        assert.equal(e, g.rejected.at(-1), 'the last value the gateway rejected with, not a TypeError of steadfast');
      });

      test('breaker.execute rejects with the gateway value and counts it as a failure', async () => {
        const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
        const g = debiting(make);
        const { e } = await rejection(breaker.execute(g.call));
        assert.equal(e, g.rejected[0]);
        const { e: refused } = await rejection(breaker.execute(() => Promise.resolve('sent')));
        assert.equal(refused.code, 'CIRCUIT_OPEN', 'the failure was recorded: the next call is refused');
      });

      test('the shared breaker rejects with the gateway value and counts it as a failure', async () => {
        const breaker = createSharedBreaker({ name: `hostile-${Math.random()}`, store: memoryStateStore(), failureThreshold: 1, openDurationMs: 60_000 });
        const g = debiting(make);
        const { e } = await rejection(breaker.execute(g.call));
        assert.equal(e, g.rejected[0]);
        const { e: refused } = await rejection(breaker.execute(() => Promise.resolve('sent')));
        assert.equal(refused.code, 'CIRCUIT_OPEN', 'the failure was recorded: the next call is refused');
      });

      for (const [store, makeStore] of [
        ['IdempotencyStore', () => new IdempotencyStore()],
        ['the shared store (memory)', () => createSharedIdempotencyStore({ store: memoryStateStore() })],
      ]) {
        test(`${store}.run parks the key as unknown (not in flight for good), and the next run does not call the gateway`, async () => {
          const s = makeStore();
          const g = debiting(make);
          const { e } = await rejection(s.run('order-1', g.call));
          assert.ok(e instanceof OutcomeUnknownError, `an OutcomeUnknownError, got ${Object.prototype.toString.call(e)}`);
          assert.equal(e.cause, g.rejected[0], 'the gateway value is kept as the cause');
          assert.equal((await s.peek('order-1'))?.status, 'unknown');
          assert.deepEqual(await s.unknownKeys(), ['order-1'], 'on the reconciliation worklist');
          const { e: again } = await rejection(s.run('order-1', g.call));
          assert.equal(again.code, 'OUTCOME_UNKNOWN');
          assert.equal(g.debits, 1, 'one debit');
          // Reconciliation can settle it, as any unknown key.
          const { startedAt } = await s.peek('order-1');
          await s.resolve('order-1', { status: 'done', result: 'ch_1', startedAt });
          assert.equal(await s.run('order-1', g.call), 'ch_1');
          assert.equal(g.debits, 1);
        });
      }

      test('chargeCustomer: after retries that each may have debited, the key stays parked and the next try sends nothing', async () => {
        const store = new IdempotencyStore();
        const breaker = new CircuitBreaker({ failureThreshold: 100, openDurationMs: 60_000 });
        const g = debiting(make);
        const deps = { store, breaker, gateway: g.call, policy: POLICY };
        const charge = { idempotencyKey: 'order-2', amountCents: 1200, currency: 'usd' };
        const { e } = await rejection(chargeCustomer(charge, deps));
        assert.equal(e.code, 'OUTCOME_UNKNOWN', `parked, got ${e?.name}: ${e?.message}`);
        assert.equal(e.attempts, 3);
        assert.equal(store.peek('order-2')?.status, 'unknown');
        const { e: again } = await rejection(chargeCustomer(charge, { ...deps, gateway: () => Promise.resolve('charged again') }));
        assert.equal(again.code, 'OUTCOME_UNKNOWN');
        assert.equal(g.debits, 3);
      });

      test('a pipeline of idempotency, breaker and retry parks the key', async () => {
        const store = new IdempotencyStore();
        const g = debiting(make);
        const p = pipeline({ idempotency: store, breaker: new CircuitBreaker({ failureThreshold: 100, openDurationMs: 60_000 }), retry: POLICY });
        const { e } = await rejection(p.execute(g.call, { idempotencyKey: 'order-3' }));
        assert.equal(e.code, 'OUTCOME_UNKNOWN', `parked, got ${e?.name}: ${e?.message}`);
        assert.equal(store.peek('order-3')?.status, 'unknown');
        const w = wrap(new CircuitBreaker({ failureThreshold: 100, openDurationMs: 60_000 }), retry(POLICY));
        const h = debiting(make);
        assert.equal((await rejection(w.execute(h.call))).e, h.rejected.at(-1));
      });

      test('timeout(), bulkhead() and a hedge reject with the value; a hedged run in a store parks its key', async () => {
        for (const policy of [timeout(10_000), bulkhead(2, 2), hedge({ delayMs: 1, maxCopies: 2, safe: true })]) {
          const g = debiting(make);
          const { e } = await rejection(wrap(policy).execute(g.call));
          assert.ok(g.rejected.includes(e), 'one of the values the gateway rejected with');
        }
        const store = new IdempotencyStore();
        const g = debiting(make);
        const slow = () => new Promise((resolve) => setTimeout(resolve, 5)).then(g.call);
        const hedged = wrap(hedge({ delayMs: 1, maxCopies: 2 }));
        const { e } = await rejection(store.run('order-4', () => hedged.execute(slow, { idempotencyKey: 'order-4' })));
        assert.equal(e.code, 'OUTCOME_UNKNOWN');
        assert.equal(store.peek('order-4')?.status, 'unknown');
      });

      test("resilientFetch with an 'auto' key: retried, then an OutcomeUnknownError caused by the last value, as for a network error", async () => {
        const g = debiting(make);
        const { e } = await rejection(
          resilientFetch(
            'http://127.0.0.1:9/v1/charges',
            { method: 'POST', body: '{}' },
            { fetch: g.call, idempotencyKey: 'auto', retry: POLICY, breaker: false },
          ),
        );
        assert.equal(e.code, 'OUTCOME_UNKNOWN', `parked, got ${e?.name}: ${e?.message}`);
        assert.equal(e.cause, g.rejected.at(-1));
        assert.equal(g.debits, 3);
      });

      test('the checkout client: the charge is unknown, and charging it again sends nothing', async () => {
        const g = debiting(make);
        const client = createCheckoutClient({ endpoint: 'http://127.0.0.1:9/v1/charges', fetch: g.call, retry: POLICY, breaker: false });
        const charge = { amountCents: 1200, currency: 'usd', cart: 'cart-1' };
        const key = newIdempotencyKey();
        const first = await client.charge(charge, { idempotencyKey: key });
        assert.equal(first.status, 'unknown', JSON.stringify(first));
        const sent = g.debits;
        const second = await client.charge(charge, { idempotencyKey: key });
        assert.equal(second.status, 'unknown', JSON.stringify(second));
        assert.equal(g.debits, sent, 'nothing sent again');
      });
    });
  }
});
