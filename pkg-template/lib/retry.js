// Why: the retry loop must spread clients apart (jitter), stop on permanent errors, respect the
// budget, the deadline and the caller's signal, and leave nothing behind. Every decision is the
// Rust core's (RetryCore.afterFailure); this driver awaits, sleeps and aborts. The success path
// touches no wasm at all: one call to `fn`, nothing else.

import { RetryCore, jitterDelay } from '../steadfast_core.js';
import { DeadlineExceededError, RetryBudgetExhaustedError } from './errors.js';
import * as o from './options.js';
import { isTransientError, retryAfterMsOf } from './classify.js';
import { sleep, raceAbort, after } from './clock.js';
import { budgetCore } from './budget.js';

const JITTERS = ['full', 'equal', 'decorrelated', 'none'];

function jitterFn(kind, name) {
  return (a, baseDelayMs, maxDelayMs) => {
    if (typeof a !== 'number' || typeof baseDelayMs !== 'number' || typeof maxDelayMs !== 'number') {
      const [n, v] = typeof a !== 'number' ? [name, a] : typeof baseDelayMs !== 'number' ? ['baseDelayMs', baseDelayMs] : ['maxDelayMs', maxDelayMs];
      throw o.typeError(`${JITTERS[kind]}Jitter`, n, 'a number', v);
    }
    const values = { [name]: a, baseDelayMs, maxDelayMs };
    return o.core(`${JITTERS[kind]}Jitter`, values, () => jitterDelay(kind, a, baseDelayMs, maxDelayMs, NaN));
  };
}

/** Uniform in [0, min(maxDelayMs, baseDelayMs * 2^(attempt-1))); attempt counts from 1. */
export const fullJitter = jitterFn(0, 'attempt');
/** ceiling/2 + uniform [0, ceiling/2): a guaranteed minimum gap of half the ceiling. */
export const equalJitter = jitterFn(1, 'attempt');
/** min(maxDelayMs, uniform [baseDelayMs, previousDelayMs * 3)). */
export const decorrelatedJitter = jitterFn(2, 'previousDelayMs');

const compiled = new WeakMap();

/** Validate a policy once, freeze it (runtime mutation is a race), and cache the result. */
function compile(policy) {
  if (policy !== null && typeof policy === 'object') {
    const hit = compiled.get(policy);
    if (hit !== undefined) return hit;
  }
  const where = 'withRetry';
  const p = o.object(policy, where);
  const values = {
    maxAttempts: o.num(p, 'maxAttempts', where),
    baseDelayMs: o.num(p, 'baseDelayMs', where),
    maxDelayMs: o.num(p, 'maxDelayMs', where),
    maxElapsedMs: o.num(p, 'maxElapsedMs', where),
  };
  for (const name of ['maxAttempts', 'baseDelayMs', 'maxDelayMs']) {
    if (values[name] === undefined) throw o.typeError(where, name, 'a number', undefined);
  }
  const jitter = o.oneOf(p, 'jitter', where, JITTERS, 0);
  const c = {
    isRetryable: o.fn(p, 'isRetryable', where) ?? isTransientError,
    onRetry: o.fn(p, 'onRetry', where),
    random: o.fn(p, 'random', where),
    clock: o.clock(p, where),
    signal: o.signal(p, 'signal', where),
    budget: p.budget === undefined ? undefined : budgetCore(p.budget, where),
    maxElapsedMs: values.maxElapsedMs,
    core: o.core(where, values, () =>
      new RetryCore(values.maxAttempts, values.baseDelayMs, values.maxDelayMs, jitter, values.maxElapsedMs),
    ),
  };
  c.first = Object.freeze({ attempt: 1, signal: undefined });
  Object.freeze(p);
  compiled.set(p, c);
  return c;
}

/** @internal Validate (and freeze, and cache) a policy now, e.g. before it is wrapped in a breaker. */
export function checkPolicy(policy) {
  compile(policy);
}

/**
 * Call `fn` until it succeeds, at most `policy.maxAttempts` times, sleeping a jittered delay
 * between attempts. See the README and index.d.ts for every rule and default.
 */
