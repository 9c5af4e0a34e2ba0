// Every bad option, the error classes, isSteadfastError (also across two copies of the package) and
// isTransientError — through the built package imported by name.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import * as steadfast from 'steadfast';

const {
  withRetry,
  fullJitter,
  equalJitter,
  decorrelatedJitter,
  CircuitBreaker,
  RetryBudget,
  SharedIdempotencyStore,
  IdempotencyStore,
  isSteadfastError,
  isTransientError,
  parseRetryAfter,
  version,
  SteadfastError,
  CircuitOpenError,
  DuplicateRequestError,
  OutcomeUnknownError,
  IdempotencyKeyReuseError,
  RetryBudgetExhaustedError,
  DeadlineExceededError,
  IdempotencyStateError,
  newIdempotencyKey,
} = steadfast;

const P = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 100 };
const RATE = { windowSize: 10, failureRateThreshold: 0.5, openDurationMs: 1000 };
const CONS = { failureThreshold: 3, openDurationMs: 1000 };
const ok = async () => 'ok';
const retry = (policy) => withRetry(ok, policy);

/** Everything works after a bad option: the wasm instance was not poisoned by a trap. */
async function stillWorks() {
  assert.equal(await withRetry(ok, { ...P }), 'ok');
  const b = new CircuitBreaker({ ...RATE });
  assert.equal(await b.execute(ok), 'ok');
  const s = new IdempotencyStore();
  assert.equal(await s.run(newIdempotencyKey(), ok), 'ok');
  assert.equal(new RetryBudget({ capacity: 1, refillPerSec: 0 }).tryConsume(), true);
  const d = fullJitter(2, 100, 1000);
  assert.ok(d >= 0 && d < 200);
}

