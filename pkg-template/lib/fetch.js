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
//
// What the options decide is compiled once per options object into a plan (fetch-plan.js); the
// per-origin breakers and limiters are origin.js's. This file sends one request under a plan.

import { historyRecord, methodIsKeyed, methodIsRetryable } from '../steadfast_core.js';
import { IdempotencyKeyExpiredError, OfflineError, OutcomeUnknownError, brand, isInstance } from './errors.js';
import { ANSWER, VERDICT, historyVerdict, isTransientResponse, provesNothingSent } from './classify.js';
import { retryWith } from './retry.js';
import { newIdempotencyKey } from './idempotency.js';
import * as o from './options.js';
import { after } from './clock.js';
import { CallerAborted, RetryableResponse, limiterFor } from './origin.js';
import { markFromFetch, planFor, retryPolicyOf } from './fetch-plan.js';

/** A Blob (or File): immutable, so every attempt sends the same bytes as it is. */
const isBlob = (v) => typeof Blob === 'function' && v instanceof Blob;

export { BreakerRegistry, adaptiveLimiterOrigins } from './origin.js';

/**
 * @internal Does this failure prove that nothing reached the server? Offline before sending, or a
 * connection that was never made (refused, DNS failed, connect timed out: Node reports these by
 * code, Deno in its message; a browser's TypeError cannot tell, so there it is never proof). The
 * rule is the core's (core::history::NOT_SENT_CODES, core::classify::message_proves_not_sent).
 */
export function provablyNotSent(error) {
  return isInstance(error, OfflineError) || provesNothingSent(error);
}

/** Throws fetch's own TypeError for a request fetch would refuse (bad method, header, URL) — before anything is sent. */
function checkRequest(url, method, headers) {
  if (typeof Request !== 'function') return;
  new Request(url.href, { method, headers });
}

function attemptTimeout(ms) {
  return new DOMException(`attempt timed out after ${ms} ms`, 'TimeoutError');
}

/** The URL of a fetch input: a string, a URL or a Request (relative to the page's location). */
function urlOf(input) {
  const raw = typeof input === 'string' ? input : typeof input?.href === 'string' ? input.href : input?.url;
  if (typeof raw !== 'string') throw o.typeError('resilientFetch', 'input', 'a URL string, URL or Request', input);
  return new URL(raw, globalThis.location?.href);
}

const utf8 = new TextDecoder();

/** Whether `fetch` resolved with a Response (this realm's, another's, or a library's): a status and readable headers. */
function isResponse(value) {
  try {
    return value !== null && typeof value === 'object' && typeof value.status === 'number' && typeof value.headers?.get === 'function';
  } catch {
    return false; // a getter that throws is not a Response either
  }
}

/** The TypeError for a `fetch` option that resolved with something else. */
function notAResponse(value) {
  return brand(new TypeError(`steadfast: the fetch option must resolve with a Response, got ${o.show(value)}`), 'INVALID_OPTION', { option: 'fetch' });
}

/** The error of a body longer than the reader takes (see bodyText). */
function bodyTooLong(max) {
  return new Error(`steadfast: the answer's body is longer than maxResponseBytes (${max} bytes): abandoned unread`);
}

/**
 * A response's body as text, as `response.text()` reads it (UTF-8), but at most `max` bytes of it:
 * a longer one (by its Content-Length, or as it streams in) is cancelled, which frees the
 * connection, and rejects (bodyTooLong). A body that is not a ReadableStream (another fetch's
 * Response) is read by its own text() and judged by its length.
 */
async function bodyText(response, max) {
  const body = response.body;
  if (max === Infinity) return response.text();
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > max) {
    cancel(body);
    throw bodyTooLong(max);
  }
  if (body === null || body === undefined) return '';
  if (typeof body.getReader !== 'function') {
    const text = await response.text();
    if (text.length > max) throw bodyTooLong(max); // UTF-16 units: never more than the UTF-8 bytes
    return text;
  }
  const reader = body.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      reader.cancel().catch(() => {});
      throw bodyTooLong(max);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return utf8.decode(chunks[0]);
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return utf8.decode(bytes);
}

/** Cancel a body nobody will read (if it can be). */
function cancel(body) {
  try {
    body?.cancel?.()?.catch?.(() => {});
  } catch {
    // a body already locked or gone frees nothing more
  }
}

/**
 * `fetch` with retries, a per-origin breaker, a shared budget, timeouts and idempotency keys.
 * Resolves with the final Response for any HTTP status (like fetch), untouched; rejects for network
 * failures, timeouts, aborts (with the signal's reason), an open circuit (CircuitOpenError), being
 * offline before sending (OfflineError), an exhausted budget, and with OutcomeUnknownError when a
 * keyed POST/PATCH may have been processed.
 */
