// Why: an unknown outcome is not an error to retry but a question to answer. Reconciliation takes
// the store's unknown keys, asks the source of truth (the gateway's settlement listing, a ledger)
// what happened to each, and settles the key: done (replay the result from now on) or failed (the
// charge never happened; the key is free).

import * as o from './options.js';

/**
 * Resolve every unknown key of `store` through `lookup(key)`, which answers
 * `{ status: 'done', result }`, `{ status: 'failed' }`, or `undefined` (still unknown: leave it).
 * A lookup that throws leaves its key unknown and is reported in `errors`. Keys are looked up at
 * most `concurrency` at a time (default 8).
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
  // Shared (Redis) stores answer asynchronously; in-process ones synchronously: await both.
  const keys = await store.unknownKeys();
  const report = { checked: keys.length, done: 0, failed: 0, stillUnknown: 0, errors: [] };
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++];
      // The attempt the lookup is about: resolve only that one (compare-and-set on its start), so a
      // stale answer cannot free a newer attempt, and a concurrent reconcile() is not an error.
      const before = await store.peek(key);
      if (before?.status !== 'unknown') continue;
      let answer;
      try {
        answer = await lookup(key);
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
      try {
        await store.resolve(key, { ...answer, startedAt: before.startedAt });
      } catch (error) {
        // Settled meanwhile by someone else (another reconcile, a late owner): not ours to settle.
        if (error?.code === 'KEY_WRONG_STATE' || error?.code === 'KEY_NOT_FOUND') continue;
        throw error;
      }
      report[answer.status] += 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, keys.length) }, worker));
  return report;
}
