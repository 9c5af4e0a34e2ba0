// Why: Redis is where most deployments already keep cross-pod state. This store takes the user's
// own client (node-redis 4+ or ioredis 5+: no dependency of ours), runs every decision as one Lua
// script (lua.js: atomic, on Redis's clock), and bounds every call with a timeout so an unreachable
// Redis is an error in `timeoutMs`, never a hang.

import { BREAKER_LUA, IDEMPOTENCY_LUA } from './lua.js';
import { StateStoreUnavailableError, StoreAmnesiaError } from './errors.js';
import { isInstance } from '../errors.js';
import { messageOf } from '../unknown.js';
import * as o from '../options.js';
import { fingerprintHex } from '../fingerprint.js';
import { idempotencyDefaults } from '../defaults.js';
import { STATES, TRANSITIONS } from '../breaker-options.js';

/** CRC16/XMODEM, as Redis Cluster hashes keys to slots. */
function crc16(bytes) {
  let crc = 0;
  for (const b of bytes) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}
const utf8 = new TextEncoder();
/** The cluster slot of a key (its hash tag, if it has a non-empty one, as Redis does). */
export function keySlot(key) {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  return crc16(utf8.encode(key)) % 16384;
}

const isCluster = (client) => client.isCluster === true || (typeof client.getNodeClientForKey === 'function' && typeof client.nodeClient === 'function');

/**
 * Normalise a client to `send(args, key?) -> Promise<reply>` (routed by `key` on a cluster),
 * `pin(key) -> Promise<send(args)>` (one connection: the node that holds `key`, for WAIT after a
 * write) and `nodes() -> Promise<send(args)[]>` (every primary, for CONFIG checks). ioredis (single
 * or `Redis.Cluster`) is recognised by `call` + `evalsha`; node-redis by `sendCommand`, its
 * `createCluster` by `getNodeClientForKey` (its `sendCommand` is `(firstKey, isReadonly, args)`).
 */
export function redisCommandSender(client) {
  if (client !== null && typeof client === 'object') {
    if (typeof client.call === 'function' && typeof client.evalsha === 'function') {
      if (!isCluster(client)) {
        const send = (args) => client.call(...args);
        return { kind: 'ioredis', cluster: false, send, pin: async () => send, nodes: async () => [send] };
      }
      // ioredis Cluster routes a command by its keys (EVALSHA's included); a pinned send goes to
      // the instance the cluster itself uses for the key's slot, so a WAIT there follows the write.
      const pinned = new WeakMap();
      const nodeFor = (key) => {
        const address = client.slots?.[keySlot(key)]?.[0];
        const node = client.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === address);
        if (node === undefined) throw new Error(`no primary known for slot ${keySlot(key)}`);
        if (!pinned.has(node)) pinned.set(node, (args) => node.call(...args));
        return pinned.get(node);
      };
      return {
        kind: 'ioredis cluster',
        cluster: true,
        send: (args) => client.call(...args),
        pin: async (key) => nodeFor(key),
        nodes: async () => client.nodes('master').map((n) => (args) => n.call(...args)),
      };
    }
    if (typeof client.sendCommand === 'function') {
      if (!isCluster(client)) {
        const send = (args) => client.sendCommand(args);
        return { kind: 'node-redis', cluster: false, send, pin: async () => send, nodes: async () => [send] };
      }
      const pinned = new WeakMap();
      return {
        kind: 'node-redis cluster',
        cluster: true,
        // (one pinned send per node client: waits are grouped per connection)
        send: (args, key) => client.sendCommand(key, false, args),
        pin: async (key) => {
          const node = await client.getNodeClientForKey(key, false);
          if (!pinned.has(node)) pinned.set(node, (args) => node.sendCommand(args));
          return pinned.get(node);
        },
        nodes: async () =>
          Promise.all(
            client.masters.map(async (m) =>
              (
                (c) => (args) =>
                  c.sendCommand(args)
              )(await client.nodeClient(m)),
            ),
          ),
      };
    }
  }
  throw o.typeError('redisStateStore', 'client', 'a node-redis or ioredis client (single node or cluster)', client);
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
      if (isInstance(error, StateStoreUnavailableError) || isInstance(error, StoreAmnesiaError)) throw error;
      throw new StateStoreUnavailableError(op, messageOf(error), error);
    },
  );
}

const isNoScript = (e) => typeof e?.message === 'string' && e.message.startsWith('NOSCRIPT');

