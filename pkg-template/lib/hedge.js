// Why: a request stuck in a server's slow tail costs the caller the whole tail; a retry waits for a
// failure that may never come. A hedge sends another copy once the first is slow and takes the first
// definitive answer. For a payment that is only legal when the server can recognise the copy: so a
// hedge is refused unless the call is declared safe to repeat or carries an idempotency key (the same
// key on every copy), it spends the same budget as a retry, and every copy's evidence (a cancelled
// loser may have reached the gateway) feeds the history of the call or store run that started it. When to start the next copy, how many,
// how many at once: the Rust core's (HedgeCore.nextStep). This driver starts, races and aborts.

import { HedgeCore } from '../steadfast_core.js';
import { SteadfastError, named } from './errors.js';
import { emit, listening } from './events.js';
import { after } from './clock.js';
import { ANSWER, answerOf, newCall, reportHedge, reportingFor } from './classify.js';
import * as o from './options.js';
import { HEDGE_STEP, LAYOUT } from './wire.js';

/**
 * A hedge was asked for a call that is not safe to send twice: a POST/PATCH without an idempotency
 * key, a body that can be read once, or a `withRetry`/`hedge()` call declaring neither `safe: true`
 * nor an `idempotencyKey`. Nothing was sent.
 */
export const HedgeNotSafeError = /* @__PURE__ */ named(
  class HedgeNotSafeError extends SteadfastError {
    /** @param {string} where @param {string | undefined} method */
    constructor(where, method) {
      super(
        method === undefined
          ? `${where}: a hedge needs \`safe: true\` (the call only reads) or an \`idempotencyKey\` (the same key on every copy)`
          : `${where}: a ${method} request may be hedged only with an Idempotency-Key (the same key on every copy) and a body that can be sent twice`,
        'HEDGE_NOT_SAFE',
      );
      this.method = method;
    }
  },
  'HedgeNotSafeError',
);

/** The reason a losing copy's signal is aborted with: its call was answered by another copy. */
function lostReason() {
  return new DOMException('another copy of this call answered first', 'AbortError');
}

/** Hedges already compiled (a call's own, from hedgeForCall, included). */
const COMPILED = new WeakSet();

/**
 * @internal The doors a hedge is given at, with the names each takes: the numbers are the core's
 * (LAYOUT.hedge, known once it has loaded); the hedge() policy takes every name of
 * HedgePolicyOptions, a withRetry policy's `hedge` those of CallHedgeOptions (its budget, classifier
 * and clock are the policy's own), resilientFetch's those of HedgeOptions (the request decides
 * whether it may be sent twice, and which budget and key it has). A name another door takes is a
 * TypeError saying where it belongs: left in, it would be ignored.
 */
export const HEDGE_DOOR = Object.freeze({
  policy: { names: () => [...LAYOUT.hedge, 'safe', 'idempotencyKey', 'budget', 'isRetryable', 'clock'], elsewhere: undefined, compiled: new WeakMap() },
  call: {
    names: () => [...LAYOUT.hedge, 'safe', 'idempotencyKey'],
    elsewhere: {
      budget: "the policy's budget (it pays for every copy beyond the first)",
      isRetryable: "the policy's isRetryable",
      clock: "the policy's clock",
    },
    compiled: new WeakMap(),
  },
  request: {
    names: () => [...LAYOUT.hedge],
    elsewhere: {
      budget: 'the top-level budget option (it pays for every copy beyond the first)',
      idempotencyKey: 'the top-level idempotencyKey option (every copy carries the request key)',
      safe: 'nothing: a request is hedged only if it may be repeated (a safe method, or POST/PATCH with an Idempotency-Key)',
      isRetryable: 'nothing: retries and hedges follow the method, the status (408, 429, 5xx) and network errors',
      clock: 'nothing: a plan runs on the system clock',
    },
    compiled: new WeakMap(),
  },
});

/**
 * @internal Validate a `hedge` option once per object and door (its latency window lives as long
 * as the object: reuse it across calls so the adaptive delay learns). `where` names the API,
 * `door` is one of HEDGE_DOOR.
 */
export function compileHedge(value, where, door) {
  if (value !== null && typeof value === 'object') {
    if (COMPILED.has(value)) return value;
    const hit = door.compiled.get(value);
    if (hit !== undefined) return hit;
  }
  const whose = where === 'hedge' ? where : `${where} hedge`; // the hedge() policy's own options, or a policy's `hedge`
  const h = o.misspelt(o.object(value, whose), door.names(), whose, door.elsewhere);
  const values = {};
  for (const name of LAYOUT.hedge) values[name] = o.num(h, name, where);
  const safe = o.own(h, 'safe');
  if (safe !== undefined && typeof safe !== 'boolean') throw o.typeError(where, 'hedge.safe', 'a boolean', safe);
  const key = o.own(h, 'idempotencyKey');
  if (key !== undefined && (typeof key !== 'string' || key === '')) throw o.typeError(where, 'hedge.idempotencyKey', 'a non-empty string', key);
  const core = o.core(where, values, () => new HedgeCore(...LAYOUT.hedge.map((name) => values[name] ?? NaN)));
  const c = Object.freeze({ core, safe: safe === true, idempotencyKey: key });
  door.compiled.set(h, c);
  COMPILED.add(c);
  return c;
}