export function resilientFetch(input, init, options) {
  let plan;
  try {
    plan = planFor(options);
  } catch (e) {
    return Promise.reject(e); // at call, as a rejection: the options' TypeError/RangeError
  }
  return fetchWithPlan(plan, input, init, {});
}

/**
 * @internal resilientFetch, reporting into `state`: `maybeSent` (some attempt may have reached the
 * server), `attempts` (fetch calls made), `lastAttemptAt` (when the last one started, or was aborted),
 * `history` (core::history, every attempt folded in: the verdict of the whole call, not of its last
 * answer). With `readBody`, the body of the answer that ends the call is read inside its attempt
 * (as `state.bodyText`), so the attempt timeout and the deadline cover a body that stalls; at most
 * `state.maxBodyBytes` of it (a longer one is abandoned: that attempt got no answer).
 * `state.onSend()`, when given, runs just before each fetch call (the checkout client's onAttempt).
 * `plan` is planFor(options) (resilientFetch) or compilePlan (the checkout client): compiled once, by the caller.
 */
export async function fetchWithPlan(plan, input, init, state, readBody = false) {
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
  const url = urlOf(input);
  const doFetch = plan.fetch ?? globalThis.fetch;
  const base = typeof Request === 'function' && input instanceof Request ? input : undefined;
  const reqInit = init === undefined ? {} : o.object(init, 'resilientFetch');
  const method = String(reqInit.method ?? base?.method ?? 'GET').toUpperCase();
  const headers = new Headers(base?.headers);
  new Headers(reqInit.headers).forEach((v, k) => headers.set(k, v));
  const keyHeader = plan.keyHeader;
  let key;
  if (plan.key !== undefined) {
    key = plan.key === 'auto' ? newIdempotencyKey() : plan.key;
    headers.set(keyHeader, plan.dialect === undefined ? key : plan.dialect.headerValue(key, 'resilientFetch'));
  } else {
    // The raw key when the caller (the checkout client) set the header itself in the dialect's syntax.
    key = headers.has(keyHeader) ? (state.key ?? headers.get(keyHeader)) : undefined;
  }
  checkRequest(url, method, headers);
  // A ReadableStream body can be read once: it is sent once, unless bufferBody reads it into
  // memory first (then every attempt sends the same bytes).
  let body = reqInit.body;
  const streamed = typeof ReadableStream === 'function' && body instanceof ReadableStream;
  if (streamed && plan.bufferBody) body = new Uint8Array(await new Response(body).arrayBuffer());
  const replayable = !streamed || plan.bufferBody;
  const retryable = replayable && methodIsRetryable(method, key !== undefined);
  const callerSignal = reqInit.signal ?? base?.signal ?? undefined;
  const keyed = key !== undefined && methodIsKeyed(method);
  // A keyed request sends the same bytes on every attempt: a body the caller can still change
  // between them (a typed array or ArrayBuffer, URLSearchParams, FormData) is read once, now, into
  // bytes of its own, with the content type fetch would have given it.
  if (keyed && retryable && body !== undefined && body !== null && typeof body !== 'string' && !isBlob(body) && !(streamed && plan.bufferBody)) {
    const read = new Request('http://body.invalid/', { method: 'POST', body });
    const type = read.headers.get('content-type');
    body = new Uint8Array(await read.arrayBuffer());
    if (type !== null && !headers.has('content-type')) headers.set('content-type', type);
  }
  // A redirect would turn a POST into a GET (301/302/303) whose 200 reads as a success that charged
  // nothing: a keyed request is never followed through one. It comes back as the 3xx answer (an
  // opaque redirect, status 0, in browsers), which proves this attempt was not processed.
  const fetchInit = keyed ? { ...reqInit, method, headers, redirect: 'manual' } : { ...reqInit, method, headers };
  if (reqInit.body !== undefined) fetchInit.body = body;
  if (streamed && plan.bufferBody) delete fetchInit.duplex;
  const breaker = plan.breaker ?? plan.registry?.get(url.origin);

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
      plan.dialect !== undefined &&
      state.firstAttemptAt !== undefined &&
      historyVerdict(state.history) === VERDICT.UNKNOWN &&
      plan.dialect.keyExpired(state.firstAttemptAt, Date.now())
    ) {
      throw new IdempotencyKeyExpiredError(key, { firstUsedAt: state.firstAttemptAt, retentionMs: plan.dialect.retentionMs, dialect: plan.dialect.name });
    }
    const cancelTimer =
      plan.attemptTimeoutMs === undefined ? undefined : after(plan.attemptTimeoutMs, () => controller.abort(attemptTimeout(plan.attemptTimeoutMs)));
    try {
      const req = base !== undefined ? base.clone() : url.href;
      let response;
      state.attempts += 1;
      state.lastAttemptAt = Date.now();
      state.firstAttemptAt ??= state.lastAttemptAt;
      try {
        const sendInit = { ...(plan.extras === undefined ? fetchInit : plan.extras.hedging.copyInit(ctx, fetchInit, base?.cache)), signal: controller.signal };
        if (plan.attemptHeader !== undefined) {
          // Opt-in: the attempt number on the wire (1 = first), e.g. for the server's own resend_count.
          sendInit.headers = new Headers(sendInit.headers);
          sendInit.headers.set(plan.attemptHeader, String(state.attempts));
        }
        state.onSend?.();
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
        markFromFetch(e);
        throw e;
      }
      state.maybeSent = true;
      // Something came back for a request that was sent: a `fetch` option that resolves with what
      // is not a Response (a wrapper's bug) gave an answer nobody can read. That attempt may have
      // been processed; the call rejects with a TypeError naming the option, not retried.
      if (!isResponse(response)) {
        state.history = historyRecord(state.history, ANSWER.NO_ANSWER);
        throw notAResponse(response);
      }
      // A replayed error is the gateway's stored answer for this key: final, not transient.
      state.replayed = plan.dialect?.isReplay(response.headers) ?? false;
      const transient = !response.ok && !state.replayed && isTransientResponse(response.status, response.headers.get('stripe-should-retry') ?? undefined);
      if (readBody && !transient) {
        // Read inside the attempt: its timeout and the deadline abort a body that stalls. A body
        // that does not arrive is no answer (a 2xx without its reference may still be a debit).
        try {
          state.bodyText = response.type === 'opaqueredirect' ? '' : await bodyText(response, state.maxBodyBytes ?? Infinity);
        } catch (e) {
          state.history = historyRecord(state.history, ANSWER.NO_ANSWER);
          if (controller.signal.aborted) {
            state.lastAttemptAt = Date.now();
            throw controller.signal.reason;
          }
          markFromFetch(e);
          throw e;
        }
      }
      state.history = historyRecord(state.history, plan.dialect === undefined ? response.status : plan.dialect.answerCode(response.status));
      if (response.ok) return response;
      if (transient) throw new RetryableResponse(response);
      return response;
    } finally {
      if (cancelTimer !== undefined) cancelTimer();
      if (outer !== undefined) outer.removeEventListener('abort', onAbort);
    }
  };

  const limiter = plan.rateLimiter ?? (plan.adaptive ? limiterFor(url.origin) : undefined);
  // Hedging (lib/hedge.js): every copy is an `attempt` (same headers, same key, same history); a
  // cancelled copy may have reached the server, and is folded in the moment it is let go. Its hook
  // is this request's, so a hedged request's policy is its own.
  const hedge =
    plan.hedge === undefined
      ? undefined
      : plan.extras.hedging.hedgeForRequest(plan.hedge, retryable, method, () => {
          state.maybeSent = true;
          state.history = historyRecord(state.history, ANSWER.NO_ANSWER);
          state.lastAttemptAt = Date.now();
        });

  // A keyed POST/PATCH whose history says some attempt may have been processed ends unknown,
  // whatever its last answer was: a 404 or 401 after a dropped attempt proves nothing about it.
  const unknown = (cause) =>
    new OutcomeUnknownError(key, startedAt, {
      cause,
      attempts: state.attempts,
      lastAttemptAt: state.lastAttemptAt,
      settleAfterMs: plan.settleAfterMs,
    });
  const mayHaveBeenProcessed = () => keyed && historyVerdict(state.history) === VERDICT.UNKNOWN;
  let response;
  try {
    const run = () => {
      let policy;
      try {
        o.signal({ signal: callerSignal }, 'signal', 'withRetry');
        policy = retryPolicyOf(plan, retryable, limiter);
        if (hedge !== undefined) policy = { ...policy, hedge };
      } catch (e) {
        return Promise.reject(e); // inside the breaker, as before: withRetry's own validation
      }
      return retryWith(attempt, policy, callerSignal, plan.extras);
    };
    // An origin's breaker (the registry's) is told when the call ended by the caller's own abort,
    // which says nothing about the origin; a breaker of the caller's own judges it by its rules.
    const judged =
      callerSignal === undefined || plan.registry === undefined
        ? run
        : () =>
            run().catch((e) => {
              throw callerSignal.aborted && e === callerSignal.reason ? new CallerAborted(e) : e;
            });
    response = await (breaker === undefined ? run() : breaker.execute(judged));
  } catch (caught) {
    const e = isInstance(caught, CallerAborted) ? caught.reason : caught;
    const callerAbort = callerSignal?.aborted && e === callerSignal.reason;
    if (isInstance(e, IdempotencyKeyExpiredError)) throw e;
    if (!callerAbort && mayHaveBeenProcessed()) throw unknown(e);
    if (isInstance(e, RetryableResponse)) return e.response;
    throw e;
  }
  if (!response.ok && mayHaveBeenProcessed()) {
    response.body?.cancel().catch(() => {});
    throw unknown(new RetryableResponse(response));
  }
  return response;
}
