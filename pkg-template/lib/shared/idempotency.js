// Why: an idempotency record that lives in one process protects one process. Behind a load
// balancer, the retry of a timed-out charge lands on another pod; after a crash, on a new one. This
// driver keeps IdempotencyStore's contract (run/peek/resolve/unknownKeys, same errors) over a shared
// state store, and refuses to start a charge it cannot record.

import { DuplicateRequestError, IdempotencyKeyReuseError, IdempotencyStateError, OutcomeUnknownError, brand } from '../errors.js';
import { isTransientError, leavesOutcomeUnknown } from '../classify.js';
import { newIdempotencyKey } from '../idempotency.js';
import * as o from '../options.js';
import { StateStoreUnavailableError } from './errors.js';
import { memoryStateStore } from './store.js';
import { unknownMeta } from '../unknown.js';

const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

function checkKey(key, where) {
  if (typeof key !== 'string') throw brand(new TypeError(`steadfast: ${where} key must be a string, got ${o.show(key)}`), 'INVALID_KEY');
  if (!VALID_KEY.test(key)) {
    throw brand(new RangeError(`steadfast: idempotency key must be 1 to 255 printable ASCII characters, got ${o.show(key)}`), 'INVALID_KEY', { key });
  }
}

export class SharedIdempotencyStore {
  #records;
  #isTransient;
  #onStoreError;

  /**
   * @param {object} [options] `store` (default: a new memory store), `ttlMs = 86_400_000` (done
   *   records), `inFlightLeaseMs = 120_000` (an in-flight record whose owner has not reported
   *   for this long reads as unknown), `isTransient = isTransientError`, `onStoreError(event)`.
   */
  constructor(options) {
    const where = 'SharedIdempotencyStore';
    const opts = o.object(options, where, true);
    const ttlMs = o.num(opts, 'ttlMs', where) ?? 86_400_000;
    if (!(ttlMs > 0 && Number.isFinite(ttlMs))) throw o.rangeError(where, 'ttlMs', 'a finite number > 0', ttlMs);
    const inFlightLeaseMs = o.num(opts, 'inFlightLeaseMs', where) ?? 120_000;
    if (!(inFlightLeaseMs > 0 && Number.isFinite(inFlightLeaseMs))) throw o.rangeError(where, 'inFlightLeaseMs', 'a finite number > 0', inFlightLeaseMs);
    this.#isTransient = o.fn(opts, 'isTransient', where) ?? isTransientError;
    this.#onStoreError = o.fn(opts, 'onStoreError', where);
    const store = opts.store ?? memoryStateStore();
    if (store === null || typeof store !== 'object' || typeof store.idempotency !== 'function') throw o.typeError(where, 'store', 'a state store', store);
    this.#records = store.idempotency({ ttlMs: Math.ceil(ttlMs), inFlightLeaseMs: Math.ceil(inFlightLeaseMs) });
  }

  async #guard(op, key, call) {
    try {
      return await call();
    } catch (error) {
      if (error?.code === 'INVALID_KEY') throw error;
      const e = error instanceof StateStoreUnavailableError ? error : new StateStoreUnavailableError(op, String(error?.message ?? error), error);
      e.key = key;
      try {
        this.#onStoreError?.({ op, error: e, key });
      } catch {
        // a throwing logger must not change the outcome
      }
      throw e;
    }
  }

  /**
   * Run `fn` once for `key` across every process sharing the store. Same answers as
   * IdempotencyStore.run; plus: if the store cannot record the start, rejects with
   * StateStoreUnavailableError WITHOUT calling `fn`.
   */
  async run(key, fn, options) {
    checkKey(key, 'run');
    if (typeof fn !== 'function') throw o.typeError('run', 'fn', 'a function', fn);
    const fingerprint = o.object(options, 'run', true).fingerprint;
    if (fingerprint !== undefined && typeof fingerprint !== 'string') throw o.typeError('run', 'fingerprint', 'a string', fingerprint);
    const token = typeof globalThis.crypto?.randomUUID === 'function' ? globalThis.crypto.randomUUID() : newIdempotencyKey();
    const begin = await this.#guard('begin', key, () => this.#records.begin(key, fingerprint, token));
    switch (begin.status) {
      case 'run':
        break;
      case 'done':
        return begin.result;
      case 'in-flight':
        throw new DuplicateRequestError(key, begin.startedAt);
      case 'unknown':
        throw new OutcomeUnknownError(key, begin.startedAt);
      default:
        throw new IdempotencyKeyReuseError(key);
    }
    let result;
    try {
      result = await fn();
    } catch (error) {
      const transient = leavesOutcomeUnknown(this.#isTransient, error);
      const meta = transient ? unknownMeta(error, options, Date.now()) : undefined;
      // If this report is lost, the record stays in flight and turns unknown when its lease lapses.
      await this.#guard('complete', key, () => this.#records.complete(key, begin.token, transient ? 'unknown' : 'failed', String(error), meta)).catch(() => {});
      throw error;
    }
    await this.#guard('complete', key, () => this.#records.complete(key, begin.token, 'done', result)).catch(() => {});
    return result;
  }

  /** The record for `key`, or undefined (async: it may ask another process's store). */
  async peek(key) {
    checkKey(key, 'peek');
    return this.#guard('peek', key, () => this.#records.peek(key));
  }

  /** Reconciliation: settle an unknown key as `{ status: 'done', result }` or `{ status: 'failed' }`. */
  async resolve(key, outcome) {
    checkKey(key, 'resolve');
    const out = o.object(outcome, 'resolve');
    if (out.status !== 'done' && out.status !== 'failed') throw o.typeError('resolve', 'status', "'done' or 'failed'", out.status);
    const r = await this.#guard('resolve', key, () => this.#records.resolve(key, out.status, out.result));
    if (r === -2) throw new IdempotencyStateError(key, 'KEY_NOT_FOUND', `No record for idempotency key ${key}`);
    if (r === -3) throw new IdempotencyStateError(key, 'KEY_WRONG_STATE', `Idempotency key ${key} is not unknown: only unknown keys can be resolved`);
  }

  /** Keys whose outcome is unknown (including in-flight keys whose owner's lease lapsed), oldest first. */
  async unknownKeys() {
    return this.#guard('unknownKeys', undefined, () => this.#records.unknownKeys());
  }
}

export function createSharedIdempotencyStore(options) {
  return new SharedIdempotencyStore(options);
}
