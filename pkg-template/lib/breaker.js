// Why: stop calling a dependency that has proven itself dead and fail in microseconds. The state
// machine (rate window or consecutive failures, one half-open probe, stale outcomes ignored) is
// the Rust core's; this class asks it for a permit, runs the call, and reports the outcome.

import { ANSWERED_BEFORE, CircuitOpenError, isSteadfastError, neverRan, rejectSoon } from './errors.js';
import * as o from './options.js';
import { emit, listening } from './events.js';
import { BREAKER_OPTIONS, readBreakerOptions } from './breaker-options.js';
import { LAYOUT, NOT_CLOSED, STATE, STATES, TRANSITION, TRANSITION_CODE, TRANSITIONS, VERDICT, namedSlots } from './wire.js';
import { deferred } from './deferred.js';
import { wasmMemory } from '../steadfast_core.js';

/**
 * A view of the core's quiet cell (see BreakerCore.quietCell): the permit whose success changes
 * nothing, or NaN; undefined for a breaker that never has one (nothing to read per call).
 */
function quietView(core) {
  const at = core.quietCell();
  return at === 0 ? undefined : new Float64Array(wasmMemory().buffer, at, 1);
}

const always = () => true;
const never = () => false;

/**
 * The answer a retry refused after the gateway had answered is judged by, or undefined: the budget
 * would not pay for it, it would not fit in `maxElapsedMs` (no attempt in flight), or the charge
 * changed before it (its `cause`); or a refusal that never ran ended the retries after an answered
 * attempt (a full bulkhead, an open inner breaker: ANSWERED_BEFORE). The refusal never ran; the call
 * is judged by that answer, as `isTransientError` judges a budget refusal, so `isFailure` and
 * `isExcluded` see what the gateway said. A refusal that never ran otherwise says nothing about the
 * dependency: always excluded, whatever `isExcluded` says.
 */
function answerBefore(error) {
  if (error === null || typeof error !== 'object') return undefined;
  const before = ANSWERED_BEFORE.get(error);
  if (before !== undefined) return before;
  try {
    const refused =
      isSteadfastError(error, 'RETRY_BUDGET_EXHAUSTED') ||
      (isSteadfastError(error, 'DEADLINE_EXCEEDED') && error.inFlight === false) ||
      (isSteadfastError(error, 'KEY_REUSED') && error.reason === 'changed');
    return refused ? error.cause : undefined;
  } catch {
    return undefined; // a forged error whose reads throw: judged as itself
  }
}

/**
 * @internal How a thrown error counts (a VERDICT): excluded (never ran, or `isExcluded`), a
 * failure, or — `isFailure` said no — a success; a retry refused after an answer counts as that
 * answer (a few causes down at most: a forged error may point at itself). CircuitBreaker and
 * SharedCircuitBreaker both ask it.
 */
export function verdictOf(error, isExcluded, isFailure) {
  let e = error;
  for (let depth = 0, before; depth < 4 && (before = answerBefore(e)) !== undefined; depth++) e = before;
  if (neverRan(e) || isExcluded(e) === true) return VERDICT.EXCLUDED;
  return isFailure(e) === true ? VERDICT.FAILURE : VERDICT.SUCCESS;
}

export class CircuitBreaker {
  #core;
  #clock;
  #onStateChange;
  #isFailure;
  #isExcluded;
  #slowCallDurationMs;
  #kind;
  /** The last state reported to listeners, and the timer that reports the end of a cooldown. */
  #reported;
  #cancelCooldownTimer;
  /** The permit the cached outcome handlers below were made for. */
  #permit = -1;
  #onValue;
  #onError;
  /** The core's quiet cell (quietView), or undefined. */
  #quiet;

