// Why: an idempotency record that lives in one process protects one process. Behind a load
// balancer, the retry of a timed-out charge lands on another pod; after a crash, on a new one. This
// driver keeps IdempotencyStore's contract (run/peek/resolve/unknownKeys, same errors) over a shared
// state store, and refuses to start a charge it cannot record.

import { DuplicateRequestError, IdempotencyKeyReuseError, OutcomeUnknownError, fieldOf, isInstance } from '../errors.js';
import { isTransientError, newRun, runningFor } from '../classify.js';
import { checkResolution, newIdempotencyKey, parkedError, resolveError, settledFailure } from '../idempotency.js';
import { OUTCOMES, RESOLUTIONS, RESOLVE } from '../wire.js';
import { checkKey } from '../idempotency-key.js';
import { RESUBMIT_OPTIONS, RUN_OPTIONS, fingerprintText } from '../fingerprint.js';
import { idempotencyDefaults } from '../defaults.js';
import * as o from '../options.js';
import { deferred } from '../deferred.js';
import { StateStoreUnavailableError, StoreAmnesiaError, StoreFullError } from './errors.js';
import { memoryStateStore } from './store.js';
import { errorText, messageOf } from '../unknown.js';
import { STORE_CLOCK } from '../clock.js';

/**
 * A store's resolve / reopen answer as a RESOLVE code: the interface's answer names are the core's
 * (src/wasm/wire.rs); anything else (a store of another version) counts as the wrong state.
 */
function resolveCode(answer) {
  const code = RESOLUTIONS.indexOf(answer);
  return code === RESOLVE.RESOLVED || code === RESOLVE.NOT_FOUND ? code : RESOLVE.WRONG_STATE;
}

/** A SharedIdempotencyStore's option names (SharedIdempotencyStoreOptions in types/shared.d.ts). */
export const SHARED_STORE_OPTIONS = ['store', 'ttlMs', 'inFlightLeaseMs', 'maxRecords', 'unknownTtlMs', 'isTransient', 'onStoreError', 'onLateCompletion'];

/** A duration option: > 0 and at most the core's bound (10 years; beyond it Redis deadlines stop being integers). */
function positive(opts, name, where, fallback) {
  const v = o.num(opts, name, where) ?? fallback;
  const max = idempotencyDefaults().maxDurationMs;
  if (!(v > 0 && v <= max)) throw o.rangeError(where, name, `a number of ms > 0 and at most ${max} (10 years)`, v);
  return v;
}

export class SharedIdempotencyStore {
  #records;
  #isTransient;
  #classifierGiven;
  #onStoreError;
  #onLateCompletion;

