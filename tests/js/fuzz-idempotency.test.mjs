// Fuzz, property 3: IdempotencyStore call sequences against a model (the rule every call is held to,
// and FUZZ_RUNS / FUZZ_SEED: fuzz-options.test.mjs and ./fuzz/harness.mjs).
import { test } from 'node:test';
import {
  DuplicateRequestError,
  IdempotencyKeyReuseError,
  IdempotencyStateError,
  IdempotencyStore,
  OutcomeUnknownError,
  UserBoom,
  assert,
  assertExecuted,
  attempt,
  build,
  count,
  fc,
  findings,
  freshWorks,
  int,
  newIdempotencyKey,
  ok,
  params,
  runs,
  timeoutFor,
  steadfast,
  valueSpec,
  weirdData,
} from './fuzz/harness.mjs';

// ---------------------------------------------------------------------------------------------
// Property 3: IdempotencyStore call sequences against a model, with re-entrant callbacks.

const KEYS = ['k1', 'k2', 'k3', 'order-42'];
const storeOp = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant('run'),
      k: int(0, 3),
      fp: fc.constantFrom(undefined, 'a', 'b'),
      behavior: fc.constantFrom('ok', 'okSync', 'transient', 'definitive', 'throwSync', 'throwString', 'reenter', 'deferred', 'timeout', 'isTransientThrows'),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('settle'), i: int(0, 3), outcome: fc.constantFrom('ok', 'transient', 'definitive') }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('resolve'),
      k: int(0, 3),
      outcome: fc.oneof(fc.constantFrom({ status: 'done', result: 'R' }, { status: 'failed' }), valueSpec),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('peek'), k: int(0, 3) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('advance'), ms: fc.oneof(int(0, 300), fc.constantFrom(1e9)) }) },
  fc.record({ op: fc.constant('badKey'), key: fc.oneof(weirdData, fc.constantFrom('', 'a'.repeat(256), 'ключ', 'tab\t', '\u007f')), which: int(0, 2) }),
);

