// Why: "4xx is never retried". The rule (which statuses and network codes are transient, how to
// read Retry-After) lives in the Rust core; this file only digs the status, code and header out of
// whatever shape the error has (fetch Response, Node system error, undici's nested cause, ours).
// A browser's fetch network error has no code at all: a bare TypeError whose message depends on the
// engine (Cloudflare Workers': a plain Error). That list is here, once (see FETCH_NETWORK_MESSAGES).

import {
  historyRecord,
  historyVerdict,
  isTransientCode,
  isTransientResponse as coreIsTransientResponse,
  isTransientType,
  messageProvesNotSent,
  parseRetryAfter as coreParseRetryAfter,
  parseShouldRetry,
  provesNotSent,
} from '../steadfast_core.js';
import * as o from './options.js';
import { isSteadfastError } from './errors.js';
import { ANSWER, HISTORY_VERDICT as VERDICT, SHOULD_RETRY } from './wire.js';

/**
 * @internal The HTTP status an error carries (`status`, `statusCode`, `response.status`, got's
 * `response.statusCode`, or AWS SDK v3's `$metadata.httpStatusCode`), or undefined.
 */
export function statusOf(e) {
  if (e === null || typeof e !== 'object') return undefined;
  let s;
  try {
    s = e.status ?? e.statusCode ?? e.response?.status ?? e.response?.statusCode ?? e.$metadata?.httpStatusCode;
  } catch {
    return undefined; // a hostile getter or a revoked Proxy carries no status
  }
  return typeof s === 'number' ? s : undefined;
}

/**
 * Whether a status an error carries is a success: the head said 2xx and the error came after it
 * (axios's "stream has been aborted" and got's Content-Length mismatch carry the 200 of a body cut
 * off mid-stream). It is not the attempt's answer: the charge may well have gone through, and its
 * answer was lost.
 */
const isSuccess = (status) => status >= 200 && status <= 299;

/** An SDK's `type` naming a failure that may have been processed (the core's list: isTransientType). */
function hasTransientType(e) {
  const t = e.type;
  return typeof t === 'string' && isTransientType(t);
}

/**
 * The messages of the TypeError that `fetch` rejects with on a network error, by engine. None
 * carries a code, so the message is all there is. The same list as the `is-network-error` package
 * (used by ky and p-retry), with one deliberate difference: WebKit's "Load failed" is accepted with
 * or without a stack (is-network-error requires none, to avoid false positives; a false positive
 * here only parks a key as unknown or retries once more, while a false negative frees a key whose
 * charge may have gone through).
 */
const FETCH_NETWORK_MESSAGES = new Set([
  'Failed to fetch', // Chromium
  'network error', // Chromium, reading a body whose connection dropped
  'NetworkError when attempting to fetch resource.', // Firefox
  'Load failed', // WebKit (Safari 17+, WebKitGTK)
  'The Internet connection appears to be offline.', // Safari 16
  'The network connection was lost.', // Safari, older
  'fetch failed', // undici (Node's fetch); its cause holds the system error
  'terminated', // undici, a body cut off mid-stream
  'Network request failed', // cross-fetch / React Native
  ' A network error occurred.', // Bun (WebKit)
  'Network connection lost', // Cloudflare Workers, as is-network-error spells it
  'Network connection lost.', // Cloudflare Workers, as workerd spells it (there a plain Error: below)
]);

/**
 * Cloudflare Workers (workerd) rejects fetch, and a body read, with a plain `Error`, not a
 * TypeError, and no code: "Network connection lost." (with `retryable: true`) for a refused
 * connection, a reset, a body cut off mid-stream and an answer it cannot parse alike (a refused
 * connection cannot be told from a reset, so none of them proves nothing was sent), and
 * "internal error; reference = <id>" for a name that does not resolve (its reference differs per
 * failure, and an internal error is no proof of anything either: it reads as possibly sent).
 */
const WORKERD_NETWORK_MESSAGE = 'Network connection lost.';
const WORKERD_INTERNAL_ERROR = 'internal error; reference = ';

