// Why: most users call a payment API over fetch, and HTTP has its own rules for what may be
// repeated. This wraps the global fetch with the whole mechanism: retries only for methods that are
// safe to repeat (the core's method_is_retryable: POST/PATCH only with an Idempotency-Key, the same
// key on every attempt), only for transient statuses or network errors, honouring Retry-After and
// Stripe-Should-Retry, behind one breaker per origin and a shared budget, with per-attempt and
// overall time limits. A POST whose fate is unknown is reported as such, never silently repeated
// with a new key; one that provably never left (offline, connection refused, open circuit) is not.
//
// A network error is recognised by where it came from, not by its text: a rejection of the fetch
// call itself that is not our abort (the Fetch standard rejects with a TypeError whose message
// differs per engine: Chromium "Failed to fetch", Firefox "NetworkError when attempting to fetch
// resource.", WebKit "Load failed", undici "fetch failed").

import { historyRecord, methodIsRetryable, provesNotSent, settleAfterMs as coreSettleAfterMs } from '../steadfast_core.js';
import { CircuitBreaker } from './breaker.js';
import { RetryBudget } from './budget.js';
import { RetryQuota } from './quota.js';
import { RateLimiter } from './limiter.js';
import { IdempotencyKeyExpiredError, OfflineError, OutcomeUnknownError } from './errors.js';
import { compileDialect } from './dialect.js';
import { ANSWER, VERDICT, historyVerdict, isTransientError, isTransientResponse, hasCode } from './classify.js';
import { withRetry } from './retry.js';
import { newIdempotencyKey } from './idempotency.js';
import * as o from './options.js';
import { deferred } from './deferred.js';
import { after } from './clock.js';
import { fetchDefaults, JITTERS } from './defaults.js';
import { evictOldest } from './bounded.js';
import { compileHedge, copyInit, hedgeForRequest } from './hedge.js';

const KEYED = new Set(['POST', 'PATCH']);

/**
 * An HTTP answer as an error: a transient status thrown inside the retry loop (so the breaker and
 * driver see a failure), or the last answer of a keyed request whose outcome is unknown (its `cause`).
 */
class RetryableResponse extends Error {
  constructor(response) {
    super(`HTTP ${response.status}`);
    this.name = 'HttpResponseError';
    this.response = response;
    this.status = response.status;
    this.headers = response.headers;
  }
}

/**
 * @internal Does this failure prove that nothing reached the server? Offline before sending, or a
 * connection that was never made (refused, DNS failed, connect timed out: Node reports these; a
 * browser's TypeError cannot tell, so there it is never proof). The codes are the core's
 * (core::history::NOT_SENT_CODES).
 */
export function provablyNotSent(error) {
  return error instanceof OfflineError || hasCode(error, provesNotSent);
}

/** What an origin's breaker counts as a failure: transient statuses and network errors, not the caller's own abort. */
function countsAgainstOrigin(e) {
  return e instanceof RetryableResponse || (isTransientError(e) && e?.name !== 'AbortError');
}

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
    const given = o.object(breakerOptions === undefined ? fetchDefaults().breaker : breakerOptions, 'BreakerRegistry');
    const opts = { isFailure: countsAgainstOrigin };
    for (const k of Object.keys(given)) if (k !== 'maxOrigins' && k !== 'pinned') opts[k] = given[k];
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

let sharedRegistry;
let sharedBudget;
/** `adaptive: true`: one RateLimiter per origin, process-wide (a rate is a property of the server). */
const sharedLimiters = new Map();

function urlOf(input) {
  const raw = typeof input === 'string' ? input : typeof input?.href === 'string' ? input.href : input?.url;
  if (typeof raw !== 'string') throw o.typeError('resilientFetch', 'input', 'a URL string, URL or Request', input);
  return new URL(raw, globalThis.location?.href);
}

