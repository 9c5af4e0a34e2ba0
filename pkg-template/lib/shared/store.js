// Why: breaker state and idempotency records outgrow one process (pods behind a load balancer,
// workers). The drivers (SharedCircuitBreaker, SharedIdempotencyStore) speak to a small async
// state-store interface; this file defines it and its in-memory implementation — the default, so
// one process needs nothing configured. The memory handles sit directly on the wasm core
// (BreakerCore, and StoreCore through MemoryRecords), answering the same shapes as the Lua scripts
// of the Redis store: the public classes, the memory store and the Redis store are peers.
//
// The interface (every method returns a Promise; a rejection means "unavailable"):
//
//   store.breaker(name, config) -> {
//     acquire()              -> { granted, state, permit, retryInMs, transition }
//     record(permit, failed) -> { state, transition }
//     release(permit)        -> { state, transition }   an excluded outcome: nothing recorded; a
//                               half-open probe gives its slot back (optional: without it, the
//                               probe's slot is held until its lease lapses)
//     state()                -> { state, retryInMs }
//     isolate() / reset()    -> { state, transition }
//   }   state: 'closed' | 'open' | 'half-open' | 'isolated'; transition: the state the call moved
//       the breaker to, or 'none' (the names of breaker-options.js STATES / TRANSITIONS; the core's
//       numbers are mapped here, at the handle's edge, and never leave it)
//   store.idempotency({ ttlMs, inFlightLeaseMs, maxRecords, unknownTtlMs }) -> {
//     begin(key, fingerprintText, token)    -> { status: 'run'|'done'|'in-flight'|'unknown'|'mismatch'|'full', startedAt?, result?, error?, maxRecords? }
//     complete(key, token, outcome, value, meta?) -> 'ok' | 'late' | 'parked'   outcome: 'done'|'unknown'|'failed'|'refuted';
//                                           meta: unknownMeta(); 'parked': a 'failed' record that may have been processed stayed unknown
//     reopen(key, fingerprintText, token, startedAt?) -> { status: 'reopened'|'not-found'|'wrong-state'|'mismatch', startedAt?, token? }
//     peek(key)                             -> { status, startedAt?, result?, error?, lastAttemptAt?, attempts?, settleAfterMs? } | undefined
//     resolve(key, outcome, result, startedAt?) -> 'resolved' | 'not-found' | 'wrong-state'
//     unknownKeys()                         -> string[]  (oldest first)
//   }

import { MemoryRecords, makeStoreCore } from '../idempotency.js';
import { coreFromConfig } from '../breaker-options.js';
import { BEGIN, COMPLETION, OUTCOMES, RESOLUTIONS, RESOLVE, STATE, STATES, TRANSITION, TRANSITIONS } from '../wire.js';
import { evictOldest } from '../bounded.js';

/** A breaker handle on one BreakerCore (Date.now clock, like the Redis store's TIME). */
function memoryBreaker(c) {
  const core = coreFromConfig(c);
  const stateAt = (now) => STATES[core.state(now)];
  const change = (t) => ({ state: stateAt(Date.now()), transition: TRANSITIONS[t] });
  const handle = {
    async acquire() {
      const now = Date.now();
      const p = core.tryAcquire(now);
      if (p < 0) return { granted: false, state: stateAt(now), retryInMs: -1 - p, transition: 'none' };
      return { granted: true, state: stateAt(now), permit: p % TRANSITION, retryInMs: 0, transition: p >= TRANSITION ? STATES[STATE.HALF_OPEN] : 'none' };
    },
    async record(permit, failed) {
      return change(failed ? core.recordFailure(permit, Date.now()) : core.recordSuccess(permit));
    },
    async release(permit) {
      return change(core.recordExcluded(permit));
    },
    async state() {
      const now = Date.now();
      const s = stateAt(now);
      return { state: s, retryInMs: s === 'open' ? core.retryInMs(now) : 0 };
    },
    async isolate() {
      return change(core.isolate());
    },
    async reset() {
      return change(core.reset());
    },
  };
  return { handle, closed: () => core.state(Date.now()) === STATE.CLOSED };
}

