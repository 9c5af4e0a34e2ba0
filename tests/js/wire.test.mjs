// The wire vocabulary through the installed package: every slot and code the core answers with is
// read by the name the core gives it (src/wasm/wire.rs wireLayouts, read by lib/wire.js), every
// named slot is used, and each one holds what the core means by that name. The checks go through
// behaviour a caller sees (options given → the normalised config, a key at each bound of the key
// rule, each begin answer as its event and error), so a slot reordered on the Rust side without
// its name fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  CircuitBreaker,
  DEFAULT_RETRY_POLICY,
  DeadlineExceededError,
  DuplicateRequestError,
  IdempotencyKeyReuseError,
  IdempotencyStore,
  OutcomeUnknownError,
  RateLimiter,
  RetryQuota,
  StoreFullError,
  events,
  gatewayDialect,
  retryErrorClass,
  withRetry,
} from 'steadfast';
import { manualClock } from '../support/clock.mjs';

const PKG = dirname(fileURLToPath(import.meta.resolve('steadfast')));
// The module instances the entry loaded (same file URLs), for the core's own exports.
const lib = (path) => import(pathToFileURL(join(PKG, path)).href);
const core = await lib('steadfast_core.js');
const wire = await lib('lib/wire.js');
const { fetchDefaults, idempotencyDefaults } = await lib('lib/defaults.js');
const { readBreakerOptions } = await lib('lib/breaker-options.js');

/** Leaves of a nested object as `a.b` paths. */
function leaves(value, prefix = '') {
  return Object.entries(value).flatMap(([k, v]) => (typeof v === 'object' && v !== null ? leaves(v, `${prefix}${k}.`) : [[`${prefix}${k}`, v]]));
}

test('the vocabulary names every group lib/wire.js reads, each name once', () => {
  const groups = wire.parseWire(core.wireLayouts());
  for (const name of [
    'fetchDefaults',
    'storeDefaults',
    'keyRule',
    'breakerConfig',
    'breakerSnapshot',
    'peek',
    'begin',
    'resolve',
    'completion',
    'status',
    'state',
    'transition',
    'breakerKind',
    'jitter',
    'verdict',
    'breaker',
    'limiterPreset',
    'limiterPresetName',
    'quotaPreset',
    'quotaPresetName',
    'errorClass',
    'hedgeDefaults',
    'hedge',
    'hedgeStep',
    'stop',
    'answer',
    'historyVerdict',
    'shouldRetry',
    'keySyntax',
    'dialect',
  ]) {
    assert.ok(groups[name], `group ${name}`);
    assert.equal(new Set(groups[name].names).size, groups[name].names.length, `${name}: a name given twice`);
  }
  assert.deepEqual(Object.keys(wire.BEGIN), ['RUN', 'REPLAY', 'IN_FLIGHT', 'UNKNOWN', 'MISMATCH', 'FULL', 'EXPIRED_FLAG', 'SLOT', 'INVALID_KEY']);
  assert.deepEqual(Object.keys(wire.RESOLVE), ['RESOLVED', 'NOT_FOUND', 'WRONG_STATE', 'KEY_REUSED', 'SLOT']);
  assert.deepEqual(Object.keys(wire.COMPLETION), ['DONE', 'UNKNOWN', 'FAILED', 'REFUTED']);
  assert.deepEqual(Object.keys(wire.VERDICT), ['SUCCESS', 'FAILURE', 'EXCLUDED']);
  assert.deepEqual([...wire.TRANSITIONS], ['none', ...wire.STATES]);
  for (const o of [wire.LAYOUT, wire.BEGIN, wire.RESOLVE, wire.STATES, wire.JITTERS]) assert.ok(Object.isFrozen(o));
});

test('fetchDefaults and idempotencyDefaults: one field per named slot, holding that slot', () => {
  const raw = Array.from(core.fetchDefaults());
  const got = Object.fromEntries(leaves(fetchDefaults()));
  assert.deepEqual(Object.keys(got).sort(), [...wire.LAYOUT.fetchDefaults].sort(), 'every slot named, every name a field');
  wire.LAYOUT.fetchDefaults.forEach((name, i) => assert.equal(got[name], name === 'retry.jitter' ? wire.JITTERS[raw[i]] : raw[i], name));
  const store = idempotencyDefaults();
  assert.deepEqual(Object.keys(store), [...wire.LAYOUT.storeDefaults]);
  const rawStore = core.storeDefaults();
  wire.LAYOUT.storeDefaults.forEach((name, i) => assert.equal(store[name], rawStore[i], name));
  // What the core means by the names: a store built with no options holds the default maxRecords.
  assert.equal(new IdempotencyStore().maxRecords, store.maxRecords);
});

