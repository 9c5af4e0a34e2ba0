// Why: compile once, execute many. Everything resilientFetch's options decide — which breaker, which
// budget, which limiter, the retry policy, the dialect, the hedge, the time limits and the settle
// window — is validated once per options object into a frozen plan, cached by the object's identity
// the way withRetry caches its policy (and, like that policy, the options object is frozen: a later
// mutation would desynchronise the cache, so it throws in strict code instead). A request then only
// does what depends on the request: its URL, method, headers, key and body. The checkout client makes
// one plan per endpoint when it is created and never compiles again.

import { settleAfterMs as coreSettleAfterMs } from '../steadfast_core.js';
import { RetryBudget, isBudget } from './budget.js';
import { RateLimiter } from './limiter.js';
import { OfflineError, isInstance } from './errors.js';
import { compileDialect } from './dialect.js';
import { isTransientError } from './classify.js';
import { PEER_NAMES, POLICY_EXTRAS, checkUnhedgedPolicy } from './retry.js';
import * as o from './options.js';
import { fetchDefaults, JITTERS } from './defaults.js';
import { BreakerRegistry, RetryableResponse } from './origin.js';

const plans = new WeakMap();
/** The plan of `resilientFetch(input, init)` with no options. */
let defaultPlan;
let sharedRegistry;
let sharedBudget;

/**
 * @internal What a `breaker` option is: 'none' (`false`), 'single' (a CircuitBreaker, or anything with
 * `execute()`), 'registry' (a BreakerRegistry), 'default' (absent) or 'other' (each API says what it
 * does with that: resilientFetch refuses it, the checkout client reads it as a registry's options).
 */
export function breakerKind(value) {
  if (value === undefined) return 'default';
  if (value === false) return 'none';
  if (typeof value?.execute === 'function') return 'single';
  return value instanceof BreakerRegistry ? 'registry' : 'other';
}

/**
 * @internal The settle window (see reconcile) for an unknown produced under these limits: the
 * core's rule (twice the longest an attempt could run).
 */
export function settleWindowFor(attemptTimeoutMs, deadlineMs) {
  return coreSettleAfterMs(attemptTimeoutMs ?? NaN, deadlineMs ?? NaN);
}

/**
 * Errors that came out of the fetch call itself (or the read of its body), not out of our abort:
 * network errors, whatever their text. A rejection that is not an object can only have come from
 * there (everything else an attempt throws is an Error or an abort reason, and an abort reason never
 * reaches the classifier: the retry driver holds the caller's signal and ends the call with its
 * reason before asking).
 */
const FROM_FETCH = new WeakSet();

/** @internal Mark `error` as a rejection of fetch itself (a network error: retryable). */
export function markFromFetch(error) {
  if (error !== null && (typeof error === 'object' || typeof error === 'function')) FROM_FETCH.add(error);
}

/** The retry classifier of every plan: transient answers, offline, network errors, transient errors. */
function retryableFailure(e) {
  if (isInstance(e, RetryableResponse) || isInstance(e, OfflineError)) return true;
  if (e === null || (typeof e !== 'object' && typeof e !== 'function')) return true;
  return FROM_FETCH.has(e) || isTransientError(e);
}

/**
 * @internal The plan of a resilientFetch options object: compiled on first use, then the same frozen
 * plan for as long as the object lives. Throws the option's TypeError/RangeError (nothing is cached
 * then). `undefined` options have one plan too.
 */
export function planFor(options) {
  if (options === undefined) return (defaultPlan ??= compilePlan({}));
  if (options !== null && typeof options === 'object') {
    const hit = plans.get(options);
    if (hit !== undefined) return hit;
  }
  const opts = o.misspelt(o.object(options, 'resilientFetch', true), FETCH_OPTIONS, 'resilientFetch');
  const plan = compilePlan(opts, POLICY_EXTRAS);
  // What the plan read must not change under it (withRetry's rule for its policy).
  const retry = opts.retry;
  if (retry !== null && typeof retry === 'object') Object.freeze(retry);
  Object.freeze(opts);
  plans.set(opts, plan);
  return plan;
}

/** resilientFetch's option names (ResilientFetchOptions in types/http.d.ts): a name near one is a typo. */
const FETCH_OPTIONS = [
  'fetch',
  'retry',
  'attemptTimeoutMs',
  'deadlineMs',
  'breaker',
  'budget',
  'rateLimiter',
  'adaptive',
  'idempotencyKey',
  'dialect',
  'attemptHeader',
  'settleAfterMs',
  'bufferBody',
  'onRetry',
  'hedge',
];