/** MemoryRecords.reopen's code as the interface's answer (resolve's names, but 'reopened' and 'mismatch'). */
function reopenAnswer(code) {
  if (code === RESOLVE.KEY_REUSED) return 'mismatch';
  return code === RESOLVE.NOT_FOUND ? 'not-found' : 'wrong-state';
}

/** An idempotency handle on one MemoryRecords (the wasm core decides). */
function memoryIdempotency({ ttlMs, maxRecords }) {
  const records = new MemoryRecords(makeStoreCore('memoryStateStore', { ttlMs, maxRecords }));
  return {
    async begin(key, fingerprint) {
      const now = Date.now();
      const { kind, slot } = records.begin(key, fingerprint, now);
      switch (kind) {
        case BEGIN.RUN:
          return { status: 'run', startedAt: now, token: slot };
        case BEGIN.REPLAY:
          return { status: 'done', result: records.value(slot) };
        case BEGIN.IN_FLIGHT:
        case BEGIN.UNKNOWN:
          return records.peekSlot(slot, now);
        case BEGIN.FULL:
          return { status: 'full', maxRecords: records.maxRecords };
        default:
          return { status: 'mismatch' };
      }
    },
    async complete(key, token, outcome, value, meta) {
      // The interface's outcome names are the core's completion names; anything else is definitive.
      const named = OUTCOMES.indexOf(outcome);
      const kind = named < 0 ? COMPLETION.FAILED : named;
      // (lastAttemptAgeMs is for a store on another clock: this one keeps lastAttemptAt, on its own.)
      const kept = meta === undefined ? undefined : { ...meta };
      if (kept !== undefined) delete kept.lastAttemptAgeMs;
      const freed = records.complete(token, kind, value, Date.now(), kept, key);
      return kind === COMPLETION.FAILED && !freed ? 'parked' : 'ok';
    },
    async reopen(key, fingerprint, token, startedAt) {
      const now = Date.now();
      const { code, slot } = records.reopen(key, fingerprint, startedAt, now);
      if (code === RESOLVE.RESOLVED) return { status: 'reopened', startedAt: now, token: slot };
      return { status: reopenAnswer(code) };
    },
    async peek(key) {
      return records.peek(key, Date.now());
    },
    async resolve(key, outcome, result, startedAt) {
      return RESOLUTIONS[records.resolve(key, outcome === 'done', result, startedAt, Date.now())] ?? RESOLUTIONS[RESOLVE.WRONG_STATE];
    },
    async unknownKeys() {
      return records.unknownKeys();
    },
  };
}

/** Most breaker names one memory store keeps (names beyond it share nothing: see breaker()). */
export const MAX_MEMORY_BREAKERS = 10_000;

/**
 * The in-memory state store: one process, no configuration. Breakers are shared by name within
 * the process, at most 10,000 names: past that, the oldest CLOSED breaker is dropped to make room
 * (a closed breaker holds only recent outcomes), or the oldest of all when none is closed. Each
 * `idempotency()` call makes an independent record set, bounded by its `maxRecords`.
 */
export function memoryStateStore() {
  const breakers = new Map();
  return {
    kind: 'memory',
    breaker(name, config) {
      let b = breakers.get(name);
      if (b === undefined) {
        if (breakers.size >= MAX_MEMORY_BREAKERS) evictOldest(breakers, (h) => h.closed());
        b = memoryBreaker(config);
        breakers.set(name, b);
      }
      return b.handle;
    },
    idempotency(options) {
      return memoryIdempotency(options);
    },
  };
}

let processStore;
/** The process-wide default store (created on first use). */
export function defaultStateStore() {
  processStore ??= memoryStateStore();
  return processStore;
}
