// The per-origin breaker registry under URLs an unrelated caller controls: a server that fetches
// many user-supplied URLs between payment calls must not evict the payment gateway's breaker (its
// failures on record, or the endpoint a checkout client names). No network: a scripted `fetch`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resilientFetch, createCheckoutClient, BreakerRegistry, CircuitBreaker, CircuitOpenError } from 'steadfast';

const GATEWAY = 'https://pay.example';
/** 503 from the dead gateway, 200 from everything else. */
const scripted = async (req) => new Response('{}', { status: String(req.url ?? req).startsWith(GATEWAY) ? 503 : 200 });
const once = { fetch: scripted, budget: false, retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 } };

test('the module-wide registry, full of origins: 150 user URLs between payment calls never evict the dead gateway', async () => {
  for (let i = 0; i < 1000; i++) await resilientFetch(`https://filler-${i}.example/`, undefined, once);
  let reached = 0;
  let failedFast = 0;
  let user = 0;
  for (let round = 0; round < 60; round++) {
    try {
      const r = await resilientFetch(`${GATEWAY}/v1/charges`, undefined, once);
      assert.equal(r.status, 503);
      reached += 1;
    } catch (e) {
      assert.ok(e instanceof CircuitOpenError, String(e));
      failedFast += 1;
    }
    for (let i = 0; i < 150; i++) await resilientFetch(`https://user-${user++}.example/`, undefined, once);
  }
  // The defaults: a window of 20 outcomes judged from 10 (minimumCalls), half failing trips it.
  assert.deepEqual({ reached, failedFast }, { reached: 10, failedFast: 50 });
});

test('a BreakerRegistry keeps pinned origins and breakers with failures on record; a full one keeps them all', async () => {
  const registry = new BreakerRegistry({
    windowSize: 10,
    failureRateThreshold: 0.5,
    openDurationMs: 60_000,
    maxOrigins: 3,
    pinned: ['https://kept.example/path'],
  });
  const failing = registry.get('https://failing.example');
  await failing.execute(() => Promise.reject(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).catch(() => {});
  assert.equal(failing.currentState, 'closed');
  assert.equal(failing.holdsProtection, true, 'closed, with a failure on record');
  assert.equal(registry.get('https://idle.example').holdsProtection, false);
  for (let i = 0; i < 20; i++) registry.get(`https://o${i}.example`);
  assert.deepEqual(registry.origins().sort(), ['https://failing.example', 'https://kept.example', 'https://o19.example']);
  await registry
    .get('https://o19.example')
    .execute(() => Promise.reject(Object.assign(new Error('reset'), { code: 'ECONNRESET' })))
    .catch(() => {});
  // Every kept breaker is pinned or holds protection: a newcomer's breaker guards its call and is not kept.
  const newcomer = registry.get('https://new.example');
  assert.ok(newcomer instanceof CircuitBreaker);
  assert.notEqual(registry.get('https://new.example'), newcomer);
  assert.deepEqual(registry.origins().sort(), ['https://failing.example', 'https://kept.example', 'https://o19.example']);
  assert.equal(registry.get('https://failing.example'), failing, 'the same breaker, failures and all');
  assert.throws(
    () => new BreakerRegistry({ windowSize: 10, failureRateThreshold: 0.5, openDurationMs: 1, pinned: 'https://x.example' }),
    (e) => e instanceof TypeError && e.option === 'pinned',
  );
  assert.throws(() => registry.pin(42), TypeError);
});

test('a checkout client pins its endpoints in a shared registry: other URLs fetched through it cannot evict them', async () => {
  const registry = new BreakerRegistry({ windowSize: 10, failureRateThreshold: 0.5, openDurationMs: 60_000, maxOrigins: 5 });
  const ok = async () => new Response('{"id":"ch_1"}', { status: 200 });
  const checkout = createCheckoutClient({
    endpoint: `${GATEWAY}/v1/charges`,
    secondaryEndpoint: 'https://pay-2.example/v1/charges',
    fetch: ok,
    breaker: registry,
  });
  assert.equal((await checkout.charge({ amountCents: 100, currency: 'usd' })).status, 'succeeded');
  for (let i = 0; i < 50; i++) await resilientFetch(`https://user-${i}.example/`, undefined, { ...once, fetch: ok, breaker: registry });
  const origins = registry.origins();
  assert.ok(origins.includes(GATEWAY) && origins.includes('https://pay-2.example'), `kept: ${origins.join(', ')}`);
  assert.equal(origins.length, 5, 'still bounded by maxOrigins');
});