/** The fields of a plan's `retry` (FetchRetryOptions in types/http.d.ts). */
const RETRY_FIELDS = ['maxAttempts', 'baseDelayMs', 'maxDelayMs', 'jitter', 'random'];

/**
 * withRetry policy options (and p-retry's names) that a plan's `retry` does not take, and where
 * each one belongs instead: given inside `retry`, they would be ignored. `client`: the checkout
 * client's wording (its callback is onAttempt, and it never hedges).
 */
function elsewhere(client) {
  const top = (name) => `the top-level ${name} option`;
  const rule = 'nothing: retries follow the method, the status (408, 429, 5xx) and network errors';
  return {
    ...PEER_NAMES,
    onRetry: top(client ? 'onAttempt' : 'onRetry'),
    maxElapsedMs: top('deadlineMs'),
    budget: top('budget'),
    rateLimiter: top('rateLimiter'),
    adaptive: top('adaptive'),
    hedge: client ? 'nothing: a checkout client does not hedge' : top('hedge'),
    signal: client ? "charge()'s signal option" : "the request's own signal (init.signal)",
    isRetryable: rule,
    retryOnResult: rule,
    clock: 'nothing: a plan runs on the system clock',
  };
}

/**
 * @internal A plan from an options object, uncached and without freezing anything: for the checkout
 * client, which compiles its own options (not the caller's object) once, when it is created.
 * `extras`: lib/retry.js's POLICY_EXTRAS, for options that may carry a `hedge` (resilientFetch's);
 * the checkout client's never do, so its bundle carries no hedging code. `where`: whose options
 * these are, for the errors.
 */
