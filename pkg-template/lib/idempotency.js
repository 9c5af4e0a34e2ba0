// Why: one logical charge, however many attempts happen underneath. A timeout is not a failure but
// an unknown: the key is parked and blind retries are refused until reconciliation. The record
// lifecycle (in-flight / done / unknown, fingerprints, TTL, the maxRecords bound) and the key ->
// slot index are the Rust core's (keys hashed under a per-store random hash key into one table in wasm
// memory, so the JS heap holds no key per record). `MemoryRecords` keeps the results under their
// slots, and the keys of unknown records (for the reconciliation worklist); it is the one
// in-process handle that both IdempotencyStore and the memory state store drive.

import { StoreCore, failedVerdictWaitMs, newIdempotencyKey as coreKey, settleAfterMs as coreSettleAfterMs } from '../steadfast_core.js';
import {
  brand,
  fieldOf,
  isInstance,
  DuplicateRequestError,
  IdempotencyKeyReuseError,
  IdempotencyStateError,
  OutcomeUnknownError,
  StoreFullError,
} from './errors.js';
import * as o from './options.js';
import { deferred } from './deferred.js';
import { VERDICT, failedRunVerdict, isTransientError, newRun, runningFor } from './classify.js';
import { BEGIN, BEGIN_OUTCOMES as BEGIN_OUTCOME, COMPLETION, LAYOUT, RESOLVE, STATUS, namedSlots } from './wire.js';
import { checkKey, invalidKey } from './idempotency-key.js';
import { RESUBMIT_OPTIONS, RUN_OPTIONS, fingerprintText } from './fingerprint.js';
import { errorText, unknownMeta } from './unknown.js';
import { emit, listening } from './events.js';
import { writeInput } from './input.js';
import { STORE_CLOCK } from './clock.js';

/** @internal The method chargeCustomer runs a charge through on an IdempotencyStore (see [RUN_WRITTEN]). */
export const RUN_WRITTEN = Symbol('steadfast.runWritten');
/** @internal The method chargeCustomer asks before a later attempt of that charge (see [RUNS_WRITTEN]). */
export const RUNS_WRITTEN = Symbol('steadfast.runsWritten');

/** A new UUID v4 from the platform CSPRNG: make it once per logical charge, reuse it on every attempt. */
export function newIdempotencyKey() {
  try {
    return coreKey();
  } catch (thrown) {
    if (thrown === 'RANDOM_UNAVAILABLE') {
      throw brand(new Error('steadfast: no crypto.getRandomValues: cannot make an unguessable key'), 'RANDOM_UNAVAILABLE');
    }
    throw thrown;
  }
}

/**
 * The in-process records handle: StoreCore (records and key index) plus the values stored by slot.
 * Synchronous; every decision is the core's. begin() applies the key rule (in the core); the other
 * methods take keys their callers checked.
 * @internal
 */
export class MemoryRecords {
  #core;
  /** slot -> the result (done) or the error text (unknown); the core knows which. */
  #slots = [];
  /** slot -> { key, meta } of an unknown record: the worklist's keys and what reconciliation needs (attempts, lastAttemptAt, settleAfterMs). */
  #unknown = new Map();

  /** @param {StoreCore} core */
  constructor(core) {
    this.#core = core;
  }

  get maxRecords() {
    return this.#core.maxRecords;
  }

  /**
   * `{ kind, slot }` with kind one of BEGIN's codes. `fp`: fingerprint text or undefined. A key
   * that fails the key rule throws its INVALID_KEY RangeError (nothing is stored).
   */
  begin(key, fp, now) {
    // The fingerprint text crosses with the key and is hashed in the core (a SipHash-128 keyed by
    // this store's secret hash key; Redis keeps SHA-256/128, which every process computes alike):
    // one call, no digest back. (A JS cache of recent digests would cost as much per lookup of a
    // fresh text as the core's hash, and a new order misses it anyway.) Both are written with
    // encodeInto into the core's input buffer, not passed as strings (see writeInput).
    // The key rule is the core's, applied there to the key's bytes (a valid key is one byte per
    // character, so its first key.length bytes; any other character makes them fail the rule).
    return this.beginWritten(key, writeInput(key, fp), now);
  }

