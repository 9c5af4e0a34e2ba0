// Why: Redis is where most deployments already keep cross-pod state. This store takes the user's
// own client (node-redis 4+ or ioredis 5+: no dependency of ours), runs every decision as one Lua
// script (lua.js: atomic, on Redis's clock), and bounds every call with a timeout so an unreachable
// Redis is an error in `timeoutMs`, never a hang.

import { BREAKER_LUA, IDEMPOTENCY_LUA } from './lua.js';
import { StateStoreUnavailableError } from './errors.js';
import * as o from '../options.js';
import { fingerprintHex, idempotencyDefaults } from '../idempotency-key.js';
import { STATES, TRANSITIONS } from '../breaker-options.js';

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

/** Eviction policies under which Redis may drop our keys (anything but noeviction). */
const evicts = (policy) => typeof policy === 'string' && policy !== 'noeviction';

/** A service name, as it goes into the default prefix. */
const SERVICE = /^[A-Za-z0-9._-]{1,64}$/;
let sharedPrefixWarned = false;

/** How many unknown keys one reconciliation-listing call reads (each call is O(page log N)). */
export const UNKNOWN_PAGE = 500;

/**
 * A state store in Redis. Options: `client` (node-redis or ioredis, connected by you),
 * `service` (this service's name: the default prefix becomes `steadfast:<service>`), `prefix` (key
 * namespace, overrides the default; default `'steadfast'` when no service is named, with a one-time
 * warning through `onWarning` or `process.emitWarning`), `timeoutMs = 250` (bound on
 * every call), `evictionPolicy = 'refuse'` ('refuse': idempotency calls reject with
 * StateStoreUnavailableError while Redis's maxmemory-policy may evict keys; 'warn': go on, and
 * report it once through `onWarning`), `onWarning(message)`.
 * Keys: `<prefix>:breaker:<name length>:<name>` (hash) + `:window` (list), both with a TTL;
 * `<prefix>:{idem}:r:<key>` (hash, with a TTL), `<prefix>:{idem}:unknown`, `:inflight` and `:all`
 * (sorted sets). Names cannot collide: a breaker name is length-prefixed.
 */
