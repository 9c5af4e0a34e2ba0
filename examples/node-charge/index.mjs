// Charge a local test gateway that misbehaves, and watch one idempotency key survive every fault.
//
//   make build && node examples/node-charge/index.mjs
//
// The gateway (tests/support/gateway.mjs) is Stripe-like: same key + same body replays, so a retry
// after "debit then timeout" learns the outcome instead of charging twice.
import { createCheckoutClient, newIdempotencyKey, reconcile } from 'steadfast';
import { startGateway } from '../../tests/support/gateway.mjs';

const gateway = await startGateway({ seed: 42 });
const log = (...a) => console.log(' ', ...a);
const client = createCheckoutClient({
  endpoint: `${gateway.url}/v1/charges`,
  retry: { maxAttempts: 4, baseDelayMs: 50, maxDelayMs: 400 },
  attemptTimeoutMs: 300,
  onAttempt: ({ attempt, key }) => log(`attempt ${attempt}  Idempotency-Key: ${key}`),
});

const scenarios = [
  ['a clean charge', []],
  ['two 503s, then success', [['status503', 2]]],
  ['429 with Retry-After: 1', [['status429', 1]]],
  ['debited, then the response is lost (timeout)', [['debitThenTimeout', 1]]],
  ['connection reset after the debit', [['debitThenReset', 1]]],
  ['card declined', [['decline', 1]]],
];

try {
  for (const [title, faults] of scenarios) {
    console.log(`\n${title}`);
    for (const [name, n] of faults) gateway.forceNext(name, n);
    const key = newIdempotencyKey(); // once per logical charge, before the first attempt
    const t0 = Date.now();
    const outcome = await client.charge({ amountCents: 4999, currency: 'usd' }, { idempotencyKey: key });
    log(`→ ${JSON.stringify(outcome)} in ${Date.now() - t0} ms; gateway debits for this key: ${gateway.chargesByKey().get(key) ?? 0}`);
  }

  console.log('\na timeout on the only attempt: the outcome is unknown, and reconciliation settles it');
  const cautious = createCheckoutClient({
    endpoint: `${gateway.url}/v1/charges`,
    retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
    attemptTimeoutMs: 300,
  });
  gateway.forceNext('debitThenTimeout');
  const key = newIdempotencyKey();
  log('→', JSON.stringify(await cautious.charge({ amountCents: 1250, currency: 'eur' }, { idempotencyKey: key })));
  log(
    '→ charging again with the same key:',
    JSON.stringify(await cautious.charge({ amountCents: 1250, currency: 'eur' }, { idempotencyKey: key })),
    '(no request sent)',
  );
  const report = await reconcile(cautious.store, async (k) => {
    const rows = await (await fetch(`${gateway.url}/v1/settlements?idempotencyKey=${encodeURIComponent(k)}`)).json();
    return rows.length > 0 ? { status: 'done', result: { status: 'succeeded', reference: rows[0].id, key: k } } : { status: 'failed' };
  });
  log('→ reconcile:', JSON.stringify({ checked: report.checked, done: report.done, failed: report.failed }));
  log('→ charging again now replays:', JSON.stringify(await cautious.charge({ amountCents: 1250, currency: 'eur' }, { idempotencyKey: key })));

  const debits = [...gateway.chargesByKey().values()];
  console.log(`\nledger: ${debits.length} keys debited, max debits per key: ${Math.max(...debits)} (must be 1)`);
} finally {
  await gateway.close();
}
