// Why: Redis is where most deployments already keep cross-pod state. This store takes the user's
// own client (node-redis 4+ or ioredis 5+: no dependency of ours), runs every decision as one Lua
// script (lua.js: atomic, on Redis's clock), and bounds every call with a timeout so an unreachable
// Redis is an error in `timeoutMs`, never a hang.

import { BREAKER_LUA, IDEMPOTENCY_LUA } from './lua.js';
import { StateStoreUnavailableError } from './errors.js';
import * as o from '../options.js';

/**
 * Normalise a client to `send(args: string[]) -> Promise<reply>`. ioredis is recognised by
 * `call` + `evalsha`; node-redis by `sendCommand` taking an argument array.
 */
export function redisCommandSender(client) {
  if (client !== null && typeof client === 'object') {
    if (typeof client.call === 'function' && typeof client.evalsha === 'function') {
      return { kind: 'ioredis', send: (args) => client.call(...args) };
    }
    if (typeof client.sendCommand === 'function') {
      return { kind: 'node-redis', send: (args) => client.sendCommand(args) };
    }
  }
  throw o.typeError('redisStateStore', 'client', 'a node-redis or ioredis client', client);
}

/** Reject with StateStoreUnavailableError when `promise` does not settle within `ms`. */
function bounded(promise, ms, op) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new StateStoreUnavailableError(op, `no answer from Redis within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).then(
    (value) => {
      clearTimeout(timer);
      return value;
    },
    (error) => {
      clearTimeout(timer);
      throw error instanceof StateStoreUnavailableError ? error : new StateStoreUnavailableError(op, String(error?.message ?? error), error);
    },
  );
}

const isNoScript = (e) => typeof e?.message === 'string' && e.message.startsWith('NOSCRIPT');

/** One Lua script: EVALSHA, loading it on first use and again after a Redis restart (NOSCRIPT). */
function script(send, source) {
  let sha;
  const load = async () => (sha = String(await send(['SCRIPT', 'LOAD', source])));
  return async (keys, args) => {
    const tail = [String(keys.length), ...keys, ...args.map(String)];
    if (sha === undefined) await load();
    try {
      return await send(['EVALSHA', sha, ...tail]);
    } catch (e) {
      if (!isNoScript(e)) throw e;
      await load();
      return send(['EVALSHA', sha, ...tail]);
    }
  };
}

const num = (v) => (v === null || v === undefined || v === '' ? undefined : Number(v));
const encode = (value) => (value === undefined ? '' : `j${JSON.stringify(value)}`);
const decode = (text) => (typeof text === 'string' && text.startsWith('j') ? JSON.parse(text.slice(1)) : undefined);

/**
 * A state store in Redis. Options: `client` (node-redis or ioredis, connected by you),
 * `prefix = 'steadfast'` (key namespace), `timeoutMs = 250` (bound on every call).
 * Keys: `<prefix>:breaker:<name>` (hash) + `:window` (list); `<prefix>:{idem}:r:<key>` (hash),
 * `<prefix>:{idem}:unknown` and `<prefix>:{idem}:inflight` (sorted sets).
 */
export function redisStateStore(options) {
  const where = 'redisStateStore';
  const opts = o.object(options, where);
  const { send, kind } = redisCommandSender(opts.client);
  const prefix = opts.prefix ?? 'steadfast';
  if (typeof prefix !== 'string' || prefix.length === 0) throw o.typeError(where, 'prefix', 'a non-empty string', prefix);
  const timeoutMs = o.num(opts, 'timeoutMs', where) ?? 250;
  if (!(timeoutMs > 0 && timeoutMs <= 2 ** 31 - 1)) throw o.rangeError(where, 'timeoutMs', 'a number of ms in (0, 2^31)', timeoutMs);
  const breakerScript = script(send, BREAKER_LUA);
  const idemScript = script(send, IDEMPOTENCY_LUA);

  return {
    kind: `redis (${kind})`,
    timeoutMs,
    breaker(name, c) {
      const keys = [`${prefix}:breaker:${name}`, `${prefix}:breaker:${name}:window`];
      const cfg = [
        c.kind,
        c.kind === 'rate' ? c.windowSize : 1,
        c.kind === 'rate' ? c.failureRateThreshold : c.failureThreshold,
        c.kind === 'rate' ? c.minimumCalls : 1,
        c.openDurationMs,
        c.probesToClose,
      ];
      const call = (op, extra = []) => bounded(breakerScript(keys, [op, ...cfg, ...extra]), timeoutMs, op);
      const change = ([transition, state]) => ({ transition: Number(transition), state: Number(state) });
      return {
        async acquire() {
          const [granted, state, gen, probe, retry, transition] = await call('acquire');
          return {
            granted: Number(granted) === 1,
            state: Number(state),
            permit: { gen: Number(gen), probe: Number(probe) },
            retryInMs: retry === 'inf' ? Infinity : Number(retry),
            transition: Number(transition),
          };
        },
        async record(permit, failed) {
          return change(await call('record', [permit.gen, permit.probe, failed ? 1 : 0]));
        },
        async state() {
          const [state, retry] = await call('state');
          return { state: Number(state), retryInMs: Number(retry) };
        },
        async isolate() {
          return change(await call('isolate'));
        },
        async reset() {
          return change(await call('reset'));
        },
      };
    },
    idempotency({ ttlMs, inFlightLeaseMs }) {
      const recPrefix = `${prefix}:{idem}:r:`;
      const sets = [`${prefix}:{idem}:unknown`, `${prefix}:{idem}:inflight`];
      const call = (op, key, extra = []) => bounded(idemScript([`${recPrefix}${key}`, ...sets], [op, key, ...extra]), timeoutMs, op);
      const record = (r) => {
        if (r.length === 0) return undefined;
        const [status, at, payload] = r;
        if (status === 'done') return { status, result: decode(payload) };
        if (status === 'in-flight') return { status, startedAt: num(at) };
        if (status === 'unknown') {
          const rec = { status, startedAt: num(at), error: payload ?? '' };
          // What reconcile needs (absent on records written before it was kept, and on begin's answer).
          for (const [i, field] of [[3, 'lastAttemptAt'], [4, 'attempts'], [5, 'settleAfterMs']]) {
            if (r[i] !== undefined && r[i] !== null && r[i] !== '') rec[field] = num(r[i]);
          }
          return rec;
        }
        return { status };
      };
      return {
        async begin(key, fingerprint, token) {
          const r = await call('begin', key, [fingerprint ?? '', token, inFlightLeaseMs, ttlMs]);
          if (r[0] === 'run') return { status: 'run', startedAt: num(r[1]), token };
          return record(r);
        },
        async complete(key, token, outcome, value, meta) {
          const payload = outcome === 'done' ? encode(value) : outcome === 'unknown' ? String(value) : '';
          const m = [meta?.lastAttemptAt ?? '', meta?.attempts ?? '', meta?.settleAfterMs ?? ''].map(String);
          return Number(await call('complete', key, [token, outcome, payload, ttlMs, ...m])) === 1;
        },
        async peek(key) {
          return record(await call('peek', key));
        },
        async resolve(key, outcome, result) {
          return Number(await call('resolve', key, [outcome, outcome === 'done' ? encode(result) : '', ttlMs]));
        },
        async unknownKeys() {
          return (await bounded(idemScript([`${recPrefix}`, ...sets], ['unknown', '', recPrefix]), timeoutMs, 'unknownKeys')).map(String);
        },
      };
    },
  };
}