test(`fuzz 3: IdempotencyStore call sequences against a model (${runs('store')} cases)`, { timeout: timeoutFor('store') }, async () => {
  const arb = fc.record({ ttlMs: fc.option(int(1, 1000), { nil: undefined }), ops: fc.array(storeOp, { minLength: 1, maxLength: 30 }) });
  await fc.assert(
    fc.asyncProperty(arb, async ({ ttlMs, ops }) => {
      count('store');
      const where = 'store sequence';
      let now = 1_000;
      let isTransientThrows = false;
      const store = new IdempotencyStore({
        ttlMs,
        clock: () => now,
        isTransient: (e) => {
          if (isTransientThrows) throw new UserBoom('isTransient');
          return steadfast.isTransientError(e);
        },
      });
      const ttl = ttlMs ?? 86_400_000;
      /** key -> { status, fp, expiresAt, result, startedAt } */
      const model = new Map();
      const live = (key) => {
        const r = model.get(key);
        if (r === undefined) return undefined;
        if (r.status === 'done' && now >= r.expiresAt) return undefined;
        return r;
      };
      const deferred = [];
      const reentrantFailures = [];
      const complete = (key, kind, result) => {
        const r = model.get(key);
        if (kind === 'ok') Object.assign(r, { status: 'done', result, expiresAt: now + ttl });
        else if (kind === 'transient') r.status = 'unknown';
        else model.delete(key);
      };
      for (const op of ops) {
        switch (op.op) {
          case 'run': {
            const key = KEYS[op.k];
            const rec = live(key);
            const boom = new UserBoom('fn', op.behavior === 'transient' ? { status: 503 } : op.behavior === 'definitive' ? { status: 400 } : undefined);
            let called = false;
            const result = { v: Symbol('result') };
            const d = op.behavior === 'deferred' ? Promise.withResolvers() : undefined;
            const timeoutError = new DOMException('timed out', 'TimeoutError');
            const fn = () => {
              called = true;
              switch (op.behavior) {
                case 'ok':
                  return Promise.resolve(result);
                case 'okSync':
                  return result;
                case 'transient':
                case 'definitive':
                  return Promise.reject(boom);
                case 'timeout':
                  return Promise.reject(timeoutError);
                case 'isTransientThrows':
                  isTransientThrows = true;
                  return Promise.reject(boom);
                case 'throwSync':
                  throw boom;
                case 'throwString':
                  throw 'a string';
                case 'reenter': {
                  // The key is in flight: a duplicate is refused, peek says in flight, resolve refuses.
                  const dup = store.run(key, ok, op.fp === undefined ? undefined : { fingerprint: op.fp });
                  dup.then(
                    () => reentrantFailures.push('re-entrant run resolved'),
                    (e) => {
                      if (!(e instanceof DuplicateRequestError)) reentrantFailures.push(`re-entrant run: ${e?.name}`);
                    },
                  );
                  if (store.peek(key)?.status !== 'in-flight') reentrantFailures.push(`re-entrant peek: ${JSON.stringify(store.peek(key))}`);
                  try {
                    store.resolve(key, { status: 'done', result: 1 });
                    reentrantFailures.push('re-entrant resolve accepted');
                  } catch (e) {
                    if (!(e instanceof IdempotencyStateError && e.code === 'KEY_WRONG_STATE'))
                      reentrantFailures.push(`re-entrant resolve: ${e?.name} ${e?.code}`);
                  }
                  return Promise.resolve(result);
                }
                case 'deferred':
                  return d.promise;
              }
              throw new Error('unreachable test code');
            };
            const p = store.run(key, fn, op.fp === undefined ? undefined : { fingerprint: op.fp });
            if (rec !== undefined) {
              const r = await attempt(where, () => p);
              assert.equal(called, false, 'fn ran for a live key');
              if (rec.fp !== op.fp) {
                // Strict: a request without a fingerprint differs from one with a fingerprint.
                assert.ok(r.error instanceof IdempotencyKeyReuseError, `expected KEY_REUSED, got ${r.error?.name ?? 'success'}`);
              } else if (rec.status === 'done') {
                assert.ok(r.ok, `expected a replay, got ${r.error?.name}`);
                assert.equal(r.value, rec.result, 'replayed another result');
              } else if (rec.status === 'in-flight') {
                assert.ok(r.error instanceof DuplicateRequestError, `expected DUPLICATE_IN_FLIGHT, got ${r.error?.name ?? 'success'}`);
                assert.equal(r.error.startedAt, rec.startedAt);
              } else {
                assert.ok(r.error instanceof OutcomeUnknownError, `expected OUTCOME_UNKNOWN, got ${r.error?.name ?? 'success'}`);
                assert.equal(r.error.key, key);
              }
              break;
            }
            assert.equal(called, true, 'fn did not run for a free key');
            model.set(key, { status: 'in-flight', fp: op.fp, startedAt: now });
            if (d !== undefined) {
              deferred.push({ key, d, p, result, boom });
              p.catch(() => {});
              break;
            }
            const r = await attempt(where, () => p, [boom, 'a string', timeoutError]);
            if (op.behavior === 'ok' || op.behavior === 'okSync' || op.behavior === 'reenter') {
              assert.ok(r.ok, `run failed: ${r.error?.message}`);
              assert.equal(r.value, result);
              complete(key, 'ok', result);
            } else {
              assert.equal(r.ok, false);
              const transient = op.behavior === 'transient' || op.behavior === 'timeout' || op.behavior === 'isTransientThrows';
              const thrown = op.behavior === 'throwString' ? 'a string' : boom;
              if (op.behavior !== 'timeout' && transient) {
                // Parked: the rejection says so, with the user error as its cause.
                assert.ok(
                  r.error?.code === 'OUTCOME_UNKNOWN' && r.error.key === key && r.error.cause === thrown,
                  'a parked run rejects OutcomeUnknownError(cause: the user error)',
                );
              } else if (op.behavior !== 'timeout') assert.equal(r.error, thrown, 'the user error was not passed through');
              complete(key, transient ? 'transient' : 'definitive');
            }
            isTransientThrows = false;
            break;
          }
          case 'settle': {
            if (deferred.length === 0) break;
            const { key, d, p, result, boom } = deferred.splice(op.i % deferred.length, 1)[0];
            if (op.outcome === 'ok') d.resolve(result);
            else {
              boom.status = op.outcome === 'transient' ? 503 : 400;
              d.reject(boom);
            }
            const r = await attempt(where, () => p, [boom]);
            assert.equal(r.ok, op.outcome === 'ok');
            if (r.ok) assert.equal(r.value, result);
            complete(key, op.outcome, result);
            break;
          }
          case 'resolve': {
            const key = KEYS[op.k];
            const outcome = build(op.outcome, 'outcome');
            const rec = live(key);
            const r = await attempt(where, () => store.resolve(key, outcome));
            let valid;
            try {
              valid = outcome !== null && typeof outcome === 'object' && (outcome.status === 'done' || outcome.status === 'failed');
            } catch {
              valid = false;
            }
            if (!valid) {
              assert.equal(r.ok, false, 'a malformed outcome was accepted');
              break;
            }
            if (rec?.status === 'unknown') {
              assert.ok(r.ok, `resolve of an unknown key failed: ${r.error?.message}`);
              if (outcome.status === 'done') Object.assign(rec, { status: 'done', result: outcome.result, expiresAt: now + ttl });
              else model.delete(key);
            } else {
              assert.ok(r.error instanceof IdempotencyStateError, `resolve of a ${rec?.status ?? 'missing'} key: ${r.error?.name ?? 'accepted'}`);
              if (rec !== undefined) assert.equal(r.error.code, 'KEY_WRONG_STATE');
              else if (!model.has(key)) assert.equal(r.error.code, 'KEY_NOT_FOUND');
            }
            break;
          }
          case 'peek': {
            const key = KEYS[op.k];
            const rec = live(key);
            const p = store.peek(key);
            if (rec === undefined) assert.equal(p, undefined);
            else if (rec.status === 'done') assert.deepEqual(p, { status: 'done', result: rec.result });
            else if (rec.status === 'in-flight') assert.deepEqual(p, { status: 'in-flight', startedAt: rec.startedAt });
            else {
              assert.equal(p.status, 'unknown');
              assert.equal(p.startedAt, rec.startedAt);
              assert.equal(typeof p.error, 'string');
            }
            break;
          }
          case 'advance':
            now += op.ms;
            break;
          case 'badKey': {
            const key = build(op.key, 'key');
            const valid = typeof key === 'string' && key.length >= 1 && key.length <= 255 && /^[\x20-\x7e]+$/.test(key);
            const r = await attempt(where, () =>
              op.which === 0 ? store.run(key, ok) : op.which === 1 ? store.peek(key) : store.resolve(key, { status: 'failed' }),
            );
            if (!valid && op.which === 1 && typeof key === 'string' && r.ok) {
              // Minor inconsistency (reported): peek() of an invalid string key answers undefined instead of INVALID_KEY.
              assert.equal(r.value, undefined);
              findings.peekInvalidKey += 1;
            } else if (!valid) {
              assert.equal(r.ok, false, `bad key ${String(key)} accepted`);
              assert.ok(r.error instanceof UserBoom || r.error.code === 'INVALID_KEY', `bad key: ${r.error?.name} ${r.error?.code}`);
            } else if (op.which === 0 && r.ok) {
              model.set(key, { status: 'done', result: 'ok', expiresAt: now + ttl, startedAt: now });
            }
            break;
          }
        }
        // After every op: unknownKeys is the model's set, oldest first; size is bounded by the model.
        const unknown = store.unknownKeys();
        const modelUnknown = [...model].filter(([, r]) => r.status === 'unknown');
        assert.deepEqual(new Set(unknown), new Set(modelUnknown.map(([k]) => k)));
        const starts = unknown.map((k) => model.get(k).startedAt);
        assert.deepEqual(
          starts,
          [...starts].sort((a, b) => a - b),
          'unknownKeys not oldest first',
        );
        const liveCount = [...model.keys()].filter((k) => live(k) !== undefined).length;
        assert.ok(store.size >= liveCount && store.size <= model.size, `size ${store.size}, live ${liveCount}, model ${model.size}`);
      }
      for (const { d, p } of deferred) {
        d.resolve('late');
        await p.catch(() => {});
      }
      assert.deepEqual(reentrantFailures, []);
      // The same store still works for a new key; a fresh one too.
      const k = newIdempotencyKey();
      assert.equal(await store.run(k, ok), 'ok');
      await freshWorks(where);
    }),
    params('store'),
  );
});

test('fuzz: cases executed', () => assertExecuted(['store']));
