// vi.mock with importOriginal: keep steadfast real (the wasm loads as usual) and pin one export, here
// the idempotency key, so a test can assert what the gateway received.
import { expect, test, vi } from 'vitest';
import { createCheckoutClient, newIdempotencyKey } from 'steadfast';

vi.mock('steadfast', async (importOriginal) => {
  const real = await importOriginal();
  return { ...real, newIdempotencyKey: vi.fn(() => 'order-fixed-key') };
});

test('a partially mocked steadfast still charges through the real core', async () => {
  expect(newIdempotencyKey()).toBe('order-fixed-key');
  const seen = [];
  const fetch = vi.fn(async (url, init) => {
    seen.push(new Headers(init.headers).get('idempotency-key'));
    return new Response(JSON.stringify({ reference: 'ch_1' }), { status: 200, headers: { 'content-type': 'application/json' } });
  });
  const client = createCheckoutClient({ endpoint: 'https://pay.example.test/v1/charges', fetch });
  const outcome = await client.charge({ amountCents: 100, currency: 'usd' }, { idempotencyKey: newIdempotencyKey() });
  expect(outcome).toEqual({ status: 'succeeded', reference: 'ch_1', key: 'order-fixed-key' });
  expect(seen).toEqual(['order-fixed-key']);
});
