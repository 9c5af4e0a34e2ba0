// A misspelt option name is refused, at every door that takes an options object with defaults: an
// option left out takes its default, so `ttlMS: 60_000` or `settleAfterMS: 5_000` would otherwise
// run on the default, silently. The names each door knows are read from the package's own .d.ts
// files (what a TypeScript user is told), so a name the types list and the runtime forgot fails here.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as s from 'steadfast';
import * as sim from 'steadfast/sim';

const pkg = dirname(createRequire(import.meta.url).resolve('steadfast/package.json'));

/** Each interface's field names (its own and those it extends), from the shipped .d.ts files. */
function interfaces() {
  const files = ['index.d.ts', 'sim.d.ts', ...readdirSync(join(pkg, 'types')).map((f) => join('types', f))];
  const found = new Map();
  for (const f of files) {
    const src = readFileSync(join(pkg, f), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '');
    const head = /(?:export )?interface (\w+)(?:<[^{]*?>)?(?: extends ([\w, <>]+))?\s*\{/g;
    for (let m; (m = head.exec(src));) {
      let depth = 1;
      let i = head.lastIndex;
      for (; depth > 0 && i < src.length; i++) {
        if (src[i] === '{') depth++;
        else if (src[i] === '}') depth--;
      }
      // Top-level fields only: a line at nesting depth 0 (arrows do not close a bracket).
      const body = src.slice(head.lastIndex, i - 1).replace(/=>/g, '~~');
      const names = [];
      let d = 0;
      let line = '';
      for (const ch of body) {
        if ('{([<'.includes(ch)) d++;
        else if ('})]>'.includes(ch)) d--;
        if (d === 0) line += ch;
        if (ch === '\n') {
          const field = line.match(/^\s*(?:readonly\s+)?(\w+)\??\s*:/);
          if (field) names.push(field[1]);
          line = '';
        }
      }
      const ext = (m[2] ?? '')
        .split(',')
        .map((e) => e.trim().replace(/<.*$/, ''))
        .filter(Boolean);
      found.set(m[1], { names, ext });
    }
  }
  const fields = (name) => {
    const i = found.get(name);
    assert.ok(i, `no interface ${name} in the package's types`);
    return [...new Set([...i.ext.filter((e) => found.has(e)).flatMap(fields), ...i.names])];
  };
  return fields;
}
const fieldsOf = interfaces();

const RATE = { windowSize: 10, failureRateThreshold: 0.5, openDurationMs: 1000 };
const breaker = () => new s.CircuitBreaker({ failureThreshold: 3, openDurationMs: 1000 });
const CHARGE = { amountCents: 1200, currency: 'usd' };
let sent = 0;
const gateway = async () => {
  sent++;
  return { reference: 'ch_1' };
};
const fetchStub = async () => {
  sent++;
  return new Response('{}', { status: 200 });
};

/**
 * Every door: its name in the messages, the interfaces (or, for an inline options type, the field
 * names) its .d.ts gives it, and a call with `options`. Names shorter than 4 characters are not
 * judged (too many words are 2 edits from them).
 */
const DOORS = [
  ['CircuitBreaker', ['RateBreakerOptions', 'ConsecutiveBreakerOptions'], (x) => new s.CircuitBreaker(x)],
  ['BreakerRegistry', ['RateBreakerOptions', 'ConsecutiveBreakerOptions', ['maxOrigins', 'pinned']], (x) => new s.BreakerRegistry(x)],
  ['RetryBudget', ['TokenBucketBudgetOptions', 'RatioBudgetOptions'], (x) => new s.RetryBudget(x)],
  ['RetryQuota', ['RetryQuotaOptions'], (x) => new s.RetryQuota(x)],
  ['RateLimiter', ['RateLimiterOptions'], (x) => new s.RateLimiter(x)],
  ['IdempotencyStore', ['IdempotencyStoreOptions'], (x) => new s.IdempotencyStore(x)],
  ['run', ['RunOptions'], (x) => new s.IdempotencyStore().run(s.newIdempotencyKey(), gateway, x)],
  ['resubmit', ['ResubmitOptions'], (x) => new s.IdempotencyStore().resubmit(s.newIdempotencyKey(), gateway, x)],
  ['withRetry', ['RetryPolicy'], (x) => s.withRetry(gateway, x)],
  ['withRetry hedge', ['CallHedgeOptions'], (x) => s.withRetry(gateway, { maxAttempts: 1, hedge: { safe: true, ...x } })],
  ['resilientFetch', ['ResilientFetchOptions'], (x) => s.resilientFetch('https://gateway.test/v1', undefined, { fetch: fetchStub, ...x })],
  ['resilientFetch hedge', ['HedgeOptions'], (x) => s.resilientFetch('https://gateway.test/v1', undefined, { fetch: fetchStub, hedge: x })],
  ['resilientFetch retry', ['FetchRetryOptions'], (x) => s.resilientFetch('https://gateway.test/v1', undefined, { fetch: fetchStub, retry: x })],
  ['createCheckoutClient', ['CheckoutClientOptions'], (x) => s.createCheckoutClient({ endpoint: 'https://gateway.test/v1', fetch: fetchStub, ...x })],
  ['createCheckoutClient retry', ['FetchRetryOptions'], (x) => s.createCheckoutClient({ endpoint: 'https://gateway.test/v1', fetch: fetchStub, retry: x })],
  ['charge', [['idempotencyKey', 'signal']], (x) => s.createCheckoutClient({ endpoint: 'https://gateway.test/v1', fetch: fetchStub }).charge(CHARGE, x)],
  [
    'chargeCustomer',
    ['ChargeDeps'],
    (x) => s.chargeCustomer({ idempotencyKey: s.newIdempotencyKey(), ...CHARGE }, { store: new s.IdempotencyStore(), breaker: breaker(), gateway, ...x }),
  ],
  ['chargeFingerprint', [['volatileFields']], (x) => s.chargeFingerprint(CHARGE, x)],
  ['reconcile', [['concurrency', 'settleAfterMs', 'lookupTimeoutMs', 'clock']], (x) => s.reconcile(new s.IdempotencyStore(), () => undefined, x)],
  ['execute', ['PolicyExecuteOptions'], (x) => s.retry({ maxAttempts: 1 }).execute(gateway, x)],
  ['hedge', ['HedgePolicyOptions'], (x) => s.hedge({ safe: true, ...x })],
  ['SharedIdempotencyStore', ['SharedIdempotencyStoreOptions'], (x) => new s.SharedIdempotencyStore(x)],
  [
    'SharedCircuitBreaker',
    ['RateBreakerOptions', 'ConsecutiveBreakerOptions', ['name', 'store', 'whenUnavailable', 'localCacheMs', 'onStoreError']],
    (x) => new s.SharedCircuitBreaker({ name: 'b', ...x }),
  ],
  ['redisStateStore', ['RedisStoreOptions'], (x) => s.redisStateStore(x)],
  ['createRedisIdempotencyStore', ['RedisStoreOptions', 'SharedIdempotencyStoreOptions'], (x) => s.createRedisIdempotencyStore(x)],
  ['shareBreakerAcrossTabs', [['channel', 'BroadcastChannel', 'onRemote']], (x) => s.shareBreakerAcrossTabs(breaker(), x)],
  ['persistentCheckoutKey', [['cartId', 'storage', 'locks', 'maxAgeMs', 'maxEntries', 'onStorageError']], (x) => s.persistentCheckoutKey(x)],
  ['simulateHistogram', ['HistogramOptions'], (x) => sim.simulateHistogram(x)],
  ['simulateTail', ['TailOptions'], (x) => sim.simulateTail(x)],
  ['jitterStats', ['JitterStatsOptions'], (x) => sim.jitterStats(x)],
  ['simulateOutage', ['OutageOptions'], (x) => sim.simulateOutage(x)],
];

/** `name` with one inner character doubled: one edit away from it, and from no unit mark. */
const typo = (name) => {
  const i = Math.floor(name.length / 2);
  return name.slice(0, i) + name[i] + name.slice(i);
};

/** The error a call gave, synchronously or as its rejection; fails if it succeeded. */
async function refusal(call) {
  try {
    await call();
  } catch (e) {
    return e;
  }
  assert.fail('accepted');
}

describe('every options object refuses a name near one of its options', () => {
  for (const [where, types, call] of DOORS) {
    const names = [...new Set(types.flatMap((t) => (Array.isArray(t) ? t : fieldsOf(t))))].filter((n) => n.length >= 4);
    test(`${where}: ${names.length} names`, async () => {
      assert.ok(names.length > 0);
      for (const name of names) {
        const wrong = typo(name);
        const before = sent;
        const e = await refusal(() => call({ [wrong]: 1 }));
        assert.ok(e instanceof TypeError, `${where} ${wrong}: ${e}`);
        assert.equal(e.code, 'INVALID_OPTION', `${where} ${wrong}`);
        assert.equal(e.option, wrong);
        assert.equal(e.message, `steadfast: ${where} option ${wrong} must be a known option (did you mean ${name}?), got 1`);
        assert.equal(sent, before, `${where} ${wrong}: nothing may be sent`);
      }
    });
  }
});

test('a time unit mixed up is a misspelling too (ttlSeconds, settleAfterMillis)', async () => {
  const e1 = await refusal(() => new s.IdempotencyStore({ ttlSeconds: 60 }));
  assert.match(e1.message, /option ttlSeconds must be a known option \(did you mean ttlMs\?\), got 60$/);
  const e2 = await refusal(() =>
    s.chargeCustomer({ idempotencyKey: 'k-unit', ...CHARGE }, { store: new s.IdempotencyStore(), breaker: breaker(), gateway, settleAfterMillis: 5 }),
  );
  assert.match(e2.message, /chargeCustomer option settleAfterMillis .*did you mean settleAfterMs\?/);
  const e3 = await refusal(() => new s.RetryBudget({ ratio: 0.1, minRetriesPerSecond: 5 }));
  assert.match(e3.message, /did you mean minRetriesPerSec\?/);
});

test("a withRetry option given in resilientFetch's retry says where it belongs (it would be ignored there)", async () => {
  const fetchRetry = (retry) => s.resilientFetch('https://gateway.test/v1', undefined, { fetch: fetchStub, retry });
  const clientRetry = (retry) => s.createCheckoutClient({ endpoint: 'https://gateway.test/v1', fetch: fetchStub, retry });
  const cases = [
    [fetchRetry, { onRetry() {} }, 'resilientFetch retry option onRetry', 'the top-level onRetry option'],
    [fetchRetry, { maxElapsedMs: 5000 }, 'resilientFetch retry option maxElapsedMs', 'the top-level deadlineMs option'],
    [fetchRetry, { hedge: {} }, 'resilientFetch retry option hedge', 'the top-level hedge option'],
    [fetchRetry, { signal: AbortSignal.timeout(10) }, 'resilientFetch retry option signal', "the request's own signal (init.signal)"],
    [fetchRetry, { isRetryable: () => true }, 'resilientFetch retry option isRetryable', 'nothing: retries follow the method'],
    [fetchRetry, { retries: 2 }, 'resilientFetch retry option retries', 'maxAttempts (attempts in all'],
    [clientRetry, { onRetry() {} }, 'createCheckoutClient retry option onRetry', 'the top-level onAttempt option'],
    [clientRetry, { hedge: {} }, 'createCheckoutClient retry option hedge', 'nothing: a checkout client does not hedge'],
    [clientRetry, { signal: AbortSignal.timeout(10) }, 'createCheckoutClient retry option signal', "charge()'s signal option"],
  ];
  for (const [call, retry, where, hint] of cases) {
    const before = sent;
    const e = await refusal(() => call(retry));
    assert.ok(e instanceof TypeError && e.code === 'INVALID_OPTION', `${where}: ${e}`);
    assert.ok(e.message.startsWith(`steadfast: ${where} must be a known option (did you mean ${hint}`), e.message);
    assert.equal(sent, before);
  }
});

test('a hedge option another door takes says where it belongs (it would be ignored there)', async () => {
  const budget = new s.RetryBudget({ ratio: 0.1 });
  const fetchHedge = (hedge) => s.resilientFetch('https://gateway.test/v1', undefined, { fetch: fetchStub, hedge });
  const retryHedge = (hedge) => s.withRetry(gateway, { maxAttempts: 1, hedge: { safe: true, ...hedge } });
  const cases = [
    [fetchHedge, { budget }, 'resilientFetch hedge option budget', 'the top-level budget option'],
    [fetchHedge, { idempotencyKey: 'k-1' }, 'resilientFetch hedge option idempotencyKey', 'the top-level idempotencyKey option'],
    [fetchHedge, { safe: true }, 'resilientFetch hedge option safe', 'nothing: a request is hedged only if it may be repeated'],
    [fetchHedge, { isRetryable: () => true }, 'resilientFetch hedge option isRetryable', 'nothing: retries and hedges follow the method'],
    [fetchHedge, { clock: Date.now }, 'resilientFetch hedge option clock', 'nothing: a plan runs on the system clock'],
    [retryHedge, { budget }, 'withRetry hedge option budget', "the policy's budget"],
    [retryHedge, { isRetryable: () => true }, 'withRetry hedge option isRetryable', "the policy's isRetryable"],
    [retryHedge, { clock: Date.now }, 'withRetry hedge option clock', "the policy's clock"],
  ];
  for (const [call, hedge, where, hint] of cases) {
    const before = sent;
    const e = await refusal(() => call(hedge));
    assert.ok(e instanceof TypeError && e.code === 'INVALID_OPTION', `${where}: ${e}`);
    assert.ok(e.message.startsWith(`steadfast: ${where} must be a known option (did you mean ${hint}`), e.message);
    assert.equal(sent, before, `${where}: nothing may be sent`);
  }
  // The hedge() policy takes them all; the same object is still refused at a door that does not.
  const shared = { delayMs: 10, budget, safe: true };
  assert.ok(s.hedge(shared));
  const e = await refusal(() => s.withRetry(gateway, { maxAttempts: 1, hedge: shared }));
  assert.match(e.message, /withRetry hedge option budget/);
});

test('names far from every option are left alone (a config object may carry its own fields)', async () => {
  assert.ok(new s.CircuitBreaker({ ...RATE, description: 'payments' }));
  assert.ok(new s.IdempotencyStore({ maxRecords: 10, region: 'eu' }));
  const store = new s.IdempotencyStore();
  assert.deepEqual(await s.chargeCustomer({ idempotencyKey: 'k-far', ...CHARGE }, { store, breaker: breaker(), gateway, tenant: 'acme' }), {
    reference: 'ch_1',
  });
  // Short names are never judged.
  assert.ok(new s.IdempotencyStore({ ttl: 5 }));
});

test('a refused chargeCustomer stores nothing, and the same deps object is refused every time', async () => {
  const store = new s.IdempotencyStore();
  const deps = { store, breaker: breaker(), gateway, volatileField: ['nonce'] };
  for (let i = 0; i < 2; i++) {
    const before = sent;
    const e = await refusal(() => s.chargeCustomer({ idempotencyKey: 'k-refused', ...CHARGE }, deps));
    assert.match(e.message, /did you mean volatileFields\?/);
    assert.equal(sent, before);
    assert.equal(store.peek('k-refused'), undefined);
  }
  // Corrected, the same key charges once.
  delete deps.volatileField;
  const before = sent;
  assert.deepEqual(await s.chargeCustomer({ idempotencyKey: 'k-refused', ...CHARGE }, deps), { reference: 'ch_1' });
  assert.equal(sent, before + 1);
});
