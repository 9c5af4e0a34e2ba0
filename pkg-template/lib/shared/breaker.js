// Why: a breaker per process learns about a dead dependency N times, one process at a time. A shared
// breaker feeds every process's outcomes into one window in a state store, so one trip makes every
// process fail fast and, in half-open, exactly one probe runs cluster-wide. The rules live in the
// store (wasm core in memory, its Lua twin in Redis); this driver asks, runs, and reports.

import { CircuitBreaker, verdictOf } from '../breaker.js';
import { CircuitOpenError, isInstance } from '../errors.js';
import { messageOf } from '../unknown.js';
import { currentRunOf, currentSinkOf, resumingFor } from '../classify.js';
import * as o from '../options.js';
import { deferred } from '../deferred.js';
import { StateStoreUnavailableError } from './errors.js';
import { defaultStateStore } from './store.js';
import { BREAKER_OPTIONS, STATES, readBreakerOptions } from '../breaker-options.js';
import { VERDICT } from '../wire.js';

const always = () => true;
const never = () => false;
/** SharedCircuitBreaker's own options (and the outcome options it applies itself); every other own option is a breaker option. */
const SHARED_ONLY = new Set([
  'store',
  'name',
  'whenUnavailable',
  'localCacheMs',
  'onStoreError',
  'onStateChange',
  'isFailure',
  'isExcluded',
  'slowCallDurationMs',
  'clock',
  'state',
]);
/** A SharedCircuitBreaker's option names: a CircuitBreaker's and its own (SharedBreakerOptions in types/shared.d.ts). */
export const SHARED_BREAKER_OPTIONS = [...new Set([...BREAKER_OPTIONS, ...SHARED_ONLY])];
const monotonic = () => globalThis.performance.now();

export class SharedCircuitBreaker {
  #handle;
  #local;
  #isFailure;
  #isExcluded;
  /** A BreakerCore holding the slow-call threshold, when one is set (it judges durations only). */
  #judge;
  #onStateChange;
  #onStoreError;
  #whenUnavailable;
  #localCacheMs;
  #failFastUntil = 0;
  #last = 'closed';
  #name;