// [call, expected class, option name, how the value is rendered in the message]
const cases = [
  // withRetry
  [() => retry(null), TypeError, 'options', 'null'],
  // (no policy at all is DEFAULT_RETRY_POLICY: api-policies.test.mjs)
  [() => retry('fast'), TypeError, 'options', '"fast"'],
  [() => withRetry('not a fn', { ...P }), TypeError, 'fn', '"not a fn"'],
  [() => retry({ ...P, maxAttempts: '3' }), TypeError, 'maxAttempts', '"3"'],
  // A misspelt name would otherwise take the default silently; another library's name gets its hint.
  [() => retry({ maxAttemps: 5 }), TypeError, 'maxAttemps', '5'],
  [() => retry({ maxattempts: 5 }), TypeError, 'maxattempts', '5'],
  [() => retry({ baseDelay: 200 }), TypeError, 'baseDelay', '200'],
  [() => retry({ retries: 5 }), TypeError, 'retries', '5'],
  [() => retry({ minTimeout: 200 }), TypeError, 'minTimeout', '200'],
  [() => steadfast.resilientFetch('https://x.example/', undefined, { retry: { maxDelay: 5 } }), TypeError, 'maxDelay', '5'],
  [() => retry({ ...P, maxAttempts: 3n }), TypeError, 'maxAttempts', '3n'],
  [() => retry({ ...P, maxAttempts: 0 }), RangeError, 'maxAttempts', '0'],
  [() => retry({ ...P, maxAttempts: -1 }), RangeError, 'maxAttempts', '-1'],
  [() => retry({ ...P, maxAttempts: 1.5 }), RangeError, 'maxAttempts', '1.5'],
  [() => retry({ ...P, maxAttempts: 1001 }), RangeError, 'maxAttempts', '1001'],
  [() => retry({ ...P, maxAttempts: NaN }), RangeError, 'maxAttempts', 'NaN'],
  [() => retry({ ...P, maxAttempts: Infinity }), RangeError, 'maxAttempts', 'Infinity'],
  [() => retry({ ...P, baseDelayMs: '10' }), TypeError, 'baseDelayMs', '"10"'],
  [() => retry({ ...P, baseDelayMs: -1 }), RangeError, 'baseDelayMs', '-1'],
  [() => retry({ ...P, baseDelayMs: NaN }), RangeError, 'baseDelayMs', 'NaN'],
  [() => retry({ ...P, baseDelayMs: Infinity, maxDelayMs: Infinity }), RangeError, 'baseDelayMs', 'Infinity'],
  [() => retry({ ...P, maxDelayMs: null }), TypeError, 'maxDelayMs', 'null'],
  [() => retry({ ...P, maxDelayMs: -5 }), RangeError, 'maxDelayMs', '-5'],
  [() => retry({ ...P, maxDelayMs: NaN }), RangeError, 'maxDelayMs', 'NaN'],
  [() => retry({ ...P, baseDelayMs: 500, maxDelayMs: 100 }), RangeError, 'maxDelayMs', '100'],
  [() => retry({ ...P, jitter: 'bogus' }), RangeError, 'jitter', '"bogus"'],
  [() => retry({ ...P, jitter: 'Full' }), RangeError, 'jitter', '"Full"'],
  [() => retry({ ...P, jitter: 1 }), TypeError, 'jitter', '1'],
  [() => retry({ ...P, jitter: null }), TypeError, 'jitter', 'null'],
  [() => retry({ ...P, maxElapsedMs: '1000' }), TypeError, 'maxElapsedMs', '"1000"'],
  [() => retry({ ...P, maxElapsedMs: -1 }), RangeError, 'maxElapsedMs', '-1'],
  [() => retry({ ...P, maxElapsedMs: NaN }), RangeError, 'maxElapsedMs', 'NaN'],
  [() => retry({ ...P, isRetryable: true }), TypeError, 'isRetryable', 'true'],
  [() => retry({ ...P, onRetry: 'log' }), TypeError, 'onRetry', '"log"'],
  [() => retry({ ...P, random: 0.5 }), TypeError, 'random', '0.5'],
  [() => retry({ ...P, clock: 123 }), TypeError, 'clock', '123'],
  [() => retry({ ...P, signal: {} }), TypeError, 'signal', 'an object'],
  [() => retry({ ...P, signal: 'abort' }), TypeError, 'signal', '"abort"'],
  [() => retry({ ...P, budget: {} }), TypeError, 'budget', 'an object'],
  [() => retry({ ...P, budget: { capacity: 1, refillPerSec: 1 } }), TypeError, 'budget', 'an object'],
  // jitter functions
  [() => fullJitter(0, 100, 1000), RangeError, 'attempt', '0'],
  [() => fullJitter(1.5, 100, 1000), RangeError, 'attempt', '1.5'],
  [() => fullJitter('1', 100, 1000), TypeError, 'attempt', '"1"'],
  [() => fullJitter(1, -1, 1000), RangeError, 'baseDelayMs', '-1'],
  [() => fullJitter(1, 100, 10), RangeError, 'maxDelayMs', '10'],
  [() => equalJitter(1, NaN, 1000), RangeError, 'baseDelayMs', 'NaN'],
  [() => equalJitter(1, 1, undefined), TypeError, 'maxDelayMs', 'undefined'],
  [() => decorrelatedJitter(-1, 100, 1000), RangeError, 'previousDelayMs', '-1'],
  [() => decorrelatedJitter(NaN, 100, 1000), RangeError, 'previousDelayMs', 'NaN'],
  [() => decorrelatedJitter(null, 100, 1000), TypeError, 'previousDelayMs', 'null'],
  // CircuitBreaker
  [() => new CircuitBreaker(), TypeError, 'options', 'undefined'],
  [() => new CircuitBreaker({ openDurationMs: 1000 }), TypeError, 'options', 'an object'],
  [() => new CircuitBreaker({ ...RATE, failureThreshold: 3 }), TypeError, 'options', 'an object'],
  [() => new CircuitBreaker({ windowSize: 10, openDurationMs: 1000 }), TypeError, 'failureRateThreshold', 'undefined'],
  [() => new CircuitBreaker({ ...RATE, windowSize: 0 }), RangeError, 'windowSize', '0'],
  [() => new CircuitBreaker({ ...RATE, windowSize: 2.5 }), RangeError, 'windowSize', '2.5'],
  [() => new CircuitBreaker({ ...RATE, windowSize: 1_000_001 }), RangeError, 'windowSize', '1000001'],
  [() => new CircuitBreaker({ ...RATE, windowSize: '10' }), TypeError, 'windowSize', '"10"'],
  [() => new CircuitBreaker({ ...RATE, failureRateThreshold: 1.5 }), RangeError, 'failureRateThreshold', '1.5'],
  [() => new CircuitBreaker({ ...RATE, failureRateThreshold: -0.1 }), RangeError, 'failureRateThreshold', '-0.1'],
  [() => new CircuitBreaker({ ...RATE, failureRateThreshold: NaN }), RangeError, 'failureRateThreshold', 'NaN'],
  [() => new CircuitBreaker({ ...RATE, minimumCalls: 0 }), RangeError, 'minimumCalls', '0'],
  [() => new CircuitBreaker({ ...RATE, minimumCalls: 11 }), RangeError, 'minimumCalls', '11'],
  [() => new CircuitBreaker({ ...CONS, failureThreshold: 0 }), RangeError, 'failureThreshold', '0'],
  [() => new CircuitBreaker({ ...CONS, failureThreshold: 2.5 }), RangeError, 'failureThreshold', '2.5'],
  [() => new CircuitBreaker({ ...CONS, failureThreshold: '3' }), TypeError, 'failureThreshold', '"3"'],
  [() => new CircuitBreaker({ failureThreshold: 3 }), TypeError, 'openDurationMs', 'undefined'],
  [() => new CircuitBreaker({ ...CONS, openDurationMs: -1 }), RangeError, 'openDurationMs', '-1'],
  [() => new CircuitBreaker({ ...CONS, openDurationMs: Infinity }), RangeError, 'openDurationMs', 'Infinity'],
  [() => new CircuitBreaker({ ...RATE, openDurationMs: NaN }), RangeError, 'openDurationMs', 'NaN'],
  [() => new CircuitBreaker({ ...CONS, probesToClose: 0 }), RangeError, 'probesToClose', '0'],
  [() => new CircuitBreaker({ ...RATE, probesToClose: 1.5 }), RangeError, 'probesToClose', '1.5'],
  [() => new CircuitBreaker({ ...CONS, probesToClose: '1' }), TypeError, 'probesToClose', '"1"'],
  [() => new CircuitBreaker({ ...CONS, clock: 5 }), TypeError, 'clock', '5'],
  [() => new CircuitBreaker({ ...CONS, onStateChange: 'log' }), TypeError, 'onStateChange', '"log"'],
  [() => new CircuitBreaker({ ...CONS, isFailure: true }), TypeError, 'isFailure', 'true'],
  [() => new CircuitBreaker({ ...CONS, state: 'closed' }), TypeError, 'state', '"closed"'],
  [() => new CircuitBreaker({ ...CONS }).execute('fn'), TypeError, 'fn', '"fn"'],
  [() => new CircuitBreaker({ ...CONS }).openUntil('later'), TypeError, 'untilMs', '"later"'],
  [
    () => {
      const b = new CircuitBreaker({ ...CONS });
      b.isolate();
      return b.execute(ok, 'fallback');
    },
    TypeError,
    'fallback',
    '"fallback"',
  ],
  // RetryBudget
  [() => new RetryBudget(), TypeError, 'options', 'undefined'],
  [() => new RetryBudget({}), TypeError, 'options', 'an object'],
  [() => new RetryBudget({ capacity: 1, refillPerSec: 1, ratio: 0.1 }), TypeError, 'options', 'an object'],
  [() => new RetryBudget({ capacity: 1 }), TypeError, 'refillPerSec', 'undefined'],
  [() => new RetryBudget({ capacity: '1', refillPerSec: 1 }), TypeError, 'capacity', '"1"'],
  [() => new RetryBudget({ capacity: -1, refillPerSec: 1 }), RangeError, 'capacity', '-1'],
  [() => new RetryBudget({ capacity: Infinity, refillPerSec: 1 }), RangeError, 'capacity', 'Infinity'],
  [() => new RetryBudget({ capacity: 1, refillPerSec: NaN }), RangeError, 'refillPerSec', 'NaN'],
  [() => new RetryBudget({ ratio: -0.5 }), RangeError, 'ratio', '-0.5'],
  [() => new RetryBudget({ ratio: 1001 }), RangeError, 'ratio', '1001'],
  [() => new RetryBudget({ ratio: '0.2' }), TypeError, 'ratio', '"0.2"'],
  [() => new RetryBudget({ minRetriesPerSec: -1 }), RangeError, 'minRetriesPerSec', '-1'],
  [() => new RetryBudget({ windowMs: 0 }), RangeError, 'windowMs', '0'],
  [() => new RetryBudget({ windowMs: Infinity }), RangeError, 'windowMs', 'Infinity'],
  [() => new RetryBudget({ capacity: 1, refillPerSec: 1, clock: 'now' }), TypeError, 'clock', '"now"'],
  // IdempotencyStore
  [() => new IdempotencyStore(5), TypeError, 'options', '5'],
  [() => new IdempotencyStore({ ttlMs: 0 }), RangeError, 'ttlMs', '0'],
  [() => new IdempotencyStore({ ttlMs: -1 }), RangeError, 'ttlMs', '-1'],
  [() => new IdempotencyStore({ ttlMs: Infinity }), RangeError, 'ttlMs', 'Infinity'],
  [() => new IdempotencyStore({ ttlMs: '1000' }), TypeError, 'ttlMs', '"1000"'],
  // Durations are bounded (10 years): beyond it a deadline stops being an integer where Redis keeps it.
  [() => new IdempotencyStore({ ttlMs: 1e17 }), RangeError, 'ttlMs', '100000000000000000'],
  [() => new SharedIdempotencyStore({ ttlMs: 1e17 }), RangeError, 'ttlMs', '100000000000000000'],
  [() => new SharedIdempotencyStore({ inFlightLeaseMs: 1e17 }), RangeError, 'inFlightLeaseMs', '100000000000000000'],
  [() => new SharedIdempotencyStore({ unknownTtlMs: 315_360_000_001 }), RangeError, 'unknownTtlMs', '315360000001'],
  [() => new CircuitBreaker({ ...CONS, openDurationMs: 1e17 }), RangeError, 'openDurationMs', '100000000000000000'],
  [() => new RetryBudget({ windowMs: 1e17 }), RangeError, 'windowMs', '100000000000000000'],
  [() => new IdempotencyStore({ clock: 1 }), TypeError, 'clock', '1'],
  [() => new IdempotencyStore({ isTransient: 'yes' }), TypeError, 'isTransient', '"yes"'],
  [() => new IdempotencyStore().run('k', ok, { fingerprint: 7 }), TypeError, 'fingerprint', '7'],
  [() => new IdempotencyStore().run('k', ok, 'fp'), TypeError, 'options', '"fp"'],
];