/** @internal Validate and normalise resilientFetch options (also used by createCheckoutClient). */
export function compile(options) {
  const where = 'resilientFetch';
  const opts = o.object(options, where, true);
  const DEFAULT_RETRY = fetchDefaults().retry;
  const r = opts.retry === undefined ? DEFAULT_RETRY : o.object(opts.retry, where);
  const retry = {
    maxAttempts: o.num(r, 'maxAttempts', where) ?? DEFAULT_RETRY.maxAttempts,
    baseDelayMs: o.num(r, 'baseDelayMs', where) ?? DEFAULT_RETRY.baseDelayMs,
    maxDelayMs: o.num(r, 'maxDelayMs', where) ?? DEFAULT_RETRY.maxDelayMs,
    jitter: JITTERS[o.oneOf(r, 'jitter', where, JITTERS, JITTERS.indexOf(DEFAULT_RETRY.jitter))],
    random: o.fn(r, 'random', where),
  };
  const attemptTimeoutMs = o.num(opts, 'attemptTimeoutMs', where);
  if (attemptTimeoutMs !== undefined && !(attemptTimeoutMs > 0)) throw o.rangeError(where, 'attemptTimeoutMs', 'a number > 0', attemptTimeoutMs);
  const deadlineMs = o.num(opts, 'deadlineMs', where);
  if (deadlineMs !== undefined && !(deadlineMs > 0)) throw o.rangeError(where, 'deadlineMs', 'a number > 0', deadlineMs);
  let breaker = o.own(opts, 'breaker');
  if (breaker !== undefined && breaker !== false && typeof breaker?.execute !== 'function' && !(breaker instanceof BreakerRegistry)) {
    throw o.typeError(where, 'breaker', 'a CircuitBreaker, a BreakerRegistry or false', breaker);
  }
  let budget = o.own(opts, 'budget');
  if (budget !== undefined && budget !== false && !(budget instanceof RetryBudget) && !(budget instanceof RetryQuota)) {
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
  return {
    fetch: o.fn(opts, 'fetch', where),
    retry,
    attemptTimeoutMs,
    deadlineMs,
    breaker,
    budget,
    rateLimiter,
    adaptive: adaptive === true,
    key,
    settleAfterMs,
    bufferBody,
    dialect,
    attemptHeader,
    onRetry: o.fn(opts, 'onRetry', where),
    hedge: o.own(opts, 'hedge') === undefined ? undefined : compileHedge(o.own(opts, 'hedge'), where),
  };
}

/**
 * @internal The settle window (see reconcile) for an unknown produced under these limits: the
 * core's rule (twice the longest an attempt could run).
 */
export function settleWindowFor(attemptTimeoutMs, deadlineMs) {
  return coreSettleAfterMs(attemptTimeoutMs ?? NaN, deadlineMs ?? NaN);
}

/** Throws fetch's own TypeError for a request fetch would refuse (bad method, header, URL) — before anything is sent. */
function checkRequest(url, method, headers) {
  if (typeof Request !== 'function') return;
  new Request(url.href, { method, headers });
}

/**
 * The process-wide limiter of `origin`. Bounded like BreakerRegistry (fetchDefaults().maxOrigins): URLs
 * built from client input must not grow memory without bound. Past the bound the oldest limiter
 * that never saw a throttle goes (it has learned nothing a new one would not); only when every
 * one is pacing does the oldest pacing one go.
 */
function limiterFor(origin) {
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

function attemptTimeout(ms) {
  return new DOMException(`attempt timed out after ${ms} ms`, 'TimeoutError');
}

/**
 * `fetch` with retries, a per-origin breaker, a shared budget, timeouts and idempotency keys.
 * Resolves with the final Response for any HTTP status (like fetch), untouched; rejects for network
 * failures, timeouts, aborts (with the signal's reason), an open circuit (CircuitOpenError), being
 * offline before sending (OfflineError), an exhausted budget, and with OutcomeUnknownError when a
 * keyed POST/PATCH may have been processed.
 */
export function resilientFetch(input, init, options) {
  return fetchWithState(input, init, options, {});
}

/**
 * @internal resilientFetch, reporting into `state`: `maybeSent` (some attempt may have reached the
 * server), `attempts` (fetch calls made), `lastAttemptAt` (when the last one started, or was aborted),
 * `history` (core::history, every attempt folded in: the verdict of the whole call, not of its last
 * answer). With `readBody`, the body of the answer that ends the call is read inside its attempt
 * (as `state.bodyText`), so the attempt timeout and the deadline cover a body that stalls.
 */
export async function fetchWithState(input, init, options, state, readBody = false) {
  const startedAt = Date.now();
  state.maybeSent = false;
  state.attempts = 0;
  state.lastAttemptAt = undefined;
  // A caller may carry a history in (the checkout client's failover: one charge, two endpoints).
  state.history = typeof state.history === 'number' ? state.history : 0;
  state.bodyText = undefined;
  state.replayed = false;
  // The key's first use, for the retention window: the caller's (a checkout charge started
  // earlier), else this call's first attempt.
  state.firstAttemptAt = state.keyFirstUsedAt;
  const c = compile(options);
  const url = urlOf(input);
  const doFetch = c.fetch ?? globalThis.fetch;
  const base = typeof Request === 'function' && input instanceof Request ? input : undefined;
  const reqInit = init === undefined ? {} : o.object(init, 'resilientFetch');
  const method = String(reqInit.method ?? base?.method ?? 'GET').toUpperCase();
  const headers = new Headers(base?.headers);
  new Headers(reqInit.headers).forEach((v, k) => headers.set(k, v));
  // The key's header is the dialect's (Idempotency-Key when none is named), in its syntax.
  const keyHeader = c.dialect?.header ?? 'Idempotency-Key';
  let key;
  if (c.key !== undefined) {
    key = c.key === 'auto' ? newIdempotencyKey() : c.key;
    headers.set(keyHeader, c.dialect === undefined ? key : c.dialect.headerValue(key, 'resilientFetch'));
  } else {
    // The raw key when the caller (the checkout client) set the header itself in the dialect's syntax.
    key = headers.has(keyHeader) ? (state.key ?? headers.get(keyHeader)) : undefined;
  }
  checkRequest(url, method, headers);
  // A ReadableStream body can be read once: it is sent once, unless bufferBody reads it into
  // memory first (then every attempt sends the same bytes).
  let body = reqInit.body;
  const streamed = typeof ReadableStream === 'function' && body instanceof ReadableStream;
  if (streamed && c.bufferBody) body = new Uint8Array(await new Response(body).arrayBuffer());
  const replayable = !streamed || c.bufferBody;
  const retryable = replayable && methodIsRetryable(method, key !== undefined);
  const callerSignal = reqInit.signal ?? base?.signal ?? undefined;
  const keyed = KEYED.has(method) && key !== undefined;
  // A redirect would turn a POST into a GET (301/302/303) whose 200 reads as a success that charged
  // nothing: a keyed request is never followed through one. It comes back as the 3xx answer (an
  // opaque redirect, status 0, in browsers), which proves this attempt was not processed.
  const fetchInit = keyed ? { ...reqInit, method, headers, redirect: 'manual' } : { ...reqInit, method, headers };
  if (reqInit.body !== undefined) fetchInit.body = body;
  if (streamed && c.bufferBody) delete fetchInit.duplex;
  // Rejections of the fetch call itself (not our abort): network errors, whatever their text.
  const fromFetch = new Set();

  const breaker =
    c.breaker === false
      ? undefined
      : typeof c.breaker?.execute === 'function'
        ? c.breaker
        : (c.breaker ?? (sharedRegistry ??= new BreakerRegistry())).get(url.origin);
  const budget = c.budget === false ? undefined : (c.budget ?? (sharedBudget ??= new RetryBudget(fetchDefaults().budget)));

  const attempt = async (ctx) => {
    const controller = new AbortController();
    const outer = ctx.signal ?? callerSignal;
    const onAbort = () => controller.abort(outer.reason);
    if (outer !== undefined) {
      if (outer.aborted) throw outer.reason;
      outer.addEventListener('abort', onAbort, { once: true });
    }
    // Offline before sending: nothing can leave, so nothing is sent (and nothing may be charged).
    if (globalThis.navigator?.onLine === false) throw new OfflineError();
    // Past the gateway's retention window a re-send would be a NEW charge: refused, when an
    // earlier attempt may have been processed (reconcile by lookup instead).
    if (
      keyed &&
      c.dialect !== undefined &&
      state.firstAttemptAt !== undefined &&
      historyVerdict(state.history) === VERDICT.UNKNOWN &&
      c.dialect.keyExpired(state.firstAttemptAt, Date.now())
    ) {
      throw new IdempotencyKeyExpiredError(key, { firstUsedAt: state.firstAttemptAt, retentionMs: c.dialect.retentionMs, dialect: c.dialect.name });
    }
    const cancelTimer = c.attemptTimeoutMs === undefined ? undefined : after(c.attemptTimeoutMs, () => controller.abort(attemptTimeout(c.attemptTimeoutMs)));
    try {
      const req = base !== undefined ? base.clone() : url.href;
      let response;
      state.attempts += 1;
      state.lastAttemptAt = Date.now();
      state.firstAttemptAt ??= state.lastAttemptAt;
      try {
        const sendInit = { ...copyInit(ctx, fetchInit, base?.cache), signal: controller.signal };
        if (c.attemptHeader !== undefined) {
          // Opt-in: the attempt number on the wire (1 = first), e.g. for the server's own resend_count.
          sendInit.headers = new Headers(sendInit.headers);
          sendInit.headers.set(c.attemptHeader, String(state.attempts));
        }
        response = await doFetch(req, sendInit);
      } catch (e) {
        // fetch rejects with a generic AbortError; report the reason we aborted with.
        if (controller.signal.aborted) {
          state.maybeSent = true;
          state.history = historyRecord(state.history, ANSWER.NO_ANSWER);
          // Browsers queue requests per host (6 connections) and may still send a queued request
          // just after its fetch was aborted (measured in all three engines: tests/browser/probe-engines.mjs):
          // the settle window counts from when the client let go, not from when it asked.
          state.lastAttemptAt = Date.now();
          throw controller.signal.reason;
        }
        const notSent = provablyNotSent(e);
        if (!notSent) state.maybeSent = true;
        state.history = historyRecord(state.history, notSent ? ANSWER.NOT_SENT : ANSWER.NO_ANSWER);
        fromFetch.add(e);
        throw e;
      }
      state.maybeSent = true;
      // A replayed error is the gateway's stored answer for this key: final, not transient.
      state.replayed = c.dialect?.isReplay(response.headers) ?? false;
      const transient = !response.ok && !state.replayed && isTransientResponse(response.status, response.headers.get('stripe-should-retry') ?? undefined);
      if (readBody && !transient) {
        // Read inside the attempt: its timeout and the deadline abort a body that stalls. A body
        // that does not arrive is no answer (a 2xx without its reference may still be a debit).
        try {
          state.bodyText = response.type === 'opaqueredirect' ? '' : await response.text();
        } catch (e) {
          state.history = historyRecord(state.history, ANSWER.NO_ANSWER);
          if (controller.signal.aborted) {
            state.lastAttemptAt = Date.now();
            throw controller.signal.reason;
          }
          fromFetch.add(e);
          throw e;
        }
      }
      state.history = historyRecord(state.history, c.dialect === undefined ? response.status : c.dialect.answerCode(response.status));
      if (response.ok) return response;
      if (transient) throw new RetryableResponse(response);
      return response;
    } finally {
      if (cancelTimer !== undefined) cancelTimer();
      if (outer !== undefined) outer.removeEventListener('abort', onAbort);
    }
  };

  const policy = {
    ...c.retry,
    maxAttempts: retryable ? c.retry.maxAttempts : 1,
    maxElapsedMs: c.deadlineMs,
    signal: callerSignal,
    budget,
    rateLimiter: c.rateLimiter ?? (c.adaptive ? limiterFor(url.origin) : undefined),
    isRetryable: (e) =>
      e instanceof RetryableResponse ||
      e instanceof OfflineError ||
      (!(callerSignal?.aborted && e === callerSignal.reason) && (fromFetch.has(e) || isTransientError(e))),
    onRetry: (info) => {
      // Free the connection of a response we will not return.
      if (info.error instanceof RetryableResponse) info.error.response.body?.cancel().catch(() => {});
      c.onRetry?.(info);
    },
  };
  if (policy.random === undefined) delete policy.random;
  if (policy.rateLimiter === undefined) delete policy.rateLimiter;
  // Hedging (lib/hedge.js): every copy is an `attempt` (same headers, same key, same history); a
  // cancelled copy may have reached the server, and is folded in the moment it is let go.
  if (c.hedge !== undefined) {
    policy.hedge = hedgeForRequest(c.hedge, retryable, method, () => {
      state.maybeSent = true;
      state.history = historyRecord(state.history, ANSWER.NO_ANSWER);
      state.lastAttemptAt = Date.now();
    });
  }

  // A keyed POST/PATCH whose history says some attempt may have been processed ends unknown,
  // whatever its last answer was: a 404 or 401 after a dropped attempt proves nothing about it.
  const unknown = (cause) =>
    new OutcomeUnknownError(key, startedAt, {
      cause,
      attempts: state.attempts,
      lastAttemptAt: state.lastAttemptAt,
      settleAfterMs: c.settleAfterMs ?? settleWindowFor(c.attemptTimeoutMs, c.deadlineMs),
    });
  const mayHaveBeenProcessed = () => keyed && historyVerdict(state.history) === VERDICT.UNKNOWN;
  let response;
  try {
    const run = () => withRetry(attempt, policy);
    response = await (breaker === undefined ? run() : breaker.execute(run));
  } catch (e) {
    const callerAbort = callerSignal?.aborted && e === callerSignal.reason;
    if (e instanceof IdempotencyKeyExpiredError) throw e;
    if (!callerAbort && mayHaveBeenProcessed()) throw unknown(e);
    if (e instanceof RetryableResponse) return e.response;
    throw e;
  }
  if (!response.ok && mayHaveBeenProcessed()) {
    response.body?.cancel().catch(() => {});
    throw unknown(new RetryableResponse(response));
  }
  return response;
}
