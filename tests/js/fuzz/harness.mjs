// The fuzz suite's shared harness (tests/js/fuzz-*.test.mjs): the case budget (FUZZ_RUNS, FUZZ_SEED),
// the rule every call is held to (behave, or fail with a typed error — never a wasm trap), and the
// arbitraries the properties share (weird numbers and values, option objects, the entry points).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as steadfast from 'steadfast';

const {
  withRetry,
  fullJitter,
  equalJitter,
  decorrelatedJitter,
  CircuitBreaker,
  RetryBudget,
  IdempotencyStore,
  chargeCustomer,
  reconcile,
  resilientFetch,
  createCheckoutClient,
  BreakerRegistry,
  isSteadfastError,
  SteadfastError,
  CircuitOpenError,
  DuplicateRequestError,
  OutcomeUnknownError,
  IdempotencyKeyReuseError,
  IdempotencyStateError,
  RetryBudgetExhaustedError,
  DeadlineExceededError,
  newIdempotencyKey,
  parseRetryAfter,
} = steadfast;

const TOTAL = Number(process.env.FUZZ_RUNS ?? 10_000);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const SHARE = { options: 0.45, breaker: 0.15, store: 0.15, budget: 0.1, retry: 0.1, pipeline: 0.05 };
const runs = (name) => Math.max(1, Math.round(TOTAL * SHARE[name]));
const params = (name) => ({ numRuns: runs(name), seed: SEED, endOnFailure: true });
/**
 * A property's test timeout: it is there to catch a hang, so it grows with the case budget (3 ms a
 * case, about twice the slowest property's rate on a 2-core machine; never under 10 minutes).
 */
const timeoutFor = (name) => Math.max(600_000, runs(name) * 3);
/** Minor findings tolerated by the properties, counted and printed at the end. */
const findings = { clockCoercion: 0, peekInvalidKey: 0 };
/** Cases actually executed, per property (printed at the end). */
const executed = {};
const count = (name) => {
  executed[name] = (executed[name] ?? 0) + 1;
};

// ---------------------------------------------------------------------------------------------
// What may come out of a call

/** Everything user code throws in this file is a UserBoom (or carries one), so pass-through is checkable. */
class UserBoom extends Error {
  constructor(where, fields) {
    super(`user code threw (${where})`);
    this.name = 'UserBoom';
    if (fields) Object.assign(this, fields);
  }
}

const TRAP = /unreachable|memory access out of bounds|RuntimeError|recursive use of an object|null pointer passed to rust|already (mutably )?borrowed|wasm/i;

function isTrap(e) {
  return e instanceof WebAssembly.RuntimeError || (e !== null && typeof e === 'object' && TRAP.test(String(e.message)));
}

/**
 * Assert that `e` is an allowed failure: a trap never is; a UserBoom (or a value in `passThrough`) is;
 * a steadfast error is (a branded TypeError/RangeError only with INVALID_OPTION/INVALID_KEY).
 */
function assertAllowed(e, where, passThrough = []) {
  if (isTrap(e)) assert.fail(`${where}: wasm trap ${e?.constructor?.name}: ${e?.message}`);
  if (e instanceof UserBoom || passThrough.includes(e)) return;
  if (e instanceof TypeError && /revoked/.test(e.message)) return; // a revoked Proxy the user passed
  if (e instanceof TypeError && /^Cannot convert a (Symbol|BigInt) value to a number$/.test(e.message)) {
    // Minor (reported): a user `clock` returning a Symbol/BigInt reaches the wasm boundary unchecked and
    // surfaces as the engine's TypeError (no code). Counted, not failed: it is not a trap and nothing breaks.
    findings.clockCoercion += 1;
    return;
  }
  if (isSteadfastError(e)) {
    if (e instanceof TypeError || e instanceof RangeError) {
      assert.ok(e.code === 'INVALID_OPTION' || e.code === 'INVALID_KEY', `${where}: ${e.name} with code ${e.code}: ${e.message}`);
      assert.match(e.message, /^steadfast: /, `${where}: message`);
    } else {
      assert.ok(e instanceof SteadfastError, `${where}: branded non-SteadfastError ${e?.name}`);
      assert.equal(typeof e.code, 'string');
    }
    return;
  }
  assert.fail(`${where}: untyped error ${e?.constructor?.name ?? typeof e}: ${e?.message ?? String(e)}`);
}

/** Run `f` (sync or async); returns { ok, value } or { ok: false, error } after checking the error. */
async function attempt(where, f, passThrough) {
  try {
    return { ok: true, value: await f() };
  } catch (error) {
    assertAllowed(error, where, passThrough);
    return { ok: false, error };
  }
}

