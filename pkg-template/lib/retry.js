// Why: the retry loop must spread clients apart (jitter), stop on permanent errors, respect the
// budget, the deadline and the caller's signal, and leave nothing behind. Every decision is the
// Rust core's (RetryCore.afterFailure); this driver awaits, sleeps and aborts. The success path
// touches no wasm at all: one call to `fn`, nothing else.

import { RetryCore, jitterDelay } from '../steadfast_core.js';
import { ANSWERED_BEFORE, DeadlineExceededError, RetryBudgetExhaustedError, PermanentError, isInstance, isPermanent, neverRan } from './errors.js';
import { emit, listening } from './events.js';
import * as o from './options.js';
import {
  ANSWER,
  callFailed,
  currentRunOf,
  currentSinkOf,
  foldReported,
  isTransientError,
  newCall,
  recordAttempt,
  reportingFor,
  retryAfterMsOf,
  swapSink,
} from './classify.js';
import { historyRecord } from '../steadfast_core.js';
import { sleep, raceAbort, after } from './clock.js';
import { budgetCore } from './budget.js';
import { RateLimiter, limiterDriver } from './limiter.js';
import { JITTERS } from './defaults.js';
import { HEDGING } from './hedge.js';
import { STOP } from './wire.js';

/** The jitter function named `where` (its export name, for errors, known before the core loads): the core's jitter `jitter`. */
function jitterFn(where, jitter, name) {
  return (a, baseDelayMs, maxDelayMs) => {
    if (typeof a !== 'number' || typeof baseDelayMs !== 'number' || typeof maxDelayMs !== 'number') {
      const [n, v] = typeof a !== 'number' ? [name, a] : typeof baseDelayMs !== 'number' ? ['baseDelayMs', baseDelayMs] : ['maxDelayMs', maxDelayMs];
      throw o.typeError(where, n, 'a number', v);
    }
    const values = { [name]: a, baseDelayMs, maxDelayMs };
    return o.core(where, values, () => jitterDelay(JITTERS.indexOf(jitter), a, baseDelayMs, maxDelayMs, NaN));
  };
}

/** Uniform in [0, min(maxDelayMs, baseDelayMs * 2^(attempt-1))); attempt counts from 1. */
export const fullJitter = jitterFn('fullJitter', 'full', 'attempt');
/** ceiling/2 + uniform [0, ceiling/2): a guaranteed minimum gap of half the ceiling. */
export const equalJitter = jitterFn('equalJitter', 'equal', 'attempt');
/** min(maxDelayMs, uniform [baseDelayMs, previousDelayMs * 3)). */
export const decorrelatedJitter = jitterFn('decorrelatedJitter', 'decorrelated', 'previousDelayMs');

const compiled = new WeakMap();

/**
 * What `withRetry` uses when given no policy: 3 attempts, full jitter from 100 ms, capped at 10 s,
 * retrying what isTransientError accepts (p-retry and cockatiel users expect a default).
 */
export const DEFAULT_RETRY_POLICY = Object.freeze({ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 10_000 });

/** A policy's option names (RetryPolicy in types/retry.d.ts): a name close to one of them is a typo. */
const POLICY_OPTIONS = [
  'maxAttempts',
  'baseDelayMs',
  'maxDelayMs',
  'maxElapsedMs',
  'jitter',
  'isRetryable',
  'retryOnResult',
  'onRetry',
  'random',
  'clock',
  'signal',
  'budget',
  'rateLimiter',
  'adaptive',
  'hedge',
];
/** Other retry libraries' names for these options (p-retry's, mostly): what each one is here. */
export const PEER_NAMES = {
  retries: 'maxAttempts (attempts in all, the first included: retries + 1)',
  minTimeout: 'baseDelayMs',
  maxTimeout: 'maxDelayMs',
  maxRetryTime: 'maxElapsedMs',
  shouldRetry: 'isRetryable',
  onFailedAttempt: 'onRetry',
};

/**
 * Validate a policy once, freeze it (runtime mutation is a race), and cache the result. `extras`:
 * POLICY_EXTRAS, from the callers whose policy may carry a `hedge` or `retryOnResult`.
 */
