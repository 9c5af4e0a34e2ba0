// A Node 24 CommonJS consumer: `require('steadfast')` of an ES module package (require(esm), which works
// because the Node loader has no top-level await). withRetry over a transient failure, and a
// CircuitBreaker that trips, refuses without calling, serves a fallback and closes after a probe.
// Prints "node-cjs: N assertions"; exits non-zero on the first failed assertion or a wrong count.
'use strict';
const assert = require('node:assert/strict');
const path = require('node:path');
const { withRetry, CircuitBreaker, CircuitOpenError, isSteadfastError, version } = require('steadfast');

const PLANNED = 20;
let checks = 0;
const check = (fn, ...args) => {
  fn(...args);
  checks += 1;
};

async function main() {
  check(assert.equal, require.resolve('steadfast'), path.join(__dirname, 'node_modules', 'steadfast', 'index.node.js'));
  check(assert.equal, typeof withRetry, 'function');
  check(assert.equal, require('steadfast/package.json').type, 'module', 'this really is require() of ESM');

  // withRetry: 503 once, then success; the second attempt reports attempt 2.
  const seen = [];
  const retries = [];
  const value = await withRetry(
    async ({ attempt }) => {
      seen.push(attempt);
      if (attempt === 1) throw Object.assign(new Error('Service Unavailable'), { status: 503 });
      return 'ok';
    },
    { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 4, onRetry: (info) => retries.push(info) },
  );
  check(assert.equal, value, 'ok');
  check(assert.deepEqual, seen, [1, 2]);
  check(assert.equal, retries.length, 1);
  check(assert.equal, retries[0].error.status, 503);
  check(assert.ok, retries[0].delayMs >= 0 && retries[0].delayMs <= 4, `delay ${retries[0].delayMs} within [0, 4]`);

  // CircuitBreaker, consecutive shape, on an injected clock.
  let now = 1_000;
  const transitions = [];
  const breaker = new CircuitBreaker({
    failureThreshold: 2,
    openDurationMs: 10_000,
    clock: () => now,
    onStateChange: (s) => transitions.push(s),
  });
  const boom = () => Promise.reject(new Error('gateway down'));
  for (let i = 0; i < 2; i++) await breaker.execute(boom).catch(() => {});
  check(assert.equal, breaker.currentState, 'open');

  let called = false;
  const refused = await breaker
    .execute(() => {
      called = true;
    })
    .then(
      () => assert.fail('must reject'),
      (e) => e,
    );
  check(assert.ok, refused instanceof CircuitOpenError);
  check(assert.equal, refused.code, 'CIRCUIT_OPEN');
  check(assert.equal, refused.retryAfterMs, 10_000);
  check(assert.ok, isSteadfastError(refused));
  check(assert.equal, called, false, 'an open circuit must not call fn');
  check(
    assert.equal,
    await breaker.execute(
      () => 'live',
      () => 'cached',
    ),
    'cached',
  );

  now += 10_000;
  check(assert.equal, breaker.currentState, 'half-open');
  check(assert.equal, await breaker.execute(() => 'probe ok'), 'probe ok');
  check(assert.equal, breaker.currentState, 'closed');
  check(assert.deepEqual, transitions, ['open', 'half-open', 'closed']);

  check(assert.equal, checks, PLANNED - 1, 'every planned assertion ran');
  console.log(`node-cjs: ${checks} assertions, Node ${process.versions.node}, steadfast ${version()}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
