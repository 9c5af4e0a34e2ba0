// Why: an unknown outcome is not an error to retry but a question to answer. Reconciliation takes
// the store's unknown keys, asks the source of truth (the gateway's settlement listing, a ledger)
// what happened to each, and settles the key: done (replay the result from now on) or failed (the
// charge never happened; the key is free).
//
// "No debit found" is only believed once the last attempt can no longer be processed: a request
// the client gave up on may still be queued at the gateway or retried by a proxy, and freeing its
// key early lets the debit land unseen (and the next click, with a new key, charge twice). The
// window is the core's rule (core::reconcile); a `failed` answer inside it is deferred, not applied.
// The answer speaks for the moment the lookup was asked, not the moment it came back: a slow
// listing asked inside the window that answers after it has not seen a debit landing in between,
// so the window is judged on the store's clock read before the lookup is asked.

import { failedVerdictWaitMs, settleAfterMs as coreSettleAfterMs } from '../steadfast_core.js';
import * as o from './options.js';
import { brand } from './errors.js';
import { after, storeNow } from './clock.js';

/** How long one lookup may take before its key is reported in `errors` and left unknown. */
export const DEFAULT_LOOKUP_TIMEOUT_MS = 30_000;

/**
 * A lookup's answer as `{ status, result }` read once (a throwing getter is that key's error, not
 * the run's): `undefined` (still unknown), or `null` when it is not a valid answer.
 */
function readAnswer(answer) {
  if (answer === undefined) return undefined;
  if (answer === null || typeof answer !== 'object') return null;
  const status = answer.status;
  if (status !== 'done' && status !== 'failed') return null;
  return status === 'done' ? { status, result: answer.result } : { status };
}

/** `fn()` or a rejection after `ms`: a lookup that never settles costs its key, not the run. */
function withTimeout(fn, ms, key) {
  return new Promise((resolve, reject) => {
    const cancel = after(ms, () => reject(brand(new Error(`steadfast: reconcile lookup for ${key} did not answer within ${ms} ms`), 'LOOKUP_TIMEOUT')));
    Promise.resolve().then(fn).then(resolve, reject).finally(cancel);
  });
}

/**
 * Resolve every unknown key of `store` through `lookup(key, record)`, which answers
 * `{ status: 'done', result }`, `{ status: 'failed' }`, or `undefined` (still unknown: leave it).
 * `record` is the store's unknown record: `{ startedAt, lastAttemptAt, attempts, settleAfterMs }`
 * (fields a store does not know are absent). A `failed` answer is applied only when the record's
 * settle window (`record.settleAfterMs`, else `options.settleAfterMs`, default 120,000 ms) had
 * passed since its last attempt at the time the lookup was ASKED: the store's clock is read once
 * per key, before its lookup, and the answer is judged at that time however long it took. Inside
 * the window it is counted in `deferred` (`retryAfterMs` counted from that time) and the key stays
 * unknown. A lookup that throws, or a clock that throws with a `failed` answer, leaves its key
 * unknown and is reported in `errors`. Keys are looked up at most `concurrency` at a time (default
 * 8). The window is judged on the store's clock: a shared store's own (Redis TIME, on the node that
 * holds the record), an in-process store's `clock` option (default Date.now). `clock` replaces
 * it (for tests).
 */