function compile(policy = DEFAULT_RETRY_POLICY, extras) {
  if (policy !== null && typeof policy === 'object') {
    const hit = compiled.get(policy);
    if (hit !== undefined) return hit;
  }
  const where = 'withRetry';
  const p = o.object(policy, where);
  o.misspelt(p, POLICY_OPTIONS, where, PEER_NAMES);
  const values = {
    maxAttempts: o.num(p, 'maxAttempts', where),
    baseDelayMs: o.num(p, 'baseDelayMs', where),
    maxDelayMs: o.num(p, 'maxDelayMs', where),
    maxElapsedMs: o.num(p, 'maxElapsedMs', where),
  };
  // A number left out is the core's default (core::retry RetryOptions::filled), a left-out bound
  // kept in order with the one given.
  const jitter = o.oneOf(p, 'jitter', where, JITTERS, 0);
  const isRetryable = o.fn(p, 'isRetryable', where) ?? isTransientError;
  const retryOnResult = o.fn(p, 'retryOnResult', where);
  // resilientFetch's own policies (no extras) carry neither a hedge nor retryOnResult.
  if (extras === undefined && (retryOnResult !== undefined || p.hedge !== undefined)) {
    throw new Error('steadfast: internal: hedge or retryOnResult on a resilientFetch policy');
  }
  const c = {
    // PermanentError (p-retry's AbortError, a bail) always stops; a result retryOnResult rejected is retried.
    isRetryable: (e) => (isInstance(e, ResultRetry) ? true : isPermanent(e) ? false : isRetryable(e)),
    retryOnResult,
    /** POLICY_EXTRAS.checkingResults when retryOnResult is given (see retryWith). */
    checking: retryOnResult === undefined ? undefined : extras.checkingResults,
    onRetry: o.fn(p, 'onRetry', where),
    random: o.fn(p, 'random', where),
    clock: o.clock(p, where),
    signal: o.signal(p, 'signal', where),
    budget: p.budget === undefined ? undefined : budgetCore(p.budget, where),
    limiter: rateLimiterOf(p, where),
    maxElapsedMs: values.maxElapsedMs,
    core: o.core(where, values, () => new RetryCore(values.maxAttempts, values.baseDelayMs, values.maxDelayMs, jitter, values.maxElapsedMs)),
  };
  // Hedging (lib/hedge.js): each attempt may race copies of itself, paid from the same budget.
  if (p.hedge !== undefined) {
    const hedging = extras.hedging;
    c.hedge = hedging.compileHedge(p.hedge, where, hedging.HEDGE_DOOR.call);
    hedging.checkHedgeSafe(c.hedge, where);
    c.hedged = hedging.hedged;
  }
  c.first = Object.freeze({ attempt: 1, signal: undefined });
  // A quota is refunded on success (a RetryBudget is not: it has no recordSuccess).
  const refund = c.budget?.recordSuccess;
  c.firstOk = refund === undefined ? undefined : (value) => (refund(undefined), value);
  Object.freeze(p);
  compiled.set(p, c);
  return c;
}

/** `rateLimiter: RateLimiter`, or `adaptive: true` for one of this policy's own. */
function rateLimiterOf(p, where) {
  if (p.adaptive !== undefined && typeof p.adaptive !== 'boolean') throw o.typeError(where, 'adaptive', 'a boolean', p.adaptive);
  if (p.rateLimiter !== undefined) return limiterDriver(p.rateLimiter, where);
  return p.adaptive === true ? limiterDriver(new RateLimiter(), where) : undefined;
}

/** @internal Validate (and freeze, and cache) a policy now, e.g. before it is wrapped in a breaker. */
export function checkPolicy(policy) {
  compile(policy, POLICY_EXTRAS);
}

/** @internal checkPolicy for a policy that never carries a hedge (resilientFetch's own, lib/fetch-plan.js). */
export function checkUnhedgedPolicy(policy) {
  compile(policy, undefined);
}

/** A result `retryOnResult` asked to retry, travelling as a failure through the loop. */
class ResultRetry {
  constructor(value) {
    this.value = value;
  }
}

/**
 * A result `retryOnResult` threw on, travelling as a failure through the loop: the call got an
 * answer nobody could judge (it may have been processed), so it is not retried, and the call
 * rejects with the checker's `error`.
 */
class UncheckedResult {
  constructor(error) {
    this.error = error;
  }
}

