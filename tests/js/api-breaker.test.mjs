// CircuitBreaker through the built package imported by name. Time is the `clock` option: a number
// the test moves by hand, so every transition happens at an exact instant.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as steadfast from 'steadfast';
import { CircuitBreaker, CircuitOpenError, SteadfastError, isSteadfastError } from 'steadfast';
import { manualClock as clockAt } from '../support/clock.mjs';

/** This file's clocks start at 1_000_000 ms unless a test says otherwise. */
const manualClock = (start = 1_000_000) => clockAt(start);

/** A fake dependency: records every call, fails while `down` is true. */
function dependency() {
  const dep = {
    calls: 0,
    down: false,
    fn: async () => {
      dep.calls++;
      if (dep.down) throw Object.assign(new Error('503 from acquirer'), { status: 503 });
      return 'ok';
    },
  };
  return dep;
}

const ok = async () => 'ok';
const fail = async () => {
  throw new Error('boom');
};
const settle = (p) =>
  p.then(
    (v) => ({ ok: v }),
    (e) => ({ err: e }),
  );

/** Run outcomes ('s' success / 'f' failure) through the breaker, in order. */
async function feed(breaker, pattern) {
  for (const c of pattern) await settle(breaker.execute(c === 's' ? ok : fail));
}

const RATE = { windowSize: 10, failureRateThreshold: 0.5, openDurationMs: 30_000 };

describe('seed behaviours', () => {
  test('stays closed while the failure rate is below threshold', async () => {
    const clock = manualClock();
    const b = new CircuitBreaker({ ...RATE, clock });
    // 4 failures out of a full window of 10 = 40% < 50%
    await feed(b, 'ffffssssss');
    assert.equal(b.currentState, 'closed');
    // and a window that is not full yet is never judged: 4 of 4 failed is not a rate
    const fresh = new CircuitBreaker({ ...RATE, clock });
    await feed(fresh, 'ffff');
    assert.equal(fresh.currentState, 'closed');
    // rolling: the old failures slide out, so 4 more failures still only make 4/10
    await feed(b, 'ssssss');
    await feed(b, 'ffff');
    assert.equal(b.currentState, 'closed');
  });

  test('trips open when the rate crosses the threshold, on exactly the outcome that crosses it', async () => {
    const clock = manualClock();
    const b = new CircuitBreaker({ ...RATE, clock });
    await feed(b, 'sfsfsfsfs');
    assert.equal(b.currentState, 'closed', '4 failures in 9 outcomes: window not full yet');
    await feed(b, 'f');
    assert.equal(b.currentState, 'open', '5 of 10 = 50% ≥ 50%');
  });

  test('open circuit fails fast without touching the network', async () => {
    const clock = manualClock();
    const dep = dependency();
    const b = new CircuitBreaker({ failureThreshold: 3, openDurationMs: 30_000, clock });
    dep.down = true;
    for (let i = 0; i < 3; i++) await settle(b.execute(dep.fn));
    assert.equal(b.currentState, 'open');
    assert.equal(dep.calls, 3);
    clock.advance(10_000);
    const started = performance.now();
    const r = await settle(b.execute(dep.fn));
    assert.ok(performance.now() - started < 50, 'rejected in well under 50 ms');
    assert.equal(dep.calls, 3, 'fn not called');
    assert.ok(r.err instanceof CircuitOpenError);
    assert.ok(r.err instanceof SteadfastError);
    assert.ok(r.err instanceof Error);
    assert.equal(r.err.name, 'CircuitOpenError');
    assert.equal(r.err.code, 'CIRCUIT_OPEN');
    assert.equal(r.err.retryAfterMs, 20_000, 'remaining cooldown');
    assert.ok(isSteadfastError(r.err));
  });

  test('half-open probe success closes the circuit', async () => {
    const clock = manualClock();
    const b = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 5000, clock });
    await feed(b, 'f');
    assert.equal(b.currentState, 'open');
    clock.advance(4999);
    assert.equal(b.currentState, 'open');
    clock.advance(1);
    assert.equal(b.currentState, 'half-open');
    assert.equal(await b.execute(ok), 'ok');
    assert.equal(b.currentState, 'closed');
    // closed again means it counts from zero: one success, then it takes a full threshold again
    assert.equal(await b.execute(ok), 'ok');
  });

  test('failed probe re-opens immediately, for a fresh cooldown', async () => {
    const clock = manualClock();
    const dep = dependency();
    const b = new CircuitBreaker({ failureThreshold: 2, openDurationMs: 5000, clock });
    dep.down = true;
    await settle(b.execute(dep.fn));
    await settle(b.execute(dep.fn));
    clock.advance(5000);
    const probe = await settle(b.execute(dep.fn));
    assert.equal(probe.err.status, 503, 'the probe error itself is rethrown');
    assert.equal(dep.calls, 3);
    assert.equal(b.currentState, 'open');
    const r = await settle(b.execute(dep.fn));
    assert.ok(r.err instanceof CircuitOpenError);
    assert.equal(r.err.retryAfterMs, 5000);
    assert.equal(dep.calls, 3);
  });

  test('fallback is used instead of throwing', async () => {
    const clock = manualClock();
    const dep = dependency();
    const b = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 5000, clock });
    await feed(b, 'f');
    let fallbacks = 0;
    const fallback = async () => {
      fallbacks++;
      return 'secondary acquirer';
    };
    assert.equal(await b.execute(dep.fn, fallback), 'secondary acquirer');
    assert.equal(dep.calls, 0);
    assert.equal(fallbacks, 1);
    // a sync fallback works too, and a throwing fallback rejects with its own error
    assert.equal(await b.execute(dep.fn, () => 'sync'), 'sync');
    const oops = new Error('fallback failed');
    await assert.rejects(
      b.execute(dep.fn, () => {
        throw oops;
      }),
      (e) => e === oops,
    );
    // a closed breaker never calls the fallback
    clock.advance(5000);
    assert.equal(await b.execute(dep.fn, fallback), 'ok');
    assert.equal(fallbacks, 1);
  });
});