test('breaker config: each option comes back under its own name', () => {
  // Every option a distinct number: a slot read under another name cannot pass.
  const rate = readBreakerOptions({ windowSize: 20, failureRateThreshold: 0.25, minimumCalls: 7, openDurationMs: 3000, probesToClose: 2 }, 'test').config;
  assert.deepEqual(rate, { kind: 'rate', windowSize: 20, failureRateThreshold: 0.25, minimumCalls: 7, openDurationMs: 3000, probesToClose: 2 });
  const consecutive = readBreakerOptions({ failureThreshold: 3, openDurationMs: 1500 }, 'test').config;
  assert.deepEqual(consecutive, { kind: 'consecutive', failureThreshold: 3, openDurationMs: 1500, probesToClose: 1 });
});

test('breaker snapshot and states: toJSON names the core snapshot head, and every state name is reached', async () => {
  const clock = manualClock(1_000);
  const heard = [];
  const b = new CircuitBreaker({ failureThreshold: 3, openDurationMs: 500, clock, onStateChange: (s) => heard.push(s) });
  const states = new Set([b.currentState]);
  const fail = () => b.execute(() => Promise.reject(new Error('down'))).catch(() => {});
  await fail();
  await fail();
  assert.deepEqual(b.toJSON(), { version: 1, kind: 'consecutive', state: 'closed', openUntil: null, probeSuccesses: 0, consecutiveFailures: 2, window: [] });
  await fail();
  const open = b.toJSON();
  assert.equal(open.state, 'open');
  assert.equal(open.openUntil, 1_500);
  states.add(b.currentState);
  const restored = new CircuitBreaker({ failureThreshold: 3, openDurationMs: 500, clock, state: JSON.parse(JSON.stringify(open)) });
  assert.deepEqual(restored.toJSON(), open);
  clock.advance(500);
  states.add(b.currentState);
  b.isolate();
  states.add(b.currentState);
  assert.equal(b.isolated, true);
  b.reset();
  assert.deepEqual(heard, ['open', 'isolated', 'closed']);
  assert.deepEqual([...states], [...wire.STATES], 'closed, open, half-open, isolated: every state the core names');
});

test('the key rule: every named bound is applied', async () => {
  const store = new IdempotencyStore();
  const { minLength, maxLength, lowestByte, highestByte, lowestEdgeByte } = Object.fromEntries(wire.LAYOUT.keyRule.map((n, i) => [n, core.keyRule()[i]]));
  assert.deepEqual([minLength, maxLength, lowestByte, highestByte, lowestEdgeByte], [1, 255, 0x20, 0x7e, 0x21]);
  const accepted = async (key) =>
    await store
      .run(key, async () => 'ok')
      .then(
        () => true,
        (e) => (e.code === 'INVALID_KEY' ? false : Promise.reject(e)),
      );
  assert.equal(await accepted('a'.repeat(maxLength)), true);
  assert.equal(await accepted('a'.repeat(maxLength + 1)), false);
  assert.equal(await accepted(''), false);
  assert.equal(await accepted(`a${String.fromCharCode(lowestByte)}b`), true);
  assert.equal(await accepted(`a${String.fromCharCode(lowestByte - 1)}b`), false);
  assert.equal(await accepted(String.fromCharCode(highestByte)), true);
  assert.equal(await accepted(String.fromCharCode(highestByte + 1)), false);
  assert.equal(await accepted(`${String.fromCharCode(lowestEdgeByte - 1)}a`), false);
  assert.equal(await accepted(`a${String.fromCharCode(lowestEdgeByte - 1)}`), false);
});

