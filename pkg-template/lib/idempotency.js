// Why: one logical charge, however many attempts happen underneath. A timeout is not a failure but
// an unknown: the key is parked and blind retries are refused until reconciliation. The record
// lifecycle (in-flight / done / unknown, fingerprints, TTL, the maxRecords bound) and the key ->
// slot index are the Rust core's (keys hashed under a per-store random hash key into one table in wasm
// memory, so the JS heap holds no key per record). `MemoryRecords` keeps the results under their
// slots, and the keys of unknown records (for the reconciliation worklist); it is the one
// in-process handle that both IdempotencyStore and the memory state store drive.

import {
  StoreCore,
  failedVerdictWaitMs,
  inputBuffer,
  newIdempotencyKey as coreKey,
  settleAfterMs as coreSettleAfterMs,
  wasmMemory,
} from '../steadfast_core.js';
import { brand, DuplicateRequestError, IdempotencyKeyReuseError, IdempotencyStateError, OutcomeUnknownError, StoreFullError } from './errors.js';
import * as o from './options.js';
import { deferred } from './deferred.js';
import { VERDICT, failedRunVerdict, isTransientError } from './classify.js';
import { BEGIN, BEGIN_OUTCOMES as BEGIN_OUTCOME, COMPLETION, LAYOUT, RESOLVE, STATUS, namedSlots } from './wire.js';
import { checkKey, invalidKey } from './idempotency-key.js';
import { fingerprintText } from './fingerprint.js';
import { errorText, unknownMeta } from './unknown.js';
import { emit, listening } from './events.js';
import { ByteSink, writeCanonicalCharge } from './canonical.js';

/** @internal The method chargeCustomer runs a charge through on an IdempotencyStore (see [RUN_CHARGE]). */
export const RUN_CHARGE = Symbol('steadfast.runCharge');

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

const encoder = new TextEncoder();
/** The core's input buffer: its address, size and a view of it (remade when memory grows). */
let input;
/** The input buffer as a ByteSink, for a charge's canonical bytes (see writeCharge). */
let sink;
/**
 * Set while a charge's canonical bytes are being written into the input buffer: a Proxy in the
 * charge may run code in the middle, and that code must not overwrite the buffer (see busy()).
 */
let writing = false;

/** A view of the input buffer of at least `need` bytes, grown (keeping its bytes) when it is smaller. */
function inputBytes(need) {
  if (input === undefined || need > input.size) {
    const size = Math.max(need, 4096);
    input = { ptr: inputBuffer(size), size, memory: wasmMemory(), bytes: undefined };
  }
  let bytes = input.bytes;
  if (bytes === undefined || bytes.byteLength === 0) {
    bytes = input.bytes = new Uint8Array(input.memory.buffer, input.ptr, input.size); // a grown memory detaches the old views
  }
  return bytes;
}

/** The TypeError for a charge that used the store while its own fields were being read. */
function busy() {
  return o.typeError('run', 'charge', 'plain JSON data (a Proxy in it ran code that used the store while the charge was read)', undefined);
}

/**
 * Write `key` and then `fp` (if any) as UTF-8 into the core's input buffer, growing it when a text
 * might not fit (3 bytes per UTF-16 unit at most); returns the fingerprint's byte length (the
 * key's is `key.length`, see below). Why: the fresh-key path's longest string is the fingerprint text,
 * and encodeInto copies it natively where a string argument would be copied by a JS loop per
 * character, with an allocation and a free. Key and text go in ONE encodeInto of their
 * concatenation (each call has a fixed cost about that of copying a short text). The core applies
 * the key rule to the first key.length bytes: a valid key is one byte per character.
 */
function writeInput(key, fp) {
  if (writing) throw busy();
  const text = fp === undefined ? key : key + fp;
  return encoder.encodeInto(text, inputBytes(3 * text.length)).written - key.length;
}

/**
 * Write `key`, `f:` and the canonical bytes of `charge` (canonical.js, the same walk as its text)
 * into the core's input buffer; returns the fingerprint's byte length. The same bytes as
 * writeInput(key, `f:${canonicalCharge(charge)}`), with no string built: the text is written where
 * the core hashes it. A key's UTF-16 units become bytes one each, any unit beyond ASCII 0xFF, so
 * its first key.length bytes fail the core's key rule exactly when the key does.
 */
