// A/B of two installed builds of steadfast in ONE process, interleaved, for the hot paths a change
// may touch: on a shared, loaded machine absolute ns drift by several times between runs, but two
// builds measured in alternation see the same load, so their ratio is meaningful.
//
//   node --expose-gc benches/ab.mjs <dir of build A's package> <dir of build B's package> [reps]
//
// e.g. A = an older tree's tests/node_modules/steadfast, B = this tree's (scripts/install-tarball.sh).
// Prints ns/call (median of reps) per row and the ratio B ÷ A.
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { checkoutSizedCharge } from './common.mjs';

const [dirA, dirB, repsArg] = process.argv.slice(2);
if (!dirA || !dirB) throw new Error('usage: node --expose-gc benches/ab.mjs <pkgA> <pkgB> [reps]');
const REPS = Number(repsArg ?? 15);
const BATCH = 20_000;
const load = async (dir) => import(pathToFileURL(join(dir, 'index.node.js')).href);
const builds = [await load(dirA), await load(dirB)];
const ok = () => Promise.resolve(1);
const POLICY = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 10 };
const URL_ = 'http://127.0.0.1:9/v1/charges';
const stubFetch = () => Promise.resolve(new Response('{"reference":"ch_1"}', { status: 200, headers: { 'content-type': 'application/json' } }));
const POST = Object.freeze({ method: 'POST', body: '{"amountCents":1200,"currency":"usd"}' });
const CHARGE = Object.freeze({ amountCents: 1200, currency: 'usd' });

function rows(m) {
  const gateway = async (c) => ({ reference: 'ch_1', amountCents: c.amountCents });
  const breaker = new m.CircuitBreaker({ windowSize: 100, failureRateThreshold: 0.5, openDurationMs: 1000 });
  let fresh = 0;
  const deps = { store: new m.IdempotencyStore({ maxRecords: 10_000_000 }), breaker, gateway, policy: POLICY };
  const replayDeps = { store: new m.IdempotencyStore(), breaker, gateway, policy: POLICY };
  const store = new m.IdempotencyStore();
  const fetchOptions = { fetch: stubFetch };
  const keyedOptions = { fetch: stubFetch, idempotencyKey: 'auto' };
  const client = m.createCheckoutClient({ endpoint: URL_, fetch: stubFetch, store: new m.IdempotencyStore({ maxRecords: 10_000_000 }) });
  return {
    'CircuitBreaker execute, success': () => breaker.execute(ok),
    'withRetry, success': () => m.withRetry(ok, POLICY),
    'chargeCustomer, fresh key': () => chargeFresh(m, deps, ++fresh),
    'chargeCustomer, fresh key, checkout-sized charge': () => chargeCheckout(m, deps, ++fresh),
    'chargeCustomer, same key (replay)': () => m.chargeCustomer({ idempotencyKey: 'order-1', amountCents: 1200, currency: 'usd' }, replayDeps),
    'IdempotencyStore.run replay, fingerprint': () => store.run('k', ok, { fingerprint: '1200 usd' }),
    // The HTTP wing over a stub fetch answering 200 (one options object, one client, as an app holds them).
    'resilientFetch GET, stub 200': () => m.resilientFetch(URL_, undefined, fetchOptions),
    "resilientFetch POST 'auto' key, stub 200": () => m.resilientFetch(URL_, POST, keyedOptions),
    'checkout charge(), fresh key, stub 200': () => client.charge(CHARGE),
  };
}
const chargeFresh = (m, deps, i) => m.chargeCustomer({ idempotencyKey: `k-${i}`, amountCents: 1200, currency: 'usd' }, deps);
// As benches/timing.mjs's checkout-sized row: ~200 bytes of canonical text, a new amount per call.
const chargeCheckout = (m, deps, i) => m.chargeCustomer(checkoutSizedCharge(`k-${i}`, 1200 + i), deps);

const tables = builds.map(rows);
const names = Object.keys(tables[0]);
const samples = names.map(() => [[], []]);
for (let rep = 0; rep < REPS + 2; rep++) {
  for (const [r, name] of names.entries()) {
    for (const b of rep % 2 === 0 ? [0, 1] : [1, 0]) {
      const f = tables[b][name];
      globalThis.gc?.();
      const t = performance.now();
      for (let i = 0; i < BATCH; i++) await f();
      if (rep >= 2) samples[r][b].push(((performance.now() - t) * 1e6) / BATCH);
    }
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`${'row'.padEnd(42)} ${'A ns'.padStart(9)} ${'B ns'.padStart(9)}  B ÷ A`);
for (const [r, name] of names.entries()) {
  const [a, b] = samples[r].map(median);
  console.log(`${name.padEnd(42)} ${a.toFixed(0).padStart(9)} ${b.toFixed(0).padStart(9)}  ${(b / a).toFixed(2)}×`);
}