test('begin answers: each code is the event outcome and the error a caller gets', async () => {
  const outcomes = [];
  const off = events.onIdempotency(({ outcome }) => outcomes.push(outcome));
  try {
    const store = new IdempotencyStore({ maxRecords: 2 });
    let release;
    const running = store.run('k1', () => new Promise((r) => (release = r)), { fingerprint: 'a' });
    await assert.rejects(
      store.run('k1', async () => 'x', { fingerprint: 'a' }),
      DuplicateRequestError,
    );
    release('done');
    assert.equal(await running, 'done');
    assert.equal(await store.run('k1', async () => 'again', { fingerprint: 'a' }), 'done');
    await assert.rejects(
      store.run('k1', async () => 'x', { fingerprint: 'b' }),
      IdempotencyKeyReuseError,
    );
    const timeout = Object.assign(new Error('timed out'), { name: 'TimeoutError' });
    await assert.rejects(
      store.run('k2', () => Promise.reject(timeout)),
      (e) => e instanceof OutcomeUnknownError,
    );
    assert.equal((await store.peek('k2')).status, 'unknown');
    await assert.rejects(
      store.run('k2', async () => 'x'),
      OutcomeUnknownError,
    );
    await assert.rejects(
      store.run('k3', async () => 'x'),
      StoreFullError,
    );
    assert.equal((await store.peek('k1')).status, 'done');
  } finally {
    off();
  }
  const begins = outcomes.filter((o) => wire.BEGIN_OUTCOMES.includes(o));
  assert.deepEqual(begins, ['run', 'in-flight', 'replay', 'mismatch', 'run', 'unknown', 'full']);
  assert.deepEqual(new Set(begins), new Set(wire.BEGIN_OUTCOMES), 'every begin answer the core names was given');
});

test('the simulator reads its slots by the names simLayouts gives', async () => {
  const sim = await import('steadfast/sim');
  const simCore = await lib('steadfast_sim.js');
  const g = wire.parseWire(simCore.simLayouts());
  assert.deepEqual([...sim.STRATEGIES], [...g.strategy.names]);
  assert.deepEqual([...sim.QUOTA_PRESETS], [...g.quotaPreset.names]);
  assert.deepEqual([...sim.LIMITER_PRESETS], [...g.limiterPreset.names]);
  // Each default comes back under its own name (the raw defaults by the same names).
  const check = (result, group, raw) => g[group].names.forEach((name, i) => assert.equal(result[name], raw[i], `${group}.${name}`));
  const h = sim.simulateHistogram({ clients: 1000, strategies: ['full'] });
  check({ ...h, clients: simCore.simHistogramDefaults()[0] }, 'histogramDefaults', simCore.simHistogramDefaults());
  // The result head by name: every client retries once, so the retries are the clients.
  assert.equal(h.runs[0].retries, 1000);
  assert.ok(h.runs[0].peak > 0 && h.runs[0].peak < 1000);
  assert.equal(
    h.runs[0].counts.reduce((a, b) => a + b, 0),
    1000,
  );
  const j = sim.jitterStats({ samples: 500 });
  assert.deepEqual(
    j.rows.map((r) => r.variant),
    [...g.jitterRows.names],
  );
  for (const r of j.rows) assert.ok(r.min <= r.median && r.median <= r.max && r.min <= r.mean && r.mean <= r.max, `${r.variant} ordered`);
  const t = sim.simulateTail({ requests: 2000 });
  check({ ...t, requests: simCore.simTailDefaults()[0] }, 'tailDefaults', simCore.simTailDefaults());
  for (const run of [t.plain, t.hedged]) {
    assert.deepEqual(Object.keys(run), [...g.tailRun.names]);
    assert.ok(run.p50Ms <= run.p99Ms && run.p99Ms <= run.p999Ms && run.copiesPerRequest >= 1);
  }
});

/** The RangeError a constructor throws for `options`, or undefined. */
const rangeErrorOf = (make) => {
  try {
    make();
  } catch (e) {
    if (e instanceof RangeError) return e;
    throw e;
  }
  return undefined;
};

