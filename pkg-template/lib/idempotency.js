// Why: one logical charge, however many attempts happen underneath. A timeout is not a failure but
// an unknown: the key is parked and blind retries are refused until reconciliation. The record
// lifecycle (in-flight / done / unknown, fingerprints, TTL) is the Rust core's; results stay here,
// in JS, under the slot the core assigns.

import { StoreCore, newIdempotencyKey as coreKey } from '../steadfast_core.js';
import {
  brand,
  DuplicateRequestError,
  IdempotencyKeyReuseError,
  IdempotencyStateError,
  OutcomeUnknownError,
} from './errors.js';
import * as o from './options.js';
import { isTransientError, leavesOutcomeUnknown } from './classify.js';

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

export class IdempotencyStore {
  #core;
  #clock;
  #isTransient;
  /** slot -> the result (done) or the error text (unknown); the core knows which. No wrapper object per record. */
  #slots = [];

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
    let fingerprint;
    if (options !== undefined) {
      if (options === null || typeof options !== 'object') return Promise.reject(o.typeError('run', 'options', 'an object', options));
      fingerprint = options.fingerprint;
      if (fingerprint !== undefined && typeof fingerprint !== 'string') {
        return Promise.reject(o.typeError('run', 'fingerprint', 'a string', fingerprint));
      }
    }
    const code = this.#core.begin(key, fingerprint, this.#clock());
    const kind = code % 8;
    const slot = Math.floor(code / 16);
    if (code % 16 >= 8) this.#dropExpired();
    switch (kind) {
      case 0:
        return this.#execute(key, slot, fn);
      case 1:
        return Promise.resolve(this.#slots[slot]);
      case 2:
        return Promise.reject(new DuplicateRequestError(key, this.#peekStarted(key)));
      case 3:
        return Promise.reject(new OutcomeUnknownError(key, this.#peekStarted(key)));
      case 4:
        return Promise.reject(new IdempotencyKeyReuseError(key));
      default:
        return Promise.reject(invalidKey(key));
    }
  }

  async #execute(key, slot, fn) {
    let result;
    try {
      result = await fn();
    } catch (error) {
      const transient = leavesOutcomeUnknown(this.#isTransient, error);
      if (transient) {
        this.#slots[slot] = String(error);
        this.#core.complete(slot, 1, this.#clock());
      } else {
        this.#slots[slot] = undefined;
        this.#core.complete(slot, 2, this.#clock());
      }
      throw error;
    }
    this.#slots[slot] = result;
    this.#core.complete(slot, 0, this.#clock());
    return result;
  }

  #peekStarted(key) {
    return this.#core.peek(key, this.#clock())[2];
  }

  #dropExpired() {
    for (const s of this.#core.takeExpired()) this.#slots[s] = undefined;
  }

  /** The record for `key`, or undefined. */
  peek(key) {
    checkKey(key, 'peek');
    const p = this.#core.peek(key, this.#clock());
    if (p.length === 0) return undefined;
    if (p[0] === -1) throw invalidKey(key);
    const [slot, status, startedAt] = p;
    if (status === 0) return { status: 'in-flight', startedAt };
    if (status === 1) return { status: 'done', result: this.#slots[slot] };
    return { status: 'unknown', error: this.#slots[slot], startedAt };
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
    const r = this.#core.resolve(key, done, this.#clock());
    if (r === -1) throw invalidKey(key);
    if (r === -2) throw new IdempotencyStateError(key, 'KEY_NOT_FOUND', `No record for idempotency key ${key}`);
    if (r === -3) {
      throw new IdempotencyStateError(key, 'KEY_WRONG_STATE', `Idempotency key ${key} is not unknown: only unknown keys can be resolved`);
    }
    this.#slots[r] = done ? out.result : undefined;
  }

  /** Keys whose outcome is unknown, oldest first: the reconciliation worklist. */
  unknownKeys() {
    return this.#core.unknownKeys();
  }

  /** Records held (in flight, done within the TTL, unknown). */
  get size() {
    this.#core.sweep(this.#clock());
    this.#dropExpired();
    return this.#core.size;
  }
}