  /**
   * @param {object} options rate shape `{ windowSize, failureRateThreshold, openDurationMs,
   *   probesToClose = 1, minimumCalls = windowSize }` or consecutive shape `{ failureThreshold,
   *   openDurationMs, probesToClose = 1 }`; plus `clock`, `onStateChange`, `isFailure`, `state`,
   *   `isExcluded` (errors that count as neither success nor failure; default none, and a refusal
   *   that never ran — BulkheadRejectedError, an inner CircuitOpenError — always) and
   *   `slowCallDurationMs` (a success that took at least this long counts as a failure; default none).
   */
  constructor(options) {
    const where = 'CircuitBreaker';
    // Made before the core loaded (module level under a strict CSP, steadfast/lazy): see deferred.js.
    const stand = deferred(new.target, arguments, where, ['execute']);
    if (stand !== undefined) return stand;
    const opts = o.misspelt(o.object(options, where), BREAKER_OPTIONS, where);
    this.#clock = o.clock(opts, where);
    this.#onStateChange = o.fn(opts, 'onStateChange', where);
    this.#isFailure = o.fn(opts, 'isFailure', where) ?? always;
    this.#isExcluded = o.fn(opts, 'isExcluded', where) ?? never;
    const slowCallDurationMs = o.num(opts, 'slowCallDurationMs', where);
    const { core, config } = readBreakerOptions(opts, where);
    this.#kind = config.kind;
    this.#core = core;
    this.#quiet = quietView(core);
    if (slowCallDurationMs !== undefined) {
      o.core(where, { slowCallDurationMs }, () => core.setSlowCallDurationMs(slowCallDurationMs));
      this.#slowCallDurationMs = slowCallDurationMs;
    }
    const state = o.own(opts, 'state');
    if (state !== undefined) this.#restore(state);
  }