  /**
   * @param {object} options CircuitBreaker's options (rate or consecutive shape, `isFailure`,
   *   `onStateChange`) plus `name` (required), `store` (default: the process's memory store),
   *   `whenUnavailable = 'local'` ('local': use an in-process breaker with the same options while
   *   the store is unreachable; 'reject': reject with StateStoreUnavailableError),
   *   `localCacheMs` (how long a process answers "open" by itself before asking the store again:
   *   1000 for remote stores, 0 for memory; a reset elsewhere is seen at most this late),
   *   `onStoreError(event)` ({ op, error, name }).
   */
  constructor(options) {
    const where = 'SharedCircuitBreaker';
    const stand = deferred(new.target, arguments, where);
    if (stand !== undefined) return stand;
    const opts = o.misspelt(o.object(options, where), SHARED_BREAKER_OPTIONS, where);
    // Own properties only (a polluted Object.prototype must not steer a breaker).
    const breakerOptions = Object.create(null);
    for (const k of Object.keys(opts)) if (!SHARED_ONLY.has(k)) breakerOptions[k] = opts[k];
    const [store, name, clock, state] = ['store', 'name', 'clock', 'state'].map((k) => o.own(opts, k));
    if (typeof name !== 'string' || name.length === 0) throw o.typeError(where, 'name', 'a non-empty string', name);
    if (clock !== undefined) throw o.typeError(where, 'clock', "absent: a shared breaker runs on the store's clock", clock);
    if (state !== undefined) throw o.typeError(where, 'state', 'absent: the state lives in the store', state);
    this.#isFailure = o.fn(opts, 'isFailure', where) ?? always;
    this.#isExcluded = o.fn(opts, 'isExcluded', where) ?? never;
    const slowCallDurationMs = o.num(opts, 'slowCallDurationMs', where);
    this.#onStateChange = o.fn(opts, 'onStateChange', where);
    this.#onStoreError = o.fn(opts, 'onStoreError', where);
    this.#whenUnavailable = ['local', 'reject'][o.oneOf(opts, 'whenUnavailable', where, ['local', 'reject'], 0)];
    const s = store ?? defaultStateStore();
    if (s === null || typeof s !== 'object' || typeof s.breaker !== 'function') throw o.typeError(where, 'store', 'a state store', s);
    // Remote stores: answer "open" locally for a while (no round trip per rejected call).
    this.#localCacheMs = o.num(opts, 'localCacheMs', where) ?? (s.kind === 'memory' ? 0 : 1000);
    if (!(this.#localCacheMs >= 0)) throw o.rangeError(where, 'localCacheMs', 'a number >= 0', this.#localCacheMs);
    // Options are parsed once (breaker-options.js; the core validates and fills defaults); the store
    // and the in-process fallback are built from the same normalised config.
    const { core, config } = readBreakerOptions(breakerOptions, where);
    // The slow-call rule is the core's: a core with this threshold judges each call's duration
    // (outcomeOf) before the outcome goes to the store. Without a threshold no clock is read.
    if (slowCallDurationMs !== undefined) {
      o.core(where, { slowCallDurationMs }, () => core.setSlowCallDurationMs(slowCallDurationMs));
      this.#judge = core;
    }
    const outcomes = { isFailure: this.#isFailure, isExcluded: this.#isExcluded };
    if (slowCallDurationMs !== undefined) outcomes.slowCallDurationMs = slowCallDurationMs;
    this.#local = new CircuitBreaker({ ...config, ...outcomes });
    this.#handle = s.breaker(name, config);
    this.#name = name;
  }

  get name() {
    return this.#name;
  }

  /** The state this process last saw in the store ('closed' | 'open' | 'half-open' | 'isolated'). */
  get currentState() {
    return this.#last;
  }

  /** Ask the store for the state now. */
  async state() {
    const r = await this.#guard('state', () => this.#handle.state());
    this.#observe(r.state, 'none');
    return this.#last;
  }

  /** Hold the circuit open in every process until `reset()`. */
  async isolate() {
    const r = await this.#guard('isolate', () => this.#handle.isolate());
    this.#observe(r.state, r.transition);
  }

  /** Close the circuit in every process and forget every outcome. */
  async reset() {
    this.#failFastUntil = 0;
    const r = await this.#guard('reset', () => this.#handle.reset());
    this.#observe(r.state, r.transition);
  }

  /**
   * Run `fn` if the shared circuit admits it; otherwise call `fallback` or reject with
   * CircuitOpenError without calling `fn`. While the store is unreachable, see `whenUnavailable`.
   */
  async execute(fn, fallback) {
    if (typeof fn !== 'function') throw o.typeError('execute', 'fn', 'a function', fn);
    if (fallback !== undefined && typeof fallback !== 'function') throw o.typeError('execute', 'fallback', 'a function', fallback);
    // A store run or a retry attempt starting this call (classify.runningFor, reportingFor): `fn`,
    // called after the store's answer, still reports to it.
    const owner = currentRunOf();
    const sink = currentSinkOf();
    const now = monotonic();
    if (now < this.#failFastUntil) return this.#rejected(fallback, this.#failFastUntil - now);
    let ticket;
    try {
      ticket = await this.#guard('acquire', () => this.#handle.acquire());
    } catch (error) {
      if (this.#whenUnavailable === 'reject') throw error;
      return this.#local.execute(() => resumingFor(owner, sink, fn), fallback);
    }
    this.#observe(ticket.state, ticket.transition);
    if (!ticket.granted) {
      if (ticket.state === 'open' && ticket.retryInMs > 0) this.#failFastUntil = monotonic() + Math.min(ticket.retryInMs, this.#localCacheMs);
      return this.#rejected(fallback, ticket.retryInMs);
    }
    const started = this.#judge === undefined ? 0 : monotonic();
    let value;
    try {
      value = await resumingFor(owner, sink, fn);
    } catch (error) {
      let verdict;
      try {
        verdict = verdictOf(error, this.#isExcluded, this.#isFailure);
      } finally {
        await this.#report(ticket, verdict ?? VERDICT.FAILURE, started); // a throwing isFailure/isExcluded counts as a failure
      }
      throw error;
    }
    await this.#report(ticket, VERDICT.SUCCESS, started);
    return value;
  }

  /**
   * Report the call `ticket` admitted: a failure or a success (the core applies the slow-call
   * threshold first) is recorded; an excluded one records nothing, and a half-open probe gives its
   * slot back (`release`) so the next call may probe. A store handle without `release` keeps the
   * probe's slot until its lease lapses (twice openDurationMs), as if its owner had vanished.
   */
  async #report(ticket, verdict, started) {
    const v = this.#judge === undefined ? verdict : this.#judge.outcomeOf(verdict, monotonic() - started);
    if (v !== VERDICT.EXCLUDED) return this.#tell('record', () => this.#handle.record(ticket.permit, v === VERDICT.FAILURE));
    if (ticket.state === 'closed' || typeof this.#handle.release !== 'function') return undefined; // a closed circuit holds nothing to give back
    return this.#tell('release', () => this.#handle.release(ticket.permit)); // on failure the probe's lease lapses in the store
  }

  /** Send an outcome to the store and observe its answer; a failure is reported through onStoreError, and the call's own outcome still reaches the caller. */
  async #tell(op, call) {
    try {
      const r = await this.#guard(op, call);
      this.#observe(r.state, r.transition);
    } catch {
      // reported by #guard
    }
  }

  #rejected(fallback, retryInMs) {
    if (fallback !== undefined) return fallback();
    throw new CircuitOpenError(retryInMs);
  }

  async #guard(op, call) {
    try {
      return await call();
    } catch (error) {
      const e = isInstance(error, StateStoreUnavailableError) ? error : new StateStoreUnavailableError(op, messageOf(error), error);
      try {
        this.#onStoreError?.({ op, error: e, name: this.#name });
      } catch {
        // a throwing logger must not change the outcome
      }
      throw e;
    }
  }

  // The handle speaks the state names ('closed' | 'open' | 'half-open' | 'isolated'; transition
  // 'none' or the state entered). An answer outside them (a store of another version) changes nothing.
  #observe(state, transition) {
    const name = transition !== 'none' ? transition : state;
    if (!STATES.includes(name) || name === this.#last) return;
    this.#last = name;
    if (name !== 'open') this.#failFastUntil = 0;
    this.#onStateChange?.(name);
  }
}

/** A breaker whose state lives in `store` (default: this process's memory). */
export function createSharedBreaker(options) {
  return new SharedCircuitBreaker(options);
}
