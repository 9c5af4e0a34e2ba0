// Why: an origin is the unit a server's health and pace belong to. A slow payment host must not trip
// the breaker of the email host, and a throttle learned from one host must not pace another; URLs
// built from client input must not grow memory without bound. One breaker and (with `adaptive`) one
// rate limiter per origin, both bounded (fetchDefaults().maxOrigins).

import { CircuitBreaker } from './breaker.js';
import { BREAKER_OPTIONS } from './breaker-options.js';
import { RateLimiter } from './limiter.js';
import { isTransientError } from './classify.js';
import { fieldOf, isInstance } from './errors.js';
import * as o from './options.js';
import { deferred } from './deferred.js';
import { fetchDefaults } from './defaults.js';
import { evictOldest } from './bounded.js';

/**
 * An HTTP answer as an error: a transient status thrown inside the retry loop (so the breaker and
 * driver see a failure), or the last answer of a keyed request whose outcome is unknown (its `cause`).
 */
export class RetryableResponse extends Error {
  constructor(response) {
    super(`HTTP ${response.status}`);
    this.name = 'HttpResponseError';
    this.response = response;
    this.status = response.status;
    this.headers = response.headers;
  }
}

/** What an origin's breaker counts as a failure: transient statuses and network errors, not the caller's own abort. */
function countsAgainstOrigin(e) {
  return isInstance(e, RetryableResponse) || (isTransientError(e) && fieldOf(e, 'name') !== 'AbortError');
}

/**
 * @internal The caller's own abort of a request, as its origin's breaker sees it (resilientFetch
 * throws it inside the breaker and rethrows `reason` outside): it says nothing about the origin, so
 * the registry's breakers exclude it — a half-open probe the caller abandoned gives its slot back
 * rather than closing the circuit as a success.
 */
export class CallerAborted {
  constructor(reason) {
    this.reason = reason;
  }
}
const callerAborted = (e) => isInstance(e, CallerAborted);

/**
 * One breaker per origin, made on first use with the same options: a slow payment host must not
 * trip the breaker of the email host.
 */
export class BreakerRegistry {
  #options;
  #maxOrigins;
  #byOrigin = new Map();
  #pinned = new Set();
  /**
   * @param {object} [breakerOptions] options for each origin's CircuitBreaker (default: the core's, fetchDefaults().breaker:
   *   windowSize 20, minimumCalls 10, failureRateThreshold 0.5, openDurationMs 30 s),
   *   plus `maxOrigins = 1000` and `pinned = []` (origins or URLs whose breakers are never evicted).
   *   Past maxOrigins, the oldest breaker that is neither pinned nor holding protection (see
   *   CircuitBreaker#holdsProtection: not closed, or a failure on record) is dropped, so URLs built
   *   from client input cannot grow memory without bound. When every kept breaker is pinned or in
   *   use, nothing is dropped: a new origin gets a breaker that is not kept (it guards that one call).
   */
  constructor(breakerOptions) {
    const stand = deferred(new.target, arguments, 'BreakerRegistry');
    if (stand !== undefined) return stand;
    const given = o.misspelt(
      o.object(breakerOptions === undefined ? fetchDefaults().breaker : breakerOptions, 'BreakerRegistry'),
      [...BREAKER_OPTIONS, 'maxOrigins', 'pinned'],
      'BreakerRegistry',
    );
    const opts = { isFailure: countsAgainstOrigin };
    for (const k of Object.keys(given)) if (k !== 'maxOrigins' && k !== 'pinned') opts[k] = given[k];
    const isExcluded = opts.isExcluded;
    if (isExcluded === undefined) opts.isExcluded = callerAborted;
    else if (typeof isExcluded === 'function') opts.isExcluded = (e) => callerAborted(e) || isExcluded(e);
    const maxOrigins = o.num(given, 'maxOrigins', 'BreakerRegistry') ?? fetchDefaults().maxOrigins;
    if (!Number.isSafeInteger(maxOrigins) || maxOrigins < 1) throw o.rangeError('BreakerRegistry', 'maxOrigins', 'an integer >= 1', maxOrigins);
    const pinned = o.own(given, 'pinned') ?? [];
    if (!Array.isArray(pinned)) throw o.typeError('BreakerRegistry', 'pinned', 'an array of origins or URLs', pinned);
    new CircuitBreaker(opts); // validate now, not on first request
    this.#options = opts;
    this.#maxOrigins = maxOrigins;
    for (const p of pinned) this.pin(p);
  }
  /**
   * Keep `origin`'s breaker for the registry's lifetime (never evicted): the endpoints an app
   * depends on (a checkout client pins its endpoints). Accepts an origin, a URL string or a URL;
   * returns that origin's breaker. Pinned breakers count toward maxOrigins but are never dropped.
   */
  pin(origin) {
    const key = originOf(origin);
    if (key === undefined) throw o.typeError('BreakerRegistry.pin', 'origin', 'an origin, a URL string or a URL', origin);
    this.#pinned.add(key);
    return this.get(key);
  }
  /** The breaker of `origin` (e.g. 'https://api.example.com'). */
  get(origin) {
    let b = this.#byOrigin.get(origin);
    if (b === undefined) {
      b = new CircuitBreaker(this.#options);
      const pinned = this.#pinned.has(origin);
      if (
        this.#byOrigin.size >= this.#maxOrigins &&
        !pinned &&
        !evictOldest(this.#byOrigin, (breaker, k) => !this.#pinned.has(k) && !breaker.holdsProtection, true)
      ) {
        return b; // every kept breaker is pinned or in use: this one guards its call, and is not kept
      }
      this.#byOrigin.set(origin, b);
    }
    return b;
  }
  /** Origins with a breaker. */
  origins() {
    return [...this.#byOrigin.keys()];
  }
}

/** @internal The origin of an origin string, URL string or URL (relative to the page's location); undefined when it is none of these. */
export function originOf(v) {
  const raw = typeof v === 'string' ? v : typeof v?.href === 'string' ? v.href : undefined;
  if (raw === undefined) return undefined;
  try {
    return new URL(raw, globalThis.location?.href).origin;
  } catch {
    return undefined;
  }
}

/** `adaptive: true`: one RateLimiter per origin, process-wide (a rate is a property of the server). */
const sharedLimiters = new Map();

/**
 * The process-wide limiter of `origin`. Bounded like BreakerRegistry (fetchDefaults().maxOrigins): URLs
 * built from client input must not grow memory without bound. Past the bound the oldest limiter
 * that never saw a throttle goes (it has learned nothing a new one would not); only when every
 * one is pacing does the oldest pacing one go.
 */
export function limiterFor(origin) {
  let l = sharedLimiters.get(origin);
  if (l === undefined) {
    if (sharedLimiters.size >= fetchDefaults().maxOrigins) evictOldest(sharedLimiters, (limiter) => !limiter.enabled);
    sharedLimiters.set(origin, (l = new RateLimiter()));
  }
  return l;
}

/** @internal How many origins have a process-wide adaptive limiter (tests check the bound). */
export function adaptiveLimiterOrigins() {
  return sharedLimiters.size;
}
