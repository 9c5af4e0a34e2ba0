// One charge-shape check behind every door: the checkout client's charge(), fingerprint() and
// reconcile(key, charge), and chargeCustomer refuse the same bad charges with the same error (class,
// code, option and words; only the API named in the message differs), before anything is stored or sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCheckoutClient, chargeCustomer, IdempotencyStore, CircuitBreaker } from 'steadfast';

const { checkCharge } = await import(new URL('../node_modules/steadfast/lib/charge-shape.js', import.meta.url).href);

const BAD = [
  undefined,
  null,
  5,
  'usd 100',
  {},
  { amountCents: 0, currency: 'usd' },
  { amountCents: -100, currency: 'usd' },
  { amountCents: 12.5, currency: 'usd' },
  { amountCents: 2 ** 53, currency: 'usd' },
  { amountCents: Number.NaN, currency: 'usd' },
  { amountCents: '100', currency: 'usd' },
  { amountCents: 100n, currency: 'usd' },
  { amountCents: 100 },
  { amountCents: 100, currency: '' },
  { amountCents: 100, currency: 5 },
];

/** What a user can tell errors apart by, with the API's own name (`where`) taken out of the message. */
function signature(e, where) {
  assert.ok(e instanceof Error, `${where} threw a non-error ${e}`);
  return { name: e.name, code: e.code, option: e.option, message: e.message.replace(`steadfast: ${where} `, 'steadfast: <api> ') };
}

async function thrown(where, call) {
  try {
    await call();
  } catch (e) {
    return signature(e, where);
  }
  assert.fail(`${where} accepted a bad charge`);
}

test('every entry point refuses each bad charge with the same error, and sends nothing', async () => {
  let sent = 0;
  const fetch = async () => {
    sent += 1;
    return new Response('{"reference":"ch_1"}', { status: 200 });
  };
  const client = createCheckoutClient({ endpoint: 'http://127.0.0.1:9/charges', fetch });
  const store = new IdempotencyStore();
  let gatewayCalls = 0;
  const deps = { store, breaker: new CircuitBreaker({ failureThreshold: 5, openDurationMs: 1_000 }), gateway: async () => (gatewayCalls += 1) };
  for (const charge of BAD) {
    const label = typeof charge === 'object' && charge !== null ? JSON.stringify(charge, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)) : String(charge);
    const expected = await thrown('check', () => checkCharge(charge, 'check'));
    assert.deepEqual(await thrown('charge', () => client.charge(charge)), expected, `charge(${label})`);
    assert.deepEqual(await thrown('fingerprint', () => client.fingerprint(charge)), expected, `fingerprint(${label})`);
    // reconcile(key) without a charge re-sends the one this client made: not a bad charge.
    if (charge !== undefined) assert.deepEqual(await thrown('reconcile', () => client.reconcile('k-1', charge)), expected, `reconcile(k, ${label})`);
    // chargeCustomer's charge carries its key.
    const keyed = charge !== null && typeof charge === 'object' ? { ...charge, idempotencyKey: 'k-1' } : charge;
    assert.deepEqual(await thrown('chargeCustomer', () => chargeCustomer(keyed, deps)), expected, `chargeCustomer(${label})`);
  }
  assert.equal(sent, 0, 'no bad charge reached the network');
  assert.equal(gatewayCalls, 0, 'no bad charge reached the gateway');
  assert.equal(await store.peek('k-1'), undefined, 'no bad charge was stored');
});

test('a good charge passes every door', async () => {
  const charge = { amountCents: 1200, currency: 'usd', cart: 'c-1' };
  assert.equal(checkCharge(charge, 'check'), charge);
  const client = createCheckoutClient({ endpoint: 'http://127.0.0.1:9/charges', fetch: async () => new Response('{"reference":"ch_1"}', { status: 200 }) });
  assert.equal(typeof client.fingerprint(charge), 'string');
  assert.equal((await client.charge(charge)).status, 'succeeded');
});
