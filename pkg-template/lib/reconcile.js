// Why: an unknown outcome is not an error to retry but a question to answer. Reconciliation takes
// the store's unknown keys, asks the source of truth (the gateway's settlement listing, a ledger)
// what happened to each, and settles the key: done (replay the result from now on) or failed (the
// charge never happened; the key is free).
//
// "No debit found" is only believed once the last attempt can no longer be processed: a request
// the client gave up on may still be queued at the gateway or retried by a proxy, and freeing its
// key early lets the debit land unseen (and the next click, with a new key, charge twice). The
// window is the core's rule (core::reconcile); a `failed` answer inside it is deferred, not applied.

import { failedVerdictWaitMs, settleAfterMs as coreSettleAfterMs } from '../steadfast_core.js';
import * as o from './options.js';

/**
 * Resolve every unknown key of `store` through `lookup(key, record)`, which answers
 * `{ status: 'done', result }`, `{ status: 'failed' }`, or `undefined` (still unknown: leave it).
 * `record` is the store's unknown record: `{ startedAt, lastAttemptAt, attempts, settleAfterMs }`
 * (fields a store does not know are absent). A `failed` answer is applied only once the record's
 * settle window has passed since its last attempt (`record.settleAfterMs`, else
 * `options.settleAfterMs`, default 120,000 ms); before that it is counted in `deferred` and the key
 * stays unknown. A lookup that throws leaves its key unknown and is reported in `errors`. Keys are
 * looked up at most `concurrency` at a time (default 8). `clock` (default Date.now) is for tests.
 */
export async function reconcile(store, lookup, options) {
  const where = 'reconcile';
  for (const method of ['unknownKeys', 'peek', 'resolve']) {
    if (typeof store?.[method] !== 'function') throw o.typeError(where, 'store', 'an IdempotencyStore (unknownKeys, peek, resolve)', store);
  }
  if (typeof lookup !== 'function') throw o.typeError(where, 'lookup', 'a function', lookup);
  const opts = o.object(options, where, true);
  const concurrency = o.num(opts, 'concurrency', where) ?? 8;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw o.rangeError(where, 'concurrency', 'an integer >= 1', concurrency);
  const defaultWindow = o.num(opts, 'settleAfterMs', where) ?? coreSettleAfterMs(NaN, NaN);
  if (!(defaultWindow >= 0)) throw o.rangeError(where, 'settleAfterMs', 'a number >= 0', defaultWindow);
  const clock = o.clock(opts, where);
  // Shared (Redis) stores answer asynchronously; in-process ones synchronously: await both.
  const keys = await store.unknownKeys();
  const report = { checked: keys.length, done: 0, failed: 0, deferred: 0, stillUnknown: 0, retryAfterMs: undefined, errors: [] };
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++];
      let answer;
      let record;
      try {
        record = await store.peek(key);
        // Settled meanwhile by someone else: nothing to ask.
        if (record?.status !== 'unknown') continue;
        answer = await lookup(key, Object.freeze({ ...record }));
      } catch (error) {
        report.errors.push({ key, error });
        report.stillUnknown += 1;
        continue;
      }
      if (answer === undefined) {
        report.stillUnknown += 1;
        continue;
      }
      if (answer === null || typeof answer !== 'object' || (answer.status !== 'done' && answer.status !== 'failed')) {
        report.errors.push({ key, error: o.typeError(where, 'lookup() result', "{ status: 'done', result }, { status: 'failed' } or undefined", answer) });
        report.stillUnknown += 1;
        continue;
      }
      if (answer.status === 'failed') {
        const last = typeof record.lastAttemptAt === 'number' ? record.lastAttemptAt : typeof record.startedAt === 'number' ? record.startedAt : NaN;
        const window = typeof record.settleAfterMs === 'number' ? record.settleAfterMs : defaultWindow;
        const waitMs = failedVerdictWaitMs(clock(), last, window);
        if (waitMs > 0) {
          report.deferred += 1;
          report.retryAfterMs = Math.min(report.retryAfterMs ?? Infinity, waitMs);
          continue;
        }
      }
      // The key may have been resolved meanwhile by someone else: only unknown keys are settled.
      if ((await store.peek(key))?.status !== 'unknown') continue;
      try {
        await store.resolve(key, answer);
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