export function redisStateStore(options) {
  const where = 'redisStateStore';
  const opts = o.object(options, where);
  const { send, kind } = redisCommandSender(o.own(opts, 'client'));
  const service = o.own(opts, 'service');
  if (service !== undefined && !(typeof service === 'string' && SERVICE.test(service))) {
    throw o.typeError(where, 'service', 'a name of 1-64 letters, digits, or . _ -', service);
  }
  const given = o.own(opts, 'prefix');
  if (given !== undefined && !(typeof given === 'string' && given.length > 0)) throw o.typeError(where, 'prefix', 'a non-empty string', given);
  // Two services on one Redis must not share breakers or keys by accident: the default namespace is
  // per service. With neither option, the one namespace every such store shares is used, and said so.
  const prefix = given ?? (service === undefined ? 'steadfast' : `steadfast:${service}`);
  const timeoutMs = o.num(opts, 'timeoutMs', where) ?? 250;
  if (!(timeoutMs > 0 && timeoutMs <= 2 ** 31 - 1)) throw o.rangeError(where, 'timeoutMs', 'a number of ms in (0, 2^31)', timeoutMs);
  const evictionPolicy = ['refuse', 'warn'][o.oneOf(opts, 'evictionPolicy', where, ['refuse', 'warn'], 0)];
  const onWarning = o.fn(opts, 'onWarning', where);
  const breakerScript = script(send, BREAKER_LUA);
  const idemScript = script(send, IDEMPOTENCY_LUA);

  // maxmemory-policy: checked before the first idempotency call (one extra round trip per store),
  // then refreshed in the background at most once a minute, so that no later call waits for it (every
  // call stays bounded by one timeoutMs). A Redis that forbids CONFIG (some managed services) cannot
  // be checked: documented, not refused.
  let policy;
  let checkedAt = -Infinity;
  let first;
  let warned = false;
  const warn = (message) => {
    try {
      if (onWarning !== undefined) onWarning(message);
      else globalThis.process?.emitWarning?.(message, { code: 'STEADFAST_SHARED_PREFIX' });
    } catch {
      // a throwing logger must not change the outcome
    }
  };
  // Through onWarning: for each such store. Else process.emitWarning, once per process (the fix is
  // one option, not a log line per store).
  if (given === undefined && service === undefined && (onWarning !== undefined || !sharedPrefixWarned)) {
    if (onWarning === undefined) sharedPrefixWarned = true;
    warn(
      "redisStateStore: no 'service' or 'prefix': every store without one on this Redis shares the namespace 'steadfast' " +
        "(their breakers and idempotency keys with the same names are one); pass { service: '<this service>' }",
    );
  }
  const readPolicy = async () => {
    checkedAt = Date.now();
    try {
      const reply = await bounded(send(['CONFIG', 'GET', 'maxmemory-policy']), timeoutMs, 'config');
      policy = Array.isArray(reply) ? String(reply[1]) : typeof reply === 'object' && reply !== null ? String(Object.values(reply)[0]) : undefined;
    } catch {
      // unknown: keep the last answer
    }
  };
  const checkPolicy = async () => {
    first ??= readPolicy();
    await first; // every call until the first answer waits for it; later ones find it settled
    if (Date.now() - checkedAt >= 60_000) readPolicy();
    if (!evicts(policy)) return;
    const message = `Redis maxmemory-policy is ${policy}: Redis may evict idempotency records and a retry would charge again; set maxmemory-policy noeviction`;
    if (evictionPolicy === 'refuse') throw new StateStoreUnavailableError('policy', message);
    if (!warned) {
      warned = true;
      try {
        onWarning?.(message);
      } catch {
        // a throwing logger must not change the outcome
      }
    }
  };

  return {
    kind: `redis (${kind})`,
    timeoutMs,
    breaker(name, c) {
      const base = `${prefix}:breaker:${name.length}:${name}`;
      const keys = [base, `${base}:window`];
      const cfg = [
        c.kind,
        c.kind === 'rate' ? c.windowSize : 1,
        c.kind === 'rate' ? c.failureRateThreshold : c.failureThreshold,
        c.kind === 'rate' ? c.minimumCalls : 1,
        c.openDurationMs,
        c.probesToClose,
      ];
      const call = (op, extra = []) => bounded(breakerScript(keys, [op, ...cfg, ...extra]), timeoutMs, op);
      // The Lua answers the core's numbers (state id; transition -1 none, else the state entered);
      // the handle answers their names, like the memory store's.
      const stateName = (state) => STATES[Number(state)];
      const transitionName = (transition) => TRANSITIONS[Number(transition) + 1];
      const change = ([transition, state]) => ({ transition: transitionName(transition), state: stateName(state) });
      return {
        async acquire() {
          const [granted, state, gen, probe, retry, transition] = await call('acquire');
          return {
            granted: Number(granted) === 1,
            state: stateName(state),
            permit: { gen: Number(gen), probe: Number(probe) },
            retryInMs: retry === 'inf' ? Infinity : Number(retry),
            transition: transitionName(transition),
          };
        },
        async record(permit, failed) {
          return change(await call('record', [permit.gen, permit.probe, failed ? 1 : 0]));
        },
        async state() {
          const [state, retry] = await call('state');
          return { state: stateName(state), retryInMs: Number(retry) };
        },
        async isolate() {
          return change(await call('isolate'));
        },
        async reset() {
          return change(await call('reset'));
        },
      };
    },
    idempotency(options) {
      const d = idempotencyDefaults();
      const { ttlMs, inFlightLeaseMs } = options;
      const maxRecords = options.maxRecords ?? d.maxRecords;
      const unknownTtlMs = options.unknownTtlMs ?? d.unknownTtlMs;
      const base = `${prefix}:{idem}:`;
      const sets = [`${base}unknown`, `${base}inflight`, `${base}all`];
      const call = async (op, key, extra = []) => {
        await checkPolicy();
        return bounded(idemScript([`${base}r:${key}`, ...sets], [op, key, ...extra]), timeoutMs, op);
      };
      const record = (r) => {
        if (r.length === 0) return undefined;
        const [status, at, payload] = r;
        if (status === 'done') return { status, result: decode(payload) };
        if (status === 'in-flight') return { status, startedAt: num(at) };
        if (status === 'unknown') {
          const rec = { status, startedAt: num(at), error: payload ?? '' };
          // What reconcile needs (absent on records written before it was kept, and on begin's answer).
          for (const [i, field] of [
            [3, 'lastAttemptAt'],
            [4, 'attempts'],
            [5, 'settleAfterMs'],
          ]) {
            if (r[i] !== undefined && r[i] !== null && r[i] !== '') rec[field] = num(r[i]);
          }
          if (typeof r[6] === 'string' && r[6] !== '') rec.endpoint = r[6];
          return rec;
        }
        return { status };
      };
      return {
        async begin(key, fingerprint, token) {
          const fp = fingerprintHex(fingerprint);
          const r = await call('begin', key, [fp, token, inFlightLeaseMs, maxRecords, unknownTtlMs]);
          if (r[0] === 'run') return { status: 'run', startedAt: num(r[1]), token: { token, fingerprint: fp } };
          if (r[0] === 'full') return { status: 'full', maxRecords };
          return record(r);
        },
        async complete(key, token, outcome, value, meta) {
          const payload = outcome === 'done' ? encode(value) : outcome === 'refuted' ? '' : String(value);
          const m = [meta?.lastAttemptAt ?? '', meta?.attempts ?? '', meta?.settleAfterMs ?? '', meta?.endpoint ?? ''].map(String);
          return String(await call('complete', key, [token.token, outcome, payload, ttlMs, unknownTtlMs, token.fingerprint, ...m]));
        },
        async reopen(key, fingerprint, token, startedAt) {
          const fp = fingerprintHex(fingerprint);
          const r = await call('reopen', key, [fp, token, inFlightLeaseMs, startedAt === undefined ? '' : String(startedAt), unknownTtlMs]);
          if (r[0] === 'reopened') return { status: 'reopened', startedAt: num(r[1]), token: { token, fingerprint: fp } };
          return { status: String(r[0]) };
        },
        async peek(key) {
          return record(await call('peek', key, [unknownTtlMs]));
        },
        async resolve(key, outcome, result, startedAt) {
          return String(
            await call('resolve', key, [
              outcome,
              outcome === 'done' ? encode(result) : '',
              ttlMs,
              startedAt === undefined ? '' : String(startedAt),
              unknownTtlMs,
            ]),
          );
        },
        async unknownKeys() {
          // A pass walks a cursor (the last member scanned and its score), not ranks: see the 'unknown' op.
          const keys = [];
          for (let cursor = '', score = ''; ;) {
            const [scanned, last, lastScore, ...page] = await call('unknown', '', [cursor, score, UNKNOWN_PAGE, unknownTtlMs]);
            if (Number(scanned) < 0) continue; // lapsed a full batch of leases first: list once they are all on the list
            for (const k of page) keys.push(String(k));
            if (Number(scanned) < UNKNOWN_PAGE) return keys;
            cursor = String(last);
            score = String(lastScore);
          }
        },
      };
    },
  };
}
