// "Prove nothing is lost", quick version: 5,000 logical charges through chargeCustomer (store + breaker +
// withRetry) over real HTTP to the local fault-injecting gateway, 200 in flight, every fault on and an
// outage in the middle; then reconciliation against the settlement listing and a comparison with the
// gateway ledger. The 100,000-charge version is `make soak` (tests/soak/run.mjs). The driver is
// tests/soak/soak.mjs; this file asserts its invariants.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSoak, format } from '../soak/soak.mjs';

const CHARGES = Number(process.env.SOAK_QUICK_CHARGES ?? 5_000);

test(`soak: ${CHARGES} charges, 200 in flight, faults and an outage: nothing doubled, nothing lost`, { timeout: 90_000 }, async () => {
  const f = await runSoak({ charges: CHARGES });
  console.log(format(f));

  // It was real: every fault fired, the outage tripped the breaker, retries and reconciliation happened.
  for (const [name, count] of Object.entries(f.gateway.faults)) assert.ok(count > 0, `fault ${name} never fired`);
  assert.ok(f.gateway.outage503 > 0, 'the outage answered nothing');
  assert.ok(f.breakerTransitions.open > 0, 'the breaker never opened');
  assert.ok(f.retries > 0 && f.gateway.replays > 0, 'no retry was replayed by the gateway');
  assert.ok(f.unknownBefore > 0, 'no charge was left unknown: reconciliation was not exercised');
  assert.ok(f.retryAfter.checked > 0, 'no 429 was retried');
  assert.equal(f.retryAfter.violations, 0, 'a retry after a 429 slept less than Retry-After (capped by maxDelayMs)');

  // The invariants.
  assert.equal(f.doubleCharges, 0, 'double charges');
  assert.equal(f.chargesDebitedTwice, 0, 'logical charges debited twice');
  assert.equal(f.unknownAfter, 0, 'unknown after reconciliation');
  assert.equal(f.errors, 0, 'charges ended in an unexpected error');
  assert.equal(f.frontCharges, 15);
  assert.equal(f.frontFreed, 0, 'a debit then a front 401/404/409 never freed the key');
  assert.equal(f.lost, 0, `lost charges: ${JSON.stringify(f.violations)}`);
  assert.equal(f.succeeded + f.declined + f.notCharged, f.charges, 'every charge ended succeeded, declined or not charged');
  assert.ok(f.deferred > 0, 'no "failed" answer was deferred: the settle window was not exercised');
  assert.equal(f.ledgerEntries, f.succeeded);
  assert.equal(f.clientTotalCents, f.ledgerTotalCents);
  assert.equal(f.gateway.mismatches, 0, 'a key was reused with another amount');
});
