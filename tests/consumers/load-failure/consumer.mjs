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
// Construction never needs the core: a module-level breaker, budget, store or client must not take
// the program down. Their first use reports the same typed error: sync members throw, async ones reject.
const early = {
  breaker: new s.CircuitBreaker({ failureThreshold: 1, openDurationMs: 1 }),
  budget: new s.RetryBudget({ capacity: 1, refillPerSec: 1 }),
  store: new s.IdempotencyStore(),
  registry: new s.BreakerRegistry(),
  limiter: new s.RateLimiter(),
  quota: new s.RetryQuota(),
  shared: new s.SharedCircuitBreaker({ name: 'load-failure', failureThreshold: 1, openDurationMs: 1 }),
  sharedStore: new s.SharedIdempotencyStore(),
  client: s.createCheckoutClient({ endpoint: 'http://127.0.0.1:9/charges', fetch: () => assert.fail('nothing may be sent without the core') }),
};
ok(early.breaker instanceof s.CircuitBreaker && early.store instanceof s.IdempotencyStore, 'made before the core: still instanceof their class');
for (const [what, call] of [
  ['CircuitBreaker.currentState', () => early.breaker.currentState],
  ['RetryBudget.tryConsume', () => early.budget.tryConsume()],
  ['IdempotencyStore.peek', () => early.store.peek('k')],
  ['BreakerRegistry.get', () => early.registry.get('https://a.example')],
  ['RetryQuota.available', () => early.quota.available],
  ['fullJitter', () => s.fullJitter(1, 10, 100)],
  ['newIdempotencyKey', () => s.newIdempotencyKey()],
  ['isTransientError', () => s.isTransientError(new Error('x'))],
  ['parseRetryAfter', () => s.parseRetryAfter('1', 0)],
  ['version', () => s.version()],
  ['seedRandom', () => s.seedRandom(1)],
]) {
  const e = thrown(call);
  ok(e instanceof s.WasmUnavailableError && e !== failure, `${what} throws a fresh WasmUnavailableError, got ${e}`);
  ok(e.message.includes(what) && e.reason === 'load', `${what}: the message names the call: ${e.message}`);
}
for (const [what, call] of [
  ['CircuitBreaker.execute', () => early.breaker.execute(() => assert.fail('run without the core'))],
  ['IdempotencyStore.run', () => early.store.run('k', () => assert.fail('run without the core'))],
  ['RateLimiter.acquire', () => early.limiter.acquire()],
  ['IdempotencyStore.resubmit', () => early.store.resubmit('k', () => assert.fail('run without the core'))],
  ['SharedCircuitBreaker.execute', () => early.shared.execute(() => assert.fail('run without the core'))],
  ['SharedIdempotencyStore.run', () => early.sharedStore.run('k', () => assert.fail('run without the core'))],
]) {
  const e = await call().then(
    () => undefined,
    (x) => x,
  );
  ok(e instanceof s.WasmUnavailableError && e.message.includes(what), `${what} rejects (never throws) with WasmUnavailableError, got ${e}`);
}
const outcome = await early.client.charge({ amountCents: 500, currency: 'eur' }, { idempotencyKey: 'order-1' });
ok(
  outcome.status === 'unavailable' && outcome.reason === 'wasm' && outcome.key === 'order-1' && outcome.retryAfterMs > 0,
  `charge() without the core resolves unavailable/wasm (nothing sent, the key is free): ${JSON.stringify(outcome)}`,
);
const badCharge = await early.client.charge({ amountCents: -1, currency: 'eur' }).then(
  () => undefined,
  (x) => x,
);
ok(badCharge instanceof RangeError && /amountCents/.test(badCharge.message), `a bad charge is still a RangeError naming the field: ${badCharge}`);
// What does not need the core keeps working.
ok(new s.CircuitOpenError(5).retryAfterMs === 5 && new s.CircuitOpenError().name === 'CircuitOpenError', 'error classes work');

// init(bytes) recovers; `ready` follows it (it was rejected by the first load).
await s.init(readFileSync('good.wasm'));
ok(
  (await s.ready.then(
    () => 'resolved',
    (e) => e,
  )) === 'resolved',
  'after a successful init(bytes), ready resolves',
);
const breaker = new s.CircuitBreaker({ failureThreshold: 1, openDurationMs: 1 });
ok((await breaker.execute(() => 'ok')) === 'ok', 'after init(bytes) the core works');
ok((await early.breaker.execute(() => 'early')) === 'early' && early.breaker.currentState === 'closed', 'a breaker made before the core works once it loaded');
ok(early.budget.tryConsume() === true && early.budget.tryConsume() === false, 'a budget made before the core keeps its options (capacity 1)');
ok((await early.shared.execute(() => 'shared')) === 'shared', 'a shared breaker made before the core works once it loaded');
ok((await early.sharedStore.run('k', () => 'once')) === 'once', 'a shared store made before the core works once it loaded');
ok((await early.store.run('k', () => 'once')) === 'once' && (await early.store.run('k', () => 'twice')) === 'once', 'a store made before the core replays');
ok(/^\d+\.\d+\.\d+/.test(s.version()), 'version() after init');
await s.init();
ok(true, 'init() again is a no-op once loaded');

console.log(`load-failure: ${n} assertions`);