/**
 * WAITs grouped per connection. WAIT blocks the connection it is sent on until the replicas hold
 * every write sent on it before, so one WAIT answers for every write already answered when it is
 * sent: a caller whose write is done joins the next WAIT (sent once the one in flight, which may
 * predate its write, returns). At most two are outstanding per connection, whatever the load.
 */
const waiters = new WeakMap();
function groupedWait(via, replicas, timeoutMs) {
  let w = waiters.get(via);
  if (w === undefined) waiters.set(via, (w = { inflight: undefined, next: undefined }));
  const send = () => {
    const p = Promise.resolve(via(['WAIT', String(replicas), String(timeoutMs)])).then(Number);
    w.inflight = p;
    const clear = () => {
      if (w.inflight === p) w.inflight = undefined;
    };
    p.then(clear, clear);
    return p;
  };
  if (w.inflight === undefined) return send();
  if (w.next === undefined) {
    const after = () => {
      w.next = undefined;
      return send();
    };
    w.next = w.inflight.then(after, after);
  }
  return w.next;
}

/** SHA-1 in hex (what EVALSHA names a script by), computed here: no SCRIPT LOAD round trip. */
async function sha1(source) {
  const digest = await globalThis.crypto.subtle.digest('SHA-1', utf8.encode(source));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * One Lua script: EVALSHA, and EVAL (which also caches it on that node) on NOSCRIPT — both keyed,
 * so on a cluster each reaches the node that holds the keys, whichever node it is and after any
 * restart or failover. `via` is a send (the client's routed one, or a pinned connection).
 */
function script(send, source) {
  const sha = sha1(source);
  return async (keys, args, via = (a) => send(a, keys[0])) => {
    const tail = [String(keys.length), ...keys, ...args.map(String)];
    try {
      return await via(['EVALSHA', await sha, ...tail]);
    } catch (e) {
      if (!isNoScript(e)) throw e;
      return via(['EVAL', source, ...tail]);
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
/** Default number of record buckets (each its own hash tag, so a cluster spreads them over its slots). */
export const DEFAULT_BUCKETS = 64;
/** How often unknownKeys() retries one failed page before giving up (it resumes from that page). */
const PAGE_TRIES = 3;

/** FNV-1a over the key's UTF-8 bytes: a key's bucket, the same in every process and version. */
function bucketOf(key, buckets) {
  let h = 0x811c9dc5;
  for (const b of utf8.encode(key)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h % buckets;
}

/** CONFIG GET replies as a { name: value } object (RESP2 arrays and RESP3 maps alike). */
function configPairs(reply) {
  if (Array.isArray(reply)) {
    const out = {};
    for (let i = 0; i + 1 < reply.length; i += 2) out[String(reply[i])] = String(reply[i + 1]);
    return out;
  }
  if (reply instanceof Map) return Object.fromEntries([...reply].map(([k, v]) => [String(k), String(v)]));
  return reply !== null && typeof reply === 'object' ? Object.fromEntries(Object.entries(reply).map(([k, v]) => [k, String(v)])) : {};
}

/**
 * The store's epoch marker: `<generation>:<id>:<buckets>` (see the idempotency handle), or
 * `amnesia:<id>:<buckets>:<generation it knew>`, left by a process that found that Redis lost data
 * (`amnesia: true`, `gen` NaN, `known`: an acknowledgement writes a generation above it).
 */
const parseMark = (text) => {
  const [gen, id, buckets, known] = String(text).split(':');
  return { gen: Number(gen), id, buckets: Number(buckets), amnesia: gen === 'amnesia', known: Number(known) };
};
const randomId = () =>
  (typeof globalThis.crypto?.randomUUID === 'function' ? globalThis.crypto.randomUUID() : `${Date.now()}-${Math.random()}`).replace(/:/g, '');

/** redisStateStore's option names (RedisStoreOptions in types/shared.d.ts). */
export const REDIS_OPTIONS = [
  'client',
  'service',
  'prefix',
  'timeoutMs',
  'evictionPolicy',
  'persistence',
  'buckets',
  'waitReplicas',
  'waitTimeoutMs',
  'firstUse',
  'legacyLayout',
  'onWarning',
];

/**
 * A state store in Redis: one node, or a Redis Cluster. Options: `client` (node-redis or ioredis,
 * connected by you: `createClient`, `createCluster`, `new Redis`, `new Redis.Cluster`),
 * `service` (this service's name: the default prefix becomes `steadfast:<service>`), `prefix` (key
 * namespace, overrides the default; default `'steadfast'` when no service is named, with a one-time
 * warning through `onWarning` or `process.emitWarning`), `timeoutMs = 250` (bound on
 * every call), `evictionPolicy = 'refuse'` ('refuse': idempotency calls reject with
 * StateStoreUnavailableError while Redis's maxmemory-policy may evict keys; 'warn': go on, and
 * report it once through `onWarning`), `persistence = 'warn'` (a primary with neither AOF nor RDB
 * snapshots forgets everything when it restarts: 'warn' reports it once, 'refuse' rejects
 * idempotency calls, 'ignore'), `buckets = 64` (records are spread over this many hash tags; fixed
 * for the life of the data: a store refuses records written with another count), `waitReplicas = 0`
 * (durability: when > 0, a begin, completion, reopen or resolve is acknowledged only once this many
 * replicas hold it — `WAIT` on the connection to the node that holds the record),
 * `waitTimeoutMs = 100` (how long that WAIT may take; fewer replicas by then is a store error),
 * `firstUse = 'initialize'` (no epoch marker anywhere: 'initialize' writes one; 'refuse': treat it
 * as lost data until acknowledgeAmnesia()), `legacyLayout = 'refuse'` (records under the
 * single-slot layout of earlier versions: 'refuse' to start over them; 'ignore'), `onWarning(message)`.
 * Keys: `<prefix>:breaker:{<name length>:<name>}` (hash) + `:window` (list), both with a TTL and one
 * hash tag; per bucket b: `<prefix>:{idem:<b>}:r:<key>` (hash, with a TTL), `:unknown`, `:inflight`,
 * `:all` (sorted sets), `:epoch` (the marker every script checks), `:seq` (the write counter) and
 * `:ring` (a hash of at most 64 fields: the identities of the latest writes). Names cannot collide:
 * a breaker name is length-prefixed.
 */
export function redisStateStore(options) {
  const where = 'redisStateStore';
  const opts = o.misspelt(o.object(options, where), REDIS_OPTIONS, where);
  const sender = redisCommandSender(o.own(opts, 'client'));
  const { send, kind } = sender;
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
  const persistence = ['warn', 'refuse', 'ignore'][o.oneOf(opts, 'persistence', where, ['warn', 'refuse', 'ignore'], 0)];
  const firstUse = ['initialize', 'refuse'][o.oneOf(opts, 'firstUse', where, ['initialize', 'refuse'], 0)];
  const legacyLayout = ['refuse', 'ignore'][o.oneOf(opts, 'legacyLayout', where, ['refuse', 'ignore'], 0)];
  const buckets = o.num(opts, 'buckets', where) ?? DEFAULT_BUCKETS;
  if (!(Number.isInteger(buckets) && buckets >= 1 && buckets <= 1024)) throw o.rangeError(where, 'buckets', 'an integer from 1 to 1024', buckets);
  const waitReplicas = o.num(opts, 'waitReplicas', where) ?? 0;
  if (!(Number.isInteger(waitReplicas) && waitReplicas >= 0 && waitReplicas <= 64))
    throw o.rangeError(where, 'waitReplicas', 'an integer from 0 to 64', waitReplicas);
  const waitTimeoutMs = o.num(opts, 'waitTimeoutMs', where) ?? 100;
  if (!(Number.isInteger(waitTimeoutMs) && waitTimeoutMs >= 1 && waitTimeoutMs <= 2 ** 31 - 1))
    throw o.rangeError(where, 'waitTimeoutMs', 'an integer number of ms from 1 to 2^31 - 1', waitTimeoutMs);
  const onWarning = o.fn(opts, 'onWarning', where);
  const breakerScript = script(send, BREAKER_LUA);
  const idemScript = script(send, IDEMPOTENCY_LUA);

  // maxmemory-policy and persistence: checked on every primary before the first idempotency call
  // (one extra round trip per store), then refreshed in the background at most once a minute, so
  // that no later call waits for it (every call stays bounded by one timeoutMs). A Redis that
  // forbids CONFIG (some managed services) cannot be checked: documented, not refused.
  let policy;
  let volatile;
  let snapshotOnly;
  let checkedAt = -Infinity;
  let first;
  const warned = new Set();
  const warn = (message) => {
    try {
      if (onWarning !== undefined) onWarning(message);
      else globalThis.process?.emitWarning?.(message, { code: 'STEADFAST_SHARED_PREFIX' });
    } catch {
      // a throwing logger must not change the outcome
    }
  };
  const warnOnce = (message) => {
    if (warned.has(message)) return;
    warned.add(message);
    try {
      onWarning?.(message);
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
  const readConfig = async () => {
    checkedAt = Date.now();
    try {
      const nodes = await bounded(sender.nodes(), timeoutMs, 'config');
      // One parameter per CONFIG GET: several in one call need Redis 7, and an error would leave
      // the eviction policy unchecked on Redis 6.
      const get = (node, name) => bounded(Promise.resolve(node(['CONFIG', 'GET', name])), timeoutMs, 'config').then(configPairs);
      const replies = await Promise.all(
        nodes.map(async (node) => Object.assign({}, ...(await Promise.all(['maxmemory-policy', 'appendonly', 'save'].map((name) => get(node, name)))))),
      );
      policy = replies.map((c) => c['maxmemory-policy']).find(evicts) ?? replies[0]?.['maxmemory-policy'];
      volatile = replies.filter((c) => c.appendonly !== 'yes' && (c.save ?? '') === '').length;
      snapshotOnly = replies.filter((c) => c.appendonly !== 'yes' && (c.save ?? '') !== '').length;
    } catch {
      // unknown: keep the last answer
    }
  };
  /** A configuration that may lose records: refused (`'refuse'`) or reported once. */
  const judge = (mode, op, message) => {
    if (mode === 'refuse') throw new StateStoreUnavailableError(op, message);
    warnOnce(message);
  };
  const checkConfig = async () => {
    first ??= readConfig();
    await first; // every call until the first answer waits for it; later ones find it settled
    if (Date.now() - checkedAt >= 60_000) readConfig();
    if (evicts(policy)) {
      judge(
        evictionPolicy,
        'policy',
        `Redis maxmemory-policy is ${policy}: Redis may evict idempotency records and a retry would charge again; set maxmemory-policy noeviction`,
      );
    }
    if (persistence === 'ignore') return;
    if (volatile > 0) {
      judge(
        persistence,
        'persistence',
        `${volatile} Redis primar${volatile === 1 ? 'y has' : 'ies have'} neither AOF (appendonly) nor RDB snapshots (save): ` +
          'a restart empties it, and its unknown and done records are gone (the store then refuses with StoreAmnesiaError); set appendonly yes',
      );
    }
    // RDB snapshots alone are not durable: a crash restores the last snapshot, with its epoch
    // markers, and every record written since is gone. A process that saw a later write notices
    // (the write counter went back, or the write at the counter it saw was replaced by another); a
    // process started after the crash cannot.
    if (snapshotOnly > 0) {
      judge(
        persistence,
        'persistence',
        `${snapshotOnly} Redis primar${snapshotOnly === 1 ? 'y keeps' : 'ies keep'} RDB snapshots (save) but no AOF (appendonly): ` +
          'a crash restores the last snapshot and the records written since are gone (a process that saw a later write refuses with StoreAmnesiaError, ' +
          'a process started after the crash cannot tell); set appendonly yes',
      );
    }
  };

  // The epoch: one marker per bucket, `<generation>:<id>:<buckets>`, written once (first use) and
  // checked by every idempotency script but 'complete'. A marker that is gone, or older than the one
  // this process knows, means Redis lost the bucket's data (a restart without persistence,
  // FLUSHALL, a failover to an empty node): calls then reject with StoreAmnesiaError until an
  // operator calls acknowledgeAmnesia(), which writes the next generation everywhere. A newer
  // generation than this process knows is such an acknowledgement: adopted.
  const epochKey = (b) => `${prefix}:{idem:${b}}:epoch`;
  /**
   * A bucket's keys for one script call: the record of `key`, the worklists, the marker, the write
   * counter and the ring of recent writes' identities (all under the bucket's hash tag: one slot).
   */
  const keysOf = (b, key) => {
    const base = `${prefix}:{idem:${b}}:`;
    return [`${base}r:${key}`, `${base}unknown`, `${base}inflight`, `${base}all`, `${base}epoch`, `${base}seq`, `${base}ring`];
  };
  const all = Array.from({ length: buckets }, (_, b) => b);
  let mark; // the marker text this process checks against, once learned
  let amnesia; // a latched StoreAmnesiaError
  let learning;
  let marking; // the amnesia marks being left in Redis (never rejects)
  // Per bucket, the highest write counter this process has seen under the current marker, with
  // the nonce of the write that left it (`{ counter, nonce }`, nonce '' when the ring did not hold
  // it): an answer below it, or a ring that holds that counter with another nonce (Redis went back
  // and other processes wrote past it since), means Redis went back in time. Not kept with
  // waitReplicas: a write whose WAIT went out on a connection re-established to a promoted replica
  // can read as acknowledged, and the store would halt after a failover that the durability mode is
  // there to ride out. (Writes still leave their nonce in the ring, for the processes without it.)
  const seen = new Map();
  const setMarkText = (text) => {
    if (text !== mark) seen.clear();
    mark = text;
  };
  // The nonce a call leaves in its bucket's ring if it writes: this store's random id and a call
  // number, so that no two writes anywhere share one (a counter written again after Redis went back
  // is written with another nonce, whoever writes it).
  const writer = randomId().replace(/-/g, '').slice(0, 12);
  let calls = 0;
  const nextNonce = () => `${writer}${(++calls).toString(36)}`;
  const readMarks = () => Promise.all(all.map((b) => bounded(Promise.resolve(send(['GET', epochKey(b)], epochKey(b))), timeoutMs, 'epoch')));
  /** A bucket's marker as GET answered it: null (or undefined from some clients) when it has none. */
  const hasMark = (m) => m !== null && m !== undefined;
  /**
   * Every bucket gets the amnesia mark (unless it is at a newer generation than this process knew:
   * acknowledged meanwhile), so that every process, also one started later, refuses until
   * acknowledgeAmnesia(). Best effort: a Redis that cannot be reached now is tried again by the
   * next call that finds the loss.
   */
  const leaveMarks = async () => {
    const known = mark === undefined ? 0 : parseMark(mark).gen;
    const text = `amnesia:${randomId()}:${buckets}:${known}`;
    try {
      await Promise.all(all.map((b) => bounded(idemScript(keysOf(b, ''), ['amnesia', '', '', '0', '', known, text]), timeoutMs, 'amnesia')));
    } catch {
      marking = undefined;
    }
  };
  const lost = (detail, { found = true } = {}) => {
    amnesia ??= new StoreAmnesiaError(prefix, detail);
    if (found) marking ??= leaveMarks();
    return amnesia;
  };
  const markedLost = () => lost('another process found that Redis lost data and marked the store; reconcile, then call acknowledgeAmnesia()', { found: false });
  const adopt = (marks) => {
    const present = marks.filter(hasMark).map(String);
    const parsed = present.map(parseMark);
    if (parsed.some((p) => p.amnesia)) throw markedLost();
    const other = parsed.find((p) => p.buckets !== buckets);
    if (other !== undefined) {
      throw new StateStoreUnavailableError(
        'layout',
        `the records under '${prefix}' were written with buckets: ${other.buckets}, this store has buckets: ${buckets} (keys would be looked up in the wrong bucket)`,
      );
    }
    const missing = buckets - present.length;
    if (missing > 0) throw lost(`${missing} of ${buckets} buckets lost their epoch marker`);
    if (new Set(present).size > 1) throw lost('the buckets disagree on the epoch (some lost their data and were initialised again)');
    const next = parsed[0];
    if (mark !== undefined) {
      const known = parseMark(mark);
      if (present[0] !== mark && !(next.gen > known.gen))
        throw lost(`the epoch marker changed from generation ${known.gen} to ${next.gen} without an acknowledgement`);
    }
    setMarkText(present[0]);
    return mark;
  };
  const setMark = (b, value, ...flags) => bounded(Promise.resolve(send(['SET', epochKey(b), value, ...flags], epochKey(b))), timeoutMs, 'epoch');
  // First use, in two phases, so that a process starting meanwhile never takes a half-written set
  // of markers for lost data: generation 0 ("initialising", which no script accepts) on every bucket
  // (SET NX: every starter agrees on bucket 0's and writes that one), then generation 1 on each
  // bucket that still holds exactly that generation-0 marker (the script's 'initialize', a
  // compare-and-set). The second phase cannot assume the first one's marker is still there, or was
  // ever written: an NX finds a bucket already holding something else, and a paused starter's
  // second phase can come after another starter finished, a process found a loss and left its
  // amnesia mark, or an operator acknowledged one. A plain SET would overwrite that news (a loss
  // forgotten: its keys would run again); the compare-and-set leaves it, and adopt() judges what
  // the buckets hold (an amnesia mark: StoreAmnesiaError). A process that finds generation-0
  // markers finishes the job; one that finds a generation >= 1 on some buckets and nothing on
  // others knows those lost their data.
  const initialize = async (pending) => {
    if (pending === undefined) {
      const legacy = [`${prefix}:{idem}:all`, `${prefix}:{idem}:unknown`, `${prefix}:{idem}:inflight`];
      if (legacyLayout === 'refuse' && Number(await bounded(Promise.resolve(send(['EXISTS', ...legacy], legacy[0])), timeoutMs, 'epoch')) > 0) {
        throw new StateStoreUnavailableError(
          'layout',
          `Redis holds idempotency records under '${prefix}:{idem}:' (the single-slot layout of earlier versions); ` +
            "reconcile them with the version that wrote them, or pass legacyLayout: 'ignore' to start beside them",
        );
      }
      await setMark(0, `0:${randomId()}:${buckets}`, 'NX');
    }
    const chosen = parseMark(pending ?? String(await bounded(Promise.resolve(send(['GET', epochKey(0)], epochKey(0))), timeoutMs, 'epoch')));
    if (chosen.gen === 0) {
      const [initialising, ready] = [`0:${chosen.id}:${buckets}`, `1:${chosen.id}:${buckets}`];
      await Promise.all(all.map((b) => setMark(b, initialising, 'NX')));
      await Promise.all(all.map((b) => bounded(idemScript(keysOf(b, ''), ['initialize', '', '', '0', '', initialising, ready]), timeoutMs, 'epoch')));
    }
    const marks = await readMarks();
    // Bucket 0 at generation 1 can be the first of another starter's second phase, still under
    // way: generation-0 markers beside it are that starter's work in progress, not lost data.
    // Finish it (the same markers it is writing), once.
    const unfinished = marks.find((m) => hasMark(m) && parseMark(m).gen === 0);
    if (unfinished !== undefined && chosen.gen !== 0) return initialize(String(unfinished));
    return adopt(marks);
  };
  const learn = async () => {
    let marks = await readMarks();
    // The buckets are read one GET each, not at once: a read that overlapped another process's
    // first use can see a bucket before its marker was written and another after it was finished
    // (written only once every bucket had one). Read again: a marker still missing was lost.
    if (mark === undefined && !marks.every(hasMark) && marks.some(hasMark)) {
      marks = await readMarks();
    }
    const pending = marks.find((m) => hasMark(m) && parseMark(m).gen === 0);
    if (pending !== undefined) return initialize(String(pending));
    if (mark === undefined && !marks.some(hasMark)) {
      if (firstUse === 'refuse') throw lost(`no epoch marker under '${prefix}' (firstUse: 'refuse')`);
      return initialize(undefined);
    }
    return adopt(marks);
  };
  // A latched amnesia is looked at again at most once a second: once every bucket carries one newer
  // marker (an acknowledgement, by this process or another), this process adopts it.
  let recheckedAt = 0;
  const recheck = async () => {
    if (Date.now() - recheckedAt < 1000) return false;
    recheckedAt = Date.now();
    const marks = await readMarks();
    const present = marks.filter(hasMark).map(String);
    if (present.length !== buckets || new Set(present).size !== 1) return false;
    const next = parseMark(present[0]);
    if (!(next.gen >= 1) || next.buckets !== buckets || (mark !== undefined && !(next.gen > parseMark(mark).gen))) return false;
    setMarkText(present[0]);
    amnesia = undefined;
    marking = undefined;
    return true;
  };
  const epoch = async () => {
    if (amnesia !== undefined && !(await recheck())) throw amnesia;
    if (mark !== undefined) return mark;
    learning ??= learn().finally(() => (learning = undefined));
    return learning;
  };
  const acknowledgeAmnesia = async () => {
    const marks = await readMarks();
    const gens = marks.filter(hasMark).map((m) => (parseMark(m).amnesia ? parseMark(m).known : parseMark(m).gen));
    if (mark !== undefined) gens.push(parseMark(mark).gen);
    const next = `${Math.max(0, ...gens.filter(Number.isFinite)) + 1}:${randomId()}:${buckets}`;
    await Promise.all(all.map((b) => bounded(Promise.resolve(send(['SET', epochKey(b), next], epochKey(b))), timeoutMs, 'acknowledge')));
    setMarkText(next);
    amnesia = undefined;
    marking = undefined;
    return { generation: parseMark(next).gen };
  };

  return {
    kind: `redis (${kind})`,
    timeoutMs,
    breaker(name, c) {
      // One hash tag for both keys (a cluster keeps them on one slot, whatever the name).
      const base = `${prefix}:breaker:{${name.length}:${name}}`;
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
        async release(permit) {
          return change(await call('release', [permit.gen, permit.probe]));
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
      // Each bucket counts its own live records (one slot per script): the limit is shared evenly.
      const bucketMax = Math.ceil(maxRecords / buckets);
      const unknownTtlMs = options.unknownTtlMs ?? d.unknownTtlMs;
      /**
       * Bucket `b`'s write counter answered `counter`, below the `had` this process saw, or
       * (`diverged`) the write at `had` is not the one this process saw: Redis lost writes.
       */
      const wentBack = (b, counter, had, diverged = false) =>
        lost(
          diverged
            ? `bucket ${b} went back in time: the write at its counter ${had} is not the one this process saw, ` +
                `and its counter (${counter}) was written past it since (the records written before it went back are gone)`
            : `bucket ${b} went back in time: its write counter is ${counter}, this process had seen ${had} (the records written since are gone)`,
        );
      /**
       * The op's answer from the script's `[counter before, counter after, answer, nonce after,
       * diverged]`: the counter after and its write's nonce are remembered (not with waitReplicas:
       * see `seen`); a completion that found the counter below what this process saw, or the write
       * it saw replaced, reports the rollback (its own write is done).
       */
      const unwrap = (b, op, sent, [before, after, reply, nonce, diverged], acknowledged) => {
        if (Number(before) < sent.counter) wentBack(b, before, sent.counter);
        if (Number(diverged) === 1) wentBack(b, before, sent.counter, true);
        if (acknowledged && Number(after) > (seen.get(b)?.counter ?? 0)) seen.set(b, { counter: Number(after), nonce: String(nonce ?? '') });
        return reply;
      };
      /** One script call; `durable` ops WAIT for replicas on the record's connection before answering. */
      const callIn = async (b, op, key, extra, durable = false) => {
        try {
          return await callOnce(b, op, key, extra, durable);
        } catch (e) {
          // Whoever finds a loss leaves the mark before answering, so a process started after
          // this answer refuses too.
          if (e instanceof StoreAmnesiaError && marking !== undefined) await marking;
          throw e;
        }
      };
      const callOnce = async (b, op, key, extra, durable) => {
        await checkConfig();
        const keys = keysOf(b, key);
        for (let attempt = 0; ; attempt++) {
          const expected = op === 'complete' ? '' : await epoch();
          const sent = seen.get(b) ?? { counter: 0, nonce: '' };
          const args = [op, key, expected, sent.nonce === '' ? sent.counter : `${sent.counter}:${sent.nonce}`, nextNonce(), ...extra];
          try {
            if (!(durable && waitReplicas > 0)) return unwrap(b, op, sent, await bounded(idemScript(keys, args), timeoutMs, op), waitReplicas === 0);
            return await bounded(
              (async () => {
                const via = await sender.pin(keys[0]);
                const wrapped = await idemScript(keys, args, via);
                const acked = await groupedWait(via, waitReplicas, waitTimeoutMs);
                if (acked < waitReplicas) {
                  const e = new StateStoreUnavailableError(op, `only ${acked} of ${waitReplicas} replicas acknowledged within ${waitTimeoutMs} ms`);
                  e.reply = wrapped[2];
                  throw e;
                }
                return unwrap(b, op, sent, wrapped, false);
              })(),
              timeoutMs + waitTimeoutMs,
              op,
            );
          } catch (e) {
            const text = String(e?.cause?.message ?? e?.message ?? '');
            const back = text.indexOf('STEADFAST_ROLLBACK');
            if (back >= 0) {
              const [counter, how] = text
                .slice(back + 'STEADFAST_ROLLBACK'.length)
                .trim()
                .split(/\s+/);
              throw wentBack(b, counter, sent.counter, how === 'diverged');
            }
            const at = text.indexOf('STEADFAST_EPOCH');
            if (at < 0) throw e;
            // The bucket's marker is not the one this process checks against. Gone, or not newer:
            // Redis lost the bucket's data. Newer: an acknowledgement elsewhere, adopted (once
            // every bucket agrees), and the call is tried again.
            const found = text.slice(at + 'STEADFAST_EPOCH'.length).trim();
            if (found === '') throw lost(`bucket ${b} lost its epoch marker (its records are gone)`);
            if (parseMark(found).amnesia) throw markedLost();
            const [was, now] = [parseMark(expected).gen, parseMark(found).gen];
            if (!(now > was) || attempt > 0) throw lost(`bucket ${b} holds epoch generation ${now}, this process knew ${was}`);
            adopt(await readMarks());
          }
        }
      };
      const call = (op, key, extra = [], durable = false) => callIn(bucketOf(key, buckets), op, key, extra, durable);
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
      const completeArgs = (token, outcome, value, meta) => {
        const payload = outcome === 'done' ? encode(value) : outcome === 'refuted' ? '' : String(value);
        // The last attempt's start goes as its age (a duration on this process's clock): Redis
        // keeps it in its own time. Without one, the completion's own moment stands in (age 0).
        const age = typeof meta?.lastAttemptAgeMs === 'number' && Number.isFinite(meta.lastAttemptAgeMs) ? Math.max(0, Math.round(meta.lastAttemptAgeMs)) : 0;
        const m = [meta === undefined ? '' : age, meta?.attempts ?? '', meta?.settleAfterMs ?? '', meta?.endpoint ?? ''].map(String);
        return [token.token, outcome, payload, ttlMs, unknownTtlMs, token.fingerprint, ...m];
      };
      /** One page of one bucket's reconciliation list: { keys: [[key, startedAt]], next } (next: undefined at its end). */
      const bucketPage = async (b, cursor, score) => {
        for (;;) {
          const [scanned, last, lastScore, ...page] = await callIn(b, 'unknown', '', [cursor, score, UNKNOWN_PAGE, unknownTtlMs]);
          if (Number(scanned) < 0) continue; // lapsed a full batch of leases first: list once they are all on the list
          const keys = [];
          for (let i = 0; i + 1 < page.length; i += 2) keys.push([String(page[i]), Number(page[i + 1])]);
          return { keys, next: Number(scanned) < UNKNOWN_PAGE ? undefined : [String(last), String(lastScore)] };
        }
      };
      /** A page of the whole list: the cursor is `[bucket, member, score]` as JSON ('' or undefined: the start). */
      const page = async (cursor) => {
        const [b, member, score] = cursor === undefined || cursor === '' ? [0, '', ''] : JSON.parse(cursor);
        if (!(b < buckets)) return { keys: [], cursor: undefined }; // past the last bucket: the list is done
        const { keys, next } = await bucketPage(b, member, score);
        const after = next !== undefined ? [b, ...next] : b + 1 < buckets ? [b + 1, '', ''] : undefined;
        return { keys, cursor: after === undefined ? undefined : JSON.stringify(after) };
      };
      return {
        async begin(key, fingerprint, token) {
          const fp = fingerprintHex(fingerprint);
          let r;
          try {
            r = await call('begin', key, [fp, token, inFlightLeaseMs, bucketMax, unknownTtlMs], true);
          } catch (e) {
            // Begun on the primary but not on enough replicas: nothing runs, so free the key again
            // (best effort: if this is lost too, the record turns unknown when its lease lapses).
            if (Array.isArray(e?.reply) && e.reply[0] === 'run') {
              await call('complete', key, completeArgs({ token, fingerprint: fp }, 'refuted', undefined, undefined)).catch(() => {});
            }
            throw e;
          }
          if (r[0] === 'run') return { status: 'run', startedAt: num(r[1]), token: { token, fingerprint: fp } };
          if (r[0] === 'full') return { status: 'full', maxRecords };
          return record(r);
        },
        async complete(key, token, outcome, value, meta) {
          return String(await call('complete', key, completeArgs(token, outcome, value, meta), true));
        },
        async reopen(key, fingerprint, token, startedAt) {
          const fp = fingerprintHex(fingerprint);
          const r = await call('reopen', key, [fp, token, inFlightLeaseMs, startedAt === undefined ? '' : String(startedAt), unknownTtlMs], true);
          if (r[0] === 'reopened') return { status: 'reopened', startedAt: num(r[1]), token: { token, fingerprint: fp } };
          return { status: String(r[0]) };
        },
        async peek(key) {
          return record(await call('peek', key, [unknownTtlMs]));
        },
        async resolve(key, outcome, result, startedAt) {
          return String(
            await call(
              'resolve',
              key,
              [outcome, outcome === 'done' ? encode(result) : '', ttlMs, startedAt === undefined ? '' : String(startedAt), unknownTtlMs],
              true,
            ),
          );
        },
        /**
         * Redis's clock (TIME) on the node that holds `key`'s record: the clock its times are kept
         * in, so reconciliation judges a settle window by it, never by a process's wall clock.
         */
        async now(key = '') {
          const [seconds, micros] = await bounded(
            (async () => {
              const via = await sender.pin(keysOf(bucketOf(key, buckets), key)[0]);
              return via(['TIME']);
            })(),
            timeoutMs,
            'time',
          );
          return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
        },
        unknownKeysPage: page,
        async unknownKeys() {
          // Bucket by bucket, page by page; a page that fails is tried again from its own cursor
          // (the pass resumes, never restarts). Oldest first across buckets (by start time).
          const found = [];
          for (let cursor = ''; cursor !== undefined;) {
            let got;
            for (let tries = 1; ; tries++) {
              try {
                got = await page(cursor);
                break;
              } catch (e) {
                if (tries >= PAGE_TRIES || !(e instanceof StateStoreUnavailableError)) throw e;
              }
            }
            found.push(...got.keys);
            cursor = got.cursor;
          }
          return found.sort((a, b) => a[1] - b[1]).map(([k]) => k);
        },
        acknowledgeAmnesia,
      };
    },
  };
}