/** A final ResultRetry is the call's result; anything else stays an error. */
function unwrapResult(e) {
  if (isInstance(e, ResultRetry)) return e.value;
  throw e;
}

/** `fn` with its results checked by `retryOnResult`; a retried result that is final is returned. */
function checkingResults(fn, c, signal, call) {
  // The checker is made once per compiled policy, not per call.
  c.checkResult ??= (value) => {
    let again;
    try {
      again = c.retryOnResult(value) === true;
    } catch (e) {
      throw new UncheckedResult(e);
    }
    if (again) throw new ResultRetry(value);
    return value;
  };
  const check = c.checkResult;
  const checked = (ctx) => {
    const p = fn(ctx);
    return p !== null && typeof p === 'object' && typeof p.then === 'function' ? p.then(check) : check(p);
  };
  // A rate limiter or a quota refund needs the full driver on every attempt, the first included.
  if (
    signal !== undefined ||
    c.signal !== undefined ||
    c.maxElapsedMs !== undefined ||
    c.limiter !== undefined ||
    c.firstOk !== undefined ||
    c.hedge !== undefined
  ) {
    return run(checked, c, signal, call).catch(unwrapResult);
  }
  // No signal, no deadline: the first attempt's result is checked in the same reaction that
  // receives it, and the loop (the core's decisions) is entered only on a retry.
  if (c.budget !== undefined) c.budget.countRequest();
  const retryAfter = (error) => loop(checked, c, error, 0, undefined, undefined, call).catch(unwrapResult);
  let p;
  const outer = swapSink(call);
  try {
    p = fn(c.first);
  } catch (e) {
    swapSink(outer);
    return retryAfter(e);
  }
  swapSink(outer);
  return Promise.resolve(p).then((value) => {
    try {
      return check(value);
    } catch (e) {
      return retryAfter(e); // a result to retry, or one the checker threw on (UncheckedResult)
    }
  }, retryAfter);
}

/**
 * Call `fn` until it succeeds, at most `policy.maxAttempts` times, sleeping a jittered delay
 * between attempts. See the README and index.d.ts for every rule and default.
 */
export function withRetry(fn, policy) {
  return retryWith(fn, policy, undefined, POLICY_EXTRAS);
}

/**
 * @internal withRetry with a signal from outside the policy (the retry() policy in a pipeline).
 * `extras`: POLICY_EXTRAS when the policy may carry a `hedge` or `retryOnResult` (withRetry, the
 * retry() policy, a hedged resilientFetch plan); undefined for a policy that never does.
 */
export function retryWith(fn, policy, signal, extras) {
  if (typeof fn !== 'function') return Promise.reject(o.typeError('withRetry', 'fn', 'a function', fn));
  let c;
  try {
    c = compile(policy, extras);
  } catch (e) {
    return Promise.reject(e); // an async API reports bad input as a rejection, never a sync throw
  }
  // This call's record: the store run it belongs to, if one is starting it now (its history is
  // reported there), the record starting it now (an outer attempt, a hedge, a run: told if this
  // call gives up after an attempt that may have been processed), and where the hedges its
  // attempts start report the copies they let go.
  const call = newCall(currentRunOf(), currentSinkOf());
  if (c.checking !== undefined) return c.checking(fn, c, signal, call);
  return run(fn, c, signal, call);
}

/**
 * The attempts of one call (`call`: classify.newCall). Each is started with `call` as where a
 * hedge reports (classify.reportingFor), its own `hedge` included, so that the copies an attempt
 * lets go are folded into this call's history: never looked up by the error they ended with.
 */
function run(fn, c, outerSignal, call) {
  if (c.budget !== undefined) c.budget.countRequest();
  if (c.limiter !== undefined) {
    // Every attempt, the first included, waits for the limiter and reports its outcome to it; `fn`,
    // called after that wait, still has this call as where its hedges report.
    const user = fn;
    const resumed = (ctx) => reportingFor(call, user, ctx);
    fn = (ctx) => c.limiter.run(resumed, ctx);
  }
  if (c.hedge !== undefined) {
    const single = fn;
    fn = (ctx) => c.hedged(single, ctx, c, call);
  }
  if (outerSignal === undefined && c.signal === undefined && c.maxElapsedMs === undefined) {
    let p;
    const outer = swapSink(call); // (reportingFor, unwrapped: this is the success path)
    try {
      p = fn(c.first);
    } catch (e) {
      swapSink(outer);
      return loop(fn, c, e, 0, undefined, undefined, call);
    }
    swapSink(outer);
    return Promise.resolve(p).then(c.firstOk, (e) => loop(fn, c, e, 0, undefined, undefined, call));
  }
  return guarded(fn, c, outerSignal, call);
}

