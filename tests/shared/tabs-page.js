// The page of tests/browser/shared-tabs.test.mjs: a breaker shared across tabs and a reload-safe
// checkout key, exposed on globalThis.__tabs for the test to drive; and a second cart whose client
// has a secondary endpoint (/v2, another gateway on this origin) and a breaker of its own per charge,
// held open (`isolate()`) when the test wants the charge to fail over (__tabs.failover).
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

const FAILOVER_CART = 'cart-failover';
const failoverCalls = [];
const failoverCheckout = await persistentCheckoutKey({ cartId: FAILOVER_CART });
/** A client over /v1 (primary) and /v2 (secondary), with a fresh breaker: held open when `primaryOpen`. */
function failoverClient(primaryOpen) {
  const primaryBreaker = new CircuitBreaker({ failureThreshold: 2, openDurationMs: 30_000 });
  if (primaryOpen) primaryBreaker.isolate();
  return createCheckoutClient({
    endpoint: `${location.origin}/v1/charges`,
    secondaryEndpoint: `${location.origin}/v2/charges`,
    breaker: primaryBreaker,
    retry: { maxAttempts: 1, baseDelayMs: 10, maxDelayMs: 10 },
    attemptTimeoutMs: 10_000,
    onAttempt: (a) => failoverCalls.push(a),
  });
}

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
  failover: {
    key: failoverCheckout.key,
    calls: failoverCalls,
    primary: `${location.origin}/v1/charges`,
    secondary: `${location.origin}/v2/charges`,
    state: () => failoverCheckout.state(),
    /** The cart's entry as localStorage holds it (what survived the reload). */
    stored: () => JSON.parse(localStorage.getItem(`steadfast:checkout:${FAILOVER_CART}`) ?? 'null'),
    pay: ({ primaryOpen = false, resume = false } = {}) =>
      failoverCheckout.charge(failoverClient(primaryOpen), { amountCents: 2599, currency: 'usd' }, { resume }),
  },
};
document.body.dataset.ready = 'true';
