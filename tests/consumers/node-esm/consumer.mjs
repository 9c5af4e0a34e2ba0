// A Node 24 ESM consumer of the packed package: named imports by the bare name, then one full
// chargeCustomer run (IdempotencyStore + CircuitBreaker + withRetry around a stub gateway that fails
// transiently once), a replay, a key reused for another amount, and a permanent failure.
// Prints "node-esm: N assertions"; exits non-zero on the first failed assertion or a wrong count.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import {
  chargeCustomer,
  IdempotencyStore,
  CircuitBreaker,
  newIdempotencyKey,
  isTransientError,
  isSteadfastError,
  IdempotencyKeyReuseError,
  version,
} from 'steadfast';

const PLANNED = 24;
let checks = 0;
const check = (fn, ...args) => {
  fn(...args);
  checks += 1;
};

// It is this project's install, through the `node` export condition (not a path import, not ../pkg).
const resolved = fileURLToPath(import.meta.resolve('steadfast'));
check(assert.equal, resolved, fileURLToPath(new URL('./node_modules/steadfast/index.node.js', import.meta.url)));
check(assert.match, process.versions.node, /^24\./, 'this consumer must run on Node 24');
check(assert.match, version(), /^\d+\.\d+\.\d+/);

const store = new IdempotencyStore();
const breaker = new CircuitBreaker({ failureThreshold: 5, openDurationMs: 30_000 });
const policy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5, jitter: 'full' };

// The stub gateway: the first call dies like a dropped connection, every later call succeeds.
const attempts = [];
let gatewayCalls = 0;
async function gateway(charge, ctx) {
  gatewayCalls += 1;
  attempts.push({ key: charge.idempotencyKey, attempt: ctx.attempt });
  if (gatewayCalls === 1) {
    throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
  }
  return { reference: `ch_${gatewayCalls}`, amountCents: charge.amountCents };
}
const deps = { store, breaker, gateway, policy };

const key = newIdempotencyKey();
check(assert.match, key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
const order = { idempotencyKey: key, amountCents: 4999, currency: 'usd' };

// 1. One logical charge, two attempts, one key.
const result = await chargeCustomer(order, deps);
check(assert.deepEqual, result, { reference: 'ch_2', amountCents: 4999 });
check(assert.equal, gatewayCalls, 2, 'one transient failure, then success: two gateway calls');
check(
  assert.deepEqual,
  attempts.map((a) => a.attempt),
  [1, 2],
);
check(
  assert.ok,
  attempts.every((a) => a.key === key),
  `every attempt carries ${key}: ${JSON.stringify(attempts)}`,
);
check(assert.equal, new Set(attempts.map((a) => a.key)).size, 1);
check(assert.deepEqual, store.peek(key), { status: 'done', result });
check(assert.equal, breaker.currentState, 'closed');

// 2. The replay: same key, same amount → the stored result, the gateway is not called again.
const replay = await chargeCustomer(order, deps);
check(assert.deepEqual, replay, result);
check(assert.equal, gatewayCalls, 2, 'a replay must not reach the gateway');
check(assert.equal, store.size, 1);

// 3. The same key for another amount is a bug in the caller, not a replay.
const reused = await chargeCustomer({ ...order, amountCents: 5000 }, deps).then(
  () => assert.fail('a reused key for another amount must reject'),
  (e) => e,
);
check(assert.ok, reused instanceof IdempotencyKeyReuseError);
check(assert.equal, reused.code, 'KEY_REUSED');
check(assert.ok, isSteadfastError(reused));
check(assert.equal, gatewayCalls, 2);

// 4. A permanent failure (card declined, 402) is not retried and frees the key.
const declinedKey = newIdempotencyKey();
let declinedCalls = 0;
const decline = async () => {
  declinedCalls += 1;
  throw Object.assign(new Error('card_declined'), { status: 402 });
};
const declined = await chargeCustomer({ idempotencyKey: declinedKey, amountCents: 100, currency: 'usd' }, { ...deps, gateway: decline }).then(
  () => assert.fail('a decline must reject'),
  (e) => e,
);
check(assert.equal, declined.status, 402);
check(assert.equal, declinedCalls, 1, 'a 402 must not be retried');
check(assert.equal, isTransientError(declined), false);
check(assert.equal, store.peek(declinedKey), undefined, 'a permanent failure frees the key');
check(assert.equal, isTransientError(Object.assign(new Error('x'), { code: 'ECONNRESET' })), true);

check(assert.equal, checks, PLANNED - 1, 'every planned assertion ran');
console.log(`node-esm: ${checks} assertions, Node ${process.versions.node}, steadfast ${version()}, key ${key}`);