/** With a caller signal and/or a deadline: one combined signal, cleaned up on every exit. */
async function guarded(fn, c, outerSignal, call) {
  const start = c.clock();
  const controller = new AbortController();
  const signal = controller.signal;
  const outer = c.signal;
  const onOuterAbort = () => controller.abort(outer.reason);
  // A pipeline's signal (timeout, caller) aborts this call too.
  const onPipelineAbort = () => controller.abort(outerSignal.reason);
  // Both signals are checked before either gets a listener: an aborted one throws here, outside
  // the finally that removes them.
  if (outerSignal?.aborted) throw outerSignal.reason;
  if (outer?.aborted) throw outer.reason;
  if (outerSignal !== undefined) outerSignal.addEventListener('abort', onPipelineAbort, { once: true });
  const state = { error: undefined, attempt: 1, between: false };
  let cancelTimer;
  if (outer !== undefined) outer.addEventListener('abort', onOuterAbort, { once: true });
  if (c.maxElapsedMs !== undefined && c.maxElapsedMs !== Infinity) {
    cancelTimer = after(c.maxElapsedMs, () => {
      // Between attempts (a sleep, an async isRetryable) nothing was cut off: the call ended with state.error.
      controller.abort(new DeadlineExceededError(c.maxElapsedMs, state.error, state.attempt, !state.between));
    });
  }
  try {
    try {
      const value = await raceAbort((ctx) => reportingFor(call, fn, ctx), Object.freeze({ attempt: 1, signal }), signal);
      c.budget?.recordSuccess?.(undefined);
      return value;
    } catch (e) {
      if (signal.aborted && e === signal.reason) {
        // Aborted mid-attempt (deadline or caller): that attempt may have reached the server.
        callFailed(call, e, historyRecord(0, ANSWER.NO_ANSWER));
        throw e;
      }
      return await loop(fn, c, e, start, signal, state, call);
    }
  } finally {
    if (cancelTimer !== undefined) cancelTimer();
    if (outer !== undefined) outer.removeEventListener('abort', onOuterAbort);
    if (outerSignal !== undefined) outerSignal.removeEventListener('abort', onPipelineAbort);
  }
}

/**
 * After a failure: ask the core, consult the budget, sleep, try again. `state` (when guarded)
 * mirrors the last error and attempt for the deadline timer's error; `call` is this call's record
 * (see retryWith): the store run it belongs to, and the copies its hedges let go.
 */
async function loop(fn, c, error, start, signal, state, call) {
  // The call's history (core::history): every failed attempt is folded in, with the hedged copies
  // it let go, and whatever this call ends with carries it (rememberHistory), so a store judges
  // the charge by all attempts.
  let history = 0;
  try {
    return await attempts(fn, c, error, start, signal, state, call, (h) => (history = h));
  } catch (e) {
    callFailed(call, e, history);
    throw e;
  }
}

/** A retry's context -> what the attempt before it ended with (see errorBefore). */
const BEFORE = new WeakMap();

/**
 * @internal What the attempt before the one `ctx` belongs to ended with (undefined for a first
 * attempt): chargeCustomer's refusal of a changed charge carries it, so a breaker judges that call
 * by the gateway's last answer rather than by the refusal.
 */
export function errorBefore(ctx) {
  return BEFORE.get(ctx);
}