function writeCharge(key, charge, skip, where) {
  if (writing) throw busy();
  const bytes = inputBytes(key.length + 2);
  if (sink === undefined || sink.bytes !== bytes) {
    sink = new ByteSink(bytes, (need) => {
      const size = 2 * need;
      input = { ptr: inputBuffer(size), size, memory: wasmMemory(), bytes: undefined }; // keeps what was written
      return inputBytes(size);
    });
  }
  const n = key.length;
  for (let i = 0; i < n; i++) {
    const c = key.charCodeAt(i);
    bytes[i] = c > 0x7e ? 0xff : c;
  }
  bytes[n] = 0x66; // f
  bytes[n + 1] = 0x3a; // :
  sink.at = n + 2;
  writing = true;
  try {
    writeCanonicalCharge(sink, charge, skip, where);
  } finally {
    writing = false;
  }
  return sink.at - n;
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
    return this.#began(key, writeInput(key, fp), now);
  }

  /** begin() for chargeCustomer: the fingerprint is `f:` + the canonical text of `charge` (writeCharge). */
  beginCharge(key, charge, skip, where, now) {
    return this.#began(key, writeCharge(key, charge, skip, where), now);
  }

  /** The core's begin over the key and the `f` fingerprint bytes in the input buffer. */
  #began(key, f, now) {
    const code = this.#core.beginInput(key.length, f, now);
    if (code === BEGIN.INVALID_KEY) throw invalidKey(key);
    if (Number.isNaN(code)) throw new Error('steadfast: internal: the input buffer did not hold the key'); // unreachable: writeInput sized it
    // Slots freed by expiry are dropped BEFORE this slot is used (the same begin may hand one out).
    if (code % BEGIN.SLOT >= BEGIN.EXPIRED_FLAG) for (const s of this.#core.takeExpired()) this.#forget(s);
    return { kind: code % BEGIN.EXPIRED_FLAG, slot: Math.floor(code / BEGIN.SLOT) };
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
export function completionOf(error, isTransient, classifierGiven, refutes) {
  if (refutes !== undefined) {
    try {
      if (refutes(error) === true) return COMPLETION.REFUTED;
    } catch {
      // a refutation that cannot be read refutes nothing
    }
  }
  return failedRunVerdict(error, isTransient, classifierGiven) === VERDICT.UNKNOWN ? COMPLETION.UNKNOWN : COMPLETION.FAILED;
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
  if (error instanceof OutcomeUnknownError && error.key === key) {
    if (typeof error.retryAfterMs !== 'number') error.retryAfterMs = retryAfterMs;
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
    const opts = o.object(options, where, true);
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
      const fp = options === undefined ? undefined : fingerprintText(o.object(options, 'run'), 'run');
      now = this.#clock();
      ({ kind, slot } = this.#records.begin(key, fp, now)); // the core checks the key (INVALID_KEY)
    } catch (e) {
      return Promise.reject(e); // bad options, a user clock that throws or a bad key: nothing has started
    }
    return this.#begun(key, fn, options, now, kind, slot);
  }

  /**
   * @internal run(key, fn, options) with the fingerprint `f:` + canonicalCharge(charge, skip),
   * written into the core as it is read (chargeCustomer's path: no text is built). `key` is a
   * string and `fn` a function (the caller checked); a charge that is not plain data rejects with
   * canonical.js's TypeError before anything is stored.
   */
  [RUN_CHARGE](key, fn, charge, skip, where, options) {
    let now;
    let kind;
    let slot;
    try {
      now = this.#clock();
      ({ kind, slot } = this.#records.beginCharge(key, charge, skip, where, now));
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#begun(key, fn, options, now, kind, slot);
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
    let result;
    try {
      result = await fn();
    } catch (error) {
      const completedAt = this.#completedAt(startedAt);
      const kind = completionOf(error, this.#isTransient, this.#classifierGiven, refutes);
      const meta = unknownMeta(error, options, completedAt);
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
      const opts = o.object(options, 'resubmit', true);
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
