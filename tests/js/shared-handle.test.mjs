// The public breaker handle of a StateStore speaks state names, never the core's numbers (issue 14):
// the memory and the Redis handles answer the same literal names for one scripted life of a
// breaker, and SharedCircuitBreaker runs on a store written by hand with strings only (no core).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { memoryStateStore, redisStateStore, SharedCircuitBreaker, CircuitOpenError } from 'steadfast';
import { startRedis, connectClient } from '../shared/redis-server.mjs';

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
let redis;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis?.stop();
});

const CONFIG = { kind: 'consecutive', failureThreshold: 1, openDurationMs: 50, probesToClose: 1 };

/** One life of a breaker, every answer compared with its literal names. */
async function scripted(h) {
  const first = await h.acquire();
  assert.deepEqual([first.granted, first.state, first.transition, first.retryInMs], [true, 'closed', 'none', 0]);
  assert.deepEqual(await h.record(first.permit, true), { state: 'open', transition: 'open' });
  const refused = await h.acquire();
  assert.deepEqual([refused.granted, refused.state, refused.transition], [false, 'open', 'none']);
  assert.ok(refused.retryInMs > 0 && refused.retryInMs <= 50, `retryInMs ${refused.retryInMs}`);
  const seen = await h.state();
  assert.equal(seen.state, 'open');
  assert.ok(seen.retryInMs > 0 && seen.retryInMs <= 50, `state().retryInMs ${seen.retryInMs}`);
  await sleep(70);
  const probe = await h.acquire();
  assert.deepEqual([probe.granted, probe.state, probe.transition], [true, 'half-open', 'half-open']);
  assert.deepEqual(await h.record(probe.permit, false), { state: 'closed', transition: 'closed' });
  // A report from before the trip is stale: no transition.
  assert.deepEqual(await h.record(first.permit, true), { state: 'closed', transition: 'none' });
  assert.deepEqual(await h.isolate(), { state: 'isolated', transition: 'isolated' });
  assert.deepEqual(await h.isolate(), { state: 'isolated', transition: 'none' });
  const held = await h.acquire();
  assert.deepEqual([held.granted, held.state, held.transition, held.retryInMs], [false, 'isolated', 'none', Infinity]);
  assert.deepEqual(await h.state(), { state: 'isolated', retryInMs: 0 });
  assert.deepEqual(await h.reset(), { state: 'closed', transition: 'closed' });
  assert.deepEqual(await h.reset(), { state: 'closed', transition: 'none' });
}

test("the memory store's breaker handle answers state names", async () => {
  await scripted(memoryStateStore().breaker('names', CONFIG));
});

for (const adapter of ['node-redis', 'ioredis']) {
  test(`the Redis store's breaker handle (${adapter}) answers the same names`, async () => {
    const { client, close } = await connectClient(adapter, redis.port);
    try {
      await scripted(redisStateStore({ client, prefix: `names-${adapter}`, timeoutMs: 2000 }).breaker('names', CONFIG));
    } finally {
      await close();
    }
  });
}

/** A state store written by hand, in names only: one consecutive breaker (threshold 1) per name. */
function handWrittenStore(log) {
  const breakers = new Map();
  const breaker = (openDurationMs) => {
    let state = 'closed';
    let openUntil = 0;
    let gen = 0;
    const moved = (to) => {
      if (to === state) return { state, transition: 'none' };
      state = to;
      gen += 1;
      return { state, transition: to };
    };
    return {
      async acquire() {
        log.push('acquire');
        if (state === 'open' && Date.now() >= openUntil) return { granted: true, permit: gen + 1, retryInMs: 0, ...moved('half-open') };
        if (state === 'open') return { granted: false, state, retryInMs: openUntil - Date.now(), transition: 'none' };
        if (state === 'isolated') return { granted: false, state, retryInMs: Infinity, transition: 'none' };
        return { granted: true, state, permit: gen, retryInMs: 0, transition: 'none' };
      },
      async record(permit, failed) {
        if (permit !== gen) return { state, transition: 'none' };
        if (failed) {
          openUntil = Date.now() + openDurationMs;
          return moved('open');
        }
        return moved('closed');
      },
      async state() {
        return { state, retryInMs: state === 'open' ? Math.max(0, openUntil - Date.now()) : 0 };
      },
      async isolate() {
        return moved('isolated');
      },
      async reset() {
        return moved('closed');
      },
    };
  };
  return {
    kind: 'hand-written',
    breaker(name, config) {
      if (!breakers.has(name)) breakers.set(name, breaker(config.openDurationMs));
      return breakers.get(name);
    },
    idempotency() {
      throw new Error('not used here');
    },
  };
}

test('SharedCircuitBreaker runs on a hand-written store that speaks names only', async () => {
  const log = [];
  const states = [];
  const b = new SharedCircuitBreaker({
    name: 'hand',
    store: handWrittenStore(log),
    failureThreshold: 1,
    openDurationMs: 200,
    onStateChange: (s) => states.push(s),
  });
  await assert.rejects(
    b.execute(async () => {
      throw new Error('down');
    }),
    /down/,
  );
  assert.deepEqual(states, ['open']);
  assert.equal(b.currentState, 'open');
  // The store's refusal carries its cooldown; an 'open' answer makes this process fail fast by
  // itself for a while (localCacheMs, 1000 for a non-memory store): no second round trip.
  await assert.rejects(
    b.execute(async () => 'no'),
    (e) => e instanceof CircuitOpenError && e.retryAfterMs > 0 && e.retryAfterMs <= 200,
  );
  const asked = log.length;
  await assert.rejects(
    b.execute(async () => 'no'),
    CircuitOpenError,
  );
  assert.equal(log.length, asked, 'the open state was recognised: the process failed fast without asking the store');
  assert.equal(await b.state(), 'open');
  await b.reset();
  assert.deepEqual(states, ['open', 'closed']);
  assert.equal(await b.execute(async () => 'ran'), 'ran');
  await b.isolate();
  assert.equal(await b.state(), 'isolated');
  await assert.rejects(
    b.execute(async () => 'no'),
    CircuitOpenError,
  );
  assert.deepEqual(states, ['open', 'closed', 'isolated']);
});

test('SharedCircuitBreaker reports the half-open probe of a hand-written store', async () => {
  const states = [];
  const b = new SharedCircuitBreaker({
    name: 'probe',
    store: handWrittenStore([]),
    failureThreshold: 1,
    openDurationMs: 30,
    localCacheMs: 0,
    onStateChange: (s) => states.push(s),
  });
  await b
    .execute(async () => {
      throw new Error('down');
    })
    .catch(() => undefined);
  await sleep(50);
  assert.equal(await b.execute(async () => 'probe ok'), 'probe ok');
  assert.deepEqual(states, ['open', 'half-open', 'closed']);
});

test('guide state-store example (docs/guide/shared-state.md): a store of your own, in state names', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const guide = readFileSync(join(root, 'docs', 'guide', 'shared-state.md'), 'utf8');
  const at = guide.indexOf('## The state-store interface');
  assert.ok(at >= 0);
  const block = /```js\n([\s\S]*?)```/.exec(guide.slice(at));
  assert.ok(block && block.index < guide.slice(at).indexOf('\n## ', 1), 'a js block in the state-store section');
  const dir = mkdtempSync(join(root, 'tests', '.readme-'));
  try {
    writeFileSync(join(dir, 'example.mjs'), block[1]);
    const out = execFileSync(process.execPath, [join(dir, 'example.mjs')], { encoding: 'utf8', timeout: 20_000 }).trim();
    assert.equal(out, 'open 1');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