/** Whatever the API does (throw or return a rejected promise), the error it produces. */
async function errorOf(call) {
  try {
    await call();
  } catch (e) {
    return e;
  }
  return assert.fail('expected an error');
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('every bad option', () => {
  for (const [call, type, option, shown] of cases) {
    const label = call.toString().replace(/\s+/g, ' ').slice(6, 110);
    test(`${type.name} for ${option} = ${shown}: ${label}`, async () => {
      const e = await errorOf(call);
      assert.ok(e instanceof type, `expected ${type.name}, got ${e?.constructor?.name}: ${e?.message}`);
      assert.equal(e.code, 'INVALID_OPTION');
      assert.equal(e.name, type.name);
      assert.ok(isSteadfastError(e), 'branded');
      assert.match(e.message, new RegExp(`\\b${escape(option)}\\b`), 'names the option');
      assert.match(e.message, new RegExp(`got ${escape(shown)}$`), 'shows the value');
      assert.match(e.message, /^steadfast: /);
      await stillWorks();
    });
  }

  test('valid edge values are accepted', async () => {
    assert.equal(await retry({ maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 }), 'ok');
    assert.equal(await retry({ maxAttempts: 1000, baseDelayMs: 0, maxDelayMs: Infinity, maxElapsedMs: 0 }), 'ok');
    new CircuitBreaker({ windowSize: 1, failureRateThreshold: 0, openDurationMs: 0 });
    new CircuitBreaker({ windowSize: 100_000, failureRateThreshold: 1, minimumCalls: 100_000, openDurationMs: 0, probesToClose: 1_000_000 });
    new RetryBudget({ capacity: 0, refillPerSec: 0 });
    new RetryBudget({ ratio: 1000, minRetriesPerSec: 0, windowMs: 1 });
    new IdempotencyStore({ ttlMs: 1 });
    new IdempotencyStore(undefined);
    assert.equal(fullJitter(1, 0, 0), 0);
  });

  test('a failed validation does not freeze or cache the policy; a fixed one works', async () => {
    const policy = { maxAttempts: 0, baseDelayMs: 0, maxDelayMs: 0 };
    await assert.rejects(async () => retry(policy), RangeError);
    assert.equal(Object.isFrozen(policy), false);
    policy.maxAttempts = 2;
    assert.equal(await retry(policy), 'ok');
  });

  test('many bad options in a row, then a full workload: no wasm trap, no leak of state', async () => {
    for (let i = 0; i < 500; i++) {
      for (const [call] of cases) await errorOf(call);
    }
    await stillWorks();
  });

  // Regression: ratio > 1000 once reused the ">= 0" rule, contradicting the value in the message.
  test('the RangeError for ratio > 1000 states the real rule', async () => {
    const e = await errorOf(() => new RetryBudget({ ratio: 2000 }));
    assert.ok(e instanceof RangeError);
    assert.match(e.message, /1000/);
    assert.doesNotMatch(e.message, />= 0, got 2000/);
  });
});

describe('errors', () => {
  const made = [
    [new CircuitOpenError(), CircuitOpenError, 'CIRCUIT_OPEN'],
    [new DuplicateRequestError('k', 1), DuplicateRequestError, 'DUPLICATE_IN_FLIGHT'],
    [new OutcomeUnknownError('k', 1), OutcomeUnknownError, 'OUTCOME_UNKNOWN'],
    [new IdempotencyKeyReuseError('k'), IdempotencyKeyReuseError, 'KEY_REUSED'],
    [new RetryBudgetExhaustedError(new Error('c'), 2), RetryBudgetExhaustedError, 'RETRY_BUDGET_EXHAUSTED'],
    [new DeadlineExceededError(100, new Error('c'), 2), DeadlineExceededError, 'DEADLINE_EXCEEDED'],
    [new IdempotencyStateError('k', 'KEY_NOT_FOUND', 'no record'), IdempotencyStateError, 'KEY_NOT_FOUND'],
    [new SteadfastError('custom', 'INVALID_KEY'), SteadfastError, 'INVALID_KEY'],
  ];
  for (const [e, cls, code] of made) {
    test(`${cls.name}: name, code, instanceof, isSteadfastError`, () => {
      assert.ok(e instanceof cls);
      assert.ok(e instanceof SteadfastError);
      assert.ok(e instanceof Error);
      assert.equal(e.name, cls.name);
      assert.equal(e.code, code);
      assert.equal(isSteadfastError(e), true);
      assert.equal(Object.prototype.toString.call(e), '[object Error]');
      assert.ok(String(e).startsWith(`${cls.name}: `));
    });
  }

  test('error fields', () => {
    assert.equal(new CircuitOpenError().retryAfterMs, 0);
    assert.equal(new CircuitOpenError(250).retryAfterMs, 250);
    assert.equal(new CircuitOpenError(1, 'custom').message, 'custom');
    const cause = new Error('last');
    const b = new RetryBudgetExhaustedError(cause, 3);
    assert.equal(b.cause, cause);
    assert.equal(b.attempt, 3);
    const d = new DeadlineExceededError(5000, cause, 4);
    assert.equal(d.cause, cause);
    assert.equal(d.maxElapsedMs, 5000);
    assert.equal(d.attempt, 4);
    assert.match(d.message, /5000/);
    const u = new OutcomeUnknownError('order-9', 123, { cause });
    assert.equal(u.key, 'order-9');
    assert.equal(u.startedAt, 123);
    assert.equal(u.cause, cause);
    const s = new IdempotencyStateError('k', 'KEY_WRONG_STATE', 'nope');
    assert.equal(s.key, 'k');
    assert.equal(s.message, 'nope');
  });

  test('isSteadfastError: false for everything else', () => {
    for (const v of [
      new Error('x'),
      new TypeError('x'),
      new RangeError('x'),
      null,
      undefined,
      0,
      'CIRCUIT_OPEN',
      {},
      { code: 'CIRCUIT_OPEN', name: 'CircuitOpenError' },
      () => {},
    ]) {
      assert.equal(isSteadfastError(v), false, String(v));
    }
    assert.equal(isSteadfastError({ [Symbol.for('steadfast.error')]: false }), false);
  });

  test('isSteadfastError: true for an object carrying the global brand, as a second copy would make', () => {
    const foreign = Object.assign(new Error('from another copy'), { code: 'CIRCUIT_OPEN' });
    Object.defineProperty(foreign, Symbol.for('steadfast.error'), { value: true });
    assert.equal(isSteadfastError(foreign), true);
    assert.equal(isSteadfastError({ [Symbol.for('steadfast.error')]: true }), true);
  });

  test('a real second copy of the package: its errors are recognised, by brand not by class', async (t) => {
    const require = createRequire(import.meta.url);
    const pkgDir = join(require.resolve('steadfast/package.json'), '..');
    const dir = await mkdtemp(join(tmpdir(), 'steadfast-copy-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await cp(pkgDir, join(dir, 'steadfast'), { recursive: true });
    const other = await import(pathToFileURL(join(dir, 'steadfast', 'index.node.js')).href);
    assert.notEqual(other.CircuitOpenError, CircuitOpenError, 'a distinct module instance');
    const b = new other.CircuitBreaker({ ...CONS });
    b.isolate();
    const e = await b.execute(ok).catch((x) => x);
    assert.ok(e instanceof other.CircuitOpenError);
    assert.equal(e instanceof CircuitOpenError, false);
    assert.equal(isSteadfastError(e), true);
    assert.equal(other.isSteadfastError(new CircuitOpenError()), true);
    const bad = await errorOf(() => other.withRetry(ok, { ...P, maxAttempts: 0 }));
    assert.equal(isSteadfastError(bad), true);
    // and our store classifies the other copy's CircuitOpenError correctly: nothing was sent → freed
    assert.equal(isTransientError(e), false);
    const store = new IdempotencyStore();
    await assert.rejects(store.run('k', () => b.execute(ok)));
    assert.equal(store.peek('k'), undefined);
  });

  test('version() is the package version', async () => {
    const require = createRequire(import.meta.url);
    const pkg = JSON.parse(await readFile(require.resolve('steadfast/package.json'), 'utf8'));
    assert.equal(version(), pkg.version);
  });
});

describe('isTransientError and parseRetryAfter', () => {
  const yes = [
    { status: 408 },
    { status: 429 },
    { status: 500 },
    { status: 503 },
    { status: 599 },
    { statusCode: 502 },
    { response: { status: 504 } },
    { code: 'ECONNRESET' },
    { code: 'ETIMEDOUT' },
    { code: 'EAI_AGAIN' },
    { code: 'ECONNREFUSED' },
    { cause: { code: 'ECONNRESET' } },
    new TypeError('fetch failed', { cause: { code: 'UND_ERR_CONNECT_TIMEOUT' } }),
    new DOMException('t', 'TimeoutError'),
    new DOMException('a', 'AbortError'),
    new OutcomeUnknownError('k', 0),
    new DeadlineExceededError(1, undefined, 1),
  ];
  const no = [
    { status: 400 },
    { status: 401 },
    { status: 402 },
    { status: 404 },
    { status: 422 },
    { status: 200 },
    { status: 503.5 },
    { status: '503' },
    { code: 'card_declined' },
    { code: 'invalid_api_key' },
    new Error('plain'),
    new CircuitOpenError(),
    new DuplicateRequestError('k', 0),
    new IdempotencyKeyReuseError('k'),
    null,
    undefined,
    'ETIMEDOUT',
    503,
  ];
  test('transient: 408, 429, 5xx, network codes (also nested), timeouts and aborts', () => {
    for (const e of yes) assert.equal(isTransientError(e), true, JSON.stringify(e) ?? String(e));
  });
  test('permanent: every other 4xx, declines, plain errors, an open circuit, non-objects', () => {
    for (const e of no) assert.equal(isTransientError(e), false, JSON.stringify(e) ?? String(e));
  });
  test('a status wins over a code: a 400 with ECONNRESET is not retried', () => {
    assert.equal(isTransientError({ status: 400, code: 'ECONNRESET' }), false);
  });

  test('parseRetryAfter: delta-seconds, HTTP-date (IMF-fixdate, RFC 850, asctime), garbage', () => {
    const now = Date.UTC(2015, 9, 21, 7, 27, 58);
    assert.equal(parseRetryAfter('3', now), 3000);
    assert.equal(parseRetryAfter(' 0 ', now), 0);
    assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', now), 2000);
    assert.equal(parseRetryAfter('Wednesday, 21-Oct-15 07:28:00 GMT', now), 2000);
    assert.equal(parseRetryAfter('Wed Oct 21 07:28:00 2015', now), 2000);
    assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:27:00 GMT', now), 0, 'a date in the past means now');
    for (const bad of ['', 'soon', '-1', '1.5', 'Wed, 32 Oct 2015 07:28:00 GMT']) assert.ok(Number.isNaN(parseRetryAfter(bad, now)), bad);
  });
});
