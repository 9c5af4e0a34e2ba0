// A key is bound to one request, and every attempt must send THAT request. Between the call and a
// later attempt the caller's own code runs (a retry's delay; the first attempt itself behind a
// store that awaits Redis): a cart edited then must never go out under the key bound to the cart
// as it was. Each sequence here runs against the test gateway over HTTP (Stripe's model: a 429 or
// 503 in front of the endpoint processes nothing, a retry with the same key is processed fresh),
// whose ledger records the amount of every debit.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  CircuitBreaker,
  IdempotencyStore,
  chargeCustomer,
  createCheckoutClient,
  createSharedIdempotencyStore,
  memoryStateStore,
  redisStateStore,
  resilientFetch,
} from 'steadfast';
import { startGateway } from '../support/gateway.mjs';
import { startRedis, connectClient } from '../shared/redis-server.mjs';
import { FORM_BODIES } from '../browser/faults/cases.js';

let gw;
let redis;
let conn;
before(async () => {
  gw = await startGateway({ seed: 5, faults: { retryAfterSeconds: 0 } });
  redis = await startRedis();
  conn = await connectClient('node-redis', redis.port);
});
after(async () => {
  await conn?.close();
  await redis?.stop();
  await gw?.close();
});

/** A gateway client for chargeCustomer: the charge's fields as the request body; a non-2xx answer is an error with its status. */
const post = async (charge) => {
  const response = await fetch(`${gw.url}/v1/charges`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': charge.idempotencyKey },
    body: JSON.stringify({ amountCents: charge.amountCents, currency: charge.currency }),
  });
  if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
  return response.json();
};

const policy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 };
const breaker = () => new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
const debitsOf = (key) => gw.ledger().filter((d) => d.idempotencyKey === key);

const stores = [
  ['IdempotencyStore', () => ({ store: new IdempotencyStore() })],
  ['IdempotencyStore with a scope', () => ({ store: new IdempotencyStore(), scope: 'customer-7' })],
  ['shared store (memory)', () => ({ store: createSharedIdempotencyStore({ store: memoryStateStore() }) })],
  ['shared store (Redis)', (name) => ({ store: createSharedIdempotencyStore({ store: redisStateStore({ client: conn.client, prefix: `changed-${name}` }) }) })],
];