describe('half-open', () => {
  test('lets exactly one probe through; concurrent callers are treated as open', async () => {
    const clock = manualClock();
    const b = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 1000, clock });
    await feed(b, 'f');
    clock.advance(1000);
    let release;
    const probe = b.execute(() => new Promise((r) => (release = r)));
    let others = 0;
    const r = await settle(
      b.execute(async () => {
        others++;
      }),
    );
    assert.ok(r.err instanceof CircuitOpenError);
    assert.equal(r.err.retryAfterMs, 0, 'a probe is in flight: nothing to wait for but its outcome');
    assert.equal(
      await b.execute(
        async () => others++,
        () => 'fell back',
      ),
      'fell back',
    );
    assert.equal(others, 0);
    release('probe ok');
    assert.equal(await probe, 'probe ok');
    assert.equal(b.currentState, 'closed');
  });

  test('probesToClose: 2 needs two successful probes in a row', async () => {
    const clock = manualClock();
    const b = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 1000, probesToClose: 2, clock });
    await feed(b, 'f');
    clock.advance(1000);
    await b.execute(ok);
    assert.equal(b.currentState, 'half-open');
    await b.execute(ok);
    assert.equal(b.currentState, 'closed');
  });

  test('an abandoned probe is replaced after a lease of 2× openDurationMs', async () => {
    const clock = manualClock();
    const b = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 1000, clock });
    await feed(b, 'f');
    clock.advance(1000);
    const hung = b.execute(() => new Promise(() => {}));
    void hung;
    clock.advance(2000);
    assert.ok((await settle(b.execute(ok))).err instanceof CircuitOpenError, 'lease not expired yet');
    clock.advance(1);
    assert.equal(await b.execute(ok), 'ok');
    assert.equal(b.currentState, 'closed');
  });
});