export async function reconcile(store, lookup, options) {
  const where = 'reconcile';
  for (const method of ['unknownKeys', 'peek', 'resolve']) {
    if (typeof store?.[method] !== 'function') throw o.typeError(where, 'store', 'an IdempotencyStore (unknownKeys, peek, resolve)', store);
  }
  if (typeof lookup !== 'function') throw o.typeError(where, 'lookup', 'a function', lookup);
  const opts = o.misspelt(o.object(options, where, true), ['concurrency', 'settleAfterMs', 'lookupTimeoutMs', 'clock'], where);
  const concurrency = o.num(opts, 'concurrency', where) ?? 8;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw o.rangeError(where, 'concurrency', 'an integer >= 1', concurrency);
  const given = o.num(opts, 'settleAfterMs', where);
  if (given !== undefined && !(given >= 0)) throw o.rangeError(where, 'settleAfterMs', 'a number >= 0', given);
  const defaultWindow = given ?? coreSettleAfterMs(NaN, NaN);
  const lookupTimeoutMs = o.num(opts, 'lookupTimeoutMs', where) ?? DEFAULT_LOOKUP_TIMEOUT_MS;
  if (!(lookupTimeoutMs > 0)) throw o.rangeError(where, 'lookupTimeoutMs', 'a number > 0', lookupTimeoutMs);
  // The settle window is judged on the clock the store keeps its records' times in: a shared
  // store's own (Redis TIME), so a reconciler whose wall clock is off judges as any other; an
  // in-process store's is its `clock` option (Date.now by default). A `clock` given here replaces
  // both (tests).
  const clockGiven = o.own(opts, 'clock') !== undefined;
  const clock = o.clock(opts, where);
  // Shared (Redis) stores answer asynchronously; in-process ones synchronously: await both.
  const keys = await store.unknownKeys();
  const report = { checked: keys.length, done: 0, failed: 0, deferred: 0, stillUnknown: 0, retryAfterMs: undefined, settleAllAfterMs: undefined, errors: [] };
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++];
      let answer;
      let record;
      // When the lookup is asked, on the store's clock: its answer is about that moment. Read
      // before asking (never alongside: a Redis TIME that came back after the source of truth
      // answered would date the answer too late). A clock that fails only matters to a `failed`
      // answer (a `done` needs no window): kept until the answer says which it is.
      let askedAt;
      let clockError;
      try {
        record = await store.peek(key);
        // Settled meanwhile by someone else: nothing to ask.
        if (record?.status !== 'unknown') continue;
        try {
          askedAt = clockGiven ? clock() : await storeNow(store, key, clock);
        } catch (error) {
          clockError = { error };
        }
        answer = readAnswer(await withTimeout(() => lookup(key, Object.freeze({ ...record })), lookupTimeoutMs, key));
      } catch (error) {
        report.errors.push({ key, error });
        report.stillUnknown += 1;
        continue;
      }
      if (answer === undefined) {
        report.stillUnknown += 1;
        continue;
      }
      if (answer === null) {
        report.errors.push({ key, error: o.typeError(where, 'lookup() result', "{ status: 'done', result }, { status: 'failed' } or undefined", answer) });
        report.stillUnknown += 1;
        continue;
      }
      if (answer.status === 'failed') {
        const last = typeof record.lastAttemptAt === 'number' ? record.lastAttemptAt : typeof record.startedAt === 'number' ? record.startedAt : NaN;
        // The caller's window can only widen the record's own (an operator who learns the gateway
        // queues work for longer makes reconciliation safer, never hastier).
        const own = typeof record.settleAfterMs === 'number' ? record.settleAfterMs : defaultWindow;
        const window = given === undefined ? own : Math.max(own, given);
        if (clockError !== undefined) {
          report.errors.push({ key, error: clockError.error });
          report.stillUnknown += 1;
          continue;
        }
        // Judged when the lookup was asked, not when it answered: "no charge" after a lookup that
        // outlasted the window says nothing about a debit that landed while it was pending.
        const waitMs = failedVerdictWaitMs(askedAt, last, window);
        if (waitMs > 0) {
          report.deferred += 1;
          report.retryAfterMs = Math.min(report.retryAfterMs ?? Infinity, waitMs);
          report.settleAllAfterMs = Math.max(report.settleAllAfterMs ?? 0, waitMs);
          continue;
        }
      }
      // The key may have been resolved meanwhile by someone else: only unknown keys are settled, and
      // only the attempt the lookup was about (compare-and-set on its start): a stale answer must
      // not free a newer attempt.
      if ((await store.peek(key))?.status !== 'unknown') continue;
      try {
        await store.resolve(key, typeof record.startedAt === 'number' ? { ...answer, startedAt: record.startedAt } : answer);
      } catch (error) {
        if (error?.code === 'KEY_WRONG_STATE' || error?.code === 'KEY_NOT_FOUND') continue; // lost a race: settled elsewhere
        report.errors.push({ key, error });
        report.stillUnknown += 1;
        continue;
      }
      report[answer.status] += 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, keys.length) }, worker));
  return report;
}
