// Fuzz, property 6: chargeCustomer + reconcile on one store and breaker; and the regression tests of
// the bugs the fuzzing found (the rule every call is held to, and FUZZ_RUNS / FUZZ_SEED:
// fuzz-options.test.mjs and ./fuzz/harness.mjs).
import { test } from 'node:test';
import {
  CircuitBreaker,
  IdempotencyStore,
  UserBoom,
  assert,
  assertAllowed,
  assertExecuted,
  attempt,
  chargeCustomer,
  count,
  fc,
  freshWorks,
  int,
  isTrap,
  ok,
  params,
  parseRetryAfter,
  reconcile,
  runs,
  timeoutFor,
  weirdData,
  withRetry,
} from './fuzz/harness.mjs';

// ---------------------------------------------------------------------------------------------
// Property 6: the pipeline with a shared store and breaker, an in-process gateway, reconcile.

test(`fuzz 6: chargeCustomer + reconcile on one store and breaker (${runs('pipeline')} cases)`, { timeout: timeoutFor('pipeline') }, async () => {
  const arb = fc.record({
    charges: fc.array(
      fc.record({
        k: int(0, 5),
        amount: fc.oneof(int(1, 5), fc.constantFrom(0, -1, 1.5, NaN, 2 ** 53)),
        script: fc.array(fc.constantFrom('ok', '503', 'debitTimeout', 'decline', 'throwSync'), { minLength: 1, maxLength: 3 }),
      }),
      { minLength: 1, maxLength: 25 },
    ),
    lookup: fc.constantFrom('truth', 'throws', 'garbage', 'undefined', 'reenter'),
    concurrency: fc.oneof(int(1, 4), weirdData),
  });
  await fc.assert(
    fc.asyncProperty(arb, async ({ charges, lookup, concurrency }) => {
      count('pipeline');
      const where = 'pipeline';
      const store = new IdempotencyStore();
      const breaker = new CircuitBreaker({ failureThreshold: 3, openDurationMs: 0 });
      const ledger = new Map(); // key -> [{ amount, ref }]
      const gateway = async (charge, ctx) => {
        const script = charge.script;
        const step = script[Math.min(ctx.attempt - 1, script.length - 1)];
        const debit = () => {
          const list = ledger.get(charge.idempotencyKey) ?? [];
          if (list.length === 0) list.push({ amountCents: charge.amountCents, reference: `ch_${charge.idempotencyKey}` });
          ledger.set(charge.idempotencyKey, list); // the gateway is idempotent on the key
          return { ...list[0] };
        };
        switch (step) {
          case 'ok':
            return debit();
          case '503':
            throw new UserBoom('503', { status: 503, retryAfterMs: 0 });
          case 'debitTimeout':
            debit();
            throw new UserBoom('timeout after debit', { code: 'ETIMEDOUT' });
          case 'decline':
            throw new UserBoom('declined', { status: 402 });
          default:
            throw new UserBoom('sync');
        }
      };
      const policy = { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 };
      await Promise.all(
        charges.map(async (ch) => {
          const charge = { idempotencyKey: `key-${ch.k}`, amountCents: ch.amount, currency: 'usd', script: ch.script };
          const r = await attempt(where, () => chargeCustomer(charge, { store, breaker, gateway, policy }));
          if (r.ok) assert.equal(r.value.amountCents, ledger.get(charge.idempotencyKey)?.[0]?.amountCents);
        }),
      );
      const lookupFn = async (key) => {
        switch (lookup) {
          case 'throws':
            throw new UserBoom('lookup');
          case 'garbage':
            return { status: 'maybe' };
          case 'undefined':
            return undefined;
          case 'reenter':
            store.peek(key);
            store.unknownKeys();
            await store.run(key, ok).catch((e) => assertAllowed(e, 're-entrant run in lookup'));
          // falls through
          default: {
            const list = ledger.get(key);
            return list ? { status: 'done', result: list[0] } : { status: 'failed' };
          }
        }
      };
      const before = store.unknownKeys().length;
      // settleAfterMs 0: this in-process gateway answers synchronously, nothing can land late.
      const r = await attempt(where, () => reconcile(store, lookupFn, { concurrency, settleAfterMs: 0 }));
      if (r.ok) {
        assert.equal(r.value.checked, before);
        assert.equal(r.value.checked, r.value.done + r.value.failed + r.value.deferred + r.value.stillUnknown);
        for (const { error } of r.value.errors) assertAllowed(error, 'reconcile error');
        if (lookup === 'truth' || lookup === 'reenter') assert.equal(store.unknownKeys().length, 0);
        for (const [key, list] of ledger) {
          assert.equal(list.length, 1);
          const p = store.peek(key);
          if (p?.status === 'done') assert.deepEqual(p.result, list[0], 'store and ledger disagree');
        }
      }
      await freshWorks(where);
    }),
    params('pipeline'),
  );
});