describe('chargeCustomer: the charge changes between attempts', () => {
  for (const [name, make] of stores) {
    test(`${name}: a 429, the cart grows during the delay: the retry is refused, nothing is sent for it, the key is free`, async () => {
      const key = `grow-${name.length}-${name.at(-2)}`;
      const charge = { idempotencyKey: key, amountCents: 1000, currency: 'usd' };
      const b = new CircuitBreaker({ failureThreshold: 2, openDurationMs: 60_000 });
      gw.forceNext('status429');
      const gateway = async (c, ctx) => {
        try {
          return await post(c);
        } finally {
          if (ctx.attempt === 1) charge.amountCents = 100_000; // the caller's code, while the retry waits
        }
      };
      const deps = { ...make(key), breaker: b, gateway, policy };
      const error = await chargeCustomer(charge, deps).then(
        () => assert.fail('resolved'),
        (e) => e,
      );
      assert.equal(error.code, 'KEY_REUSED', String(error));
      assert.equal(error.reason, 'changed');
      assert.equal(error.key, key);
      assert.match(error.message, /changed while it was being charged; nothing was sent/);
      assert.equal(debitsOf(key).length, 0, 'nothing was debited');
      // Only the 429 attempt reached the gateway; a 429 processed nothing, so the key is free again.
      assert.equal(await deps.store.peek(key), undefined);
      // The breaker judges the call by the gateway's last answer, the 429 (the refusal's cause), once:
      // as if the retry had met another 429, not as a call that never ran.
      assert.equal(error.cause?.status, 429, 'the refusal carries the answer before it');
      assert.equal(b.toJSON().consecutiveFailures, 1, 'the 429 counted once; the refusal itself adds nothing');
      assert.equal(b.currentState, 'closed');
      // And then: the changed cart is a charge of its own, and goes through under the free key.
      const again = await chargeCustomer(charge, deps);
      assert.equal(again.amountCents, 100_000);
      assert.deepEqual(
        debitsOf(key).map((d) => d.amountCents),
        [100_000],
      );
    });

    test(`${name}: attempt 1 debits and drops, the cart changes: never re-sent, the key stays unknown`, async () => {
      const key = `drop-${name.length}-${name.at(-2)}`;
      const charge = { idempotencyKey: key, amountCents: 1000, currency: 'usd' };
      gw.forceNext('debitThenReset');
      const before = gw.requests();
      const gateway = async (c, ctx) => {
        try {
          return await post(c);
        } finally {
          if (ctx.attempt === 1) charge.amountCents = 100_000;
        }
      };
      const deps = { ...make(key), breaker: breaker(), gateway, policy };
      const error = await chargeCustomer(charge, deps).then(
        () => assert.fail('resolved'),
        (e) => e,
      );
      assert.equal(error.code, 'OUTCOME_UNKNOWN', String(error));
      assert.equal(error.cause?.code, 'KEY_REUSED');
      assert.equal(error.cause?.reason, 'changed');
      assert.equal(gw.requests() - before, 1, 'one request: the debited one');
      assert.deepEqual(
        debitsOf(key).map((d) => d.amountCents),
        [1000],
        'the money that moved is the original cart',
      );
      assert.equal((await deps.store.peek(key))?.status, 'unknown');
      // And then: the edited cart under the key is another request; the original one is parked.
      await assert.rejects(chargeCustomer(charge, deps), { code: 'KEY_REUSED' });
      await assert.rejects(chargeCustomer({ ...charge, amountCents: 1000 }, deps), { code: 'OUTCOME_UNKNOWN' });
      assert.equal(gw.requests() - before, 1, 'no blind retry');
    });

    test(`${name}: an unchanged charge is retried as it was, under the same key`, async () => {
      const key = `same-${name.length}-${name.at(-2)}`;
      const charge = { idempotencyKey: key, amountCents: 1234, currency: 'usd', items: [{ sku: 'a', qty: 1 }] };
      gw.forceNext('status429', 2);
      const sent = [];
      const gateway = async (c) => {
        sent.push(JSON.stringify(c));
        return post(c);
      };
      const out = await chargeCustomer(charge, { ...make(key), breaker: breaker(), gateway, policy });
      assert.equal(out.amountCents, 1234);
      assert.equal(sent.length, 3);
      assert.ok(
        sent.every((s) => s === sent[0]),
        'every attempt sent the same charge',
      );
      assert.equal(debitsOf(key).length, 1);
    });
  }

  test('a charge edited right after the call, behind a store that awaits: refused before its first attempt, nothing sent', async () => {
    for (const [name, make] of stores.slice(2)) {
      const key = `late-${name.at(-2)}`;
      const charge = { idempotencyKey: key, amountCents: 1000, currency: 'usd' };
      const before = gw.requests();
      const b = breaker();
      const running = chargeCustomer(charge, { ...make(key), breaker: b, gateway: post, policy });
      charge.currency = 'eur'; // the store has not answered yet
      await assert.rejects(running, (e) => e.code === 'KEY_REUSED' && e.reason === 'changed' && e.cause === undefined);
      assert.equal(gw.requests(), before, `${name}: nothing was sent`);
      assert.equal(b.toJSON().consecutiveFailures, 0, `${name}: no attempt was sent, so nothing for the breaker to count`);
      assert.equal(b.currentState, 'closed');
    }
  });

  test('a charge that stops being plain data between attempts (a getter) is refused too', async () => {
    const key = 'getter-1';
    const charge = { idempotencyKey: key, amountCents: 1000, currency: 'usd' };
    gw.forceNext('status429');
    const gateway = async (c, ctx) => {
      try {
        return await post(c);
      } finally {
        if (ctx.attempt === 1) Object.defineProperty(charge, 'amountCents', { get: () => 1000, enumerable: true });
      }
    };
    await assert.rejects(chargeCustomer(charge, { store: new IdempotencyStore(), breaker: breaker(), gateway, policy }), {
      code: 'KEY_REUSED',
      reason: 'changed',
    });
    assert.equal(debitsOf(key).length, 0);
  });
});