/**
 * TypeErrors whose message starts so: Deno's (hyper's words, no code). "error sending request for
 * url (…)" rejects the fetch call; "error reading a body from connection" rejects the read of a
 * body whose connection dropped after the head arrived (a 200 cut off mid-body: it may well have
 * been processed).
 */
const FETCH_NETWORK_PREFIXES = ['error sending request for url', 'error reading a body from connection'];

/**
 * Is this the error `fetch` (or the read of its body) rejects with on a network error, in any engine
 * (Chromium "Failed to fetch", Firefox "NetworkError when attempting to fetch resource.", WebKit
 * "Load failed", undici "fetch failed", Deno "error reading a body from connection", and
 * Cloudflare Workers' plain Error "Network connection lost.")? By name and message, across realms (a
 * worker's or an iframe's TypeError).
 * @param {unknown} error
 */
export function isFetchNetworkError(error) {
  if (error === null || typeof error !== 'object') return false;
  const e = /** @type {any} */ (error);
  let name;
  let message;
  try {
    if (Object.prototype.toString.call(e) !== '[object Error]') return false;
    ({ name, message } = e);
  } catch {
    return false; // a hostile getter or a revoked Proxy is not a network error
  }
  if (typeof message !== 'string') return false;
  if (name === 'Error') return message === WORKERD_NETWORK_MESSAGE || message.startsWith(WORKERD_INTERNAL_ERROR);
  if (name !== 'TypeError') return false;
  return FETCH_NETWORK_MESSAGES.has(message) || FETCH_NETWORK_PREFIXES.some((prefix) => message.startsWith(prefix));
}

/** How deep down `cause` the classifiers look (a forged error may point at itself). */
const CAUSE_DEPTH = 4;

/**
 * Is this error worth retrying? HTTP 408, 429, >= 500 (unless a `Stripe-Should-Retry` header on
 * `error.headers` / `error.response.headers` says otherwise); network codes such as ECONNRESET,
 * ETIMEDOUT, EAI_AGAIN, ECONNREFUSED and axios's ERR_NETWORK, ERR_CANCELED (also nested as
 * `cause.code`, or in a Stripe error's `detail`); a fetch network error (the engines' messages, see
 * isFetchNetworkError); timeouts and aborts (`TimeoutError`, `AbortError`: the request may have
 * reached the server); a payment SDK's `type` that the core lists (isTransientType: Stripe's
 * StripeConnectionError, Braintree's unexpectedError…). Every other 4xx is permanent. A 2xx status
 * on an error is no answer (a body cut off after the head): the error's code decides.
 * Steadfast's own errors: an unknown outcome, a deadline and a timeout() are transient; a budget
 * refusal is as transient as its cause; an open circuit and being offline are not (nothing was sent).
 * An error that says none of this is judged by its `cause`, a few levels down (a gateway function's
 * own error wrapping a timeout or a network error is as transient as what it wraps).
 * @param {unknown} error
 * @returns {boolean}
 */
export function isTransientError(error) {
  // An error that cannot be read may have been processed: the careful answer.
  return firstSaid(error, transientAt, true) ?? false;
}

/**
 * What the first error down the `cause` chain (from `error`, CAUSE_DEPTH at most, while `admits`
 * it) says, by `at` (undefined: that error says nothing); `unreadable` when reading one throws;
 * undefined when none says anything. Why the first: a gateway function that wraps what it caught
 * (an SDK's error, an app's) is judged by what it wrapped, unless it says something itself.
 */
function firstSaid(error, at, unreadable, admits = weakKey) {
  let e = error;
  for (let depth = 0; depth < CAUSE_DEPTH && admits(e); depth++) {
    let said;
    try {
      said = at(e);
    } catch {
      return unreadable;
    }
    if (said !== undefined) return said;
    e = causeOf(e);
  }
  return undefined;
}

/** Whether `v` is an object or a function: what a WeakMap can key, and what carries fields. */
function weakKey(v) {
  return v !== null && (typeof v === 'object' || typeof v === 'function');
}

/**
 * `e.cause` — or, with none, Stripe's `detail` (a StripeConnectionError keeps the network error it
 * met there, an Error) — or undefined when reading it throws (a hostile getter, a revoked Proxy).
 */
