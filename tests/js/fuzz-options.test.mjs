// Fuzzing the JS boundary with fast-check: random option objects (NaN, ±Infinity, -0, huge numbers,
// strings, bigints, symbols, objects, arrays, missing fields, getters that throw, Proxies), random call
// sequences over CircuitBreaker / IdempotencyStore / RetryBudget / withRetry (deterministic clocks and
// random), callbacks that throw or re-enter the breaker/store, and the chargeCustomer/reconcile pipeline.
//
// Every call must either behave (checked against a small model where there is one) or fail with a typed
// error: TypeError/RangeError with code INVALID_OPTION/INVALID_KEY, a steadfast error (isSteadfastError),
// or the user's own thrown value passed through unchanged. Never a wasm trap (WebAssembly.RuntimeError,
// "unreachable", "memory access out of bounds", wasm-bindgen's "recursive use of an object"). After
// every case, the same instance (when there is one) and a fresh one must still work.
//
// FUZZ_RUNS (default 10,000) is the total number of cases, split over the properties below;
// FUZZ_SEED fixes fast-check's seed. `make soak` runs FUZZ_RUNS=1000000.
// Bugs this fuzzing found are fixed and covered by regression tests (README: Guarantees).
//
// This file: property 1, every entry point with random option objects. The harness, the budget and
// the arbitraries the fuzz-*.test.mjs files share: ./fuzz/harness.mjs.
import { test } from 'node:test';
import { TARGETS, TARGET_NAMES, assertExecuted, attempt, buildOptions, count, fc, freshWorks, optionsSpec, params, runs, timeoutFor } from './fuzz/harness.mjs';

test(`fuzz 1: every entry point with random option objects (${runs('options')} cases)`, { timeout: timeoutFor('options') }, async () => {
  const arb = fc.oneof(...TARGET_NAMES.map((name) => fc.record({ target: fc.constant(name), spec: optionsSpec(TARGETS[name].keys, TARGETS[name].valid) })));
  await fc.assert(
    fc.asyncProperty(arb, async ({ target, spec }) => {
      count('options');
      const t = TARGETS[target];
      const where = `${target}(${JSON.stringify(spec, (k, v) => (typeof v === 'bigint' ? `${v}n` : typeof v === 'symbol' ? String(v) : v))})`;
      const r = await attempt(where, () => t.call(buildOptions(spec, target)));
      // The same instance keeps working (a hostile clock or callback may still throw the user's error).
      if (r.ok && t.use !== undefined) await attempt(`${where} then use`, () => t.use(r.value));
      await freshWorks(where);
    }),
    params('options'),
  );
});

test('fuzz: cases executed', () => assertExecuted(['options']));