  /**
   * @param {object} [options] `store` (default: a new memory store), `ttlMs = 86_400_000` (done
   *   records), `inFlightLeaseMs = 120_000` (an in-flight record whose owner has not reported
   *   for this long reads as unknown), `maxRecords = 1_000_000` (new keys beyond it are refused
   *   with StoreFullError), `unknownTtlMs = 2_592_000_000` (30 days: how long Redis keeps an
   *   unknown record for reconciliation), `isTransient = isTransientError`, `onStoreError(event)`,
   *   `onLateCompletion(event)` (an owner reported after its record was settled by someone else).
   */
  constructor(options) {
    const where = 'SharedIdempotencyStore';
    const stand = deferred(new.target, arguments, where);
    if (stand !== undefined) return stand;
    const opts = o.misspelt(o.object(options, where, true), SHARED_STORE_OPTIONS, where);
    const d = idempotencyDefaults();
    const ttlMs = positive(opts, 'ttlMs', where, d.ttlMs);
    const inFlightLeaseMs = positive(opts, 'inFlightLeaseMs', where, d.inFlightLeaseMs);
    const unknownTtlMs = positive(opts, 'unknownTtlMs', where, d.unknownTtlMs);
    const maxRecords = o.num(opts, 'maxRecords', where) ?? d.maxRecords;
    if (!Number.isSafeInteger(maxRecords) || maxRecords < 1 || maxRecords > 2 ** 30)
      throw o.rangeError(where, 'maxRecords', 'an integer from 1 to 1073741824', maxRecords);
    const given = o.fn(opts, 'isTransient', where);
    this.#classifierGiven = given !== undefined;
    this.#isTransient = given ?? isTransientError;
    this.#onStoreError = o.fn(opts, 'onStoreError', where);
    this.#onLateCompletion = o.fn(opts, 'onLateCompletion', where);
    const store = o.own(opts, 'store') ?? memoryStateStore();
    if (store === null || typeof store !== 'object' || typeof store.idempotency !== 'function') throw o.typeError(where, 'store', 'a state store', store);
    this.#records = store.idempotency({
      ttlMs: Math.ceil(ttlMs),
      inFlightLeaseMs: Math.ceil(inFlightLeaseMs),
      unknownTtlMs: Math.ceil(unknownTtlMs),
      maxRecords,
    });
  }

  async #guard(op, key, call) {
    try {
      return await call();
    } catch (error) {
      if (fieldOf(error, 'code') === 'INVALID_KEY') throw error;
      const e =
        isInstance(error, StateStoreUnavailableError) || isInstance(error, StoreAmnesiaError)
          ? error
          : new StateStoreUnavailableError(op, messageOf(error), error);
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
   * Report an owner's completion; a 'late' answer (its record was settled meanwhile) is surfaced.
   * Returns whether the key is free now: only a 'failed'/'refuted' report the store applied
   * ('ok'). A lost report leaves the record in flight, to turn unknown when its lease lapses; a
   * 'parked' answer is the store's sticky rule (the record may have been processed before).
   */
  async #complete(key, token, outcome, value, meta) {
    let answer;
    try {
      answer = await this.#guard('complete', key, () => this.#records.complete(key, token, outcome, value, meta));
    } catch {
      return false; // reported through onStoreError; the record turns unknown when its lease lapses
    }
    if (answer === 'late') {
      try {
        this.#onLateCompletion?.({ key, outcome });
      } catch {
        // a throwing listener must not change the outcome
      }
    }
    return answer === 'ok' && (outcome === 'failed' || outcome === 'refuted');
  }

  /** `fn` after a begin or a reopen: settle the record by how it ends (see run and resubmit). */
  async #execute(key, token, startedAt, fn, options, refutes) {
    // This run's own record of how its retries ended and what its hedges let go (see classify.runningFor).
    const run = newRun();
    let result;
    try {
      result = await runningFor(run, fn);
    } catch (error) {
      const now = Date.now();
      const { kind, meta } = settledFailure(error, this.#isTransient, this.#classifierGiven, refutes, run, options, now);
      const outcome = OUTCOMES[kind]; // settledFailure's kind, as the state-store interface names it
      // The store gets the last attempt's age too: a duration, which a store on another clock
      // (Redis TIME) turns into its own time. This process's wall clock never reaches it.
      const sent = { ...meta, lastAttemptAgeMs: Math.max(0, now - meta.lastAttemptAt) };
      // If this report is lost, the record stays in flight and turns unknown when its lease lapses.
      const freed = await this.#complete(key, token, outcome, errorText(error), outcome === 'unknown' || outcome === 'failed' ? sent : undefined);
      throw freed ? error : parkedError(key, startedAt, error, meta, now);
    }
    await this.#complete(key, token, 'done', result);
    return result;
  }

  /**
   * Run `fn` once for `key` across every process sharing the store. Same answers as
   * IdempotencyStore.run; plus: if the store cannot record the start, rejects with
   * StateStoreUnavailableError WITHOUT calling `fn`.
   */
  async run(key, fn, options) {
    checkKey(key, 'run');
    if (typeof fn !== 'function') throw o.typeError('run', 'fn', 'a function', fn);
    const fingerprint = fingerprintText(o.misspelt(o.object(options, 'run', true), RUN_OPTIONS, 'run'), 'run');
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
      case 'full':
        throw new StoreFullError(key, begin.maxRecords);
      default:
        throw new IdempotencyKeyReuseError(key);
    }
    return this.#execute(key, begin.token, begin.startedAt, fn, options, undefined);
  }

  /**
   * Reconciliation by re-sending, across every process sharing the store: the same contract as
   * IdempotencyStore.resubmit (one compare-and-set from unknown to in flight on the same record,
   * the same request only, then `fn` once; `refutes(error)` frees the key, any other failure
   * parks it again). If the store cannot record the reopen, rejects with
   * StateStoreUnavailableError WITHOUT calling `fn`, and the key stays unknown.
   */
  async resubmit(key, fn, options) {
    checkKey(key, 'resubmit');
    if (typeof fn !== 'function') throw o.typeError('resubmit', 'fn', 'a function', fn);
    const opts = o.misspelt(o.object(options, 'resubmit', true), RESUBMIT_OPTIONS, 'resubmit');
    const fingerprint = fingerprintText(opts, 'resubmit');
    const startedAt = o.num(opts, 'startedAt', 'resubmit');
    const refutes = o.fn(opts, 'refutes', 'resubmit');
    const token = typeof globalThis.crypto?.randomUUID === 'function' ? globalThis.crypto.randomUUID() : newIdempotencyKey();
    const r = await this.#guard('reopen', key, () => this.#records.reopen(key, fingerprint, token, startedAt));
    if (r.status === 'mismatch') throw new IdempotencyKeyReuseError(key);
    if (r.status !== 'reopened') throw resolveError(key, resolveCode(r.status));
    return this.#execute(key, r.token, r.startedAt, fn, options, refutes);
  }

  /**
   * @internal The store's clock, the one its records' times are kept in (Redis TIME on the node
   * that holds `key`; this process's for a store without a clock of its own).
   */
  async [STORE_CLOCK](key) {
    if (typeof this.#records.now !== 'function') return Date.now();
    return this.#guard('time', key, () => this.#records.now(key));
  }

  /** The record for `key`, or undefined (async: it may ask another process's store). */
  async peek(key) {
    checkKey(key, 'peek');
    return this.#guard('peek', key, () => this.#records.peek(key));
  }

  /**
   * Reconciliation: settle an unknown key as `{ status: 'done', result }` or `{ status: 'failed' }`.
   * With `startedAt` (from peek()), only the attempt that began then is settled (compare-and-set).
   */
  async resolve(key, outcome) {
    checkKey(key, 'resolve');
    const { done, result, startedAt } = checkResolution(outcome);
    const r = await this.#guard('resolve', key, () => this.#records.resolve(key, done ? 'done' : 'failed', result, startedAt));
    const e = resolveError(key, resolveCode(r));
    if (e !== undefined) throw e;
  }

  /**
   * Keys whose outcome is unknown (including in-flight keys whose owner's lease lapsed), oldest
   * first. A Redis store reads them in pages (each call bounded), never in one long script.
   */
  async unknownKeys() {
    return this.#guard('unknownKeys', undefined, () => this.#records.unknownKeys());
  }

  /**
   * The same list one page at a time, resumable: pass the `cursor` of the previous page ('' or
   * undefined to start); `cursor` is undefined on the last page. A page that fails can be asked
   * again with the same cursor (nothing before it is read again). A Redis store pages bucket by
   * bucket (oldest first within a bucket); a memory store answers everything in one page.
   * @param {string} [cursor]
   * @returns {Promise<{ keys: string[], cursor: string | undefined }>}
   */
  async unknownKeysPage(cursor) {
    const bad = () => o.typeError('unknownKeysPage', 'cursor', 'a cursor from the previous page, or undefined', cursor);
    if (cursor !== undefined && typeof cursor !== 'string') throw bad();
    if (cursor) {
      let parsed;
      try {
        parsed = JSON.parse(cursor);
      } catch {
        throw bad();
      }
      const [b, member, score] = Array.isArray(parsed) ? parsed : [];
      if (!(parsed.length === 3 && Number.isSafeInteger(b) && b >= 0 && typeof member === 'string' && typeof score === 'string')) throw bad();
    }
    return this.#guard('unknownKeys', undefined, async () => {
      if (typeof this.#records.unknownKeysPage !== 'function') return { keys: cursor ? [] : await this.#records.unknownKeys(), cursor: undefined };
      const { keys, cursor: next } = await this.#records.unknownKeysPage(cursor);
      return { keys: keys.map(([k]) => k), cursor: next };
    });
  }

  /**
   * After a StoreAmnesiaError (Redis lost the store's data): the operator has reconciled what was
   * lost with the gateway; the store starts a new epoch and accepts calls again, in every process.
   * A memory store never forgets: resolves to `{ generation: 0 }`.
   * @returns {Promise<{ generation: number }>}
   */
  async acknowledgeAmnesia() {
    if (typeof this.#records.acknowledgeAmnesia !== 'function') return { generation: 0 };
    return this.#guard('acknowledge', undefined, () => this.#records.acknowledgeAmnesia());
  }
}

export function createSharedIdempotencyStore(options) {
  return new SharedIdempotencyStore(options);
}