  /** 'closed' | 'open' | 'half-open' | 'isolated' (held open by `isolate()`), as SharedCircuitBreaker answers. */
  get currentState() {
    return STATES[this.#core.state(this.#clock())];
  }

  /** Whether the breaker is held open by `isolate()`. */
  get isolated() {
    return this.#core.state(this.#clock()) === STATE.ISOLATED;
  }

  /**
   * Whether forgetting this breaker would lose protection: it is not closed (open, half-open,
   * isolated), or it is closed with a failure on record. A BreakerRegistry never evicts such a
   * breaker (the core's rule).
   */
  get holdsProtection() {
    return this.#core.holdsProtection();
  }

  /**
   * Run `fn` if the breaker admits it; otherwise call `fallback` or reject with CircuitOpenError
   * without calling `fn`.
   */
  execute(fn, fallback) {
    if (typeof fn !== 'function') return Promise.reject(o.typeError('execute', 'fn', 'a function', fn));
    // A closed circuit admits without looking at the time: no clock read on the hot path.
    let permit = this.#core.tryAcquireClosed();
    if (permit === NOT_CLOSED) permit = this.#core.tryAcquire(this.#clock());
    if (permit < 0) {
      if (fallback !== undefined) {
        if (typeof fallback !== 'function') return Promise.reject(o.typeError('execute', 'fallback', 'a function', fallback));
        try {
          return Promise.resolve(fallback());
        } catch (e) {
          return Promise.reject(e);
        }
      }
      // A fresh, stackless error per rejection: catch code may tag it (see errors.js). Rejected on
      // the next microtask, once the caller's handler is attached (see rejectSoon).
      return rejectSoon(CircuitOpenError.fast(-1 - permit));
    }
    if (permit >= TRANSITION) {
      // This call is the half-open probe: it must run and report even if the listener throws, or
      // the probe slot would be held until its lease runs out. The listener's error then rejects it.
      try {
        this.#emit(TRANSITION_CODE.HALF_OPEN);
      } catch (listenerError) {
        const fail = () => {
          throw listenerError;
        };
        return this.#run(fn, permit).then(fail, fail);
      }
    }
    return this.#run(fn, permit);
  }

  /** Run `fn` under `permit` and report its outcome. */
  #run(fn, permit) {
    if (this.#slowCallDurationMs !== undefined) return this.#runTimed(fn, permit);
    let p;
    try {
      p = fn();
    } catch (error) {
      try {
        return Promise.reject(this.#failed(error, permit));
      } catch (e) {
        return Promise.reject(e); // isFailure threw
      }
    }
    // One reaction on the caller's promise, with handlers cached per permit: in a closed circuit
    // every call shares one permit (the generation), so the success path allocates no closure.
    if (permit !== this.#permit) {
      this.#permit = permit;
      this.#onValue = (value) => {
        // The core publishes, in wasm memory, the permit whose success would change nothing (a
        // closed consecutive breaker with no failure in its run): that report is skipped, no
        // crossing. A view detached by memory growth reads undefined, never a permit: the report
        // is made, and the view remade.
        const quiet = this.#quiet;
        if (quiet !== undefined) {
          if (quiet[0] === permit) return value;
          if (quiet.length === 0) this.#quiet = quietView(this.#core);
        }
        const t = this.#core.recordSuccess(permit);
        if (t !== TRANSITION_CODE.NONE) this.#emit(t);
        return value;
      };
      this.#onError = this.#thrower(permit);
    }
    return Promise.resolve(p).then(this.#onValue, this.#onError);
  }

  /** `#run` with a slow-call threshold: the core judges the call by its duration too. */
  #runTimed(fn, permit) {
    const started = this.#clock();
    const report = (verdict) => {
      const now = this.#clock();
      const t = this.#core.recordTimed(permit, verdict, now - started, now);
      if (t !== TRANSITION_CODE.NONE) this.#emit(t);
    };
    const onError = (error) => {
      report(this.#verdictOf(error));
      throw error;
    };
    let p;
    try {
      p = Promise.resolve(fn());
    } catch (error) {
      try {
        return Promise.reject(onError(error));
      } catch (e) {
        return Promise.reject(e);
      }
    }
    return p.then((value) => {
      report(VERDICT.SUCCESS);
      return value;
    }, onError);
  }

  /** How a thrown error counts: excluded, a failure, or (isFailure said no) a success. */
  #verdictOf(error) {
    return verdictOf(error, this.#isExcluded, this.#isFailure);
  }

  #thrower(permit) {
    return (error) => {
      throw this.#failed(error, permit);
    };
  }

  /** Record a thrown error against `permit` (if it counts as a failure); returns it to rethrow. */
  #failed(error, permit) {
    const verdict = this.#verdictOf(error);
    const t =
      verdict === VERDICT.EXCLUDED
        ? this.#core.recordExcluded(permit)
        : verdict === VERDICT.FAILURE
          ? this.#core.recordFailure(permit, this.#clock())
          : this.#core.recordSuccess(permit);
    if (t !== TRANSITION_CODE.NONE) this.#emit(t);
    return error;
  }

