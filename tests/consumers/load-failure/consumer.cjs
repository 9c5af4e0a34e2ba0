// require(esm) of a package whose wasm is broken: require() itself must not throw.
const assert = require('node:assert/strict');
let n = 0;
const s = require('steadfast');
n += 1;
s.ready.then(
  () => assert.fail('ready resolved with a broken wasm'),
  (e) => {
    assert.ok(e instanceof s.WasmUnavailableError);
    n += 1;
    const breaker = new s.CircuitBreaker({ failureThreshold: 1, openDurationMs: 1 }); // construction never needs the core
    assert.throws(() => breaker.currentState, s.WasmUnavailableError);
    n += 1;
    console.log(`load-failure (require): ${n} assertions`);
  },
);
