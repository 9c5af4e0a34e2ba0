import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

let n = 0;
const ok = (value, message) => {
  assert.ok(value, message);
  n += 1;
};

// The import itself must succeed although the .wasm is broken.
const s = await import('steadfast');
ok(true, 'import resolved');

const failure = await s.ready.then(
  () => undefined,
  (e) => e,
);
ok(failure instanceof s.WasmUnavailableError, `ready rejects with WasmUnavailableError, got ${failure}`);
ok(failure.code === 'WASM_UNAVAILABLE' && failure.name === 'WasmUnavailableError' && failure.reason === 'load', 'code, name, reason');
ok(failure.cause instanceof WebAssembly.CompileError, 'the cause is the CompileError');
ok(/steadfast_core_bg\.wasm/.test(failure.message), `the message says what to check: ${failure.message}`);
ok(s.isSteadfastError(failure, 'WASM_UNAVAILABLE'), 'isSteadfastError(e, code)');

const thrown = (fn) => {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
};
for (const [what, call] of [
  ['new CircuitBreaker', () => new s.CircuitBreaker({ failureThreshold: 1, openDurationMs: 1 })],
  ['new RetryBudget', () => new s.RetryBudget({ capacity: 1, refillPerSec: 1 })],
  ['new IdempotencyStore', () => new s.IdempotencyStore()],
  ['fullJitter', () => s.fullJitter(1, 10, 100)],
  ['newIdempotencyKey', () => s.newIdempotencyKey()],
  ['isTransientError', () => s.isTransientError(new Error('x'))],
  ['parseRetryAfter', () => s.parseRetryAfter('1', 0)],
  ['version', () => s.version()],
  ['seedRandom', () => s.seedRandom(1)],
]) {
  const e = thrown(call);
  ok(e instanceof s.WasmUnavailableError && e !== failure, `${what} throws a fresh WasmUnavailableError, got ${e}`);
  ok(e.message.includes(what.replace('new ', '')) || e.message.includes('needs the WebAssembly core'), `${what}: the message names the call: ${e.message}`);
}
const rejected = await s
  .withRetry(() => 1)
  .then(
    () => undefined,
    (e) => e,
  );
ok(rejected instanceof s.WasmUnavailableError, `withRetry rejects (never throws) with WasmUnavailableError, got ${rejected}`);

// What does not need the core keeps working.
ok(new s.CircuitOpenError(5).retryAfterMs === 5 && new s.CircuitOpenError().name === 'CircuitOpenError', 'error classes work');

// init(bytes) recovers.
await s.init(readFileSync('good.wasm'));
const breaker = new s.CircuitBreaker({ failureThreshold: 1, openDurationMs: 1 });
ok((await breaker.execute(() => 'ok')) === 'ok', 'after init(bytes) the core works');
ok(/^\d+\.\d+\.\d+/.test(s.version()), 'version() after init');
await s.init();
ok(true, 'init() again is a no-op once loaded');

console.log(`load-failure: ${n} assertions`);