describe('the checkout client: what is sent is the charge as it was handed over', () => {
  const fast = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 };

  test('a cart edited while the shared store answers: the original cart is charged, once', async () => {
    const client = createCheckoutClient({
      endpoint: `${gw.url}/v1/charges`,
      retry: fast,
      store: createSharedIdempotencyStore({ store: memoryStateStore() }),
    });
    const cart = { amountCents: 1000, currency: 'usd', items: ['book'] };
    const charging = client.charge(cart, { idempotencyKey: 'cart-edit-1' });
    cart.amountCents = 100_000;
    cart.items.push('tv');
    const out = await charging;
    assert.equal(out.status, 'succeeded');
    assert.deepEqual(
      debitsOf('cart-edit-1').map((d) => d.amountCents),
      [1000],
    );
  });

  test('an unknown charge is reconciled with the bytes first sent, whatever became of the cart object', async () => {
    const client = createCheckoutClient({ endpoint: `${gw.url}/v1/charges`, retry: { ...fast, maxAttempts: 1 }, attemptTimeoutMs: 150 });
    const cart = { amountCents: 2500, currency: 'usd' };
    gw.forceNext('debitThenTimeout');
    const first = await client.charge(cart, { idempotencyKey: 'cart-edit-2' });
    assert.equal(first.status, 'unknown');
    cart.amountCents = 99_999; // the page keeps editing the same object
    const [settled] = await client.reconcile();
    assert.equal(settled.status, 'succeeded', JSON.stringify(settled));
    assert.equal(settled.replayed, true, 'the gateway replayed the first debit: the same body under the same key');
    assert.deepEqual(
      debitsOf('cart-edit-2').map((d) => d.amountCents),
      [2500],
    );
    // The edited cart is another request: reconciling it under the key is refused.
    gw.forceNext('debitThenTimeout');
    const other = await client.charge({ amountCents: 10, currency: 'usd' }, { idempotencyKey: 'cart-edit-3' });
    assert.equal(other.status, 'unknown');
    await assert.rejects(client.reconcile('cart-edit-3', { amountCents: 11, currency: 'usd' }), { code: 'KEY_REUSED' });
  });

  test('a charge whose fields read differently from its JSON (a Proxy) is refused, nothing sent', async () => {
    const before = gw.requests();
    let reads = 0;
    const lying = new Proxy(
      { amountCents: 1000, currency: 'usd' },
      {
        get(target, p, r) {
          if (p === 'amountCents') return ++reads > 1 ? 100_000 : 1000;
          return Reflect.get(target, p, r);
        },
        getOwnPropertyDescriptor(target, p) {
          const d = Reflect.getOwnPropertyDescriptor(target, p);
          return p === 'amountCents' && d ? { ...d, value: 1000 } : d;
        },
      },
    );
    const client = createCheckoutClient({ endpoint: `${gw.url}/v1/charges`, retry: fast });
    await assert.rejects(client.charge(lying, { idempotencyKey: 'proxy-1' }), (e) => e instanceof TypeError && e.code === 'INVALID_OPTION');
    assert.equal(gw.requests(), before);
    assert.equal(client.store.peek('proxy-1'), undefined, 'nothing stored');
  });
});

describe('resilientFetch: a keyed request sends the same bytes on every attempt', () => {
  /** A fetch that answers 503 first, then 200, recording each attempt's body bytes and content type. */
  function recording() {
    const sent = [];
    const fetch = async (url, init) => {
      const request = new Request(url, init);
      sent.push({ text: await request.text(), type: request.headers.get('content-type') });
      return new Response('{}', { status: sent.length === 1 ? 503 : 200 });
    };
    return { sent, fetch };
  }
  const bodies = [
    ['a Uint8Array', () => new TextEncoder().encode('amount=1000'), (b) => b.fill(0x39, 7)],
    ['an ArrayBuffer', () => new TextEncoder().encode('amount=1000').buffer, (b) => new Uint8Array(b).fill(0x39, 7)],
    ...FORM_BODIES,
  ];
  for (const [name, make, change] of bodies) {
    test(`${name} changed between attempts: the retry sends the bytes of the first`, async () => {
      const { sent, fetch } = recording();
      const body = make();
      let changed = 0;
      const response = await resilientFetch(
        'https://pay.example/charges',
        { method: 'POST', body },
        {
          idempotencyKey: `body-${name}`,
          fetch,
          breaker: false,
          budget: false,
          retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
          onRetry: () => {
            changed += 1;
            change(body);
          },
        },
      );
      assert.equal(response.status, 200);
      assert.equal(sent.length, 2);
      assert.equal(changed, 1, 'the body was changed during the delay');
      assert.match(sent[0].text, /1000/);
      assert.doesNotMatch(sent[1].text, /100000|1999/);
      assert.deepEqual(sent[1], sent[0], 'the same bytes and content type');
    });
  }
});
