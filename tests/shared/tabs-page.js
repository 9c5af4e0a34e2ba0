// The page of tests/browser/shared-tabs.test.mjs: a breaker shared across tabs and a reload-safe
// checkout key, exposed on globalThis.__tabs for the test to drive.
import { CircuitBreaker, createCheckoutClient, shareBreakerAcrossTabs, persistentCheckoutKey } from 'steadfast';

const transitions = [];
const breaker = new CircuitBreaker({
  failureThreshold: 2,
  openDurationMs: 30_000,
  onStateChange: (s) => {
    transitions.push({ s, at: Date.now() });
    tabs.onStateChange(s);
  },
});
const tabs = shareBreakerAcrossTabs(breaker, { channel: 'steadfast-test:gateway' });

const gatewayCalls = [];
const client = createCheckoutClient({
  endpoint: `${location.origin}/v1/charges`,
  retry: { maxAttempts: 1, baseDelayMs: 10, maxDelayMs: 10 },
  attemptTimeoutMs: 10_000,
  onAttempt: (a) => gatewayCalls.push(a),
});
const checkout = await persistentCheckoutKey({ cartId: 'cart-42' });

globalThis.__tabs = {
  transitions,
  gatewayCalls,
  key: checkout.key,
  state: () => breaker.currentState,
  async trip() {
    const at = Date.now();
    for (let i = 0; i < 2; i += 1) await breaker.execute(() => Promise.reject(new Error('HTTP 503'))).catch(() => {});
    return at;
  },
  async call() {
    let ran = false;
    const r = await breaker
      .execute(async () => {
        ran = true;
        return 'ok';
      })
      .catch((e) => e.name);
    return { r, ran };
  },
  checkoutState: () => checkout.state(),
  pay: (resume = false) => checkout.charge(client, { amountCents: 4999, currency: 'usd' }, { resume }),
};
document.body.dataset.ready = 'true';
