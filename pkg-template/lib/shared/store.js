// Why: breaker state and idempotency records outgrow one process (pods behind a load balancer,
// workers). The drivers (SharedCircuitBreaker, SharedIdempotencyStore) speak to a small async
// state-store interface; this file defines it and its in-memory implementation — the default, so
// one process needs nothing configured. The in-memory store holds no rules of its own: it drives
// the wasm core through CircuitBreaker and IdempotencyStore's public API.
//
// The interface (every method returns a Promise; a rejection means "unavailable"):
//
//   store.breaker(name, config) -> {
//     acquire()              -> { granted, state, permit, retryInMs, transition }
//     record(permit, failed) -> { state, transition }
//     state()                -> { state, retryInMs }
//     isolate() / reset()    -> { state, transition }
//   }   state / transition: 0 closed, 1 open, 2 half-open, 3 isolated (transition -1: none)
//   store.idempotency({ ttlMs, inFlightLeaseMs }) -> {
//     begin(key, fingerprint, token)      -> { status: 'run'|'done'|'in-flight'|'unknown'|'mismatch', startedAt?, result?, error? }
//     complete(key, token, outcome, value) -> boolean   outcome: 'done'|'unknown'|'failed'
//     peek(key)                            -> { status, startedAt?, result?, error? } | undefined
//     resolve(key, outcome, result)        -> 1 | -2 (no record) | -3 (not unknown)
//     unknownKeys()                        -> string[]  (oldest first)
//   }

import { CircuitBreaker } from '../breaker.js';
import { IdempotencyStore } from '../idempotency.js';

export const STATE_NAMES = ['closed', 'open', 'half-open', 'isolated'];

const FAILED = Symbol('steadfast.shared.failed');
const UNKNOWN = Symbol('steadfast.shared.unknown');
const DEFINITE = Symbol('steadfast.shared.failed-definitely');
const noop = () => {};

function stateId(breaker) {
  return breaker.isolated ? 3 : STATE_NAMES.indexOf(breaker.currentState);
}

/** A breaker handle over one in-process CircuitBreaker (the wasm core decides). */
function memoryBreaker(config) {
  let transition = -1;
  const options = {
    openDurationMs: config.openDurationMs,
    probesToClose: config.probesToClose,
    isFailure: (e) => e === FAILED,
    onStateChange: (s) => {
      transition = STATE_NAMES.indexOf(s);
    },
  };
  const breaker = new CircuitBreaker(
    config.kind === 'consecutive'
      ? { ...options, failureThreshold: config.failureThreshold }
      : { ...options, windowSize: config.windowSize, failureRateThreshold: config.failureRateThreshold, minimumCalls: config.minimumCalls },
  );
  const take = () => {
    const t = transition;
    transition = -1;
    return t;
  };
  return {
    async acquire() {
      let settle;
      transition = -1;
      const p = breaker.execute(() => new Promise((resolve, reject) => (settle = { resolve, reject })));
      if (settle === undefined) {
        const e = await p.catch((error) => error);
        return { granted: false, state: stateId(breaker), retryInMs: e?.retryAfterMs ?? 0, transition: take() };
      }
      p.catch(noop);
      return { granted: true, state: stateId(breaker), permit: { settle, p }, retryInMs: 0, transition: take() };
    },
    async record(permit, failed) {
      transition = -1;
      if (failed) permit.settle.reject(FAILED);
      else permit.settle.resolve();
      await permit.p.catch(noop);
      return { state: stateId(breaker), transition: take() };
    },
    async state() {
      const s = stateId(breaker);
      const snap = breaker.toJSON();
      return { state: s, retryInMs: s === 1 && snap.openUntil !== null ? Math.max(0, snap.openUntil - Date.now()) : 0 };
    },
    async isolate() {
      transition = -1;
      breaker.isolate();
      return { state: stateId(breaker), transition: take() };
    },
    async reset() {
      transition = -1;
      breaker.reset();
      return { state: stateId(breaker), transition: take() };
    },
  };
}

/** An idempotency handle over one in-process IdempotencyStore (the wasm core decides). */
function memoryIdempotency({ ttlMs }) {
  const store = new IdempotencyStore({ ttlMs, isTransient: (e) => e === UNKNOWN });
  const errors = new Map();
  const metas = new Map(); // key -> unknownMeta() of an unknown record
  return {
    async begin(key, fingerprint) {
      let settle;
      const p = store.run(key, () => new Promise((resolve, reject) => (settle = { resolve, reject })), { fingerprint });
      if (settle !== undefined) {
        p.catch(noop);
        return { status: 'run', startedAt: store.peek(key)?.startedAt, token: { settle, p } };
      }
      const out = await p.then(
        (result) => ({ ok: true, result }),
        (error) => ({ ok: false, error }),
      );
      if (out.ok) return { status: 'done', result: out.result };
      const { error } = out;
      const rec = store.peek(key);
      switch (error?.code) {
        case 'DUPLICATE_IN_FLIGHT':
          return { status: 'in-flight', startedAt: rec?.startedAt };
        case 'OUTCOME_UNKNOWN':
          return { status: 'unknown', startedAt: rec?.startedAt, error: errors.get(key) ?? '' };
        case 'KEY_REUSED':
          return { status: 'mismatch' };
        default:
          throw error; // an invalid key: a caller error, not unavailability
      }
    },
    async complete(key, token, outcome, value, meta) {
      if (outcome === 'done') token.settle.resolve(value);
      else {
        if (outcome === 'unknown') errors.set(key, value);
        if (outcome === 'unknown' && meta !== undefined) metas.set(key, meta);
        token.settle.reject(outcome === 'unknown' ? UNKNOWN : DEFINITE);
      }
      await token.p.catch(noop);
      return true;
    },
    async peek(key) {
      const rec = store.peek(key);
      if (rec?.status === 'unknown') return { ...rec, ...metas.get(key), error: errors.get(key) ?? '' };
      return rec;
    },
    async resolve(key, outcome, result) {
      const rec = store.peek(key);
      if (rec === undefined) return -2;
      if (rec.status !== 'unknown') return -3;
      store.resolve(key, outcome === 'done' ? { status: 'done', result } : { status: 'failed' });
      errors.delete(key);
      metas.delete(key);
      return 1;
    },
    async unknownKeys() {
      return store.unknownKeys();
    },
  };
}

/**
 * The in-memory state store: one process, no configuration. Breakers are shared by name within
 * the process; each `idempotency()` call makes an independent record set.
 */
export function memoryStateStore() {
  const breakers = new Map();
  return {
    kind: 'memory',
    breaker(name, config) {
      let b = breakers.get(name);
      if (b === undefined) breakers.set(name, (b = memoryBreaker(config)));
      return b;
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
