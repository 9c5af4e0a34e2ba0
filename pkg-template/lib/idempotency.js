// Why: one logical charge, however many attempts happen underneath. A timeout is not a failure but
// an unknown: the key is parked and blind retries are refused until reconciliation. The record
// lifecycle (in-flight / done / unknown, fingerprints, TTL) is the Rust core's, by slot. This file
// keeps the key -> slot index in a Map (V8's seeded string hash; a known key never crosses into
// wasm as a string) and the results under their slots.

import { StoreCore, keyRule, newIdempotencyKey as coreKey } from '../steadfast_core.js';
import {
  brand,
  DuplicateRequestError,
  IdempotencyKeyReuseError,
  IdempotencyStateError,
  OutcomeUnknownError,
} from './errors.js';
import * as o from './options.js';
import { isTransientError, leavesOutcomeUnknown } from './classify.js';
import { unknownMeta } from './unknown.js';

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

function invalidKey(key) {
  return brand(
    new RangeError(`steadfast: idempotency key must be 1 to 255 printable ASCII characters, got ${o.show(key)}`),
    'INVALID_KEY',
    { key },
  );
}

function checkKey(key, where) {
  if (typeof key !== 'string') throw brand(new TypeError(`steadfast: ${where} key must be a string, got ${o.show(key)}`), 'INVALID_KEY');
}

/** The core's key rule (length and byte range), read once, applied to keys the store has not seen. */
let rule;
function validKey(key) {
  rule ??= keyRule();
  const [min, max, lo, hi] = rule;
  if (key.length < min || key.length > max) return false;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < lo || c > hi) return false;
  }
  return true;
}

/**
 * A fingerprint's hash for the core to compare: two 32-bit FNV-1a lanes folded into 53 bits (an
 * integer a JS number holds exactly). Only equality matters; the string never crosses into wasm.
 */
function fingerprintHash(text) {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  return (b >>> 11) * 4294967296 + (a >>> 0);
}

export class IdempotencyStore {
  #core;
  #clock;
  #isTransient;
  /** key -> slot (the index; the core holds the records by slot). */
  #index = new Map();
  /** slot -> key, to list unknown keys and to drop index entries when the core frees a slot. */
  #keys = [];
  /** slot -> the result (done) or the error text (unknown); the core knows which. No wrapper object per record. */
  #slots = [];
  /** slot -> what reconciliation needs of an unknown record (attempts, lastAttemptAt, settleAfterMs). */
  #meta = [];

  /** @param {object} [options] `{ ttlMs = 86_400_000, clock = Date.now, isTransient = isTransientError }` */
  constructor(options) {
    const where = 'IdempotencyStore';
    const opts = o.object(options, where, true);
    this.#clock = o.clock(opts, where);
    this.#isTransient = o.fn(opts, 'isTransient', where) ?? isTransientError;
    const values = { ttlMs: o.num(opts, 'ttlMs', where) };
    this.#core = o.core(where, values, () => new StoreCore(values.ttlMs));
  }