describe('state machine details', () => {
  test('consecutive breaker: trips after failureThreshold failures in a row; a success resets the count', async () => {
    const clock = manualClock();
    const b = new CircuitBreaker({ failureThreshold: 3, openDurationMs: 1000, clock });
    await feed(b, 'ffsff');
    assert.equal(b.currentState, 'closed');
    await feed(b, 'f');
    assert.equal(b.currentState, 'open');
  });

  test('consecutive breaker: a success counts when it ends, also one admitted before the failures it follows', async () => {
    // A success with no failure in the run changes nothing and is not reported to the core; one
    // that ends after failures must still end their run, whatever the run was when it started.
    const clock = manualClock();
    const b = new CircuitBreaker({ failureThreshold: 3, openDurationMs: 1000, clock });
    let finish;
    const slow = b.execute(() => new Promise((resolve) => (finish = resolve)));
    await feed(b, 'ff');
    finish('ok');
    assert.equal(await slow, 'ok');
    await feed(b, 'ff');
    assert.equal(b.currentState, 'closed', 'the slow success ended the first run of two failures');
    await feed(b, 'f');
    assert.equal(b.currentState, 'open');
  });

  test('consecutive breaker: the same after the core memory grew while a call was in flight', async () => {
    const core = await import(new URL('./steadfast_core.js', import.meta.resolve('steadfast')).href);
    const memory = core.wasmMemory();
    const clock = manualClock();
    const b = new CircuitBreaker({ failureThreshold: 3, openDurationMs: 1000, clock });
    await feed(b, 'ss');
    let finish;
    const slow = b.execute(() => new Promise((resolve) => (finish = resolve)));
    await feed(b, 'ff');
    // A 16 MiB fingerprint makes the core's input buffer, and so its memory, grow.
    const before = memory.buffer.byteLength;
    await new steadfast.IdempotencyStore().run('grow-key', async () => 1, { fingerprint: 'x'.repeat(16 << 20) });
    assert.ok(memory.buffer.byteLength > before, 'the wasm memory grew');
    finish('ok');
    await slow;
    await feed(b, 'ffsss');
    assert.equal(b.currentState, 'closed', 'the slow success, reported after the growth, ended the run');
    await feed(b, 'fff');
    assert.equal(b.currentState, 'open', 'successes after the growth left an empty run: three failures trip it');
  });

  test('minimumCalls lets a rate breaker judge before the window is full', async () => {
    const clock = manualClock();
    const b = new CircuitBreaker({ windowSize: 100, failureRateThreshold: 0.5, minimumCalls: 4, openDurationMs: 1000, clock });
    await feed(b, 'ssf');
    assert.equal(b.currentState, 'closed', '3 outcomes < minimumCalls');
    await feed(b, 'f');
    assert.equal(b.currentState, 'open', '2 of 4');
  });

  // A trip is judged when a failure arrives: a success can only lower the rate, so recording one
  // needs no clock (and cannot open the circuit "until 1970").
  test('a success never opens the circuit; the next failure at the threshold does, for the full cooldown', async () => {
    const clock = manualClock();
    const dep = dependency();
    const b = new CircuitBreaker({ ...RATE, clock });
    await feed(b, 'fsfsfsfsfs'); // 5 of 10 failed, the 10th outcome a success: judged on failures only
    assert.equal(b.currentState, 'closed');
    clock.advance(5);
    await feed(b, 'f'); // still 5 of 10 (the oldest failure left the window): trips now
    assert.equal(b.currentState, 'open');
    assert.equal(b.toJSON().openUntil, clock() + 30_000);
    const r = await settle(b.execute(dep.fn));
    assert.ok(r.err instanceof CircuitOpenError);
    assert.equal(dep.calls, 0);
  });

  test('a window of successes never trips, even with threshold 0', async () => {
    const clock = manualClock();
    const b = new CircuitBreaker({ windowSize: 3, failureRateThreshold: 0, openDurationMs: 1000, clock });
    await feed(b, 'ssssss');
    assert.equal(b.currentState, 'closed');
    await feed(b, 'f');
    assert.equal(b.currentState, 'open');
  });

  test('isFailure: errors it rejects count as successes (a 4xx is not the dependency failing)', async () => {
    const clock = manualClock();
    const b = new CircuitBreaker({ failureThreshold: 2, openDurationMs: 1000, clock, isFailure: (e) => e.status >= 500 });
    const bad = Object.assign(new Error('400'), { status: 400 });
    for (let i = 0; i < 5; i++)
      await assert.rejects(
        b.execute(async () => Promise.reject(bad)),
        (e) => e === bad,
      );
    assert.equal(b.currentState, 'closed');
    const down = Object.assign(new Error('502'), { status: 502 });
    await settle(b.execute(async () => Promise.reject(down)));
    await settle(b.execute(async () => Promise.reject(down)));
    assert.equal(b.currentState, 'open');
  });

  test('a synchronous throw from fn is a rejected promise and counts as a failure', async () => {
    const clock = manualClock();
    const b = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 1000, clock });
    const p = b.execute(() => {
      throw new Error('sync');
    });
    assert.ok(p instanceof Promise);
    await assert.rejects(p, { message: 'sync' });
    assert.equal(b.currentState, 'open');
  });

  test('a slow call admitted while closed cannot close or re-trip the circuit after it opened', async () => {
    const clock = manualClock();
    const b = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 1000, clock });
    let finish;
    const slow = b.execute(() => new Promise((resolve, reject) => (finish = { resolve, reject })));
    await feed(b, 'f');
    assert.equal(b.currentState, 'open');
    clock.advance(500);
    finish.resolve('late');
    assert.equal(await slow, 'late');
    assert.equal(b.currentState, 'open', 'a stale success does not close');
    const s = b.toJSON();
    assert.equal(s.openUntil, 1_001_000, 'and the cooldown was not restarted');
  });

  test('isolate() holds it open until reset(), whatever the clock says', async () => {
    const clock = manualClock();
    const dep = dependency();
    const b = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 1000, clock });
    assert.equal(b.isolated, false);
    b.isolate();
    assert.equal(b.isolated, true);
    assert.equal(b.currentState, 'isolated', 'the same name SharedCircuitBreaker and onStateChange use');
    clock.advance(1e9);
    assert.equal(b.currentState, 'isolated', 'no cooldown ends it');
    const r = await settle(b.execute(dep.fn));
    assert.ok(r.err instanceof CircuitOpenError);
    assert.equal(r.err.retryAfterMs, Infinity);
    assert.equal(dep.calls, 0);
    b.reset();
    assert.equal(b.isolated, false);
    assert.equal(b.currentState, 'closed');
    assert.equal(await b.execute(dep.fn), 'ok');
  });

  test('reset() closes an open breaker and forgets the outcomes so far', async () => {
    const clock = manualClock();
    const b = new CircuitBreaker({ failureThreshold: 2, openDurationMs: 1000, clock });
    await feed(b, 'ff');
    assert.equal(b.currentState, 'open');
    b.reset();
    assert.equal(b.currentState, 'closed');
    await feed(b, 'f');
    assert.equal(b.currentState, 'closed', 'the count restarted from zero');
  });

  test('openUntil(t) opens a closed breaker until t on its clock (a peer saw it trip), at most openDurationMs ahead', async () => {
    const clock = manualClock();
    const b = new CircuitBreaker({ failureThreshold: 5, openDurationMs: 1000, clock });
    b.openUntil(clock() + 600);
    assert.equal(b.currentState, 'open');
    let r = await settle(b.execute(ok));
    assert.equal(r.err.retryAfterMs, 600);
    // A peer's deadline further out than one trip would hold is clamped to now + openDurationMs.
    b.openUntil(clock() + 3000);
    r = await settle(b.execute(ok));
    assert.equal(r.err.retryAfterMs, 1000);
    clock.advance(1000);
    assert.equal(b.currentState, 'half-open');
    assert.throws(() => b.openUntil('soon'), TypeError);
  });

  test('onStateChange reports every transition in order', async () => {
    const clock = manualClock();
    const seen = [];
    const b = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 1000, clock, onStateChange: (s) => seen.push(s) });
    await feed(b, 's'); // no transition
    await feed(b, 'f'); // closed → open
    clock.advance(1000);
    await feed(b, 'f'); // → half-open (probe admitted), probe fails → open
    clock.advance(1000);
    await feed(b, 's'); // → half-open, probe succeeds → closed
    b.isolate(); // → isolated
    b.isolate(); // already isolated: nothing
    b.reset(); // → closed
    b.reset(); // already closed: nothing
    assert.deepEqual(seen, ['open', 'half-open', 'open', 'half-open', 'closed', 'isolated', 'closed']);
  });
});