function causeOf(e) {
  try {
    const cause = e.cause;
    if (cause !== undefined) return cause;
    const detail = e.detail;
    return detail !== null && typeof detail === 'object' && Object.prototype.toString.call(detail) === '[object Error]' ? detail : undefined;
  } catch {
    return undefined;
  }
}

/** isTransientError for one error of the chain: true or false when it says, undefined when it says nothing. */
function transientAt(error) {
  const e = /** @type {any} */ (error);
  if (isSteadfastError(e)) {
    if (e.code === 'OUTCOME_UNKNOWN' || e.code === 'DEADLINE_EXCEEDED' || e.code === 'TIMEOUT') return true;
    if (e.code === 'RETRY_BUDGET_EXHAUSTED') return isTransientError(e.cause);
    return false;
  }
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return true;
  const status = statusOf(e);
  if (status !== undefined && !isSuccess(status)) return isTransientResponse(status, headerOf(e, 'stripe-should-retry'));
  if (hasCode(e, isTransientCode) || isFetchNetworkError(e) || hasTransientType(e)) return true;
  return undefined;
}

/** Whether `error` or a `cause` a few levels down has a string `field` that `test` accepts. */
function carries(error, field, test) {
  let cur = error;
  for (let depth = 0; depth < CAUSE_DEPTH && cur !== null && typeof cur === 'object'; depth++) {
    const value = cur[field];
    if (typeof value === 'string' && test(value)) return true;
    cur = causeOf(cur);
  }
  return false;
}

/**
 * @internal Whether `error` or a `cause` a few levels down carries a string `code` that `test`
 * accepts: undici's fetch throws TypeError('fetch failed', { cause: { code } }).
 */
export function hasCode(error, test) {
  try {
    return carries(error, 'code', test);
  } catch {
    return false; // a hostile getter or a revoked Proxy on the way carries no code
  }
}

/**
 * @internal Whether `error` or a `cause` a few levels down carries a string `message` that `test`
 * accepts: Deno's fetch throws TypeError('fetch failed', { cause: Error('error sending request …') }).
 * A hostile getter or a revoked Proxy on the way reads as no message.
 */
function hasMessage(error, test) {
  try {
    return carries(error, 'message', test);
  } catch {
    return false;
  }
}

/**
 * @internal Does this failure prove that nothing reached the server? The core decides from what the
 * error carries: a code (Node's ECONNREFUSED, ENOTFOUND…: `provesNotSent`) or, where the runtime names
 * no code, its words (Deno's refused connection, `client error (Connect): tcp connect error: …`:
 * `messageProvesNotSent`), on the error or a `cause` a few levels down. A browser's fetch error says
 * neither, so there it is never proof.
 */
export function provesNothingSent(error) {
  return hasCode(error, provesNotSent) || hasMessage(error, messageProvesNotSent);
}

/**
 * @internal Is an HTTP answer worth retrying? The core decides (`isTransientResponse`: the
 * server's own `Stripe-Should-Retry` verdict wins — a 409 "key in use" says true — else the status
 * rule); this only reads the header into its tri-state wire code, crossing a string only when the
 * header is there. Used for thrown errors here and for responses by resilientFetch.
 */
