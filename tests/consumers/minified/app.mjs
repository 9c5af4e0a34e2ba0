import assert from 'node:assert/strict';
import * as s from 'steadfast';

let n = 0;
const eq = (a, b, m) => {
  assert.equal(a, b, m);
  n += 1;
};

await s.ready;
const breaker = new s.CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => {});
const refused = await breaker.execute(() => 'never').catch((e) => e);
eq(refused.name, 'CircuitOpenError', 'name of a breaker rejection');
eq(String(refused).startsWith('CircuitOpenError: '), true, 'toString');
eq(refused instanceof s.CircuitOpenError && s.isSteadfastError(refused, 'CIRCUIT_OPEN'), true, 'instanceof and brand');
refused.requestId = 'req-1';
eq((await breaker.execute(() => 'never').catch((e) => e)).requestId, undefined, 'fresh per rejection');

const cases = [
  [new s.SteadfastError('x', 'INVALID_OPTION'), 'SteadfastError'],
  [new s.DuplicateRequestError('k', 0), 'DuplicateRequestError'],
  [new s.OutcomeUnknownError('k', 0), 'OutcomeUnknownError'],
  [new s.IdempotencyKeyReuseError('k'), 'IdempotencyKeyReuseError'],
  [new s.RetryBudgetExhaustedError(new Error('x'), 1), 'RetryBudgetExhaustedError'],
  [new s.DeadlineExceededError(1, new Error('x'), 1), 'DeadlineExceededError'],
  [new s.IdempotencyStateError('k', 'KEY_NOT_FOUND', 'x'), 'IdempotencyStateError'],
  [new s.CheckoutRequestError(400, {}), 'CheckoutRequestError'],
  [new s.StateStoreUnavailableError('begin', 'x'), 'StateStoreUnavailableError'],
  [new s.WasmUnavailableError(new Error('x')), 'WasmUnavailableError'],
  [new s.PermanentError(new Error('x')), 'PermanentError'],
  [new s.TimeoutError(5), 'TimeoutError'],
  [new s.BulkheadRejectedError(1, 0), 'BulkheadRejectedError'],
];
for (const [error, name] of cases) eq(error.name, name, `${name} after minification`);
const timedOut = await s
  .timeout(1)
  .execute(() => new Promise(() => {}))
  .catch((e) => e);
eq(timedOut.name, 'TimeoutError', 'a thrown TimeoutError');
console.log(`minified: ${n} assertions`);