/**
 * @internal A compiled hedge for one call, with hooks: `onCancel()` runs synchronously when a losing
 * copy is aborted (resilientFetch folds it into the charge's history before it judges the answer).
 */
export function hedgeForCall(hedge, onCancel) {
  const c = Object.freeze({ ...hedge, safe: true, onCancel });
  COMPILED.add(c);
  return c;
}

/**
 * @internal resilientFetch's hedge for one request: refused (HedgeNotSafeError, before anything is
 * sent) unless the request may be repeated — a safe method, or POST/PATCH with an Idempotency-Key
 * (the core's method rule, `repeatable`), with a body that can be sent twice. `onCancel` folds a
 * cancelled copy into the request's history.
 */
export function hedgeForRequest(hedge, repeatable, method, onCancel) {
  if (!repeatable) throw new HedgeNotSafeError('resilientFetch', method);
  return hedgeForCall(hedge, onCancel);
}

/** Browsers hold a cache lock per URL: a second GET waits for the first to finish. */
const BROWSER = typeof globalThis.document !== 'undefined' || typeof globalThis.importScripts === 'function';

/**
 * @internal The fetch init of copy `ctx.hedge` of a request. A browser queues a request for a URL
 * whose cache entry another request is writing (Chromium's cache lock: measured in
 * tests/browser/hedge.test.mjs), so a hedge would wait for the very copy it should overtake; a hedge
 * whose cache mode the caller left unset goes around the cache (`cache: 'no-store'`).
 */
export function copyInit(ctx, init, cacheMode) {
  if (!BROWSER || !(ctx.hedge > 0) || init.cache !== undefined || (cacheMode !== undefined && cacheMode !== 'default')) return init;
  return { ...init, cache: 'no-store' };
}

/** @internal Refuse a hedge the call cannot take (withRetry / hedge()): neither safe nor keyed. */
export function checkHedgeSafe(hedge, where) {
  if (!hedge.safe && hedge.idempotencyKey === undefined) throw new HedgeNotSafeError(where, undefined);
}

/**
 * @internal Run one attempt of `fn` as a race of copies. `r` is the retry driver's view:
 * `{ hedge, budget, isRetryable, clock }`. Resolves with the first success; rejects with the first
 * error `isRetryable` does not accept (a definitive answer wins too), or, when every copy failed
 * retryably, with the last error (the retry policy decides). Losers are aborted through their
 * signals; an exhausted budget stops new copies and leaves running ones alone.
 *
 * `sink` is the record this attempt reports to (classify.newCall for a withRetry attempt,
 * classify.newRun for a store run; the hedge() policy takes the one being started when it is
 * called): when the attempt fails, every copy other than the one whose error it fails with is
 * reported there (classify.reportHedge) before the rejection — a copy let go unanswered as "no
 * answer" (it may have been processed), one that failed as its answer, one whose classifier threw
 * or had not answered yet as a failure another copy might still have beaten. Later copies start
 * with `sink` as theirs too.
 */