// ---------------------------------------------------------------------------------------------
// Bugs the fuzzing found, fixed: each stays as a regression test.

test('regression: parseRetryAfter(non-string) is a TypeError, not a wasm trap or a leak', async () => {
  const core = await import(new URL('./steadfast_core.js', import.meta.resolve('steadfast')).href);
  core.initSync();
  const memory = core.wasmMemory();
  for (const v of [5, {}, Symbol('s'), true, [1]]) {
    try {
      parseRetryAfter(v, 0);
    } catch (e) {
      assert.ok(!isTrap(e), `parseRetryAfter(${typeof v}) trapped: ${e.constructor.name}: ${e.message}`);
      assertAllowed(e, 'parseRetryAfter');
    }
  }
  const before = memory.buffer.byteLength;
  try {
    parseRetryAfter({ length: 64 * 1024 * 1024 }, 0);
  } catch {
    // a typed refusal is as good as a bounded success here; only the memory growth is checked
  }
  assert.ok(memory.buffer.byteLength - before < 1024 * 1024, `one call grew wasm memory by ${memory.buffer.byteLength - before} bytes, never freed`);
});

test('regression: timers longer than 2^31-1 ms are not turned into 1 ms (maxElapsedMs, long sleeps)', async () => {
  const slow = () => new Promise((resolve) => setTimeout(() => resolve('ok'), 30));
  const r = await withRetry(slow, { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0, maxElapsedMs: 2 ** 31 }).then(
    (v) => v,
    (e) => e,
  );
  assert.equal(r, 'ok', `a 24.8-day deadline gave up after 30 ms with ${r?.name}`);
  let calls = 0;
  const t0 = Date.now();
  const controller = new AbortController();
  const p = withRetry(
    async () => {
      if (calls++ === 0) throw Object.assign(new Error('429'), { status: 429, retryAfterMs: 2 ** 31 });
      return 'retried';
    },
    { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 2 ** 32, signal: controller.signal },
  ).catch((e) => e);
  await new Promise((resolve) => setTimeout(resolve, 50));
  controller.abort(new Error('stop'));
  await p;
  assert.equal(calls, 1, `Retry-After 2^31 ms (capped by maxDelayMs 2^32) retried after ${Date.now() - t0} ms`);
});

test('regression: openUntil(Infinity) is refused (its toJSON() could not be restored)', () => {
  const o = { failureThreshold: 2, openDurationMs: 100 };
  const b = new CircuitBreaker(o);
  assert.throws(
    () => b.openUntil(Infinity),
    (e) => e instanceof RangeError && /untilMs/.test(e.message),
  );
  b.openUntil(Date.now() + 60_000);
  const snap = b.toJSON();
  assert.equal(new CircuitBreaker({ ...o, state: snap }).currentState, 'open');
});

test('fuzz: cases executed', () => assertExecuted(['pipeline']));
