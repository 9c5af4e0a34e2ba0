// The one driver-specific case: the context is offline (Playwright context.setOffline(true) in
// Chromium; a driver without that cannot run it). __offline() runs while offline and must see no
// phantom success; __offlineAfter(key), back online, reads the ledger: nothing was charged.
import * as sf from 'steadfast';
import { controls } from './cases.js';

function check() {
  const t = { count: 0, failures: [] };
  t.ok = (v, m) => {
    t.count += 1;
    if (!v) t.failures.push(m);
  };
  t.result = (name, extra) => ({
    name,
    ok: t.failures.length === 0,
    assertions: t.count,
    ...(t.failures.length ? { error: t.failures.join('; ') } : {}),
    ...extra,
  });
  return t;
}

globalThis.__offline = async () => {
  const t = check();
  t.ok(navigator.onLine === false, 'navigator.onLine is false');
  const key = sf.newIdempotencyKey();
  const checkout = sf.createCheckoutClient({ endpoint: '/v1/charges', retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 } });
  const out = await checkout.charge({ amountCents: 4999, currency: 'usd' }, { idempotencyKey: key });
  t.ok(out.status === 'unavailable' && out.reason === 'offline', `charge while offline: ${JSON.stringify(out)}`);
  t.ok(checkout.store.peek(key) === undefined, 'the key is free (nothing was sent)');
  let error;
  try {
    await sf.resilientFetch('/__stats', undefined, { breaker: false, budget: false, retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 } });
  } catch (e) {
    error = e;
  }
  t.ok(error instanceof sf.OfflineError && error.code === 'OFFLINE', `resilientFetch offline: ${error?.name} ${error?.code}`);
  let raw;
  try {
    await fetch('/__stats', { cache: 'no-store' });
  } catch (e) {
    raw = e;
  }
  t.ok(raw instanceof TypeError && sf.isTransientError(raw), `the engine's own offline error is transient: ${raw?.message}`);
  return t.result('offline: no phantom success, typed unavailable, key freed', { key, rawMessage: raw?.message });
};

globalThis.__offlineAfter = async (key) => {
  const t = check();
  t.ok(navigator.onLine === true, 'back online');
  const debits = await controls(location.origin).ledger(key);
  t.ok(debits.length === 0, `no debit for ${key}: ${JSON.stringify(debits)}`);
  const checkout = sf.createCheckoutClient({ endpoint: '/v1/charges', retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 } });
  const out = await checkout.charge({ amountCents: 4999, currency: 'usd' }, { idempotencyKey: key });
  t.ok(out.status === 'succeeded', `the same key charges once back online: ${JSON.stringify(out)}`);
  t.ok((await controls(location.origin).ledger(key)).length === 1, 'one debit');
  return t.result('offline: back online, the freed key charges once');
};
document.body.dataset.ready = 'true';