export function hedged(fn, ctx, r, sink) {
  const h = r.hedge;
  const core = h.core;
  const outer = ctx.signal;
  if (outer !== undefined && outer.aborted) return Promise.reject(outer.reason);
  return new Promise((resolve, reject) => {
    const copies = [];
    let started = 0;
    let inFlight = 0;
    let lastStart = 0;
    let settled = false;
    let budgetDry = false;
    let lastError;
    let lastCopy;
    let cancelTimer;
    // Where the copies report what ended a call of their own may have been processed (a withRetry
    // or resilientFetch a copy runs: classify.callFailed): `sink`, or, for a hedge started with
    // none, a record of this attempt's, folded into its evidence below.
    const copiesSink = sink ?? newCall(undefined, undefined);
    // `ending`: the copy whose answer ends the attempt (its value is the call's), if any; `byCaller`:
    // the caller's signal (or a deadline) ended it, and the copies are aborted with its reason.
    const finish = (ok, value, ending, byCaller = false) => {
      if (settled) return;
      settled = true;
      if (cancelTimer !== undefined) cancelTimer();
      if (outer !== undefined) outer.removeEventListener('abort', onOuterAbort);
      if (ok && started > 1 && listening.hedge) emit('hedge', Object.freeze({ kind: 'won', attempt: ctx.attempt, copy: ending.index, copies: started }));
      const evidence = ok ? undefined : [];
      for (const copy of copies) {
        if (copy === ending) continue;
        if (copy.done) {
          // Answered: failed retryably (its answer), or still being classified (a failure).
          if (evidence !== undefined) evidence.push(copy.answer ?? answerOf(copy.failure, () => true));
          continue;
        }
        copy.done = true;
        evidence?.push(ANSWER.NO_ANSWER);
        h.onCancel?.();
        if (listening.hedge) emit('hedge', Object.freeze({ kind: 'cancelled', attempt: ctx.attempt, copy: copy.index }));
        copy.controller.abort(byCaller ? value : lostReason());
      }
      if (ok) resolve(value);
      else {
        if (sink === undefined && copiesSink.answers !== undefined) evidence.push(...copiesSink.answers);
        if (evidence.length > 0) reportHedge(sink, value, evidence);
        reject(value);
      }
    };
    const onOuterAbort = () => finish(false, outer.reason, undefined, true);
    if (outer !== undefined) outer.addEventListener('abort', onOuterAbort, { once: true });

    const answered = (copy, ok, value) => {
      if (copy.done) return; // cancelled: its late answer is not the call's
      copy.done = true;
      inFlight -= 1;
      core.recordLatency(r.clock() - copy.startedAt);
      if (ok) return finish(true, value, copy);
      copy.failure = value;
      let retryable;
      try {
        retryable = r.isRetryable(value);
      } catch (e) {
        return finish(false, e, undefined); // the classifier's error ends it; the copy's failure is evidence
      }
      const judged = (yes) => {
        if (settled) return;
        if (yes !== true) return finish(false, value, copy); // a definitive failure is an answer
        copy.answer = answerOf(value, () => true);
        lastError = value;
        lastCopy = copy;
        step();
      };
      // A classifier that rejects ends it like one that throws.
      const unread = (e) => finish(false, e, undefined);
      if (retryable !== null && typeof retryable === 'object' && typeof retryable.then === 'function') retryable.then(judged, unread);
      else judged(retryable);
    };

    const start = () => {
      const index = started;
      if (index > 0 && r.budget !== undefined && r.budget.tryWithdraw(undefined) === false) {
        budgetDry = true;
        if (listening.hedge) emit('hedge', Object.freeze({ kind: 'refused', attempt: ctx.attempt, copy: index }));
        return;
      }
      const controller = new AbortController();
      const copy = { index, controller, startedAt: r.clock(), done: false, failure: undefined, answer: undefined };
      copies.push(copy);
      started += 1;
      inFlight += 1;
      lastStart = copy.startedAt;
      if (index > 0 && listening.hedge) emit('hedge', Object.freeze({ kind: 'started', attempt: ctx.attempt, copy: index, delayMs: core.delayMs }));
      let p;
      try {
        const copyCtx = { ...ctx, signal: controller.signal, hedge: index };
        if (h.idempotencyKey !== undefined) copyCtx.idempotencyKey = h.idempotencyKey;
        // A hedge started inside a copy reports to this attempt's record, whenever the copy starts.
        p = reportingFor(copiesSink, fn, Object.freeze(copyCtx));
      } catch (e) {
        p = Promise.reject(e);
      }
      Promise.resolve(p).then(
        (v) => answered(copy, true, v),
        (e) => answered(copy, false, e),
      );
    };

    const step = () => {
      for (;;) {
        if (settled) return;
        const next = core.nextStep(started, inFlight, r.clock() - lastStart);
        if (next === HEDGE_STEP.START) {
          if (budgetDry && started > 0) return; // no more copies; the running ones may still win
          start();
          continue;
        }
        if (next > 0) {
          if (budgetDry) return;
          if (cancelTimer !== undefined) cancelTimer();
          cancelTimer = after(next, () => {
            cancelTimer = undefined;
            step();
          });
          return;
        }
        if (next === HEDGE_STEP.AWAIT_ANSWER) return; // wait for an answer
        return finish(false, lastError, lastCopy); // HEDGE_STEP.EXHAUSTED: every copy failed retryably
      }
    };
    step();
  });
}

/**
 * @internal What a retry loop or a fetch plan needs to hedge, handed to them by the entry points
 * that can be given a hedge (withRetry, the retry() policy, resilientFetch's planFor). The checkout
 * client's path never hedges and never names this object, so its bundle carries no hedging code.
 */
export const HEDGING = { HEDGE_DOOR, compileHedge, checkHedgeSafe, hedged, hedgeForRequest, copyInit };