test('limiter and quota presets: each preset name is its preset, each slot the option of its name', () => {
  assert.deepEqual([...wire.LIMITER_PRESETS], ['cubic', 'aws', 'aimd']);
  for (const preset of wire.LIMITER_PRESETS) assert.equal(new RateLimiter({ preset }).preset, preset);
  // Every overridable slot reaches the core under its own name: an invalid value is refused naming it.
  const overridable = wire.LAYOUT.limiterPreset.filter((n) => n !== 'mode' && n !== 'awsExact');
  assert.equal(overridable.length, wire.LAYOUT.limiterPreset.length - 2);
  for (const name of overridable) {
    const e = rangeErrorOf(() => new RateLimiter({ [name]: -1 }));
    assert.ok(e?.message.includes(name), `${name}: ${e?.message}`);
  }
  // The AIMD preset (mode slot) and AWS's exact rules (awsExact slot) are distinct presets in the core.
  const raw = Object.fromEntries(wire.LIMITER_PRESETS.map((p, id) => [p, wire.namedSlots(wire.LAYOUT.limiterPreset, core.limiterPreset(id))]));
  assert.deepEqual([raw.cubic.mode, raw.aws.mode, raw.aimd.mode], [0, 0, 1]);
  assert.deepEqual([raw.cubic.awsExact, raw.aws.awsExact, raw.aimd.awsExact], [0, 1, 0]);

  assert.deepEqual([...wire.QUOTA_PRESETS], ['steadfast', 'aws']);
  assert.deepEqual([...wire.LAYOUT.quotaPreset], ['capacity', 'timeoutCost', 'throttledCost', 'serverErrorCost', 'successRefund']);
  for (const [id, preset] of wire.QUOTA_PRESETS.entries()) {
    assert.equal(new RetryQuota({ preset }).capacity, wire.namedSlots(wire.LAYOUT.quotaPreset, core.quotaPreset(id)).capacity);
  }
  // Each cost is paid for its own class, and the refund is the successRefund slot.
  const q = new RetryQuota({ capacity: 1000, timeoutCost: 1, throttledCost: 2, serverErrorCost: 4, successRefund: 8 });
  const status = (s) => Object.assign(new Error('x'), { status: s });
  const spent = (error) => {
    const before = q.available;
    assert.ok(q.tryConsume(error));
    return before - q.available;
  };
  assert.deepEqual([spent(new Error('reset')), spent(status(429)), spent(status(503))], [1, 2, 4]);
  while (q.available > 900) q.tryConsume(status(503)); // room below the capacity for the refund
  const before = q.available;
  q.recordSuccess();
  assert.equal(q.available - before, 8);
  assert.deepEqual([retryErrorClass(new Error('reset')), retryErrorClass(status(429)), retryErrorClass(status(503))], [...wire.ERROR_CLASSES]);
  assert.deepEqual(Object.keys(wire.ERROR_CLASS), ['TIMEOUT', 'THROTTLED', 'SERVER_ERROR']);
});

test('hedge options and defaults: each slot is the option of its name', async () => {
  const defaults = wire.namedSlots(wire.LAYOUT.hedgeDefaults, core.hedgeDefaults());
  assert.deepEqual(Object.keys(defaults), ['quantile', 'windowSize', 'minDelayMs', 'maxDelayMs', 'maxHedges']);
  for (const name of wire.LAYOUT.hedgeDefaults) assert.ok(wire.LAYOUT.hedge.includes(name), `${name} is a hedge option`);
  // Every HedgeCore argument reaches the core under its own name.
  for (const name of wire.LAYOUT.hedge) {
    await assert.rejects(
      withRetry(async () => 1, { ...DEFAULT_RETRY_POLICY, hedge: { [name]: -1 } }),
      (e) => e instanceof RangeError && e.message.includes(name),
      name,
    );
  }
  assert.deepEqual(Object.keys(wire.HEDGE_STEP), ['START', 'AWAIT_ANSWER', 'EXHAUSTED']);
  assert.ok(
    Object.values(wire.HEDGE_STEP).every((c) => c <= 0),
    'a step code is never a wait (> 0)',
  );
  // Each step code is the core's answer in its situation: two copies at most, a fixed 50 ms delay.
  const args = { delayMs: 50, maxHedges: 1 };
  const two = new core.HedgeCore(...wire.LAYOUT.hedge.map((name) => args[name] ?? NaN));
  assert.equal(two.nextStep(0, 0, 0), wire.HEDGE_STEP.START);
  assert.equal(two.nextStep(1, 1, 0), 50, 'a wait is its delay');
  assert.equal(two.nextStep(2, 1, 0), wire.HEDGE_STEP.AWAIT_ANSWER);
  assert.equal(two.nextStep(2, 0, 0), wire.HEDGE_STEP.EXHAUSTED);
});

