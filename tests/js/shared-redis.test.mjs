// Shared state across processes through Redis: a real redis-server (127.0.0.1, private port, no
// persistence, stopped by pid), four forked Node "pods" (tests/shared/worker.mjs), the local test
// gateway, and both client libraries (node-redis and ioredis). Figures are printed as diagnostics
// and written to tests/.out/shared-figures.json (the README section quotes them).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { mkdirSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  createRedisBreaker,
  createRedisIdempotencyStore,
  memoryStateStore,
  redisStateStore,
  StateStoreUnavailableError,
  CircuitOpenError,
  isSteadfastError,
} from 'steadfast';
import { startRedis, connectClient } from '../shared/redis-server.mjs';
import { startPods, startPod } from '../shared/pods.mjs';
import { startGateway } from '../support/gateway.mjs';
import { rng } from '../support/rng.mjs';
import { OUTCOME_CASES } from '../shared/breaker-outcomes.mjs';

const OUT = fileURLToPath(new URL('../.out/', import.meta.url));
const FIGURES = `${OUT}shared-figures.json`;
const figures = {};
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const now = () => performance.timeOrigin + performance.now();
const ADAPTERS = ['node-redis', 'ioredis'];
let redis;
let gateway;

before(async () => {
  redis = await startRedis();
  gateway = await startGateway({ seed: 3 });
});
after(async () => {
  await gateway?.close();
  await redis?.stop();
  mkdirSync(OUT, { recursive: true });
  const old = existsSync(FIGURES) ? JSON.parse(readFileSync(FIGURES, 'utf8')) : {};
  writeFileSync(FIGURES, JSON.stringify({ ...old, ...figures }, null, 2));
});

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

// ---------------------------------------------------------------------------------------------
// The Lua script is the distributed twin of src/core/breaker.rs: same operations, same answers.

const TWIN_CONFIGS = [
  { kind: 'rate', windowSize: 10, failureRateThreshold: 0.5, minimumCalls: 5, openDurationMs: 20, probesToClose: 2 },
  { kind: 'rate', windowSize: 100, failureRateThreshold: 0.07, minimumCalls: 100, openDurationMs: 20, probesToClose: 1 },
  { kind: 'rate', windowSize: 4, failureRateThreshold: 1, minimumCalls: 1, openDurationMs: 20, probesToClose: 3 },
  { kind: 'rate', windowSize: 7, failureRateThreshold: 0.3, minimumCalls: 3, openDurationMs: 20, probesToClose: 1 },
  { kind: 'consecutive', failureThreshold: 3, openDurationMs: 20, probesToClose: 2 },
  { kind: 'consecutive', failureThreshold: 1, openDurationMs: 20, probesToClose: 1 },
];