describe('toJSON and restore', () => {
  test('a rate breaker restored from JSON behaves exactly like the original', async () => {
    const clock = manualClock();
    const opts = { windowSize: 4, failureRateThreshold: 0.5, openDurationMs: 1000, clock };
    const a = new CircuitBreaker(opts);
    await feed(a, 'fss');
    const snap = JSON.parse(JSON.stringify(a));
    assert.deepEqual(snap, {
      version: 1,
      kind: 'rate',
      state: 'closed',
      openUntil: null,
      probeSuccesses: 0,
      consecutiveFailures: 0,
      window: [1, 0, 0],
    });
    const b = new CircuitBreaker({ ...opts, state: snap });
    assert.deepEqual(b.toJSON(), a.toJSON());
    const fresh = new CircuitBreaker(opts);
    for (const x of [a, b, fresh]) await feed(x, 'f');
    assert.equal(a.currentState, 'open', '2 of 4');
    assert.equal(b.currentState, 'open', 'the restored window counted the earlier failure');
    assert.equal(fresh.currentState, 'closed', 'without the snapshot one failure is not enough');
  });

  test('an open snapshot keeps its cooldown on the same clock', async () => {
    const clock = manualClock();
    const opts = { failureThreshold: 1, openDurationMs: 1000, clock };
    const a = new CircuitBreaker(opts);
    await feed(a, 'f');
    clock.advance(400);
    const snap = a.toJSON();
    assert.equal(snap.state, 'open');
    assert.equal(snap.openUntil, 1_001_000);
    const b = new CircuitBreaker({ ...opts, state: snap });
    const r = await settle(b.execute(ok));
    assert.equal(r.err.retryAfterMs, 600);
    clock.advance(600);
    assert.equal(b.currentState, 'half-open');
    assert.equal(await b.execute(ok), 'ok');
    assert.equal(b.currentState, 'closed');
  });

  test('consecutive failures, isolation and half-open progress survive a round trip', async () => {
    const clock = manualClock();
    const opts = { failureThreshold: 3, openDurationMs: 1000, probesToClose: 2, clock };
    const a = new CircuitBreaker(opts);
    await feed(a, 'ff');
    const b = new CircuitBreaker({ ...opts, state: a.toJSON() });
    assert.equal(b.toJSON().consecutiveFailures, 2);
    await feed(b, 'f');
    assert.equal(b.currentState, 'open');

    clock.advance(1000);
    await feed(b, 's');
    const half = b.toJSON();
    assert.equal(half.state, 'half-open');
    assert.equal(half.probeSuccesses, 1);
    const c = new CircuitBreaker({ ...opts, state: half });
    await feed(c, 's');
    assert.equal(c.currentState, 'closed', 'one more probe was enough');

    c.isolate();
    const d = new CircuitBreaker({ ...opts, state: c.toJSON() });
    assert.equal(d.isolated, true);
  });

  test('a snapshot that does not fit is refused with a RangeError naming `state`', () => {
    const rate = { windowSize: 4, failureRateThreshold: 0.5, openDurationMs: 1000 };
    const cons = { failureThreshold: 3, openDurationMs: 1000, probesToClose: 2 };
    const good = new CircuitBreaker(rate).toJSON();
    const bad = [
      [rate, { ...good, version: 2 }],
      [rate, { ...good, kind: 'consecutive' }],
      [rate, { ...good, state: 'ajar' }],
      [rate, { ...good, window: [1, 0, 0, 1, 1] }], // longer than windowSize
      [rate, { ...good, window: [2] }],
      [rate, { ...good, window: 'ffs' }],
      [rate, { ...good, state: 'open', openUntil: null }],
      [rate, { ...good, state: 'open', openUntil: Infinity }],
      [cons, { ...new CircuitBreaker(cons).toJSON(), consecutiveFailures: 3 }], // would already be open
      [cons, { ...new CircuitBreaker(cons).toJSON(), consecutiveFailures: -1 }],
      [cons, { ...new CircuitBreaker(cons).toJSON(), state: 'half-open', probeSuccesses: 2 }],
    ];
    for (const [opts, state] of bad) {
      assert.throws(
        () => new CircuitBreaker({ ...opts, state }),
        (e) => {
          assert.ok(e instanceof RangeError, `${JSON.stringify(state)}: ${e}`);
          assert.equal(e.code, 'INVALID_OPTION');
          assert.match(e.message, /\bstate\b/);
          return true;
        },
      );
    }
    assert.throws(
      () => new CircuitBreaker({ ...rate, state: 'closed' }),
      (e) => e instanceof TypeError && e.code === 'INVALID_OPTION' && /state/.test(e.message),
    );
    // and the module still works after all of that
    assert.equal(new CircuitBreaker({ ...rate, state: good }).currentState, 'closed');
  });
});