export function isTransientResponse(status, shouldRetryHeader) {
  const verdict = typeof shouldRetryHeader === 'string' ? parseShouldRetry(shouldRetryHeader) : SHOULD_RETRY.NONE;
  return coreIsTransientResponse(status, verdict);
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
  let v;
  try {
    if (typeof e.retryAfterMs === 'number' && e.retryAfterMs >= 0) return e.retryAfterMs;
    v = headerOf(e, 'retry-after');
  } catch {
    return NaN; // unreadable: no Retry-After
  }
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
 * classifier that throws cannot tell, and "unknown" is the safe answer (never a blind retry); so is
 * one that answers with a Promise (the store decides synchronously: it must not free a key on an
 * answer it cannot read).
 */
export function leavesOutcomeUnknown(isTransient, error) {
  try {
    const verdict = isTransient(error);
    return verdict === true || (verdict !== null && typeof verdict === 'object' && typeof verdict.then === 'function');
  } catch {
    return true;
  }
}

/**
 * @internal What one attempt showed, as the core's answer code (`core::history::answer_from_code`):
 * `ANSWER.NOT_SENT` provably not sent, `NO_ANSWER` (may have been processed), `REFUSED` without a status, or
 * the HTTP status. JS only digs the facts out of the error's shape; the core decides what they
 * mean. `retryable` (a thunk, read only for an error of no known shape) is the caller's
 * classifier: a failure it would retry may have been processed; one it would not was refused.
 */
export function answerOf(error, retryable) {
  // The first error down the `cause` chain that shows something decides; one that cannot be read
  // may have been processed.
  const said = firstSaid(error, (e) => answerAt(e, retryable), ANSWER.NO_ANSWER, isObject);
  return said ?? (retryable() ? ANSWER.NO_ANSWER : ANSWER.REFUSED);
}

const isObject = (v) => v !== null && typeof v === 'object';

/** answerOf for one error of the chain, or undefined when it shows nothing. */
function answerAt(error, retryable) {
  const e = /** @type {any} */ (error);
  if (isSteadfastError(e)) {
    switch (e.code) {
      case 'CIRCUIT_OPEN':
      case 'OFFLINE':
        return ANSWER.NOT_SENT;
      case 'RETRY_BUDGET_EXHAUSTED':
        return e.cause === undefined ? ANSWER.NOT_SENT : answerOf(e.cause, retryable);
      case 'OUTCOME_UNKNOWN':
      case 'DEADLINE_EXCEEDED':
      case 'TIMEOUT':
      case 'DUPLICATE_IN_FLIGHT':
        return ANSWER.NO_ANSWER;
      default:
        return ANSWER.REFUSED;
    }
  }
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return ANSWER.NO_ANSWER;
  const status = statusOf(e);
  if (status !== undefined) return isSuccess(status) ? ANSWER.NO_ANSWER : status;
  if (provesNothingSent(e)) return ANSWER.NOT_SENT;
  if (hasCode(e, isTransientCode) || isFetchNetworkError(e) || hasTransientType(e)) return ANSWER.NO_ANSWER;
  return undefined;
}

/** Error names `boundedErrorType` reports as themselves: the platform's own, a fixed set. */
const ERROR_NAMES = new Set(['Error', 'TypeError', 'RangeError', 'SyntaxError', 'AbortError', 'TimeoutError']);

/**
 * @internal A low-cardinality `error.type` for telemetry: a steadfast error's code, a known network
 * code (the core's transient and not-sent codes), an HTTP status, a platform error name — else
 * `'_OTHER'` (OpenTelemetry's value for the rest), so a hostile server's invented codes cannot
 * make unbounded metric series.
 */
export function boundedErrorType(error) {
  if (error === null || typeof error !== 'object') return typeof error;
  try {
    return errorTypeOf(/** @type {any} */ (error));
  } catch {
    return '_OTHER'; // unreadable (a hostile getter, a revoked Proxy)
  }
}

function errorTypeOf(e) {
  if (isSteadfastError(e) && typeof e.code === 'string') return e.code;
  if (typeof e.code === 'string' && (isTransientCode(e.code) || provesNotSent(e.code))) return e.code;
  const status = statusOf(e);
  if (Number.isInteger(status) && status >= 100 && status <= 599) return String(status);
  return typeof e.name === 'string' && ERROR_NAMES.has(e.name) ? e.name : '_OTHER';
}

// Answer codes of `answerOf` that are not statuses, and `historyVerdict`'s codes: the core's (lib/wire.js).
export { ANSWER, VERDICT };

/**
 * The histories of the errors `withRetry` gave up with: error -> the core's folded history of
 * every attempt of that call. Why a side channel: `store.run(key, () => withRetry(...))` (and
 * chargeCustomer, and pipeline) must judge the charge by all its attempts, and the store sees only
 * the last error. A WeakMap keeps the caller's error untouched and holds nothing alive. It is read
 * only for a run that has no record of its own (a retry started after an await); see STAINS for
 * why its last-writer-wins entry cannot free a key.
 */
const HISTORIES = new WeakMap();

/**
 * The run a store is starting, while its `fn` is being called (synchronously): a `withRetry` (or
 * checkout attempt) called then reports to it. Why: the WeakMap above is keyed by the error, and
 * two charges may end with one error object (a gateway that rejects with a shared constant): the
 * second would overwrite the first's history, and a charge that may have been processed would be
 * judged by the other's clean decline. A run's own record (see newRun) cannot be shared.
 */
let currentRun;

/**
 * Where a hedge started now reports the copies it lets go (see reportHedge): the innermost record
 * being started, a store's run (runningFor) or a `withRetry` call's attempt (reportingFor). Why a
 * record and not the error: see currentRun.
 */
let currentSink;

/**
 * A counter that orders records and stains (see STAINS): a record's `since` is taken when it is
 * made, before its call starts anything.
 */
let epoch = 0;

/**
 * @internal A store's record of one run: how its retry ended (`error`, `history`: rememberHistory),
 * the answers of the hedged copies it let go (`answers`: reportHedge), and `since` (see STAINS).
 */
export function newRun() {
  return { error: undefined, history: undefined, answers: undefined, since: ++epoch };
}

/**
 * @internal A `withRetry` call's record: the store run it belongs to (`run`, captured at its
 * synchronous start), the record it was started in (`parent`: an enclosing withRetry attempt, a
 * hedge's, a store run; see callFailed), the answers of the hedged copies its attempts let go
 * since the last failure was folded (`answers`), and `since`.
 */
export function newCall(run, parent) {
  return { run, parent, answers: undefined, since: ++epoch };
}

/**
 * @internal A `withRetry` call (newCall) gave up with `error` after `history`: remember it
 * (rememberHistory), and, when some attempt may have been processed, report that to the record it
 * was started in (`call.parent`) as one attempt that got no answer. Why: the enclosing layer (an
 * outer withRetry, a hedge racing this call as one copy, a resilientFetch inside a retried
 * function) judges this call by the error it ended with, one answer; a timeout before a final
 * decline would be forgotten, and a key that may have been charged freed. Only ever adds "may have
 * been processed".
 */
export function callFailed(call, error, history) {
  rememberHistory(error, history, call.run);
  const verdict = historyVerdict(history);
  if (call.parent !== undefined && (verdict === VERDICT.UNKNOWN || verdict === VERDICT.DONE)) reportHedge(call.parent, error, [ANSWER.NO_ANSWER]);
}

/**
 * @internal Call `fn` with `run` (newRun) as the run being started, and as where a hedge started
 * now reports.
 */
export function runningFor(run, fn) {
  return resumingFor(run, run, fn);
}

/**
 * @internal Call `fn` with `run` and `sink` as the run being started and where a hedge reports:
 * layers that await before calling on (a shared breaker, a bulkhead) capture both with
 * currentRunOf() and currentSinkOf() at their start, and resume them with this.
 */
export function resumingFor(run, sink, fn) {
  const outerRun = currentRun;
  const outerSink = currentSink;
  currentRun = run;
  currentSink = sink;
  try {
    return fn();
  } finally {
    currentRun = outerRun;
    currentSink = outerSink;
  }
}

/**
 * @internal Make `sink` where a hedge started now reports; returns the one it replaces, which the
 * caller puts back (in a `finally`) once its synchronous call returned. reportingFor as two small
 * calls, for a hot path: a wrapper around the call itself costs more than the call of a success.
 */
export function swapSink(sink) {
  const outer = currentSink;
  currentSink = sink;
  return outer;
}

/** @internal `fn(arg)` with `sink` (a newCall or newRun record) as where a hedge started now reports. */
export function reportingFor(sink, fn, arg) {
  const outer = swapSink(sink);
  try {
    return fn(arg);
  } finally {
    swapSink(outer);
  }
}

/** @internal The run being started (see runningFor), or undefined. Read it synchronously, at a call's start. */
export function currentRunOf() {
  return currentRun;
}

/** @internal Where a hedge started now reports (see currentSink), or undefined. Read it synchronously. */
export function currentSinkOf() {
  return currentSink;
}

/**
 * @internal Remember the history of the call that ended with `error`: in `run` (the store's record
 * of the run it belongs to) when there is one, and by the error (objects only). A call with no run
 * (a retry started after an await) that may have been processed also stains its error: another
 * call ending with the same object may overwrite its entry here before its run reads it (STAINS).
 */
export function rememberHistory(error, history, run) {
  if (run !== undefined) {
    run.error = error;
    run.history = history;
  }
  if (weakKey(error)) {
    HISTORIES.set(error, history);
    if (run === undefined) stain(error, history);
  }
}

/** @internal The history remembered for `error`, or undefined. */
export function historyOf(error) {
  return weakKey(error) ? HISTORIES.get(error) : undefined;
}

/**
 * Errors that ended a call with no record to report to (a hedge or a retry started after an await,
 * when no run or attempt is being started) while it may have been processed -> the epoch of the
 * latest such end. With HISTORIES, the one path keyed by the error; why it cannot free a key:
 * - a stain only ever adds "no answer" (may have been processed) to a history, and the core's flags
 *   only accumulate: folded in, it can make a verdict unknown, never free one;
 * - a stain is never removed or lowered (a later one only raises its epoch), so no other call
 *   ending with the same object can erase it before the call it belongs to is judged;
 * - that call's record (its store run, its withRetry) was made before the call started anything,
 *   so its `since` is below the stain's epoch, and it reads the stain.
 * What it costs: another record open at that time that ends with the very same object (a shared
 * constant) is parked too, the safe side. A record made after the stain never reads it.
 */
const STAINS = new WeakMap();

/**
 * @internal A hedged attempt that failed with `error` let go or saw these other copies (answer
 * codes, core::history): fold them into `sink` (the newRun or newCall record that started the
 * hedge), or, with none, stain the error when they may have been processed.
 */
export function reportHedge(sink, error, answers) {
  if (sink !== undefined) {
    if (sink.answers === undefined) sink.answers = answers;
    else sink.answers.push(...answers);
    return;
  }
  if (!weakKey(error)) return;
  let h = 0;
  for (const a of answers) h = historyRecord(h, a);
  stain(error, h);
}

/** Stain `error` (an object) when `history` may have been processed (see STAINS). */
function stain(error, history) {
  if (historyVerdict(history) === VERDICT.UNKNOWN) STAINS.set(error, ++epoch);
}

/**
 * @internal Fold into `history` what `record` (newRun or newCall) holds for a failure with `error`:
 * the hedged copies reported to it since the last fold (taken out), and a stain on the error made
 * while the record was open.
 */
export function foldReported(history, record, error) {
  const answers = record.answers;
  if (answers !== undefined) {
    record.answers = undefined;
    for (const a of answers) history = historyRecord(history, a);
  }
  if (weakKey(error)) {
    const stained = STAINS.get(error);
    if (stained !== undefined && stained > record.since) history = historyRecord(history, ANSWER.NO_ANSWER);
  }
  return history;
}

/** @internal Fold one failed attempt into `history` (a plain number; 0 = no attempt yet). */
export function recordAttempt(history, error, retryable) {
  return historyRecord(history, answerOf(error, retryable));
}

export { historyVerdict };

/**
 * @internal How a failed run ends, by its whole history (VERDICT): the history reported to the
 * run's own record (`run`, see runningFor) for this error, else the one `withRetry` remembered for
 * the error, else the error judged as one attempt; with the copies a hedge started by the run
 * itself let go, and a stain on the error (see STAINS). A classifier the caller gave the store
 * (`isTransient`) may only make it more careful: if it calls the error transient, the key is
 * parked whatever the shape says.
 */
export function failedRunVerdict(error, isTransient, userClassifier, run) {
  // The classifier is asked at most once, whoever needs its answer first.
  let transient;
  const classified = () => (transient ??= leavesOutcomeUnknown(isTransient, error));
  const own = run !== undefined && run.history !== undefined && run.error === error ? run.history : undefined;
  let history = own ?? historyOf(error) ?? recordAttempt(0, error, classified);
  if (run !== undefined) history = foldReported(history, run, error);
  const verdict = historyVerdict(history);
  if (verdict !== VERDICT.UNKNOWN && userClassifier && classified()) return VERDICT.UNKNOWN;
  return verdict;
}