test('breaker twin: the Lua script and the wasm core give the same answer to the same operations', { timeout: 120_000 }, async (t) => {
  const { client, close } = await connectClient('node-redis', redis.port);
  const remote = redisStateStore({ client, prefix: 'twin', timeoutMs: 2000 });
  const local = memoryStateStore();
  let steps = 0;
  let trips = 0;
  let stale = 0;
  let timingSkips = 0;
  let releases = 0;
  try {
    for (const [i, config] of TWIN_CONFIGS.entries()) {
      for (const failP of [0.05, 0.3, 0.6]) {
        const name = `twin-${i}-${failP}`;
        const a = local.breaker(name, config);
        const b = remote.breaker(name, config);
        const random = rng(1000 * i + failP * 100 + 7);
        const pending = []; // [localPermit, remotePermit]
        // Timing guard for loaded machines: the two sides read two clocks a fraction of a ms apart,
        // so a stall longer than half a cooldown since the last sleep can legitimately split them
        // at a deadline (open → half-open, probe lease). Such a breaker's run ends there, counted;
        // a mismatch without a stall fails the test.
        let last = performance.now();
        let stalled = false;
        // Deadlines (open → half-open at openUntil, a probe's lease at 2 × openDurationMs) also
        // split the two sides when one falls between their two clock reads, which no stall
        // heuristic sees. So a mismatch where either side is half-open is a timing split too;
        // every decision taken in the closed state (the trip rule itself) must still match exactly.
        const same = (actual, expected, message) => {
          const t = performance.now();
          stalled ||= t - last > config.openDurationMs / 2;
          last = t;
          const atDeadline = actual.includes('half-open') || expected.includes('half-open');
          if ((stalled || atDeadline) && !isDeepStrictEqual(actual, expected)) return false;
          assert.deepEqual(actual, expected, message);
          return true;
        };
        for (let step = 0; step < 300; step += 1) {
          steps += 1;
          const where = `${name} step ${step}`;
          if (pending.length < 3 && (pending.length === 0 || random() < 0.55)) {
            const [x, y] = [await a.acquire(), await b.acquire()];
            if (!same([y.granted, y.state, y.transition], [x.granted, x.state, x.transition], `acquire, ${where}`)) {
              timingSkips += 1;
              break;
            }
            if (x.granted) pending.push([x.permit, y.permit]);
          } else {
            const [p, q] = pending.splice(Math.floor(random() * pending.length), 1)[0];
            // An excluded outcome (release) some of the time: nothing counted, a probe's slot back.
            const excluded = random() < 0.15;
            const failed = random() < failP;
            const op = excluded ? 'release' : `record(${failed ? 'failure' : 'success'})`;
            const [x, y] = excluded ? [await a.release(p), await b.release(q)] : [await a.record(p, failed), await b.record(q, failed)];
            if (excluded) releases += 1;
            if (!same([y.state, y.transition], [x.state, x.transition], `${op}, ${where}`)) {
              timingSkips += 1;
              break;
            }
            if (x.transition === 'none' && x.state !== 'closed') stale += 1;
            if (x.transition === 'open') {
              // Tripped (or a probe failed): check the rejection at once, far from the deadline,
              // then sleep through the cooldown so no operation races the open → half-open edge.
              trips += 1;
              const [r, s] = [await a.acquire(), await b.acquire()];
              if (!same([s.granted, s.state, s.transition], [r.granted, r.state, r.transition], `acquire while open, ${where}`)) {
                timingSkips += 1;
                break;
              }
              if (!stalled) assert.equal(r.granted, false);
              await sleep(config.openDurationMs + 10);
              last = performance.now();
              stalled = false;
            }
          }
        }
      }
    }
  } finally {
    await close();
  }
  assert.ok(timingSkips <= 6, `${timingSkips} of ${TWIN_CONFIGS.length * 3} breakers ended early on a clock split: too loaded to judge`);
  t.diagnostic(
    `${steps} operations (${releases} releases) on ${TWIN_CONFIGS.length * 3} breakers (${trips} trips, ${stale} stale reports ignored): identical answers; ${timingSkips} ended early on a stall`,
  );
  assert.ok(releases > 50, `only ${releases} releases: the twin must exercise them`);
  figures.twin = { steps, breakers: TWIN_CONFIGS.length * 3, trips, stale, timingSkips, releases };
});

for (const [i, [name, run]] of OUTCOME_CASES.entries()) {
  test(`redis store: ${name}`, async () => {
    const { client, close } = await connectClient('node-redis', redis.port);
    try {
      await run(redisStateStore({ client, prefix: 'outcomes', timeoutMs: 2000 }), `outcome-${i}`);
    } finally {
      await close();
    }
  });
}

