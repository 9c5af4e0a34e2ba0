// Fuzz, property 2: CircuitBreaker call sequences, throwing and re-entrant callbacks (the rule every
// call is held to, and FUZZ_RUNS / FUZZ_SEED: fuzz-options.test.mjs and ./fuzz/harness.mjs).
import { test } from 'node:test';
import {
  CircuitBreaker,
  CircuitOpenError,
  UserBoom,
  assert,
  assertAllowed,
  assertExecuted,
  attempt,
  count,
  fc,
  freshWorks,
  int,
  ok,
  params,
  runs,
  timeoutFor,
  weirdData,
} from './fuzz/harness.mjs';

// ---------------------------------------------------------------------------------------------
// Property 2: call sequences over one CircuitBreaker, with callbacks that throw or re-enter.

const breakerOp = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant('exec'),
      outcome: fc.constantFrom('ok', 'reject', 'throwSync', 'rejectNonError', 'plainValue', 'rejectCounted'),
      fallback: fc.constantFrom('none', 'none', 'value', 'throws'),
    }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('advance'), ms: fc.oneof(int(0, 2000), fc.constantFrom(0, 1, 999, 1000, 1001, 1e7)) }) },
  fc.record({
    op: fc.constant('concurrent'),
    n: int(2, 5),
    outcomes: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
    order: fc.array(int(0, 4), { minLength: 5, maxLength: 5 }),
  }),
  fc.constant({ op: 'isolate' }),
  fc.constant({ op: 'reset' }),
  fc.record({ op: fc.constant('openUntil'), v: fc.oneof(weirdData, int(0, 1e6)) }),
  fc.constant({ op: 'snapshot' }),
);