async function attempts(fn, c, error, start, signal, state, call, setHistory) {
  let previous = c.core.baseDelayMs;
  let history = 0;
  let answered; // the last attempt's error that was not a refusal which never ran
  for (let attempt = 1; ; attempt++) {
    if (state !== undefined) {
      state.error = error;
      state.attempt = attempt;
      state.between = true;
    }
    if (!neverRan(error)) answered = error;
    // A result retryOnResult threw on is never retried: it is an answer nobody could judge.
    const unchecked = isInstance(error, UncheckedResult);
    let retryable = false;
    let unclassified; // the classifier threw or rejected: this attempt is judged as if it said "retry"
    if (!unchecked) {
      try {
        retryable = c.isRetryable(error);
        if (retryable !== null && typeof retryable === 'object' && typeof retryable.then === 'function') {
          // An async classifier is awaited (never read as "no"); the deadline and signal still apply.
          retryable = await (signal === undefined ? retryable : raceAbort(() => retryable, undefined, signal));
        }
      } catch (e) {
        unclassified = { error: e };
      }
    }
    // The attempt is in the history before anything else can end the call: a classifier that
    // throws must not erase an attempt that may have been processed (a timeout, a 503, a result).
    history = recordAttempt(
      foldReported(history, call, error),
      isInstance(error, ResultRetry) || unchecked ? undefined : error,
      () => retryable === true || unchecked || unclassified !== undefined,
    );
    setHistory(history);
    if (unclassified !== undefined) throw unclassified.error;
    const now = c.clock();
    const unit = c.random === undefined ? NaN : c.random();
    if (c.random !== undefined && !(typeof unit === 'number' && unit >= 0 && unit < 1)) {
      throw o.rangeError('withRetry', 'random', 'a function returning a number in [0, 1)', unit);
    }
    const delay = c.core.afterFailure(attempt, signal === undefined ? 0 : now - start, retryable === true, retryAfterMsOf(error, now), previous, unit);
    if (delay < 0) {
      const cause = unchecked ? error.error : error;
      const final =
        delay === STOP.DEADLINE_EXCEEDED ? new DeadlineExceededError(c.maxElapsedMs, cause, attempt) : isInstance(error, PermanentError) ? error.cause : cause;
      if (listening.giveUp) {
        const reason =
          delay === STOP.DEADLINE_EXCEEDED ? 'deadline' : isPermanent(error) ? 'permanent' : delay === STOP.ATTEMPTS_EXHAUSTED ? 'attempts' : 'not-retryable';
        emit('giveUp', isInstance(final, ResultRetry) ? { attempt, result: final.value, reason } : { attempt, error: final, reason });
      }
      // Ended by a refusal that never ran (a full bulkhead, an open inner breaker) after an answered
      // attempt: a breaker around this call judges it by that answer.
      if (final === error && answered !== undefined && neverRan(error)) ANSWERED_BEFORE.set(error, answered);
      throw final;
    }
    const receipt = c.budget === undefined ? undefined : c.budget.tryWithdraw(error);
    if (receipt === false) {
      const refused = new RetryBudgetExhaustedError(error, attempt);
      if (listening.budgetRefused) emit('budgetRefused', { attempt, error });
      if (listening.giveUp) emit('giveUp', { attempt, error: refused, reason: 'budget' });
      throw refused;
    }
    if (c.onRetry !== undefined || listening.retry) {
      const info = Object.freeze(
        isInstance(error, ResultRetry) ? { attempt, delayMs: delay, error: undefined, result: error.value } : { attempt, delayMs: delay, error },
      );
      if (c.onRetry !== undefined) c.onRetry(info);
      if (listening.retry) emit('retry', info);
    }
    await sleep(delay, signal);
    previous = delay;
    // A deadline that passes during the next attempt reports that attempt (its cause stays the
    // last error seen).
    if (state !== undefined) {
      state.attempt = attempt + 1;
      state.between = false;
    }
    const ctx = Object.freeze({ attempt: attempt + 1, signal });
    BEFORE.set(ctx, error);
    try {
      const value = await (signal === undefined ? reportingFor(call, fn, ctx) : raceAbort((x) => reportingFor(call, fn, x), ctx, signal));
      c.budget?.recordSuccess?.(receipt);
      return value;
    } catch (e) {
      if (signal !== undefined && signal.aborted && e === signal.reason) {
        setHistory(historyRecord(history, ANSWER.NO_ANSWER)); // aborted mid-attempt
        throw e;
      }
      error = e;
    }
  }
}

/**
 * @internal What a policy given to withRetry, to the retry() policy or in resilientFetch's options
 * may ask for beyond resilientFetch's own policies: a `hedge` (lib/hedge.js) and `retryOnResult`.
 * Those entry points hand it to the driver; the checkout client's path never names it, so its
 * bundle carries neither.
 */
export const POLICY_EXTRAS = { hedging: HEDGING, checkingResults };