export function withRetry(fn, policy) {
  if (typeof fn !== 'function') return Promise.reject(o.typeError('withRetry', 'fn', 'a function', fn));
  let c;
  try {
    c = compile(policy);
  } catch (e) {
    return Promise.reject(e); // an async API reports bad input as a rejection, never a sync throw
  }
  if (c.budget !== undefined) c.budget.countRequest();
  if (c.signal === undefined && c.maxElapsedMs === undefined) {
    let p;
    try {
      p = fn(c.first);
    } catch (e) {
      return loop(fn, c, e, 0, undefined, undefined);
    }
    return Promise.resolve(p).then(undefined, (e) => loop(fn, c, e, 0, undefined, undefined));
  }
  return guarded(fn, c);
}

/** With a caller signal and/or a deadline: one combined signal, cleaned up on every exit. */
async function guarded(fn, c) {
  const start = c.clock();
  const controller = new AbortController();
  const signal = controller.signal;
  const outer = c.signal;
  const onOuterAbort = () => controller.abort(outer.reason);
  const state = { error: undefined, attempt: 1 };
  let cancelTimer;
  if (outer !== undefined) {
    if (outer.aborted) throw outer.reason;
    outer.addEventListener('abort', onOuterAbort, { once: true });
  }
  if (c.maxElapsedMs !== undefined && c.maxElapsedMs !== Infinity) {
    cancelTimer = after(c.maxElapsedMs, () => {
      controller.abort(new DeadlineExceededError(c.maxElapsedMs, state.error, state.attempt));
    });
  }
  try {
    try {
      return await raceAbort(fn, Object.freeze({ attempt: 1, signal }), signal);
    } catch (e) {
      if (signal.aborted && e === signal.reason) throw e;
      return await loop(fn, c, e, start, signal, state);
    }
  } finally {
    if (cancelTimer !== undefined) cancelTimer();
    if (outer !== undefined) outer.removeEventListener('abort', onOuterAbort);
  }
}

/**
 * After a failure: ask the core, consult the budget, sleep, try again. `state` (when guarded)
 * mirrors the last error and attempt for the deadline timer's error.
 */
async function loop(fn, c, error, start, signal, state) {
  let previous = c.core.baseDelayMs;
  for (let attempt = 1; ; attempt++) {
    if (state !== undefined) {
      state.error = error;
      state.attempt = attempt;
    }
    let retryable = c.isRetryable(error);
    if (retryable !== null && typeof retryable === 'object' && typeof retryable.then === 'function') {
      // An async classifier is awaited (never read as "no"); the deadline and signal still apply.
      retryable = await (signal === undefined ? retryable : raceAbort(() => retryable, undefined, signal));
    }
    const now = c.clock();
    const unit = c.random === undefined ? NaN : c.random();
    if (c.random !== undefined && !(typeof unit === 'number' && unit >= 0 && unit < 1)) {
      throw o.rangeError('withRetry', 'random', 'a function returning a number in [0, 1)', unit);
    }
    const delay = c.core.afterFailure(
      attempt,
      signal === undefined ? 0 : now - start,
      retryable === true,
      retryAfterMsOf(error, now),
      previous,
      unit,
    );
    if (delay < 0) {
      if (delay === -3) throw new DeadlineExceededError(c.maxElapsedMs, error, attempt);
      throw error;
    }
    if (c.budget !== undefined && !c.budget.tryWithdraw()) throw new RetryBudgetExhaustedError(error, attempt);
    if (c.onRetry !== undefined) c.onRetry(Object.freeze({ attempt, delayMs: delay, error }));
    await sleep(delay, signal);
    previous = delay;
    // A deadline that passes during the next attempt reports that attempt (its cause stays the
    // last error seen).
    if (state !== undefined) state.attempt = attempt + 1;
    const ctx = Object.freeze({ attempt: attempt + 1, signal });
    try {
      return await (signal === undefined ? fn(ctx) : raceAbort(fn, ctx, signal));
    } catch (e) {
      if (signal !== undefined && signal.aborted && e === signal.reason) throw e;
      error = e;
    }
  }
}