  #emit(code) {
    const state = TRANSITIONS[code];
    // Reported by the cooldown timer already: the next call's lazy transition is not news.
    if (state === 'half-open' && this.#reported === 'half-open') return;
    this.#reported = state;
    this.#cancelCooldownTimer?.();
    this.#cancelCooldownTimer = undefined;
    if (state === 'open') this.#reportCooldownEnd();
    if (this.#onStateChange !== undefined) this.#onStateChange(state);
    if (listening.breakerState) emit('breakerState', { breaker: this, state });
  }

  /**
   * `currentState` reads 'half-open' once the cooldown is over, with or without a call; listeners
   * hear it then too (as opossum's timer does), not only at the next call. Only when someone
   * listens; the timer never keeps a Node process alive. With a clock of your own, the core's
   * state is checked when the real cooldown has passed (and the next call reports it otherwise).
   */
  #reportCooldownEnd() {
    if (this.#onStateChange === undefined && !listening.breakerState) return;
    const { state, openUntilMs } = this.#head(this.#core.snapshot());
    const ms = openUntilMs - this.#clock();
    if (state !== STATE.OPEN || !(ms <= 2_147_483_647)) return; // longer than a timer can wait: the next call reports it
    const handle = globalThis.setTimeout(
      () => {
        this.#cancelCooldownTimer = undefined;
        if (this.#core.state(this.#clock()) === STATE.HALF_OPEN) this.#emit(TRANSITION_CODE.HALF_OPEN);
      },
      Math.max(0, ms) + 1,
    );
    handle?.unref?.();
    this.#cancelCooldownTimer = () => globalThis.clearTimeout(handle);
  }

  /** Hold the circuit open until `reset()` (maintenance, a known-bad deploy). */
  isolate() {
    const t = this.#core.isolate();
    if (t !== TRANSITION_CODE.NONE) this.#emit(t);
  }

  /** Close the circuit and forget every outcome. */
  reset() {
    const t = this.#core.reset();
    if (t !== TRANSITION_CODE.NONE) this.#emit(t);
  }

  /**
   * Open until `untilMs` (on this breaker's clock) because a peer saw it trip. The deadline is
   * clamped to now + openDurationMs: a peer cannot hold this breaker open longer than one trip would
   * (isolate() holds it open indefinitely). A deadline already past changes nothing.
   */
  openUntil(untilMs) {
    if (typeof untilMs !== 'number') throw o.typeError('openUntil', 'untilMs', 'a number', untilMs);
    if (!Number.isFinite(untilMs)) throw o.rangeError('openUntil', 'untilMs', 'a finite time (isolate() holds it open indefinitely)', untilMs);
    const t = this.#core.openUntil(untilMs, this.#clock());
    if (t !== TRANSITION_CODE.NONE) this.#emit(t);
  }

  /**
   * Plain-data snapshot; pass it back as `new CircuitBreaker({ ...options, state })`. A restored
   * open deadline is clamped to now + openDurationMs (storage may have been tampered with).
   */
  toJSON() {
    const snapshot = this.#core.snapshot();
    const { state, openUntilMs, probeSuccesses, consecutiveFailures } = this.#head(snapshot);
    return {
      version: 1,
      kind: this.#kind,
      state: STATES[state],
      openUntil: state === STATE.OPEN ? openUntilMs : null,
      probeSuccesses,
      consecutiveFailures,
      window: Array.from(snapshot.subarray(LAYOUT.breakerSnapshot.length)),
    };
  }

  /** The named head of a core snapshot (the window follows it). */
  #head(snapshot) {
    return namedSlots(LAYOUT.breakerSnapshot, snapshot);
  }

  #restore(state) {
    const where = 'CircuitBreaker';
    const bad = (why) => o.rangeError(where, 'state', `a snapshot from toJSON() (${why})`, state);
    if (state === null || typeof state !== 'object') throw o.typeError(where, 'state', 'a snapshot from toJSON()', state);
    const field = (name) => o.own(state, name);
    if (field('version') !== 1) throw bad('version 1');
    if (field('kind') !== this.#kind) throw bad(`kind '${this.#kind}'`);
    const s = STATES.indexOf(field('state'));
    if (s < 0) throw bad('unknown state');
    const window = field('window') ?? [];
    if (!Array.isArray(window)) throw bad('window must be an array');
    if (window.length > 100_000) throw bad('window longer than any breaker keeps');
    const head = {
      state: s,
      openUntilMs: s === STATE.OPEN ? field('openUntil') : 0,
      probeSuccesses: field('probeSuccesses') ?? 0,
      consecutiveFailures: field('consecutiveFailures') ?? 0,
    };
    const data = [...LAYOUT.breakerSnapshot.map((name) => head[name]), ...window];
    if (!data.every((v) => typeof v === 'number')) throw bad('numbers expected');
    o.core(where, { state }, () => this.#core.restore(new Float64Array(data), this.#clock()));
  }
}
