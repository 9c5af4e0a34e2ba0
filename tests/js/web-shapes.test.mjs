// The shapes the Rust async API (`steadfast::web`, cargo feature `web`) shares with JS code on one
// page: tests/web/shapes.json holds the JSON the JS package writes for fixed states, and this test
// checks the built package still writes exactly that. tests/web_wasm.rs checks that the Rust
// BreakerSnapshot, Record and ChargeOutcome write and read the same strings, so a change on either
// side fails one of the two.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { CircuitBreaker, IdempotencyStore, createCheckoutClient } from 'steadfast';

const shapes = JSON.parse(await readFile(new URL('../web/shapes.json', import.meta.url), 'utf8'));

test('breaker toJSON() and store peek() write the shapes the Rust API reads', async () => {
  const clock = () => 5000;
  const rate = new CircuitBreaker({ windowSize: 4, failureRateThreshold: 0.9, openDurationMs: 1000, clock });
  await rate.execute(async () => 1);
  await rate
    .execute(async () => {
      throw new Error('x');
    })
    .catch(() => {});
  await rate.execute(async () => 2);
  assert.equal(JSON.stringify(rate), shapes.breakerRate);
  const cons = new CircuitBreaker({ failureThreshold: 2, openDurationMs: 1000, clock });
  for (let i = 0; i < 2; i++)
    await cons
      .execute(async () => {
        throw new Error('x');
      })
      .catch(() => {});
  assert.equal(JSON.stringify(cons), shapes.breakerConsecutiveOpen);
  // A snapshot written by Rust (the same string) restores in JS.
  const restored = new CircuitBreaker({ failureThreshold: 2, openDurationMs: 1000, clock, state: JSON.parse(shapes.breakerConsecutiveOpen) });
  assert.equal(restored.currentState, 'open');

  const store = new IdempotencyStore({ clock });
  let release;
  const running = store.run('in-flight', () => new Promise((ok) => (release = ok)));
  await store.run('done', async () => 'ch_1');
  await store
    .run('unknown', async () => {
      throw Object.assign(new Error('HTTP 503'), { status: 503 });
    })
    .catch(() => {});
  assert.equal(JSON.stringify(store.peek('in-flight')), shapes.recordInFlight);
  assert.equal(JSON.stringify(store.peek('done')), shapes.recordDone);
  assert.equal(JSON.stringify(store.peek('unknown')), shapes.recordUnknown);
  release('ok');
  await running;
});

test('checkout outcomes have the shapes of the Rust ChargeOutcome', async () => {
  const answers = [
    [200, { id: 'ch_1', reference: 'ch_1' }, shapes.outcomeSucceeded],
    [402, { error: { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds' } }, shapes.outcomeDeclined],
    [503, {}, shapes.outcomeUnknown],
  ];
  for (const [status, body, expected] of answers) {
    const client = createCheckoutClient({
      endpoint: 'http://127.0.0.1:9/v1/charges',
      retry: { maxAttempts: 1 },
      budget: false,
      fetch: async () => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } }),
    });
    const outcome = await client.charge({ amountCents: 4999, currency: 'usd' }, { idempotencyKey: 'k' });
    assert.equal(JSON.stringify(outcome), expected);
  }
});
