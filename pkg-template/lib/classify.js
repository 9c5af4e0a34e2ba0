// Why: "4xx is never retried". The rule (which statuses and network codes are transient, how to
// read Retry-After) lives in the Rust core; this file only digs the status, code and header out of
// whatever shape the error has (fetch Response, Node system error, undici's nested cause, ours).

import { isTransientStatus, isTransientCode, parseRetryAfter as coreParseRetryAfter, parseShouldRetry } from '../steadfast_core.js';
import * as o from './options.js';
import { isSteadfastError } from './errors.js';

function statusOf(e) {
  const s = e.status ?? e.statusCode ?? e.response?.status;
  return typeof s === 'number' ? s : undefined;
}

/**
 * Is this error worth retrying? HTTP 408, 429, >= 500 (unless a `Stripe-Should-Retry` header on
 * `error.headers` / `error.response.headers` says otherwise); network codes such as ECONNRESET,
 * ETIMEDOUT, EAI_AGAIN, ECONNREFUSED (also nested as `cause.code`); timeouts and aborts
 * (`TimeoutError`, `AbortError`: the request may have reached the server). Every other 4xx is
 * permanent. Steadfast's own errors: an unknown outcome, a deadline and a timeout() are transient; a budget
 * refusal is as transient as its cause; an open circuit is not (nothing was sent).
 * @param {unknown} error
 * @returns {boolean}
 */
export function isTransientError(error) {
  if (error === null || (typeof error !== 'object' && typeof error !== 'function')) return false;
  const e = /** @type {any} */ (error);
  if (isSteadfastError(e)) {
    if (e.code === 'OUTCOME_UNKNOWN' || e.code === 'DEADLINE_EXCEEDED' || e.code === 'TIMEOUT') return true;
    if (e.code === 'RETRY_BUDGET_EXHAUSTED') return isTransientError(e.cause);
    return false;
  }
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return true;
  const status = statusOf(e);
  if (status !== undefined) return isTransientResponse(status, headerOf(e, 'stripe-should-retry'));
  return hasCode(e, isTransientCode);
}

/**
 * @internal Whether `error` or a `cause` a few levels down carries a string `code` that `test`
 * accepts: undici's fetch throws TypeError('fetch failed', { cause: { code } }).
 */
export function hasCode(error, test) {
  let cur = error;
  for (let depth = 0; depth < 4 && cur !== null && typeof cur === 'object'; depth++) {
    if (typeof cur.code === 'string' && test(cur.code)) return true;
    cur = cur.cause;
  }
  return false;
}

/**
 * @internal Is an HTTP answer worth retrying? The server's own verdict (`Stripe-Should-Retry`)
 * wins — a 409 "key in use" says true — else the status rule. Used for thrown errors here and for
 * responses by resilientFetch, so both follow one rule.
 */
export function isTransientResponse(status, shouldRetryHeader) {
  const verdict = typeof shouldRetryHeader === 'string' ? parseShouldRetry(shouldRetryHeader) : 0;
  return verdict === 0 ? isTransientStatus(status) : verdict === 2;
}

function header(h, name) {
  if (h === null || typeof h !== 'object') return undefined;
  if (typeof h.get === 'function') return h.get(name) ?? undefined;
  return h[name];
}

/** A header an error carries, on `error.headers` or `error.response.headers` (Headers or a plain object). */
function headerOf(e, name) {
  return header(e.headers, name) ?? header(e.response?.headers, name);
}

/**
 * The Retry-After an error carries, in ms (NaN when none): `error.retryAfterMs`, or a
 * `retry-after` header on `error.headers` / `error.response.headers` (delta-seconds or HTTP-date).
 */
export function retryAfterMsOf(error, nowMs) {
  if (error === null || typeof error !== 'object') return NaN;
  const e = /** @type {any} */ (error);
  if (typeof e.retryAfterMs === 'number' && e.retryAfterMs >= 0) return e.retryAfterMs;
  const v = headerOf(e, 'retry-after');
  return typeof v === 'string' ? coreParseRetryAfter(v, nowMs) : NaN;
}

/** A Retry-After header value (delta-seconds or HTTP-date) in ms from `nowMs`; NaN if unparseable. */
export function parseRetryAfter(value, nowMs) {
  if (typeof value !== 'string') throw o.typeError('parseRetryAfter', 'value', 'a string', value);
  if (typeof nowMs !== 'number') throw o.typeError('parseRetryAfter', 'nowMs', 'a number', nowMs);
  return coreParseRetryAfter(value, nowMs);
}

/**
 * @internal Whether a failed run's error leaves its outcome unknown, by the store's `isTransient`. A
 * classifier that throws cannot tell, and "unknown" is the safe answer (never a blind retry).
 */
export function leavesOutcomeUnknown(isTransient, error) {
  try {
    return isTransient(error) === true;
  } catch {
    return true;
  }
}