test('breaker twin with forged hash fields: the Lua does not believe them and answers as the core does', { timeout: 60_000 }, async () => {
  const { client, close } = await connectClient('node-redis', redis.port);
  const cmd = (...args) => client.sendCommand(args.map(String));
  const remote = redisStateStore({ client, prefix: 'forged', timeoutMs: 2000 });
  const local = memoryStateStore();
  const hash = (name) => `forged:breaker:{${name.length}:${name}}`;
  const rate = { kind: 'rate', windowSize: 10, failureRateThreshold: 0.5, minimumCalls: 5, openDurationMs: 400, probesToClose: 1 };
  const consecutive = { kind: 'consecutive', failureThreshold: 3, openDurationMs: 400, probesToClose: 1 };
  /** The same outcomes on both sides; `forge` (Redis only) runs after `before` of them. Answers every step of both. */
  const drive = async (name, config, before, forge, after) => {
    const sides = [local.breaker(name, config), remote.breaker(name, config)];
    const answers = [[], []];
    const run = async (outcomes) => {
      for (const failed of outcomes) {
        for (const [i, side] of sides.entries()) {
          const ticket = await side.acquire();
          answers[i].push(ticket.granted ? [ticket.state, (await side.record(ticket.permit, failed)).transition] : ['rejected', ticket.state]);
        }
      }
    };
    await run(before);
    await forge(hash(name));
    await run(after);
    return answers;
  };
  try {
    // Failures on record, then wf forged to -1e9 (the window would never trip): recounted from the window.
    let [core, lua] = await drive('wf-low', rate, [true, true, true, false], (h) => cmd('HSET', h, 'wf', -1e9), [true]);
    assert.deepEqual(lua, core);
    assert.deepEqual(core.at(-1), ['closed', 'open'], '4 failures of 5 trip it');
    // Successes only, then wf forged to 1e9 (one failure would trip it): recounted.
    [core, lua] = await drive('wf-high', rate, [false, false, false, false, false], (h) => cmd('HSET', h, 'wf', 1e9), [true]);
    assert.deepEqual(lua, core);
    assert.deepEqual(core.at(-1), ['closed', 'none']);
    // A window list longer than windowSize (outcomes that are each plausible): trimmed to the last windowSize.
    await drive('w-long', rate, [false], (h) => cmd('RPUSH', `${h}:window`, ...Array(50).fill('1')), [false]);
    assert.equal(Number(await cmd('LLEN', `${hash('w-long')}:window`)), rate.windowSize);
    // A consecutive count forged negative: restarts at 0, and 3 failures in a row still trip it.
    [core, lua] = await drive('cf', consecutive, [], (h) => cmd('HSET', h, 'cf', -1e9, 's', 0, 'g', 0), [true, true, true]);
    assert.deepEqual(lua, core);
    assert.deepEqual(core.at(-1), ['closed', 'open']);
    // A state id that is not one reads as closed, never as something the rules cannot produce.
    [core, lua] = await drive('s', consecutive, [], (h) => cmd('HSET', h, 's', 7, 'g', 'x'), [false]);
    assert.deepEqual(lua, core);
    // An open deadline forged to 1e300: clamped to now + openDurationMs (as the core clamps openUntil).
    const name = 'u';
    await drive(name, consecutive, [true, true, true], (h) => cmd('HSET', h, 'u', 1e300), []);
    const open = await remote.breaker(name, consecutive).state();
    assert.equal(open.state, 'open');
    assert.ok(open.retryInMs <= 400, `open at most openDurationMs ahead, got ${open.retryInMs}`);
    await sleep(450);
    const probe = await remote.breaker(name, consecutive).acquire();
    assert.deepEqual([probe.granted, probe.state], [true, 'half-open'], 'after one cooldown it probes again');
    // A probe start forged into the future would hold the probe slot for good: clamped to now, so its lease lapses.
    await cmd('HSET', hash(name), 'pa', 1e300);
    assert.equal((await remote.breaker(name, consecutive).acquire()).granted, false, 'the probe is in flight');
    await sleep(850); // 2 x openDurationMs: the lease of a lost probe
    assert.equal((await remote.breaker(name, consecutive).acquire()).granted, true, 'the lost probe lease lapsed');
  } finally {
    await close();
  }
});

// ---------------------------------------------------------------------------------------------