  /**
   * Run `fn` once for `key`: a done key replays its result; an in-flight key rejects with
   * DuplicateRequestError; an unknown key rejects with OutcomeUnknownError; a different fingerprint
   * rejects with IdempotencyKeyReuseError. A transient failure parks the key as unknown; any other
   * failure frees it.
   */
  run(key, fn, options) {
    if (typeof key !== 'string') {
      return Promise.reject(brand(new TypeError(`steadfast: run key must be a string, got ${o.show(key)}`), 'INVALID_KEY'));
    }
    if (typeof fn !== 'function') return Promise.reject(o.typeError('run', 'fn', 'a function', fn));
    let fingerprint = NaN;
    if (options !== undefined) {
      if (options === null || typeof options !== 'object') return Promise.reject(o.typeError('run', 'options', 'an object', options));
      const f = options.fingerprint;
      if (f !== undefined && typeof f !== 'string') return Promise.reject(o.typeError('run', 'fingerprint', 'a string', f));
      if (f !== undefined) fingerprint = fingerprintHash(f);
    }
    const known = this.#index.get(key);
    if (known === undefined && !validKey(key)) return Promise.reject(invalidKey(key));
    let now;
    try {
      now = this.#clock();
    } catch (e) {
      return Promise.reject(e); // a user clock that throws: nothing has started
    }
    const code = this.#core.begin(known ?? -1, fingerprint, now);
    const kind = code % 8;
    const slot = Math.floor(code / 16);
    switch (kind) {
      case 0:
        if (known === undefined) {
          this.#index.set(key, slot);
          this.#keys[slot] = key;
        }
        if (code % 16 >= 8) this.#sweep(now);
        return this.#execute(slot, fn, now, options);
      case 1:
        return Promise.resolve(this.#slots[slot]);
      case 2:
        return Promise.reject(new DuplicateRequestError(key, this.#core.peek(slot, now)[1]));
      case 3:
        return Promise.reject(new OutcomeUnknownError(key, this.#core.peek(slot, now)[1]));
      default:
        return Promise.reject(new IdempotencyKeyReuseError(key));
    }
  }

  async #execute(slot, fn, startedAt, options) {
    let result;
    try {
      result = await fn();
    } catch (error) {
      const transient = leavesOutcomeUnknown(this.#isTransient, error);
      if (transient) {
        const completedAt = this.#completedAt(startedAt);
        this.#slots[slot] = String(error);
        this.#meta[slot] = unknownMeta(error, options, completedAt);
        this.#core.complete(slot, 1, completedAt);
      } else {
        this.#core.complete(slot, 2, this.#completedAt(startedAt));
        this.#forget(slot);
      }
      throw error;
    }
    this.#slots[slot] = result;
    this.#core.complete(slot, 0, this.#completedAt(startedAt));
    return result;
  }

  /** The clock at completion; if a user clock throws now, the start time (a record must never stay in flight). */
  #completedAt(startedAt) {
    try {
      return this.#clock();
    } catch {
      return startedAt;
    }
  }

  /** The core freed `slot`: drop its key from the index and its result. */
  #forget(slot) {
    const key = this.#keys[slot];
    if (key !== undefined && this.#index.get(key) === slot) this.#index.delete(key);
    this.#keys[slot] = undefined;
    this.#slots[slot] = undefined;
    this.#meta[slot] = undefined;
  }

  /** Let the core drop expired done records, and forget their slots here. */
  #sweep(now) {
    this.#core.sweep(now);
    for (const s of this.#core.takeExpired()) this.#forget(s);
  }

  /** The slot of a known key; for an unknown one, validate it (throws INVALID_KEY) and answer undefined. */
  #slotOf(key) {
    const slot = this.#index.get(key);
    if (slot === undefined && !validKey(key)) throw invalidKey(key);
    return slot;
  }

  /** The record for `key`, or undefined. */
  peek(key) {
    checkKey(key, 'peek');
    const slot = this.#slotOf(key);
    if (slot === undefined) return undefined;
    const p = this.#core.peek(slot, this.#clock());
    if (p.length === 0) return undefined;
    const [status, startedAt] = p;
    if (status === 0) return { status: 'in-flight', startedAt };
    if (status === 1) return { status: 'done', result: this.#slots[slot] };
    return { status: 'unknown', error: this.#slots[slot], startedAt, ...this.#meta[slot] };
  }

  /**
   * Reconciliation: settle an unknown key as `{ status: 'done', result }` (replayed from now on)
   * or `{ status: 'failed' }` (the charge never happened: the key is free again).
   */
  resolve(key, outcome) {
    checkKey(key, 'resolve');
    const out = o.object(outcome, 'resolve');
    if (out.status !== 'done' && out.status !== 'failed') {
      throw o.typeError('resolve', 'status', "'done' or 'failed'", out.status);
    }
    const done = out.status === 'done';
    const slot = this.#slotOf(key);
    const r = slot === undefined ? -2 : this.#core.resolve(slot, done, this.#clock());
    if (r === -2) throw new IdempotencyStateError(key, 'KEY_NOT_FOUND', `No record for idempotency key ${key}`);
    if (r === -3) {
      throw new IdempotencyStateError(key, 'KEY_WRONG_STATE', `Idempotency key ${key} is not unknown: only unknown keys can be resolved`);
    }
    if (done) {
      this.#slots[slot] = out.result;
      this.#meta[slot] = undefined;
    } else this.#forget(slot);
  }

  /** Keys whose outcome is unknown, oldest first: the reconciliation worklist. */
  unknownKeys() {
    return Array.from(this.#core.unknownSlots(), (s) => this.#keys[s]);
  }

  /** Records held (in flight, done within the TTL, unknown). */
  get size() {
    this.#sweep(this.#clock());
    return this.#core.size;
  }
}