test('retry stops: each code ends the call the way its name says', async () => {
  assert.deepEqual(Object.keys(wire.STOP), ['NOT_RETRYABLE', 'ATTEMPTS_EXHAUSTED', 'DEADLINE_EXCEEDED']);
  const reasons = [];
  const off = events.onGiveUp(({ reason }) => reasons.push(reason));
  try {
    const fail = (error) => () => Promise.reject(error);
    const transient = Object.assign(new Error('reset'), { code: 'ECONNRESET' });
    await assert.rejects(withRetry(fail(Object.assign(new Error('bad'), { status: 400 })), { ...DEFAULT_RETRY_POLICY, maxAttempts: 3, baseDelayMs: 1 }), {
      status: 400,
    });
    await assert.rejects(withRetry(fail(transient), { ...DEFAULT_RETRY_POLICY, maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 }), { code: 'ECONNRESET' });
    await assert.rejects(
      withRetry(fail(Object.assign(new Error('busy'), { status: 503 })), {
        maxAttempts: 3,
        baseDelayMs: 1000,
        maxDelayMs: 1000,
        jitter: 'none',
        maxElapsedMs: 250,
      }),
      DeadlineExceededError,
    );
  } finally {
    off();
  }
  assert.deepEqual(reasons, ['not-retryable', 'attempts', 'deadline']);
});

test("attempt answers, history verdicts and Stripe-Should-Retry: the core's codes by name", () => {
  assert.deepEqual(Object.keys(wire.ANSWER), ['NOT_SENT', 'NO_ANSWER', 'REFUSED', 'IN_PROGRESS']);
  assert.deepEqual(Object.keys(wire.HISTORY_VERDICT), ['DONE', 'UNKNOWN', 'REFUSED', 'NOT_PROCESSED']);
  const verdictOf = (...answers) => core.historyVerdict(answers.reduce((h, a) => core.historyRecord(h, a), 0));
  assert.equal(verdictOf(wire.ANSWER.NOT_SENT), wire.HISTORY_VERDICT.NOT_PROCESSED);
  assert.equal(verdictOf(wire.ANSWER.NO_ANSWER), wire.HISTORY_VERDICT.UNKNOWN);
  assert.equal(verdictOf(wire.ANSWER.REFUSED), wire.HISTORY_VERDICT.REFUSED);
  assert.equal(verdictOf(wire.ANSWER.IN_PROGRESS), wire.HISTORY_VERDICT.UNKNOWN);
  assert.equal(verdictOf(wire.ANSWER.NOT_SENT, 200), wire.HISTORY_VERDICT.DONE);
  assert.deepEqual(
    ['none', 'false', 'true'].map((v) => core.parseShouldRetry(v === 'none' ? '' : v)),
    [wire.SHOULD_RETRY.NONE, wire.SHOULD_RETRY.FALSE, wire.SHOULD_RETRY.TRUE],
  );
  // The keyed-method rule is the core's: POST and PATCH, in any case.
  assert.deepEqual(
    ['POST', 'patch', 'PUT', 'GET'].map((m) => core.methodIsKeyed(m)),
    [true, true, false, false],
  );
});

test('dialect key syntaxes and the "no status" slot: each name is what the dialect does', async () => {
  const { compileDialect } = await lib('lib/dialect.js');
  assert.deepEqual([...wire.KEY_SYNTAXES], ['raw', 'sf-string']);
  const header = Object.fromEntries(wire.KEY_SYNTAXES.map((syntax) => [syntax, compileDialect({ base: 'ietf', syntax }, 'test').headerValue('k', 'test')]));
  assert.deepEqual(header, { raw: 'k', 'sf-string': '"k"' });
  for (const syntax of wire.KEY_SYNTAXES) assert.equal(gatewayDialect({ base: 'ietf', syntax }).syntax, syntax);
  // A slot holding no status reads as none: no in-progress status, only the reuse statuses given.
  assert.deepEqual(Object.keys(wire.DIALECT), ['NO_STATUS']);
  const none = gatewayDialect({ base: 'ietf', inProgressStatus: wire.DIALECT.NO_STATUS, reuseStatuses: [409] });
  assert.equal(none.inProgressStatus, undefined);
  assert.deepEqual([...none.reuseStatuses], [409]);
  assert.equal(gatewayDialect('ietf').inProgressStatus, 409);
  assert.deepEqual([...gatewayDialect('adyen').reuseStatuses], []);
});