test(`fuzz 2: CircuitBreaker call sequences, throwing and re-entrant callbacks (${runs('breaker')} cases)`, { timeout: timeoutFor('breaker') }, async () => {
  const arb = fc.record({
    shape: fc.oneof(
      fc
        .record({
          windowSize: int(1, 8),
          failureRateThreshold: fc.double({ min: 0, max: 1, noNaN: true }),
          minimumCalls: fc.option(int(1, 8), { nil: undefined }),
          openDurationMs: int(0, 1500),
          probesToClose: int(1, 3),
        })
        .filter((s) => s.minimumCalls === undefined || s.minimumCalls <= s.windowSize)
        .map((s) => (s.minimumCalls === undefined ? (({ minimumCalls: _omit, ...r }) => r)(s) : s)),
      fc.record({ failureThreshold: int(1, 4), openDurationMs: int(0, 1500), probesToClose: int(1, 3) }),
    ),
    onStateChange: fc.constantFrom('none', 'record', 'throw', 'reenter', 'reenterReset'),
    isFailure: fc.constantFrom('default', 'throws', 'weird', 'reenter'),
    ops: fc.array(breakerOp, { minLength: 1, maxLength: 30 }),
  });
  await fc.assert(
    fc.asyncProperty(arb, async (c) => {
      count('breaker');
      let now = 1_000_000;
      const where = 'breaker sequence';
      let b;
      const pending = [];
      const options = {
        ...c.shape,
        clock: () => now,
        onStateChange:
          c.onStateChange === 'none'
            ? undefined
            : (s) => {
                assert.ok(['closed', 'open', 'half-open', 'isolated'].includes(s), `onStateChange(${s})`);
                if (c.onStateChange === 'throw') throw new UserBoom('onStateChange');
                if (c.onStateChange.startsWith('reenter') && b !== undefined) {
                  b.currentState;
                  b.toJSON();
                  pending.push(b.execute(ok).catch((e) => assertAllowed(e, 're-entrant execute')));
                  if (c.onStateChange === 'reenterReset' && s === 'open') b.reset();
                }
              },
        isFailure:
          c.isFailure === 'default'
            ? undefined
            : (e) => {
                if (c.isFailure === 'throws') throw new UserBoom('isFailure');
                if (c.isFailure === 'weird') return 'yes';
                if (b !== undefined) b.currentState;
                return !(e instanceof UserBoom && e.benign);
              },
      };
      b = new CircuitBreaker(options);
      for (const op of c.ops) {
        const state = b.currentState;
        assert.ok(['closed', 'open', 'half-open', 'isolated'].includes(state), `state ${state}`);
        switch (op.op) {
          case 'exec': {
            let called = 0;
            let fbCalled = 0;
            const boom = new UserBoom('fn', { benign: op.outcome === 'reject' });
            const fn = () => {
              called += 1;
              switch (op.outcome) {
                case 'ok':
                  return Promise.resolve('v');
                case 'plainValue':
                  return 'v';
                case 'throwSync':
                  throw boom;
                case 'rejectNonError':
                  return Promise.reject(boom);
                default:
                  return Promise.reject(boom);
              }
            };
            const fallback =
              op.fallback === 'none'
                ? undefined
                : () => {
                    fbCalled += 1;
                    if (op.fallback === 'throws') throw new UserBoom('fallback');
                    return 'fb';
                  };
            const before = b.isolated;
            const r = await attempt(where, () => b.execute(fn, fallback), [boom]);
            if (state === 'open' || before) {
              assert.equal(called, 0, 'an open breaker called fn');
              if (fallback === undefined && r.ok === false && !(r.error instanceof UserBoom))
                assert.ok(r.error instanceof CircuitOpenError, `open breaker rejected with ${r.error?.name}`);
              if (fallback !== undefined) assert.ok(fbCalled === 1 || (r.ok === false && r.error instanceof UserBoom), 'fallback not called');
            }
            if (state === 'closed' && !before && !(r.ok === false && r.error instanceof UserBoom && r.error.message.includes('onStateChange'))) {
              assert.equal(called, 1, 'a closed breaker did not call fn exactly once');
            }
            if (r.ok && called === 1) assert.equal(r.value, 'v');
            if (r.ok && called === 0) assert.equal(r.value, 'fb');
            if (r.error instanceof CircuitOpenError) {
              assert.equal(called, 0);
              assert.ok(r.error.retryAfterMs >= 0 || Number.isNaN(r.error.retryAfterMs) === false, `retryAfterMs ${r.error.retryAfterMs}`);
            }
            break;
          }
          case 'advance':
            now += op.ms;
            break;
          case 'concurrent': {
            const defs = [];
            const calls = [];
            for (let i = 0; i < op.n; i++) {
              const d = Promise.withResolvers();
              d.promise.catch(() => {}); // an open breaker never calls fn: nobody else awaits it
              defs.push(d);
              calls.push(attempt(where, () => b.execute(() => d.promise)));
            }
            for (const j of op.order.slice(0, op.n)) {
              const i = j % op.n;
              const d = defs[i];
              if (op.outcomes[i]) d.resolve('v');
              else d.reject(new UserBoom('concurrent'));
            }
            for (const d of defs) d.resolve('late');
            await Promise.all(calls);
            break;
          }
          case 'isolate':
            await attempt(where, () => b.isolate());
            assert.equal(b.currentState, 'isolated');
            assert.equal(b.isolated, true);
            break;
          case 'reset':
            await attempt(where, () => b.reset());
            assert.equal(b.currentState, 'closed');
            assert.equal(b.isolated, false);
            break;
          case 'openUntil':
            await attempt(where, () => b.openUntil(op.v));
            break;
          case 'snapshot': {
            const snap = b.toJSON();
            // openUntil(±Infinity) is refused (RangeError) and peer deadlines are clamped to
            // now + openDurationMs, so a snapshot's deadline is always finite and restorable.
            assert.ok(snap.openUntil === null || Number.isFinite(snap.openUntil), `non-finite openUntil in ${JSON.stringify(snap)}`);
            const again = new CircuitBreaker({ ...c.shape, clock: () => now, state: JSON.parse(JSON.stringify(snap)) });
            const plain = (x) => JSON.parse(JSON.stringify(x)); // -0 and 0 are one number in a stored snapshot
            assert.deepEqual(plain(again.toJSON()), plain(snap));
            assert.equal(again.currentState, b.currentState);
            break;
          }
        }
      }
      await Promise.all(pending);
      // The same instance still works once reset; and a fresh one.
      await attempt(where, () => b.reset());
      assert.equal(b.currentState, 'closed');
      const onStateChangeThrows = c.onStateChange === 'throw';
      const r = await attempt(where, () => b.execute(ok));
      assert.ok(r.ok || onStateChangeThrows, `the same breaker no longer works after reset: ${r.error?.message}`);
      if (r.ok) assert.equal(r.value, 'ok');
      await freshWorks(where);
    }),
    params('breaker'),
  );
});

test('fuzz: cases executed', () => assertExecuted(['breaker']));