export function compilePlan(opts, extras, where = 'resilientFetch') {
  const DEFAULT_RETRY = fetchDefaults().retry;
  const r = opts.retry === undefined ? DEFAULT_RETRY : o.object(opts.retry, where);
  o.misspelt(r, RETRY_FIELDS, `${where} retry`, elsewhere(where !== 'resilientFetch'));
  // The numbers left out stay out: the core fills them (RetryOptions::filled), as for withRetry.
  const retry = {
    maxAttempts: o.num(r, 'maxAttempts', where),
    baseDelayMs: o.num(r, 'baseDelayMs', where),
    maxDelayMs: o.num(r, 'maxDelayMs', where),
    jitter: JITTERS[o.oneOf(r, 'jitter', where, JITTERS, JITTERS.indexOf(DEFAULT_RETRY.jitter))],
    random: o.fn(r, 'random', where),
  };
  for (const k of ['maxAttempts', 'baseDelayMs', 'maxDelayMs', 'random']) if (retry[k] === undefined) delete retry[k];
  const attemptTimeoutMs = o.num(opts, 'attemptTimeoutMs', where);
  if (attemptTimeoutMs !== undefined && !(attemptTimeoutMs > 0)) throw o.rangeError(where, 'attemptTimeoutMs', 'a number > 0', attemptTimeoutMs);
  const deadlineMs = o.num(opts, 'deadlineMs', where);
  if (deadlineMs !== undefined && !(deadlineMs > 0)) throw o.rangeError(where, 'deadlineMs', 'a number > 0', deadlineMs);
  const breaker = o.own(opts, 'breaker');
  const kind = breakerKind(breaker);
  if (kind === 'other') throw o.typeError(where, 'breaker', 'a CircuitBreaker, a BreakerRegistry or false', breaker);
  const budget = o.own(opts, 'budget');
  if (budget !== undefined && budget !== false && !isBudget(budget)) {
    throw o.typeError(where, 'budget', 'a RetryBudget, a RetryQuota or false', budget);
  }
  const rateLimiter = o.own(opts, 'rateLimiter');
  if (rateLimiter !== undefined && !(rateLimiter instanceof RateLimiter)) throw o.typeError(where, 'rateLimiter', 'a RateLimiter', rateLimiter);
  const adaptive = o.own(opts, 'adaptive');
  if (adaptive !== undefined && typeof adaptive !== 'boolean') throw o.typeError(where, 'adaptive', 'a boolean', adaptive);
  const key = o.own(opts, 'idempotencyKey'); // own only: a polluted prototype must not supply a key
  if (key !== undefined && typeof key !== 'string') throw o.typeError(where, 'idempotencyKey', "a string or 'auto'", key);
  const settleAfterMs = o.num(opts, 'settleAfterMs', where);
  if (settleAfterMs !== undefined && !(settleAfterMs >= 0)) throw o.rangeError(where, 'settleAfterMs', 'a number >= 0', settleAfterMs);
  const dialect = compileDialect(o.own(opts, 'dialect'), where);
  const attemptHeader = o.own(opts, 'attemptHeader');
  if (attemptHeader !== undefined && (typeof attemptHeader !== 'string' || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(attemptHeader))) {
    throw (typeof attemptHeader === 'string' ? o.rangeError : o.typeError)(where, 'attemptHeader', 'an HTTP header name', attemptHeader);
  }
  const bufferBody = opts.bufferBody ?? false;
  if (typeof bufferBody !== 'boolean') throw o.typeError(where, 'bufferBody', 'a boolean', bufferBody);
  const fetch = o.fn(opts, 'fetch', where);
  const onRetry = o.fn(opts, 'onRetry', where);
  const hedgeOption = o.own(opts, 'hedge');
  // Only planFor's options may carry a hedge (it passes the extras); the checkout client's never do.
  const hedge = hedgeOption === undefined ? undefined : extras.hedging.compileHedge(hedgeOption, where, extras.hedging.HEDGE_DOOR.request);
  const plan = Object.freeze({
    fetch,
    retry: Object.freeze(retry),
    attemptTimeoutMs,
    deadlineMs,
    /** The one breaker every request goes through, or undefined. */
    breaker: kind === 'single' ? breaker : undefined,
    /** Else the registry whose breaker of the request's origin it goes through (none with `breaker: false`). */
    registry: kind === 'registry' ? breaker : kind === 'default' ? (sharedRegistry ??= new BreakerRegistry()) : undefined,
    budget: budget === false ? undefined : (budget ?? (sharedBudget ??= new RetryBudget(fetchDefaults().budget))),
    rateLimiter,
    adaptive: adaptive === true,
    key,
    /** The settle window an unknown outcome carries: the caller's, else the core's from the time limits. */
    settleAfterMs: settleAfterMs ?? settleWindowFor(attemptTimeoutMs, deadlineMs),
    bufferBody,
    dialect,
    /** The key's header is the dialect's (Idempotency-Key when none is named). */
    keyHeader: dialect?.header ?? 'Idempotency-Key',
    attemptHeader,
    hedge,
    /** POLICY_EXTRAS when the plan hedges: how fetchWithPlan and its retry driver race copies. */
    extras: hedge === undefined ? undefined : extras,
    onRetry: (info) => {
      // Free the connection of a response we will not return.
      if (isInstance(info.error, RetryableResponse)) info.error.response.body?.cancel().catch(() => {});
      onRetry?.(info);
    },
    /** withRetry policies, compiled on first use (see retryPolicyOf). */
    policies: { single: undefined, retrying: undefined, byLimiter: new WeakMap() },
  });
  // The retrying policy is compiled now, so a bad retry number throws when the plan is made (the
  // client created), not at the first request.
  retryPolicyOf(plan, true, plan.rateLimiter);
  return plan;
}

/**
 * @internal The retry policy of a request under `plan`: `retrying` (the method and body may be
 * repeated) or a single attempt, through `limiter` (the plan's rateLimiter, the origin's adaptive
 * one, or none). Compiled once per plan (and limiter) and handed to withRetry, whose cache holds its
 * RetryCore: no request builds a policy. Validation errors are withRetry's; compilePlan compiles
 * the retrying one of the plan's own limiter, so they surface when the plan is made.
 */
export function retryPolicyOf(plan, retrying, limiter) {
  let slot = plan.policies;
  if (limiter !== plan.rateLimiter) {
    slot = plan.policies.byLimiter.get(limiter);
    if (slot === undefined) plan.policies.byLimiter.set(limiter, (slot = { single: undefined, retrying: undefined }));
  }
  const name = retrying ? 'retrying' : 'single';
  let policy = slot[name];
  if (policy === undefined) {
    policy = {
      ...plan.retry,
      maxAttempts: retrying ? plan.retry.maxAttempts : 1,
      maxElapsedMs: plan.deadlineMs,
      budget: plan.budget,
      isRetryable: retryableFailure,
      onRetry: plan.onRetry,
    };
    if (limiter !== undefined) policy.rateLimiter = limiter;
    checkUnhedgedPolicy(policy); // validates, freezes and caches it in withRetry's own cache
    slot[name] = policy;
  }
  return policy;
}