describe('a retry refused after an answer is judged by that answer', () => {
  const { RetryBudget, RetryBudgetExhaustedError, withRetry, createSharedBreaker, memoryStateStore } = steadfast;
  const answer = (status) => () => Promise.reject(Object.assign(new Error(`HTTP ${status}`), { status }));
  const fast = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 };
  const breakers = [
    ['CircuitBreaker', (o) => new CircuitBreaker(o)],
    ['SharedCircuitBreaker', (o) => createSharedBreaker({ name: `refused-${Math.random()}`, store: memoryStateStore(), ...o })],
  ];
  // [what the gateway answers, the breaker's predicates, the state one such call leaves (threshold 1)]
  const cases = [
    [503, { isFailure: (e) => e.status >= 500 }, 'open'],
    [429, { isExcluded: (e) => e.status === 429 }, 'closed'],
    [400, { isFailure: (e) => e.status >= 500 }, 'closed'],
  ];
  for (const [name, make] of breakers) {
    test(`${name}: a budget that refuses the retry changes nothing about how the gateway's answer counts`, async () => {
      for (const [status, predicates, state] of cases) {
        for (const budget of [undefined, new RetryBudget({ capacity: 0, refillPerSec: 0 })]) {
          const b = make({ failureThreshold: 1, openDurationMs: 60_000, ...predicates });
          const e = await b
            .execute(() => withRetry(answer(status), { ...fast, budget }))
            .then(
              () => assert.fail('resolved'),
              (x) => x,
            );
          if (budget !== undefined && status !== 400) assert.equal(e.code, 'RETRY_BUDGET_EXHAUSTED');
          assert.equal(await b.currentState, state, `${status}, ${budget === undefined ? 'no budget' : 'the budget refused the retry'}`);
        }
      }
    });
  }

  test('a retry that would not fit in maxElapsedMs counts as the answer before it; a cut-off attempt counts as itself', async () => {
    // Each next delay (1 s) would end past the 50 ms deadline: the core refuses the retry at once.
    const late = { maxAttempts: 3, baseDelayMs: 1000, maxDelayMs: 1000, jitter: 'none', maxElapsedMs: 50 };
    for (const [status, predicates, state] of cases) {
      for (const [name, make] of breakers) {
        const b = make({ failureThreshold: 1, openDurationMs: 60_000, ...predicates });
        const e = await b
          .execute(() => withRetry(answer(status), late))
          .then(
            () => assert.fail('resolved'),
            (x) => x,
          );
        if (status !== 400) {
          assert.equal(e.code, 'DEADLINE_EXCEEDED');
          assert.equal(e.inFlight, false);
        }
        assert.equal(await b.currentState, state, `${name}: ${status}, then a retry past the deadline`);
      }
    }
    // A 429 the breaker excludes, then an attempt that hangs until the deadline cuts it off: the
    // hang is what the call ended with, and it counts (every error is a failure by default).
    const b = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000, isExcluded: (e) => e.status === 429 });
    let calls = 0;
    const hangs = (ctx) =>
      ++calls === 1
        ? Promise.reject(Object.assign(new Error('HTTP 429'), { status: 429 }))
        : new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
    const e = await b
      .execute(() => withRetry(hangs, { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1, maxElapsedMs: 40 }))
      .then(
        () => assert.fail('resolved'),
        (x) => x,
      );
    assert.equal(e.code, 'DEADLINE_EXCEEDED');
    assert.equal(e.inFlight, true);
    assert.equal(e.cause.status, 429);
    assert.equal(b.currentState, 'open');
  });

  test('a call that met a 503 and then a refusal that never ran (a full bulkhead, an open inner breaker) counts as the 503', async () => {
    const { wrap, retry, bulkhead } = steadfast;
    const E503 = () => Object.assign(new Error('HTTP 503'), { status: 503 });
    const policy = () => retry({ maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 10, jitter: 'none' });
    for (const predicates of [{}, { isFailure: (e) => e.status >= 500 }]) {
      // A bulkhead of one: during the retry's sleep another caller takes the slot.
      const outer = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000, ...predicates });
      const bh = bulkhead(1, 0);
      let release;
      const held = new Promise((ok) => (release = ok));
      let calls = 0;
      const e1 = await wrap(outer, policy(), bh)
        .execute(async () => {
          if (++calls === 1) {
            setTimeout(() => bh.execute(() => held), 2);
            throw E503();
          }
          return 'ok';
        })
        .then(
          () => assert.fail('resolved'),
          (x) => x,
        );
      release();
      assert.equal(e1.code, 'BULKHEAD_REJECTED');
      assert.equal(calls, 1);
      assert.equal(outer.currentState, 'open', 'the 503 counts');
      // A per-attempt breaker inside the retry: the 503 opens it, the retry meets its refusal.
      const outer2 = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000, ...predicates });
      const inner = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
      const e2 = await wrap(outer2, policy(), inner)
        .execute(async () => {
          throw E503();
        })
        .then(
          () => assert.fail('resolved'),
          (x) => x,
        );
      assert.equal(e2.code, 'CIRCUIT_OPEN');
      assert.equal(outer2.currentState, 'open', 'the 503 counts');
    }
    // Refused before anything ran: still nothing to count.
    const outer = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
    const inner = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
    inner.isolate();
    await assert.rejects(
      wrap(outer, policy(), inner).execute(async () => 'never'),
      { code: 'CIRCUIT_OPEN' },
    );
    assert.equal(outer.currentState, 'closed');
  });

  test('a forged refusal whose cause is itself does not hang the breaker', async () => {
    const forged = new RetryBudgetExhaustedError(new Error('x'), 1);
    Object.defineProperty(forged, 'cause', { value: forged });
    const b = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
    await assert.rejects(
      b.execute(() => Promise.reject(forged)),
      (e) => e === forged,
    );
    assert.equal(b.currentState, 'open', 'judged as itself after a few causes: every error counts by default');
  });
});
