// docs/checkout-contract.md, row by row: what createCheckoutClient sends, and how it reads each answer.
// If this file and the document disagree, one of them is wrong.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createCheckoutClient, IdempotencyKeyReuseError, CheckoutRequestError } from 'steadfast';

const ENDPOINT = 'https://pay.example.test/v1/charges';
const retry = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 };

/** A gateway stub: answers[i] for request i (the last one repeats); records every request. */
function gateway(...answers) {
  const requests = [];
  const fetch = async (url, init) => {
    const headers = new Headers(init.headers);
    requests.push({
      url: String(url),
      method: init.method,
      contentType: headers.get('content-type'),
      key: headers.get('idempotency-key'),
      body: JSON.parse(init.body),
    });
    const a = answers[Math.min(requests.length - 1, answers.length - 1)];
    if (a instanceof Error) throw a;
    return new Response(a.body === undefined ? '' : JSON.stringify(a.body), {
      status: a.status,
      headers: { 'content-type': 'application/json', ...a.headers },
    });
  };
  return { fetch, requests };
}
const client = (g, extra) => createCheckoutClient({ endpoint: ENDPOINT, fetch: g.fetch, retry, budget: undefined, ...extra });

describe('request', () => {
  test('POST, JSON body = the charge as given, Idempotency-Key header', async () => {
    const g = gateway({ status: 200, body: { reference: 'ch_1' } });
    await client(g).charge({ amountCents: 4999, currency: 'usd', orderId: 'o-1' }, { idempotencyKey: 'order-1' });
    assert.deepEqual(g.requests, [
      { url: ENDPOINT, method: 'POST', contentType: 'application/json', key: 'order-1', body: { amountCents: 4999, currency: 'usd', orderId: 'o-1' } },
    ]);
  });
  test('a new UUID v4 key per charge when none is given', async () => {
    const g = gateway({ status: 200, body: { reference: 'ch_1' } });
    const c = client(g);
    await c.charge({ amountCents: 1, currency: 'usd' });
    await c.charge({ amountCents: 1, currency: 'usd' });
    assert.match(g.requests[0].key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(g.requests[0].key, g.requests[1].key);
  });
});

describe('answers', () => {
  test('2xx: succeeded, reference from `reference` (or `id`)', async () => {
    assert.deepEqual(await client(gateway({ status: 201, body: { id: 'ch_id' } })).charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'k-2xx' }), {
      status: 'succeeded',
      reference: 'ch_id',
      key: 'k-2xx',
    });
  });
  test('a success replays for the same key without a request', async () => {
    const g = gateway({ status: 200, body: { reference: 'ch_1' } });
    const c = client(g);
    const first = await c.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'k-replay' });
    assert.deepEqual(await c.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'k-replay' }), first);
    assert.equal(g.requests.length, 1);
  });
  test('402 or error.type card_error: declined, reason = decline_code ?? code; the key is free again', async () => {
    const g = gateway(
      { status: 402, body: { error: { type: 'card_error', decline_code: 'insufficient_funds' } } },
      { status: 200, body: { reference: 'ch_2' } },
    );
    const c = client(g);
    assert.deepEqual(await c.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'k-decl' }), {
      status: 'declined',
      reason: 'insufficient_funds',
      key: 'k-decl',
    });
    assert.equal(g.requests.length, 1, 'a decline is not retried');
    assert.deepEqual(await c.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'k-decl' }), {
      status: 'succeeded',
      reference: 'ch_2',
      key: 'k-decl',
    });
  });
  test('422 error.type idempotency_error: rejects with IdempotencyKeyReuseError', async () => {
    const g = gateway({ status: 422, body: { error: { type: 'idempotency_error' } } });
    await assert.rejects(client(g).charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'k-reuse' }), IdempotencyKeyReuseError);
  });
  test('the same key for another amount: IdempotencyKeyReuseError before any request', async () => {
    const g = gateway({ status: 200, body: { reference: 'ch_1' } });
    const c = client(g);
    await c.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'k-fp' });
    await assert.rejects(c.charge({ amountCents: 2, currency: 'usd' }, { idempotencyKey: 'k-fp' }), IdempotencyKeyReuseError);
    assert.equal(g.requests.length, 1);
  });
  test('409 (in flight elsewhere): unknown, not retried blindly; the key stays parked for reconciliation', async () => {
    const g = gateway({ status: 409, body: { error: { type: 'idempotency_error', message: 'in progress' } } });
    const c = client(g);
    assert.deepEqual(await c.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'k-409' }), { status: 'unknown', key: 'k-409' });
    assert.deepEqual(await c.store.unknownKeys(), ['k-409']);
    const before = g.requests.length;
    assert.deepEqual(await c.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'k-409' }), { status: 'unknown', key: 'k-409' });
    assert.equal(g.requests.length, before, 'an unknown key is not sent again until reconciled');
  });
  test('5xx/429/408: retried with the same key; still failing: unknown', async () => {
    const g = gateway({ status: 503 }, { status: 429 }, { status: 500 });
    const c = client(g);
    assert.deepEqual(await c.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'k-5xx' }), { status: 'unknown', key: 'k-5xx' });
    assert.equal(g.requests.length, 3);
    assert.ok(g.requests.every((r) => r.key === 'k-5xx'));
  });
  test('a 5xx then 2xx: succeeded after a retry', async () => {
    const g = gateway({ status: 502 }, { status: 200, body: { reference: 'ch_3' } });
    assert.equal((await client(g).charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'k-retry' })).status, 'succeeded');
    assert.equal(g.requests.length, 2);
  });
  test('a connection lost after sending: unknown', async () => {
    const lost = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } });
    assert.deepEqual(await client(gateway(lost)).charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'k-lost' }), {
      status: 'unknown',
      key: 'k-lost',
    });
  });
  test('any other 4xx: rejects with CheckoutRequestError (status, body); not retried', async () => {
    const g = gateway({ status: 400, body: { error: { message: 'amount too small' } } });
    const e = await client(g)
      .charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'k-400' })
      .catch((x) => x);
    assert.ok(e instanceof CheckoutRequestError && e.status === 400);
    assert.deepEqual(e.body, { error: { message: 'amount too small' } });
    assert.equal(g.requests.length, 1);
  });
  test('a double click (same key while in flight) is the same promise: one request', async () => {
    const g = gateway({ status: 200, body: { reference: 'ch_1' } });
    const c = client(g);
    const a = c.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'k-dbl' });
    const b = c.charge({ amountCents: 1, currency: 'usd' }, { idempotencyKey: 'k-dbl' });
    assert.equal(a, b);
    await a;
    assert.equal(g.requests.length, 1);
  });
});