  /**
   * begin() over what is already in the core's input buffer: `key` (its first key.length bytes)
   * and `f` fingerprint bytes after it (input.js writes both).
   */
  beginWritten(key, f, now) {
    const code = this.#core.beginInput(key.length, f, now);
    if (code === BEGIN.INVALID_KEY) throw invalidKey(key);
    if (Number.isNaN(code)) throw new Error('steadfast: internal: the input buffer did not hold the key'); // unreachable: writeInput sized it
    // Slots freed by expiry are dropped BEFORE this slot is used (the same begin may hand one out).
    if (code % BEGIN.SLOT >= BEGIN.EXPIRED_FLAG) for (const s of this.#core.takeExpired()) this.#forget(s);
    return { kind: code % BEGIN.EXPIRED_FLAG, slot: Math.floor(code / BEGIN.SLOT) };
  }

  /** Whether `key` has a run in flight for the `f` fingerprint bytes after it in the input buffer (see beginWritten). */
  runsWritten(key, f) {
    return this.#core.runsInput(key.length, f);
  }

  /**
   * Report how the run of `key` in `slot` ended: a COMPLETION kind — DONE (`value` replays),
   * UNKNOWN, FAILED (definitive), REFUTED (for a failure `value` = error text, `meta` = unknownMeta()). Returns
   * whether the key is free now: a definitive end of a record that may have been processed
   * before (reopened by reconciliation) leaves it unknown — the core's sticky rule.
   */
  complete(slot, kind, value, now, meta, key) {
    this.#slots[slot] = value;
    if (kind !== COMPLETION.DONE) this.#unknown.set(slot, { key, meta });
    const freed = this.#core.complete(slot, kind, now);
    if (freed) this.#forget(slot);
    else if (kind === COMPLETION.DONE) this.#unknown.delete(slot);
    return freed;
  }

  /**
   * Reconciliation's re-send: move `key`'s unknown record back to in flight on the same record
   * (compare-and-set on `expectStartedAt` when given; the same request's fingerprint text `fp`).
   * `{ code, slot }`: a RESOLVE code — RESOLVED (reopened), NOT_FOUND, WRONG_STATE (not unknown),
   * KEY_REUSED (another request's key).
   */
  reopen(key, fp, expectStartedAt, now) {
    const r = this.#core.reopen(key, fp ?? '', expectStartedAt, now);
    return { code: r % RESOLVE.SLOT, slot: Math.floor(r / RESOLVE.SLOT) };
  }

  /** The value stored under `slot` (a done record's result): the replay path, no crossing. */
  value(slot) {
    return this.#slots[slot];
  }

  /** The record in `slot` (of `key`), as the public shape, or undefined. */
  peekSlot(slot, now) {
    const p = this.#core.peek(slot, now);
    if (p.length === 0) return undefined;
    const { status, startedAtMs: startedAt } = namedSlots(LAYOUT.peek, p);
    if (status === STATUS.IN_FLIGHT) return { status: 'in-flight', startedAt };
    if (status === STATUS.DONE) return { status: 'done', result: this.#slots[slot] };
    return { status: 'unknown', error: this.#slots[slot], startedAt, ...this.#unknown.get(slot)?.meta };
  }

  peek(key, now) {
    const slot = this.#core.slotOf(key);
    return slot < 0 ? undefined : this.peekSlot(slot, now);
  }

  /** RESOLVE code. `expectStartedAt` (optional) makes it a compare-and-set on the attempt. */
  resolve(key, done, result, expectStartedAt, now) {
    const slot = this.#core.slotOf(key);
    if (slot < 0) return RESOLVE.NOT_FOUND;
    const r = this.#core.resolve(key, done, expectStartedAt, now);
    if (r === RESOLVE.RESOLVED) {
      if (done) {
        this.#slots[slot] = result;
        this.#unknown.delete(slot);
      } else this.#forget(slot);
    }
    return r;
  }

  unknownKeys() {
    return Array.from(this.#core.unknownSlots(), (s) => this.#unknown.get(s)?.key);
  }

  size(now) {
    this.#core.sweep(now);
    for (const s of this.#core.takeExpired()) this.#forget(s);
    return this.#core.size;
  }

  /** The core freed `slot` (and dropped its key from the index): drop its value. */
  #forget(slot) {
    this.#slots[slot] = undefined;
    this.#unknown.delete(slot);
  }
}

/**
 * @internal The COMPLETION kind (UNKNOWN, FAILED: definitive, or REFUTED) of a run that failed
 * with `error`: the core's verdict on the run's whole history (classify.failedRunVerdict), or
 * refuted when the caller's `refutes` says the error is an answer about the key.
 */
function completionOf(error, isTransient, classifierGiven, refutes, run) {
  if (refutes !== undefined) {
    try {
      if (refutes(error) === true) return COMPLETION.REFUTED;
    } catch {
      // a refutation that cannot be read refutes nothing
    }
  }
  return failedRunVerdict(error, isTransient, classifierGiven, run) === VERDICT.UNKNOWN ? COMPLETION.UNKNOWN : COMPLETION.FAILED;
}

/**
 * @internal How a store settles a run that failed with `error`: `{ kind, meta }`, completionOf's
 * kind and unknownMeta's record (both stores ask this one function). It never throws: whatever
 * judging the error throws (a value no read of which works, a bug), the run is settled as UNKNOWN,
 * the careful answer, so its record never stays in flight and its key is never freed by a throw.
 */
export function settledFailure(error, isTransient, classifierGiven, refutes, run, options, completedAt) {
  let kind = COMPLETION.UNKNOWN;
  try {
    kind = completionOf(error, isTransient, classifierGiven, refutes, run);
    return { kind, meta: unknownMeta(error, options, completedAt) };
  } catch {
    return { kind, meta: { lastAttemptAt: completedAt } };
  }
}

/**
 * @internal What a run that left its key parked rejects with: an OutcomeUnknownError naming the key,
 * with the error that ended the run as `cause`, the attempts and settle window reconciliation
 * needs, and `retryAfterMs` — how long until a lookup's "no charge" can be believed (the settle
 * window from the last attempt). An OutcomeUnknownError for this key is completed, not wrapped.
 */
export function parkedError(key, startedAt, error, meta, now) {
  const window = meta?.settleAfterMs ?? coreSettleAfterMs(NaN, NaN);
  const retryAfterMs = failedVerdictWaitMs(now, meta?.lastAttemptAt ?? now, window);
  if (isInstance(error, OutcomeUnknownError) && fieldOf(error, 'key') === key) {
    try {
      if (typeof error.retryAfterMs !== 'number') error.retryAfterMs = retryAfterMs;
    } catch {
      // a forged one that refuses the field: completed as it is
    }
    return error;
  }
  const e = new OutcomeUnknownError(key, startedAt, { cause: error, attempts: meta?.attempts, lastAttemptAt: meta?.lastAttemptAt, settleAfterMs: window });
  e.retryAfterMs = retryAfterMs;
  return e;
}

/** A StoreCore from validated numbers (RangeError naming the option otherwise). @internal */
export function makeStoreCore(where, values) {
  return o.core(where, values, () => new StoreCore(values.ttlMs, values.maxRecords));
}

function checkResolution(outcome) {
  const out = o.object(outcome, 'resolve');
  const status = o.own(out, 'status');
  if (status !== 'done' && status !== 'failed') throw o.typeError('resolve', 'status', "'done' or 'failed'", status);
  const startedAt = o.num(out, 'startedAt', 'resolve');
  return { done: status === 'done', result: o.own(out, 'result'), startedAt };
}

/** The IdempotencyStateError for a RESOLVE code, or undefined when settled. @internal */
export function resolveError(key, r) {
  if (r === RESOLVE.NOT_FOUND) return new IdempotencyStateError(key, 'KEY_NOT_FOUND', `No record for idempotency key ${key}`);
  if (r === RESOLVE.WRONG_STATE) {
    return new IdempotencyStateError(
      key,
      'KEY_WRONG_STATE',
      `Idempotency key ${key} is not unknown (or not the attempt that began at startedAt): only unknown keys can be resolved`,
    );
  }
  return undefined;
}
export { checkResolution };

export class IdempotencyStore {
  #records;
  #clock;
  #isTransient;

  /**
   * @param {object} [options] `{ ttlMs = 86_400_000, maxRecords = 1_000_000, clock = Date.now,
   *   isTransient = isTransientError }`
   */
  #classifierGiven;

  constructor(options) {
    const where = 'IdempotencyStore';
    const stand = deferred(new.target, arguments, where, ['run', 'resubmit']);
    if (stand !== undefined) return stand;
    const opts = o.misspelt(o.object(options, where, true), ['ttlMs', 'maxRecords', 'clock', 'isTransient'], where);
    this.#clock = o.clock(opts, where);
    const given = o.fn(opts, 'isTransient', where);
    this.#classifierGiven = given !== undefined;
    this.#isTransient = given ?? isTransientError;
    const values = { ttlMs: o.num(opts, 'ttlMs', where), maxRecords: o.num(opts, 'maxRecords', where) };
    this.#records = new MemoryRecords(makeStoreCore(where, values));
  }

  /**
   * Run `fn` once for `key`: a done key replays its result; an in-flight key rejects with
   * DuplicateRequestError; an unknown key rejects with OutcomeUnknownError; a different fingerprint
   * or scope rejects with IdempotencyKeyReuseError; a new key in a full store rejects with
   * StoreFullError. A transient failure parks the key as unknown; any other failure frees it.
   */
  run(key, fn, options) {
    if (typeof key !== 'string') {
      return Promise.reject(brand(new TypeError(`steadfast: run key must be a string, got ${o.show(key)}`), 'INVALID_KEY'));
    }
    if (typeof fn !== 'function') return Promise.reject(o.typeError('run', 'fn', 'a function', fn));
    let now;
    let kind;
    let slot;
    try {
      const fp = options === undefined ? undefined : fingerprintText(o.misspelt(o.object(options, 'run'), RUN_OPTIONS, 'run'), 'run');
      now = this.#clock();
      ({ kind, slot } = this.#records.begin(key, fp, now)); // the core checks the key (INVALID_KEY)
    } catch (e) {
      return Promise.reject(e); // bad options, a user clock that throws or a bad key: nothing has started
    }
    return this.#begun(key, fn, options, now, kind, slot);
  }

  /**
   * @internal run(key, fn, options) with the key and its fingerprint written into the core's input
   * buffer by `write()`, which returns the fingerprint's byte length (chargeCustomer's path:
   * input.js's writeCharge walks the charge into it, no text built). `key` is a string and `fn` a
   * function (the caller checked); what `write` throws rejects before anything is stored.
   */
  [RUN_WRITTEN](key, fn, write, options) {
    let now;
    let kind;
    let slot;
    try {
      now = this.#clock();
      ({ kind, slot } = this.#records.beginWritten(key, write(), now));
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#begun(key, fn, options, now, kind, slot);
  }

  /**
   * @internal Whether `key`'s run is still in flight for the request `write()` writes now (as for
   * [RUN_WRITTEN]): chargeCustomer asks it before every attempt that follows code the caller could
   * run, so a charge changed meanwhile is never sent under the key. A charge `write` refuses (it
   * stopped being plain data) is not that request.
   */
  [RUNS_WRITTEN](key, write) {
    let f;
    try {
      f = write();
    } catch {
      return false;
    }
    return this.#records.runsWritten(key, f);
  }

  /** What run() does once the core has answered begin. */
  #begun(key, fn, options, now, kind, slot) {
    if (listening.idempotency) emit('idempotency', { store: this, key, outcome: BEGIN_OUTCOME[kind] ?? 'mismatch' });
    switch (kind) {
      case BEGIN.RUN:
        return this.#execute(key, slot, fn, now, options);
      case BEGIN.REPLAY:
        return Promise.resolve(this.#records.value(slot));
      case BEGIN.IN_FLIGHT:
        return Promise.reject(new DuplicateRequestError(key, this.#records.peekSlot(slot, now)?.startedAt));
      case BEGIN.UNKNOWN:
        return Promise.reject(new OutcomeUnknownError(key, this.#records.peekSlot(slot, now)?.startedAt));
      case BEGIN.FULL:
        return Promise.reject(new StoreFullError(key, this.#records.maxRecords));
      default:
        return Promise.reject(new IdempotencyKeyReuseError(key));
    }
  }

  async #execute(key, slot, fn, startedAt, options, refutes) {
    // This run's own record of how its retries ended and what its hedges let go (see classify.runningFor).
    const run = newRun();
    let result;
    try {
      result = await runningFor(run, fn);
    } catch (error) {
      const completedAt = this.#completedAt(startedAt);
      const { kind, meta } = settledFailure(error, this.#isTransient, this.#classifierGiven, refutes, run, options, completedAt);
      const freed = this.#records.complete(slot, kind, errorText(error), completedAt, meta, key);
      if (listening.idempotency) emit('idempotency', { store: this, key, outcome: freed ? 'failed' : 'parked-unknown' });
      throw freed ? error : parkedError(key, startedAt, error, meta, completedAt);
    }
    this.#records.complete(slot, COMPLETION.DONE, result, this.#completedAt(startedAt));
    if (listening.idempotency) emit('idempotency', { store: this, key, outcome: 'done' });
    return result;
  }

  /**
   * Reconciliation by re-sending: the unknown record of `key` goes back to in flight — on the same
   * record, one compare-and-set (with `options.startedAt`, only the attempt that began then), for
   * the same request (`fingerprint`/`scope` as in run(): another one rejects with
   * IdempotencyKeyReuseError before `fn` is called) — then `fn` runs once and settles it: its
   * result → done; an error `options.refutes(error)` accepts (an answer about this key, e.g. a
   * decline from a gateway that honours keys, after the settle window) → the key is free and
   * `fn`'s error is rethrown; any other error → unknown again (OutcomeUnknownError). Nothing is
   * freed in between: a crash mid-way leaves the key blocking blind retries. A key that is not
   * unknown rejects with IdempotencyStateError (KEY_NOT_FOUND, KEY_WRONG_STATE).
   */
  resubmit(key, fn, options) {
    try {
      checkKey(key, 'resubmit');
    } catch (e) {
      return Promise.reject(e);
    }
    if (typeof fn !== 'function') return Promise.reject(o.typeError('resubmit', 'fn', 'a function', fn));
    let fp;
    let now;
    let startedAt;
    let refutes;
    try {
      const opts = o.misspelt(o.object(options, 'resubmit', true), RESUBMIT_OPTIONS, 'resubmit');
      fp = fingerprintText(opts, 'resubmit');
      startedAt = o.num(opts, 'startedAt', 'resubmit');
      refutes = o.fn(opts, 'refutes', 'resubmit');
      now = this.#clock();
    } catch (e) {
      return Promise.reject(e);
    }
    const { code, slot } = this.#records.reopen(key, fp, startedAt, now);
    if (code === RESOLVE.KEY_REUSED) return Promise.reject(new IdempotencyKeyReuseError(key));
    const e = resolveError(key, code);
    if (e !== undefined) return Promise.reject(e);
    if (listening.idempotency) emit('idempotency', { store: this, key, outcome: 'resubmit' });
    return this.#execute(key, slot, fn, now, options, refutes);
  }

  /** The clock at completion; if a user clock throws now, the start time (a record must never stay in flight). */
  #completedAt(startedAt) {
    try {
      return this.#clock();
    } catch {
      return startedAt;
    }
  }

  /**
   * @internal The clock this store keeps its records' times on (its `clock` option, else
   * Date.now): reconcile() and the checkout client judge settle windows and retention by it, so a
   * store on a clock of its own (behind or ahead of Date.now) frees nothing early.
   */
  [STORE_CLOCK]() {
    return this.#clock();
  }

  /** The record for `key`, or undefined. */
  peek(key) {
    checkKey(key, 'peek');
    return this.#records.peek(key, this.#clock());
  }

  /**
   * Reconciliation: settle an unknown key as `{ status: 'done', result }` (replayed from now on)
   * or `{ status: 'failed' }` (the charge never happened: the key is free again). With `startedAt`
   * (from peek()), only the attempt that began then is settled: a stale answer about an earlier
   * attempt cannot free a newer one (KEY_WRONG_STATE).
   */
  resolve(key, outcome) {
    checkKey(key, 'resolve');
    const { done, result, startedAt } = checkResolution(outcome);
    const e = resolveError(key, this.#records.resolve(key, done, result, startedAt, this.#clock()));
    if (e !== undefined) throw e;
  }

  /** Keys whose outcome is unknown, oldest first: the reconciliation worklist. */
  unknownKeys() {
    return this.#records.unknownKeys();
  }

  /** Records held (in flight, done within the TTL, unknown). */
  get size() {
    return this.#records.size(this.#clock());
  }

  /** The most records this store holds (new keys beyond it are refused with StoreFullError). */
  get maxRecords() {
    return this.#records.maxRecords;
  }
}
