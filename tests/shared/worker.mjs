// One "pod" of the shared-state tests: a forked Node process with its own Redis client (kind from
// STEADFAST_ADAPTER), its own shared breaker / idempotency store, driven by the parent over IPC.
// Times are epoch ms with sub-ms precision (performance.timeOrigin + now): one machine, one clock.
import { createRedisBreaker, createRedisIdempotencyStore, CircuitOpenError } from 'steadfast';
import { connectClient } from './redis-server.mjs';

const adapter = process.env.STEADFAST_ADAPTER;
const port = Number(process.env.STEADFAST_REDIS_PORT);
const prefix = process.env.STEADFAST_PREFIX;
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const until = (at) => sleep(Math.max(0, at - now()));
const { client } = await connectClient(adapter, port);
const storeErrors = [];
const onStoreError = (e) => storeErrors.push({ op: e.op, code: e.error.code, message: e.error.message });
const breakers = new Map();
let store;
const describe = (e) => ({ name: e?.name, code: e?.code, message: String(e?.message ?? e) });

const commands = {
  async breaker({ name, options }) {
    const transitions = [];
    const b = createRedisBreaker({ client, prefix, name, ...options, onStoreError, onStateChange: (s) => transitions.push({ s, at: now() }) });
    breakers.set(name, { b, transitions });
    return true;
  },
  store({ options }) {
    store = createRedisIdempotencyStore({ client, prefix, ...options, onStoreError });
    return true;
  },
  // Call a dead dependency every intervalMs until the breaker fails fast.
  async untilFastFail({ name, startAt, intervalMs, callMs, maxMs }) {
    const { b, transitions } = breakers.get(name);
    await until(startAt);
    const calls = [];
    const end = now() + maxMs;
    while (now() < end) {
      const started = now();
      try {
        await b.execute(async () => {
          calls.push(now());
          await sleep(callMs);
          throw new Error('HTTP 503');
        });
      } catch (e) {
        if (e instanceof CircuitOpenError) {
          return { fastFailAt: now(), fastFailMs: now() - started, calls, tripAt: transitions.find((t) => t.s === 'open')?.at ?? null };
        }
      }
      await sleep(intervalMs);
    }
    return { fastFailAt: null, calls, tripAt: null };
  },
  async execute({ name, ok, callMs = 0 }) {
    const { b } = breakers.get(name);
    const t0 = now();
    let called = false;
    try {
      const v = await b.execute(async () => {
        called = true;
        await sleep(callMs);
        if (!ok) throw new Error('HTTP 503');
        return 'ok';
      });
      return { ok: true, value: v, called, ms: now() - t0 };
    } catch (e) {
      return { ok: false, error: describe(e), called, ms: now() - t0 };
    }
  },
  // `concurrency` simultaneous calls at startAt; each call's fn takes callMs and succeeds/fails.
  async burst({ name, startAt, concurrency, callMs, ok }) {
    const { b } = breakers.get(name);
    await until(startAt);
    let calls = 0;
    const results = await Promise.all(
      Array.from({ length: concurrency }, () =>
        b
          .execute(async () => {
            calls += 1;
            await sleep(callMs);
            if (!ok) throw new Error('HTTP 503');
            return 'ok';
          })
          .then(
            () => 'ok',
            (e) => (e instanceof CircuitOpenError ? 'fast-fail' : 'failed'),
          ),
      ),
    );
    return { calls, results };
  },
  async state({ name }) {
    return breakers.get(name).b.state();
  },
  async transitions({ name }) {
    return breakers.get(name).transitions;
  },
  // Charge through the gateway with the shared store; `hold: true` signals the parent once the
  // request is out (the gateway is told to debit and never answer).
  async charge({ key, gateway, startAt, amountCents = 4999 }) {
    if (startAt) await until(startAt);
    const t0 = now();
    let called = false;
    try {
      const result = await store.run(
        key,
        async () => {
          called = true;
          process.send({ event: 'charging', key });
          const res = await fetch(`${gateway}/v1/charges`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': key },
            body: JSON.stringify({ amountCents, currency: 'usd' }),
          });
          const body = await res.json();
          if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
          return { id: body.id, amountCents: body.amountCents };
        },
        { fingerprint: `${amountCents} usd` },
      );
      return { ok: true, result, called, ms: now() - t0 };
    } catch (e) {
      return { ok: false, error: describe(e), called, ms: now() - t0 };
    }
  },
  async peek({ key }) {
    return store.peek(key);
  },
  async unknownKeys() {
    return store.unknownKeys();
  },
  async resolve({ key, outcome }) {
    await store.resolve(key, outcome);
    return true;
  },
  storeErrors() {
    return storeErrors.splice(0);
  },
};

process.on('message', async ({ id, cmd, args }) => {
  try {
    process.send({ id, result: await commands[cmd](args ?? {}) });
  } catch (e) {
    process.send({ id, error: describe(e) });
  }
});
process.send({ event: 'ready', pid: process.pid });