const ok = async () => 'ok';
const VALID_RATE = { windowSize: 10, failureRateThreshold: 0.5, openDurationMs: 1000 };

/** A fresh instance of everything works (the wasm instance was not poisoned). */
async function freshWorks(where) {
  try {
    assert.equal(await withRetry(ok, { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 }), 'ok');
    const b = new CircuitBreaker({ ...VALID_RATE });
    assert.equal(await b.execute(ok), 'ok');
    assert.equal(b.currentState, 'closed');
    const s = new IdempotencyStore();
    const k = newIdempotencyKey();
    assert.equal(await s.run(k, ok), 'ok');
    assert.deepEqual(s.peek(k), { status: 'done', result: 'ok' });
    assert.equal(new RetryBudget({ capacity: 1, refillPerSec: 0 }).tryConsume(), true);
    const d = fullJitter(2, 100, 1000);
    assert.ok(d >= 0 && d < 200);
  } catch (e) {
    assert.fail(`${where}: a fresh instance no longer works: ${e?.constructor?.name}: ${e?.message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Weird values, as plain-data specs (so fast-check can print and shrink them), built per case.

const weirdNumber = fc.oneof(
  fc.constantFrom(
    NaN,
    Infinity,
    -Infinity,
    -0,
    0,
    -1,
    1,
    0.5,
    0.999,
    1.5,
    2,
    3,
    10,
    100,
    1000,
    1001,
    2 ** 31 - 1,
    2 ** 31,
    2 ** 32,
    2 ** 53,
    2 ** 53 + 2,
    1e21,
    1e308,
    -1e308,
    5e-324,
    1e6,
    1e6 + 1,
    4294967295,
    4294967296,
  ),
  fc.double(),
  fc.integer({ min: -5, max: 5000 }),
);
const smallValid = fc.oneof(fc.integer({ min: 0, max: 50 }), fc.double({ min: 0, max: 1, noNaN: true }));
const weirdData = fc.oneof(
  { weight: 4, arbitrary: weirdNumber },
  { weight: 3, arbitrary: smallValid },
  fc.string({ maxLength: 6 }),
  fc.constantFrom(null, undefined, true, false, '', '3', 'NaN', 'full', 'none', 'equal', 'decorrelated', '__proto__', 'done', 'failed'),
  fc.bigInt({ min: -3n, max: 3n }),
  fc.constant(Symbol.for('steadfast.fuzz')),
);
/** A spec: plain data, or a tagged recipe for an object/function built by `build`. */
const valueSpec = fc.oneof(
  { weight: 8, arbitrary: weirdData },
  fc.constantFrom({ $: 'object' }, { $: 'array' }, { $: 'throwingProxy' }, { $: 'revokedProxy' }, { $: 'valueOfThrows' }, { $: 'date' }),
  fc.record({ $: fc.constant('fn'), returns: weirdData, throws: fc.boolean() }),
);

function build(spec, where = 'value') {
  if (spec === null || typeof spec !== 'object' || !('$' in spec)) return spec;
  switch (spec.$) {
    case 'object':
      return {};
    case 'array':
      return [1, 2];
    case 'date':
      return new Date(0);
    case 'throwingProxy':
      return new Proxy(
        {},
        {
          get() {
            throw new UserBoom(`${where} proxy get`);
          },
          has() {
            throw new UserBoom(`${where} proxy has`);
          },
          ownKeys() {
            throw new UserBoom(`${where} proxy ownKeys`);
          },
          getOwnPropertyDescriptor() {
            throw new UserBoom(`${where} proxy descriptor`);
          },
          getPrototypeOf() {
            throw new UserBoom(`${where} proxy prototype`);
          },
        },
      );
    case 'revokedProxy': {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    }
    case 'valueOfThrows':
      return {
        valueOf() {
          throw new UserBoom(`${where} valueOf`);
        },
        toString() {
          throw new UserBoom(`${where} toString`);
        },
      };
    case 'fn':
      return () => {
        if (spec.throws) throw new UserBoom(`${where} callback`);
        return spec.returns;
      };
    default:
      throw new Error(`bad spec ${spec.$}`);
  }
}

/** An options object: some keys (valid or weird values), some getters that throw, maybe a Proxy, or a weird value itself. */
function optionsSpec(keys, valid = {}) {
  const keyValue = (k) => (valid[k] ? fc.oneof({ weight: 2, arbitrary: valid[k] }, valueSpec) : valueSpec);
  return fc.record({
    whole: fc.option(valueSpec, { freq: 8, nil: null }),
    values: fc.record(Object.fromEntries(keys.map((k) => [k, keyValue(k)])), { requiredKeys: [] }),
    throwingGetters: fc.subarray(keys, { maxLength: 1 }),
    proxy: fc.constantFrom(null, null, null, null, null, null, 'getThrows', 'getWeird', 'hasThrows', 'ownKeysThrows'),
  });
}

function buildOptions(spec, where) {
  if (spec.whole !== null) return build(spec.whole, where);
  const o = {};
  for (const [k, v] of Object.entries(spec.values)) o[k] = build(v, `${where}.${k}`);
  for (const k of spec.throwingGetters) {
    Object.defineProperty(o, k, {
      enumerable: true,
      configurable: true,
      get() {
        throw new UserBoom(`${where}.${k} getter`);
      },
    });
  }
  switch (spec.proxy) {
    case 'getThrows':
      return new Proxy(o, {
        get(t, k, r) {
          if (typeof k === 'string' && k in t) throw new UserBoom(`${where} proxy get ${k}`);
          return Reflect.get(t, k, r);
        },
      });
    case 'getWeird':
      return new Proxy(o, { get: (t, k) => (typeof k === 'string' ? NaN : undefined) });
    case 'hasThrows':
      return new Proxy(o, {
        has() {
          throw new UserBoom(`${where} proxy has`);
        },
      });
    case 'ownKeysThrows':
      return new Proxy(o, {
        ownKeys() {
          throw new UserBoom(`${where} proxy ownKeys`);
        },
      });
    default:
      return o;
  }
}

// ---------------------------------------------------------------------------------------------
// Property 1: every constructor and entry point with random options.

const int = (min, max) => fc.integer({ min, max });
const TARGETS = {
  CircuitBreaker: {
    keys: [
      'windowSize',
      'failureRateThreshold',
      'minimumCalls',
      'failureThreshold',
      'openDurationMs',
      'probesToClose',
      'clock',
      'onStateChange',
      'isFailure',
      'state',
    ],
    valid: {
      windowSize: int(1, 20),
      failureRateThreshold: fc.double({ min: 0, max: 1, noNaN: true }),
      minimumCalls: int(1, 20),
      failureThreshold: int(1, 5),
      openDurationMs: int(0, 1000),
      probesToClose: int(1, 3),
    },
    async call(o) {
      const b = new CircuitBreaker(o);
      return b;
    },
    async use(b) {
      await b.execute(ok).catch((e) => assertAllowed(e, 'breaker.execute'));
      await b.execute(() => Promise.reject(new UserBoom('fn'))).catch((e) => assertAllowed(e, 'breaker.execute'));
      assert.ok(['closed', 'open', 'half-open', 'isolated'].includes(b.currentState));
      const snap = JSON.parse(JSON.stringify(b.toJSON()));
      assert.equal(snap.version, 1);
    },
  },
  RetryBudget: {
    keys: ['capacity', 'refillPerSec', 'ratio', 'minRetriesPerSec', 'windowMs', 'clock'],
    valid: {
      capacity: int(0, 10),
      refillPerSec: int(0, 10),
      ratio: fc.double({ min: 0, max: 2, noNaN: true }),
      minRetriesPerSec: int(0, 10),
      windowMs: int(1, 10_000),
    },
    call: async (o) => new RetryBudget(o),
    async use(b) {
      b.recordRequest();
      const a = b.available;
      assert.ok(typeof a === 'number' && a >= 0 && Number.isFinite(a), `available ${a}`);
      assert.equal(typeof b.tryConsume(), 'boolean');
    },
  },
  RetryQuota: {
    keys: ['preset', 'capacity', 'timeoutCost', 'throttledCost', 'serverErrorCost', 'successRefund'],
    valid: {
      preset: fc.constantFrom('steadfast', 'aws'),
      capacity: int(1, 100),
      timeoutCost: int(0, 20),
      throttledCost: int(0, 20),
      serverErrorCost: int(0, 20),
      successRefund: int(0, 5),
    },
    call: async (o) => new steadfast.RetryQuota(o),
    async use(q) {
      assert.equal(typeof q.tryConsume({ status: 429 }), 'boolean');
      assert.equal(typeof q.tryConsume(new Error('no status')), 'boolean');
      q.recordSuccess();
      q.recordSuccess(3);
      const a = q.available;
      assert.ok(Number.isInteger(a) && a >= 0 && a <= q.capacity, `available ${a} of ${q.capacity}`);
    },
  },
  RateLimiter: {
    keys: ['preset', 'beta', 'scaleConstant', 'smooth', 'minRatePerSec', 'minCapacity', 'increasePerSec', 'maxHoldMs', 'clock'],
    valid: {
      preset: fc.constantFrom('cubic', 'aws', 'aimd'),
      beta: fc.double({ min: 0.01, max: 0.99, noNaN: true }),
      minRatePerSec: int(1, 100),
      maxHoldMs: int(0, 1000),
    },
    call: async (o) => new steadfast.RateLimiter(o),
    async use(l) {
      l.record({ throttled: true, retryAfterMs: 0 });
      l.record({ throttled: false, sentAtMs: -1e300 });
      assert.ok(Number.isFinite(l.ratePerSec) && l.ratePerSec > 0, `rate ${l.ratePerSec}`);
      assert.equal(typeof l.enabled, 'boolean');
    },
  },
  IdempotencyStore: {
    keys: ['ttlMs', 'clock', 'isTransient'],
    valid: { ttlMs: int(1, 1e6) },
    call: async (o) => new IdempotencyStore(o),
    async use(s) {
      const k = newIdempotencyKey();
      const r = await attempt('store.run', () => s.run(k, ok));
      if (r.ok) assert.equal(r.value, 'ok');
      await attempt('store.run transient', () => s.run(newIdempotencyKey(), () => Promise.reject(new UserBoom('fn', { status: 503 }))));
      for (const key of s.unknownKeys()) await attempt('store.resolve', () => s.resolve(key, { status: 'failed' }));
      assert.equal(typeof s.size, 'number');
    },
  },
  withRetry: {
    keys: ['maxAttempts', 'baseDelayMs', 'maxDelayMs', 'maxElapsedMs', 'jitter', 'isRetryable', 'onRetry', 'random', 'clock', 'signal', 'budget'],
    valid: {
      maxAttempts: int(1, 3),
      baseDelayMs: int(0, 1),
      maxDelayMs: int(0, 2),
      maxElapsedMs: int(1, 50),
      jitter: fc.constantFrom('full', 'equal', 'decorrelated', 'none'),
    },
    // The function succeeds at once, so an accepted policy never sleeps here (retries are property 5).
    call: async (o) =>
      withRetry(async (ctx) => {
        assert.equal(ctx.attempt, 1);
        return 'ok';
      }, o),
  },
  jitter: {
    keys: ['kind', 'a', 'base', 'max'],
    valid: { kind: int(0, 2), a: int(1, 40), base: int(0, 1000), max: int(0, 100_000) },
    async call(o) {
      const fns = [fullJitter, equalJitter, decorrelatedJitter];
      const f = fns[typeof o?.kind === 'number' && o.kind >= 0 && o.kind <= 2 ? o.kind | 0 : 0];
      const d = f(o?.a, o?.base, o?.max);
      assert.ok(typeof d === 'number' && Number.isFinite(d) && d >= 0, `delay ${d}`);
      if (typeof o.max === 'number') assert.ok(d <= o.max, `delay ${d} > max ${o.max}`);
      return d;
    },
  },
  chargeCustomer: {
    keys: ['idempotencyKey', 'amountCents', 'currency', 'store', 'breaker', 'gateway', 'policy'],
    valid: { idempotencyKey: fc.constantFrom('k1', 'order-42'), amountCents: int(1, 10_000), currency: fc.constantFrom('usd', 'eur') },
    async call(o) {
      // Valid deps, overridden by whichever deps the fuzzer generated (each key is present in about half the cases).
      const deps = {
        store: new IdempotencyStore(),
        breaker: new CircuitBreaker({ ...VALID_RATE }),
        gateway: async (c) => ({ reference: 'r', amountCents: c.amountCents }),
        policy: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
      };
      const mixed = o !== null && typeof o === 'object' ? o : {};
      return chargeCustomer(o, { ...deps, ...pick(mixed, ['store', 'breaker', 'gateway', 'policy']) });
    },
  },
  reconcile: {
    keys: ['concurrency', 'lookup', 'store'],
    valid: { concurrency: int(1, 10) },
    async call(o) {
      const store = new IdempotencyStore();
      await store.run('k1', () => Promise.reject(new UserBoom('fn', { status: 503 }))).catch(() => {});
      const safe = o !== null && typeof o === 'object' ? o : {};
      const lookupSpec = has(safe, 'lookup') ? safe.lookup : () => ({ status: 'failed' });
      const report = await reconcile(has(safe, 'store') ? safe.store : store, lookupSpec, o);
      assert.equal(typeof report.checked, 'number');
      assert.equal(report.checked, report.done + report.failed + report.deferred + report.stillUnknown);
      for (const { error } of report.errors) assertAllowed(error, 'reconcile report error');
      return report;
    },
  },
  storeCalls: {
    keys: ['key', 'fn', 'fingerprint', 'outcome', 'which'],
    valid: { key: fc.constantFrom('k1', 'a'.repeat(255), 'a'.repeat(256), 'ünï', 'with space', '\u0000', ''), which: int(0, 2) },
    async call(o) {
      const s = new IdempotencyStore();
      const which = typeof o?.which === 'number' ? o.which : 0;
      if (which === 0) return s.run(o?.key, o?.fn ?? ok, has(o, 'fingerprint') ? { fingerprint: o.fingerprint } : o?.fn);
      if (which === 1) return s.peek(o?.key);
      return s.resolve(o?.key, o?.outcome);
    },
  },
  breakerCalls: {
    keys: ['fn', 'fallback', 'untilMs', 'which'],
    valid: { which: int(0, 1), untilMs: int(0, 1e6) },
    async call(o) {
      const b = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 1000 });
      if (o?.which === 1) {
        b.openUntil(o?.untilMs);
        assert.ok(['closed', 'open', 'half-open'].includes(b.currentState));
        return b;
      }
      return b.execute(o?.fn, o?.fallback);
    },
  },
  resilientFetch: {
    keys: ['retry', 'attemptTimeoutMs', 'deadlineMs', 'breaker', 'budget', 'idempotencyKey', 'onRetry'],
    valid: {
      attemptTimeoutMs: int(1, 1000),
      deadlineMs: int(1, 1000),
      idempotencyKey: fc.constantFrom('auto', 'k1'),
      breaker: fc.constant(false),
      budget: fc.constant(false),
    },
    async call(o) {
      // A real fetch is never made: the fuzzed options get an in-process fetch that answers 200.
      const fetch = async () => new Response('{}', { status: 200 });
      // Inject it without touching the fuzzed object (it may be a hostile Proxy): inherit from it.
      const opts = o === undefined ? { fetch } : o !== null && typeof o === 'object' ? Object.assign(Object.create(o), { fetch }) : o;
      const res = await resilientFetch('http://127.0.0.1:9/x', { method: 'POST' }, opts);
      return res.status;
    },
  },
  createCheckoutClient: {
    keys: ['endpoint', 'secondaryEndpoint', 'attemptTimeoutMs', 'deadlineMs', 'retry', 'breaker', 'budget'],
    valid: { endpoint: fc.constantFrom('http://127.0.0.1:9/v1/charges') },
    call: async (o) => createCheckoutClient(o),
  },
};
const TARGET_NAMES = Object.keys(TARGETS);

function has(o, k) {
  try {
    return o !== null && typeof o === 'object' && Object.prototype.hasOwnProperty.call(o, k);
  } catch {
    return false;
  }
}
function pick(o, keys) {
  const out = {};
  for (const k of keys) if (has(o, k)) out[k] = o[k];
  return out;
}

/** Print what ran, and fail unless the properties named ran their share of the FUZZ_RUNS budget. */
function assertExecuted(names) {
  for (const name of names) {
    const ran = executed[name] ?? 0;
    console.log(`fuzz ${name}: ${ran.toLocaleString('en-US')} cases executed; minor findings tolerated: ${JSON.stringify(findings)}`);
    assert.ok(ran >= runs(name) * 0.99, `only ${ran} ${name} cases ran, wanted ${runs(name)}`);
  }
}

export {
  UserBoom,
  BreakerRegistry,
  CircuitBreaker,
  CircuitOpenError,
  DeadlineExceededError,
  DuplicateRequestError,
  IdempotencyKeyReuseError,
  IdempotencyStateError,
  IdempotencyStore,
  OutcomeUnknownError,
  RetryBudget,
  RetryBudgetExhaustedError,
  SEED,
  SHARE,
  SteadfastError,
  TARGETS,
  TARGET_NAMES,
  TOTAL,
  TRAP,
  VALID_RATE,
  assert,
  assertAllowed,
  assertExecuted,
  attempt,
  build,
  buildOptions,
  chargeCustomer,
  count,
  createCheckoutClient,
  decorrelatedJitter,
  equalJitter,
  executed,
  fc,
  findings,
  freshWorks,
  fullJitter,
  has,
  int,
  isSteadfastError,
  isTrap,
  newIdempotencyKey,
  ok,
  optionsSpec,
  params,
  parseRetryAfter,
  pick,
  reconcile,
  resilientFetch,
  runs,
  timeoutFor,
  smallValid,
  steadfast,
  valueSpec,
  weirdData,
  weirdNumber,
  withRetry,
};