for (const adapter of ADAPTERS) {
  describe(`${adapter}: four processes, one Redis`, () => {
    let pods;
    const prefix = `t-${adapter}`;
    before(async () => {
      pods = await startPods(4, { adapter, port: redis.port, prefix });
    });
    after(async () => {
      await Promise.all(pods.map((p) => p.stop()));
    });

    test('a trip in one process makes every process fail fast', { timeout: 30_000 }, async (t) => {
      const name = 'trip';
      const options = { windowSize: 20, failureRateThreshold: 0.5, openDurationMs: 30_000 };
      await Promise.all(pods.map((p) => p.call('breaker', { name, options })));
      const startAt = now() + 100;
      const runs = await Promise.all(pods.map((p) => p.call('untilFastFail', { name, startAt, intervalMs: 2, callMs: 1, maxMs: 5_000 })));
      const tripAt = Math.min(...runs.map((r) => r.tripAt).filter((x) => x !== null));
      assert.ok(Number.isFinite(tripAt), 'one process saw the trip');
      for (const r of runs) assert.ok(r.fastFailAt !== null, 'every process fails fast');
      const lag = runs.map((r) => r.fastFailAt - tripAt);
      const calls = runs.reduce((n, r) => n + r.calls.length, 0);
      const late = runs.reduce((n, r) => n + r.calls.filter((c) => c > tripAt).length, 0);
      // The shared window holds 20 outcomes: the dependency saw ~20 calls, not 4 x 20.
      assert.ok(calls >= 20 && calls <= 20 + 4, `calls that reached the dead dependency: ${calls}`);
      assert.ok(Math.max(...lag) < 50, `all processes fail fast within 50 ms of the trip (${lag.map((x) => x.toFixed(1))})`);
      const fast = runs.map((r) => r.fastFailMs);
      const states = await Promise.all(pods.map((p) => p.call('state', { name })));
      assert.deepEqual(states, ['open', 'open', 'open', 'open']);
      t.diagnostic(`calls before everyone failed fast: ${calls} (per-process breakers: up to 80); started after the trip: ${late}`);
      t.diagnostic(`trip → fail fast in every process: max ${Math.max(...lag).toFixed(2)} ms (per process ${lag.map((x) => x.toFixed(2)).join(', ')})`);
      t.diagnostic(`a fast-failing call took ${Math.max(...fast).toFixed(2)} ms at most (one Redis round trip)`);
      figures[`${adapter}.trip`] = {
        calls,
        lateStarts: late,
        maxPropagationMs: +Math.max(...lag).toFixed(2),
        perProcessMs: lag.map((x) => +x.toFixed(2)),
        fastFailMs: +Math.max(...fast).toFixed(2),
      };
    });

    test('half-open: exactly one probe cluster-wide under concurrency', { timeout: 30_000 }, async (t) => {
      const name = 'probe';
      const options = { failureThreshold: 1, openDurationMs: 200 };
      await Promise.all(pods.map((p) => p.call('breaker', { name, options })));
      const rounds = [];
      for (const probeOk of [false, true]) {
        // Trip (or re-trip) through one process, then let the cooldown pass.
        const tripped = now();
        if (rounds.length === 0) {
          const r = await pods[0].call('execute', { name, ok: false });
          assert.equal(r.called, true);
        }
        const startAt = Math.max(tripped, now()) + 230;
        const bursts = await Promise.all(pods.map((p) => p.call('burst', { name, startAt, concurrency: 25, callMs: 80, ok: probeOk })));
        const calls = bursts.reduce((n, b) => n + b.calls, 0);
        const results = bursts.flatMap((b) => b.results);
        assert.equal(calls, 1, `100 concurrent calls in 4 processes after the cooldown: exactly one probe (probe ${probeOk ? 'succeeds' : 'fails'})`);
        assert.equal(results.filter((r) => r === 'fast-fail').length, 99);
        const states = await Promise.all(pods.map((p) => p.call('state', { name })));
        assert.deepEqual(states, Array(4).fill(probeOk ? 'closed' : 'open'), "every process sees the probe's verdict");
        rounds.push({ calls, fastFails: 99 });
      }
      t.diagnostic('2 rounds × 100 concurrent calls in 4 processes: 1 probe each (failed probe re-opens, good probe closes)');
      figures[`${adapter}.probe`] = { concurrentCalls: 100, probes: rounds.map((r) => r.calls) };
    });

    test('two processes racing one key: exactly one gateway call', { timeout: 30_000 }, async (t) => {
      await Promise.all(pods.map((p) => p.call('store', { options: {} })));
      // The winner's gateway call is held until the loser has answered, however late the loser's
      // process starts (a busy machine): the loser always meets the key in flight.
      await gateway.configure({ seed: 3, faults: { slowMs: 20_000 } });
      const races = 20;
      const before = gateway.requests();
      let duplicates = 0;
      for (let i = 0; i < races; i += 1) {
        const key = `race-${adapter}-${i}`;
        gateway.forceNext('slow');
        const startAt = now() + 30;
        const calls = [0, 1].map((p) => pods[p].call('charge', { key, gateway: gateway.url, startAt }).then((r) => ({ p, r })));
        const first = await Promise.race(calls);
        assert.equal(first.r.called, false, `race ${i}: the first to answer did not run the charge (the winner is held)`);
        assert.equal(first.r.error?.code, 'DUPLICATE_IN_FLIGHT', `race ${i}: the other was refused as in flight`);
        // The winner's request may still be on its way to the gateway: wait for it, then release it.
        for (let w = 0; w < 2_000 && gateway.stats().inFlight < 1; w += 1) await sleep(2);
        assert.equal(gateway.releaseHeld(), 1, `race ${i}: one gateway call was held`);
        const winner = (await calls[1 - first.p]).r;
        assert.equal(winner.called, true, `race ${i}: one process ran the charge`);
        assert.equal(winner.error, undefined, `race ${i}: the winner's charge succeeded`);
        duplicates += 1;
        assert.equal(gateway.chargesByKey().get(key), 1);
      }
      assert.equal(gateway.requests() - before, races, `${races} races, ${races} gateway calls`);
      await gateway.configure({ seed: 3, faults: {} });
      t.diagnostic(`${races} races of 2 processes on one key: ${races} gateway calls, ${duplicates} refused as in flight, 0 double charges`);
      figures[`${adapter}.race`] = { races, gatewayCalls: races, refused: duplicates };
    });

    test('a process killed mid-charge: its key stays in flight, then unknown; nobody charges again', { timeout: 30_000 }, async (t) => {
      const leaseMs = 600;
      const victim = await startPod({ adapter, port: redis.port, prefix });
      await victim.call('store', { options: { inFlightLeaseMs: leaseMs } });
      await Promise.all(pods.map((p) => p.call('store', { options: { inFlightLeaseMs: leaseMs } })));
      const key = `killed-${adapter}`;
      gateway.forceNext('debitThenTimeout'); // the gateway debits, then never answers
      const charging = victim.once((m) => m.event === 'charging');
      victim.call('charge', { key, gateway: gateway.url }).catch(() => {});
      await charging;
      for (let i = 0; i < 100 && gateway.chargesByKey().get(key) !== 1; i += 1) await sleep(5);
      assert.equal(gateway.chargesByKey().get(key), 1, 'the money moved');
      const killed = await victim.kill('SIGKILL');
      assert.equal(killed.signal, 'SIGKILL');
      const requests = gateway.requests();

      const during = await Promise.all(pods.map((p) => p.call('charge', { key, gateway: gateway.url })));
      for (const r of during) {
        assert.equal(r.called, false);
        assert.equal(r.error.code, 'DUPLICATE_IN_FLIGHT', 'within the lease: in flight');
      }
      await sleep(leaseMs + 50);
      const restarted = await startPod({ adapter, port: redis.port, prefix }); // a process that never saw the key
      await restarted.call('store', { options: { inFlightLeaseMs: leaseMs } });
      const afterLease = await Promise.all([...pods, restarted].map((p) => p.call('charge', { key, gateway: gateway.url })));
      for (const r of afterLease) {
        assert.equal(r.called, false);
        assert.equal(r.error.code, 'OUTCOME_UNKNOWN', 'after the lease: unknown, refused');
      }
      assert.deepEqual(
        (await pods[2].call('unknownKeys')).filter((k) => k === key),
        [key],
        'listed for reconciliation',
      );
      assert.equal((await restarted.call('peek', { key })).status, 'unknown');
      assert.equal(gateway.requests(), requests, 'no other process called the gateway');

      // Reconciliation from any process settles it for all.
      const settlement = await (await fetch(`${gateway.url}/v1/settlements?idempotencyKey=${key}`)).json();
      assert.equal(settlement.length, 1);
      await pods[3].call('resolve', { key, outcome: { status: 'done', result: { id: settlement[0].id, amountCents: 4999 } } });
      const replay = await pods[0].call('charge', { key, gateway: gateway.url });
      assert.deepEqual(replay, { ok: true, result: { id: settlement[0].id, amountCents: 4999 }, called: false, ms: replay.ms });
      assert.equal(gateway.chargesByKey().get(key), 1, 'one debit in all');
      await restarted.stop();
      gateway.reset();
      t.diagnostic(
        `killed with SIGKILL mid-charge: 4 processes refused (in flight), after the ${leaseMs} ms lease 5 refused (unknown, incl. a fresh process); resolved once, replayed; 1 debit`,
      );
      figures[`${adapter}.killed`] = { leaseMs, refusedInFlight: 4, refusedUnknown: 5, debits: 1 };
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Redis unreachable: never a double charge, never a hang, always a report.

for (const adapter of ADAPTERS) {
  test(`${adapter}: Redis hangs, then dies mid-run: bounded, typed, reported, no double charge`, { timeout: 60_000 }, async (t) => {
    const own = await startRedis();
    const { client, close } = await connectClient(adapter, own.port);
    const events = [];
    const onStoreError = (e) => events.push(e);
    const timeoutMs = 150;
    const store = createRedisIdempotencyStore({ client, prefix: 'outage', timeoutMs, onStoreError });
    const local = createRedisBreaker({ client, prefix: 'outage', timeoutMs, onStoreError, name: 'gw', failureThreshold: 2, openDurationMs: 1000 });
    const strict = createRedisBreaker({
      client,
      prefix: 'outage',
      timeoutMs,
      onStoreError,
      name: 'gw',
      failureThreshold: 2,
      openDurationMs: 1000,
      whenUnavailable: 'reject',
    });
    let charges = 0;
    const charge = async () => {
      charges += 1;
      await sleep(20);
      return { id: `ch_${charges}` };
    };
    const timed = async (fn) => {
      const t0 = now();
      try {
        return { value: await fn(), ms: now() - t0 };
      } catch (error) {
        return { error, ms: now() - t0 };
      }
    };
    const latencies = { hung: [], dead: [] };
    try {
      assert.deepEqual(await store.run('before', charge), { id: 'ch_1' });

      // 1. Hung Redis (SIGSTOP): sockets open, no answers.
      own.pause();
      for (let i = 0; i < 5; i += 1) {
        const r = await timed(() => store.run(`hung-${i}`, charge));
        assert.ok(r.error instanceof StateStoreUnavailableError, 'typed error');
        assert.equal(r.error.code, 'STORE_UNAVAILABLE');
        assert.equal(r.error.op, 'begin');
        assert.ok(isSteadfastError(r.error));
        latencies.hung.push(r.ms);
      }
      assert.equal(charges, 1, 'no charge started that could not be recorded');
      const viaLocal = await timed(() => local.execute(async () => 'served by the local breaker'));
      assert.equal(viaLocal.value, 'served by the local breaker', "whenUnavailable 'local': an in-process breaker decides");
      const viaStrict = await timed(() => strict.execute(async () => 'never'));
      assert.ok(viaStrict.error instanceof StateStoreUnavailableError, "whenUnavailable 'reject': typed error");
      latencies.hung.push(viaLocal.ms, viaStrict.ms);
      // The local breaker still protects: two failures trip it, the third call fails fast.
      for (let i = 0; i < 2; i += 1)
        await local
          .execute(async () => {
            throw new Error('HTTP 503');
          })
          .catch(() => {});
      const tripped = await timed(() => local.execute(async () => 'x'));
      assert.ok(tripped.error instanceof CircuitOpenError, 'the local fallback trips on its own outcomes');
      own.resume();
      await sleep(50);
      assert.deepEqual(await store.run('after-resume', charge), { id: 'ch_2' }, 'works again once Redis answers');

      // 2. A charge in flight when Redis dies: the caller still gets its result; the report is lost
      //    (the record stays in flight, then unknown) and onStoreError says so.
      const inFlight = store.run('in-flight-when-redis-died', async () => {
        await sleep(100);
        return charge();
      });
      await sleep(30);
      await own.stop('SIGKILL');
      assert.deepEqual(await inFlight, { id: 'ch_3' }, 'the charge that ran is returned');
      assert.ok(
        events.some((e) => e.op === 'complete'),
        'the lost completion is reported',
      );

      // 3. Dead Redis (connection refused / reconnecting).
      for (let i = 0; i < 5; i += 1) {
        const r = await timed(() => store.run(`dead-${i}`, charge));
        assert.ok(r.error instanceof StateStoreUnavailableError);
        latencies.dead.push(r.ms);
      }
      const peek = await timed(() => store.peek('before'));
      assert.ok(peek.error instanceof StateStoreUnavailableError, 'peek: typed error too');
      latencies.dead.push(peek.ms);
      assert.equal(charges, 3, 'no new charge while Redis is down');
      const bound = timeoutMs + 60;
      for (const ms of [...latencies.hung, ...latencies.dead]) assert.ok(ms < bound, `every call settles within timeoutMs + 60 ms (${ms.toFixed(1)} ms)`);
      assert.ok(events.length >= 12, `every failure reported to onStoreError (${events.length})`);
      assert.ok(events.every((e) => e.error instanceof StateStoreUnavailableError && typeof e.op === 'string'));
    } finally {
      await own.stop();
      await close();
    }
    const fmt = (xs) => `median ${quantile(xs, 0.5).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`;
    t.diagnostic(
      `hung Redis (SIGSTOP), timeoutMs ${timeoutMs}: ${fmt(latencies.hung)}; dead Redis: ${fmt(latencies.dead)}; ${events.length} onStoreError events`,
    );
    figures[`${adapter}.outage`] = {
      timeoutMs,
      hungMs: { median: +quantile(latencies.hung, 0.5).toFixed(1), max: +Math.max(...latencies.hung).toFixed(1) },
      deadMs: { median: +quantile(latencies.dead, 0.5).toFixed(1), max: +Math.max(...latencies.dead).toFixed(1) },
      events: events.length,
    };
  });
}

test('options are validated with messages that name them', async () => {
  const { client, close } = await connectClient('node-redis', redis.port);
  try {
    assert.throws(() => createRedisBreaker({ client, windowSize: 5, failureRateThreshold: 0.5, openDurationMs: 10 }), /name must be a non-empty string/);
    assert.throws(() => createRedisBreaker({ client, name: 'x', windowSize: 5, failureRateThreshold: 2, openDurationMs: 10 }), /failureRateThreshold/);
    assert.throws(
      () => createRedisBreaker({ client: {}, name: 'x', failureThreshold: 1, openDurationMs: 10 }),
      /client must be a node-redis or ioredis client/,
    );
    assert.throws(() => createRedisBreaker({ client, name: 'x', failureThreshold: 1, openDurationMs: 10, whenUnavailable: 'maybe' }), /whenUnavailable/);
    assert.throws(() => createRedisIdempotencyStore({ client, timeoutMs: 0 }), /timeoutMs/);
    const store = createRedisIdempotencyStore({ client, prefix: 'validation' });
    await assert.rejects(
      store.run('', async () => 1),
      /idempotency key must be 1 to 255/,
    );
    await assert.rejects(store.resolve('nope', { status: 'failed' }), (e) => e.code === 'KEY_NOT_FOUND');
    await store.run('done-key', async () => 1);
    await assert.rejects(store.resolve('done-key', { status: 'failed' }), (e) => e.code === 'KEY_WRONG_STATE');
    // A definitive failure frees the key; a done key replays the JSON copy of its result.
    await assert.rejects(
      store.run('declined', async () => {
        throw Object.assign(new Error('declined'), { status: 402 });
      }),
    );
    assert.equal(await store.peek('declined'), undefined);
    assert.deepEqual(await store.run('declined', async () => ({ at: 2 })), { at: 2 });
  } finally {
    await close();
  }
});
