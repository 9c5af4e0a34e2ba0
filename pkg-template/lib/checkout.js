// Why: a checkout button is where double charges are born (double clicks, reloads, timeouts). The
// client makes one key per logical charge, sends it on every attempt (and to the secondary
// endpoint on failover), and answers with an outcome a UI can show, for everything the network or
// the gateway can do: succeeded, declined, unknown (money may have moved: show "we're checking",
// never "try again") or unavailable (provably nothing was sent: open circuit, offline, connection
// refused; the key is free). Only programming errors reject. `reconcile()` gets a cart out of
// unknown by re-sending the SAME key: a gateway that honours keys replays the first outcome,
// processes it once, or answers 409 while it is still running (then it stays unknown).
//
// Shape: createCheckoutClient validates its options once into a client state (one fetch plan per
// endpoint, see fetch-plan.js); every function below works on that state. What an answer or a
// failure means is checkout-outcome.js's (pure functions).

import { failedVerdictWaitMs, historyMayHaveBeenProcessed, historyRecord } from '../steadfast_core.js';
import { RetryBudget } from './budget.js';
import { IdempotencyStore, newIdempotencyKey } from './idempotency.js';
import { CircuitOpenError, IdempotencyKeyExpiredError, IdempotencyKeyReuseError, OutcomeUnknownError, fieldOf, isInstance } from './errors.js';
import { compileDialect, defaultDialectName } from './dialect.js';
import { fetchWithPlan } from './fetch.js';
import { BreakerRegistry, originOf } from './origin.js';
import { breakerKind, compilePlan } from './fetch-plan.js';
import { ANSWER, VERDICT, currentRunOf, historyVerdict, rememberHistory } from './classify.js';
import * as o from './options.js';
import { canonicalCharge, volatileFields } from './canonical.js';
import { fetchDefaults } from './defaults.js';
import { coreUnavailable } from './loader.js';
import { checkCharge } from './charge-shape.js';
import { storeNow } from './clock.js';
import {
  CheckoutRequestError,
  Declined,
  UNAVAILABLE_RETRY_MS,
  Unavailable,
  UnknownEndpointError,
  answerOutcome,
  failureOutcome,
  parseBody,
  unavailableFor,
  unknownRetryAfterMs,
} from './checkout-outcome.js';

export { CheckoutRequestError, UnknownEndpointError };

/** Internal: the caller's own abort, already classified for the store; `charge()` rejects with the signal's reason. */
const ABORTED = new WeakSet();

/** createCheckoutClient's option names (CheckoutClientOptions in types/http.d.ts): a name near one is a typo. */
const CLIENT_OPTIONS = [
  'endpoint',
  'secondaryEndpoint',
  'fetch',
  'retry',
  'breaker',
  'volatileFields',
  'budget',
  'rateLimiter',
  'adaptive',
  'store',
  'dialect',
  'attemptHeader',
  'attemptTimeoutMs',
  'deadlineMs',
  'maxResponseBytes',
  'settleAfterMs',
  'onAttempt',
];
/** charge()'s option names. */
/** Options of resilientFetch that a checkout client does not take, with what to use instead. */
const NOT_CLIENT_OPTIONS = Object.freeze({ hedge: 'nothing: a checkout client does not hedge' });
const CHARGE_OPTIONS = ['idempotencyKey', 'signal', 'maybeProcessed'];
/**
 * @internal A charge option (persistentCheckoutKey's): `(url) => void`, called with the endpoint
 * each request of the charge is about to go to, before it is sent. A store that outlives the page
 * records it, so a charge interrupted there is resumed there, never at the other endpoint. What it
 * throws fails the charge before that request is sent.
 */
export const SENDING = Symbol.for('steadfast.sending');
/** charge()'s `maybeProcessed` fields. */
const MAYBE_PROCESSED_FIELDS = ['lastAttemptAt', 'firstUsedAt', 'endpoint'];

/**
 * A URL as a URL parser writes it (scheme and host lower-cased, a default port dropped, relative to
 * the page when there is one), so two spellings of one endpoint compare equal; a text no parser
 * reads is compared as is.
 */
function normalUrl(url) {
  try {
    return new URL(url, globalThis.location?.href).href;
  } catch {
    return url;
  }
}

/**
 * The URL of this client's to send a key to that may have been processed at `recorded` (a record's
 * or the caller's `endpoint`): the primary or the secondary, compared as URLs; the primary when
 * nothing was recorded; undefined when it names neither (never sent elsewhere: another gateway
 * would charge it a second time).
 */
function endpointFor(client, recorded) {
  if (recorded === undefined) return client.endpoint;
  const url = normalUrl(String(recorded));
  if (url === client.endpointUrl) return client.endpoint;
  if (client.secondary !== undefined && url === client.secondaryUrl) return client.secondary;
  return undefined;
}

function unknownEndpoint(client, key, recorded) {
  const error = new UnknownEndpointError(key, String(recorded), client.secondary === undefined ? [client.endpoint] : [client.endpoint, client.secondary]);
  return { status: 'unknown', key, reason: 'unknown-endpoint', retryAfterMs: Infinity, error };
}

/** A URL string from a string or anything with a string `href` (URL). */
function href(v) {
  if (typeof v === 'string') return v;
  return v !== null && typeof v === 'object' && typeof v.href === 'string' ? v.href : undefined;
}

/**
 * A checkout client over `resilientFetch`. See index.d.ts for every option and default.
 */
export function createCheckoutClient(options) {
  if (coreUnavailable('createCheckoutClient') !== undefined) return clientBeforeCore(options);
  const client = clientState(options);
  return {
    /** The store holding this client's keys (for reconciliation). */
    store: client.store,
    /**
     * The text a charge's key is bound to, as this client computes it (canonical JSON of the charge
     * without its volatile fields): what `persistentCheckoutKey` compares a resumed cart against.
     */
    fingerprint(charge) {
      return requestOf(client, charge, 'fingerprint').fingerprint;
    },
    /**
     * Charge once per key. A second call with the same key while the first is in flight returns
     * the same promise (a double click charges once); after it settles, a succeeded key replays
     * and an unknown key answers unknown without sending anything.
     */
    charge(charge, chargeOptions) {
      return chargeOnce(client, charge, chargeOptions);
    },
    /**
     * Get unknown charges out of unknown by re-sending each with the SAME key (see index.d.ts).
     * With a key: that charge's outcome; without: every unknown key of the store, in order.
     */
    reconcile(key, charge) {
      return key === undefined ? reconcileAll(client) : reconcileKey(client, key, charge);
    },
  };
}

/**
 * The client's state from its options, every option validated here (bad options throw at
 * construction): endpoints, store, dialect, volatile fields, the settle window, and one fetch plan
 * per endpoint (compiled now, never per charge).
 */
function clientState(options) {
  const where = 'createCheckoutClient';
  // `hedge` is resilientFetch's and withRetry's: here it would be ignored, so it is refused.
  const opts = o.misspelt(o.object(options, where), CLIENT_OPTIONS, where, NOT_CLIENT_OPTIONS);
  const endpoint = href(opts.endpoint);
  if (endpoint === undefined) throw o.typeError(where, 'endpoint', 'a URL string or URL', opts.endpoint);
  const secondary = opts.secondaryEndpoint === undefined ? undefined : href(opts.secondaryEndpoint);
  if (opts.secondaryEndpoint !== undefined && secondary === undefined) {
    throw o.typeError(where, 'secondaryEndpoint', 'a URL string or URL', opts.secondaryEndpoint);
  }
  const fetchImpl = o.fn(opts, 'fetch', where);
  const store = o.own(opts, 'store') ?? new IdempotencyStore();
  if (typeof store?.run !== 'function') throw o.typeError(where, 'store', 'an IdempotencyStore (an object with run())', store);
  const budget = opts.budget ?? new RetryBudget(fetchDefaults().budget);
  // A single CircuitBreaker guards the primary only; the secondary always has its own (a dead
  // primary must not block the failover path), from the registry. `breaker: false`: none at all.
  const kind = breakerKind(opts.breaker);
  const primaryBreaker = kind === 'single' ? opts.breaker : undefined;
  const registry =
    kind === 'none' ? undefined : kind === 'registry' ? opts.breaker : new BreakerRegistry(kind === 'other' ? o.object(opts.breaker, where) : undefined);
  // The endpoints this client names are pinned in the registry (a shared one included): URLs that
  // other code fetches through it can never evict the breaker of the payment gateway.
  for (const url of primaryBreaker === undefined ? [endpoint, secondary] : [secondary]) {
    const origin = url === undefined ? undefined : originOf(url);
    if (origin !== undefined) registry?.pin(origin);
  }
  const attemptTimeoutMs = o.num(opts, 'attemptTimeoutMs', where) ?? fetchDefaults().checkoutAttemptTimeoutMs;
  const deadlineMs = o.num(opts, 'deadlineMs', where);
  // The most of a body the client reads: a gateway (or a proxy) that streams without end would
  // otherwise grow the page until it crashes mid-charge.
  const maxResponseBytes = o.num(opts, 'maxResponseBytes', where) ?? fetchDefaults().checkoutMaxResponseBytes;
  if (!Number.isSafeInteger(maxResponseBytes) || maxResponseBytes < 1) throw o.rangeError(where, 'maxResponseBytes', 'an integer >= 1', maxResponseBytes);
  const onAttempt = o.fn(opts, 'onAttempt', where);
  // Top-level charge fields that are sent but do not identify the charge (left out of its fingerprint).
  const volatile = volatileFields(o.own(opts, 'volatileFields'), where);
  // The settle window an unknown keeps (see reconcile): the caller's own bound on how late its
  // gateway may still process a request, else the core's default from the time limits (the plan's).
  const givenSettle = o.num(opts, 'settleAfterMs', where);
  if (givenSettle !== undefined && !(givenSettle >= 0)) throw o.rangeError(where, 'settleAfterMs', 'a number >= 0', givenSettle);
  // How the gateway speaks idempotency: the key's header and syntax, in progress, reuse, replay, retention.
  const dialect = compileDialect(o.own(opts, 'dialect') ?? defaultDialectName(), where);
  // Retry/budget/timeouts validated now, with the rules resilientFetch applies: one plan per
  // endpoint, the primary's through the caller's own breaker when it gave one.
  const fetchOptions = {
    dialect,
    retry: opts.retry,
    budget,
    attemptTimeoutMs,
    deadlineMs,
    settleAfterMs: givenSettle,
    rateLimiter: opts.rateLimiter,
    adaptive: opts.adaptive,
    attemptHeader: o.own(opts, 'attemptHeader'),
    fetch: fetchImpl ?? ((...a) => globalThis.fetch(...a)),
  };
  const primaryPlan = compilePlan({ ...fetchOptions, breaker: primaryBreaker ?? registry ?? false }, undefined, where);
  const secondaryPlan = primaryBreaker === undefined ? primaryPlan : compilePlan({ ...fetchOptions, breaker: registry ?? false }, undefined, where);
  return {
    endpoint,
    secondary,
    endpointUrl: normalUrl(endpoint),
    secondaryUrl: secondary === undefined ? undefined : normalUrl(secondary),
    store,
    dialect,
    volatile,
    onAttempt,
    maxResponseBytes,
    settleAfterMs: primaryPlan.settleAfterMs,
    /** The plan of a URL this client posts to: the caller's own breaker guards the primary only. */
    planOf: (url) => (url === endpoint ? primaryPlan : secondaryPlan),
    /** key -> { promise, fingerprint } of the call in flight for it. */
    inFlight: new Map(),
    /** key -> the request (requestOf) sent under it, while its outcome is unknown (what reconcile() re-sends). */
    unknownCharges: new Map(),
  };
}

/**
 * The request a charge is sent as, fixed when the caller hands it over: its body text (what every
 * attempt, the failover and reconcile() send, byte for byte) and the fingerprint its key is bound
 * to, both from the same moment. Whatever the caller does to the object afterwards (a cart edited
 * while the first attempt waits for the store), the key only ever carries this request. The
 * fingerprint is checked against the body as JSON reads it back: a charge whose fields and JSON
 * text disagree (a Proxy that answers each read differently) is refused, never sent.
 */
function requestOf(client, charge, where) {
  const c = checkCharge(charge, where);
  const fingerprint = canonicalCharge(c, client.volatile, where);
  const body = JSON.stringify(c);
  if (canonicalCharge(JSON.parse(body), client.volatile, where) !== fingerprint) {
    throw o.typeError(where, 'charge', 'plain JSON data (its fields read differently from the JSON text sent)', charge);
  }
  return { body, fingerprint };
}

/**
 * One resilientFetch to `url`, its answer's body read inside the attempt (so the attempt timeout
 * and the deadline cover a body that stalls); folds what it sent into `sent` (across primary and
 * secondary): attempts, the last attempt's time, the charge's history (core::history) and the
 * endpoint where it may have been processed.
 */
async function post(client, url, body, key, signal, sent) {
  const { dialect, onAttempt } = client;
  sent.onSending?.(String(url));
  const state = { history: sent.history, key, keyFirstUsedAt: sent.firstUsedAt, maxBodyBytes: client.maxResponseBytes };
  if (onAttempt !== undefined) state.onSend = () => onAttempt({ attempt: sent.attempts + state.attempts, key, url: String(url) });
  const before = historyVerdict(sent.history) === VERDICT.UNKNOWN;
  try {
    const response = await fetchWithPlan(
      client.planOf(url),
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', [dialect.header]: dialect.headerValue(key, 'charge') }, body, signal },
      state,
      true,
    );
    return { response, text: state.bodyText };
  } finally {
    sent.maybeSent ||= state.maybeSent === true;
    sent.attempts += state.attempts ?? 0;
    sent.replayed = state.replayed === true;
    if (typeof state.history === 'number') sent.history = state.history;
    if (state.lastAttemptAt !== undefined) sent.lastAttemptAt = state.lastAttemptAt;
    if (!before && historyVerdict(sent.history) === VERDICT.UNKNOWN) sent.endpoint = String(url);
  }
}

function unknownError(client, key, startedAt, sent, cause) {
  const lastAttemptAt = sent.lastAttemptAt ?? sent.prior?.lastAttemptAt;
  const e = new OutcomeUnknownError(key, startedAt, { cause, attempts: sent.attempts, lastAttemptAt, settleAfterMs: client.settleAfterMs });
  const endpoint = sent.endpoint ?? sent.prior?.endpoint;
  if (endpoint !== undefined) e.endpoint = endpoint;
  return e;
}

/**
 * Whether the whole history of a charge says it may have been processed: an attempt of this call,
 * or one before it (`sent.prior`: an earlier page's, or the attempt reconcile() re-sends).
 */
function mayHaveBeenProcessed(sent) {
  return sent.prior !== undefined || historyVerdict(sent.history) === VERDICT.UNKNOWN;
}

/**
 * Classify a failure of the HTTP calls by the charge's whole history: unknown if any attempt may
 * have been processed, unavailable if provably none was.
 */
function failure(client, e, key, startedAt, sent, signal) {
  const unknown = mayHaveBeenProcessed(sent);
  if (signal?.aborted && e === signal.reason) {
    const classified = unknown ? unknownError(client, key, startedAt, sent, e) : new Unavailable('aborted', 0);
    ABORTED.add(classified);
    return classified;
  }
  // resilientFetch's own OutcomeUnknownError knows its attempts but not this client's settle
  // window (nor the attempts made at the other endpoint): restate it with both.
  if (isInstance(e, OutcomeUnknownError)) return unknownError(client, key, startedAt, sent, e.cause);
  if (unknown) return unknownError(client, key, startedAt, sent, e);
  return unavailableFor(e, sent.maybeSent, Date.now()) ?? e;
}

/**
 * One charge over HTTP: to `only` (reconciliation: the endpoint that may have processed the
 * key), or to the primary with failover to the secondary — the SAME key, and only while nothing
 * sent to the primary may have been processed (a key the primary may hold is never sent
 * elsewhere). Every error it throws carries the charge's history for the store.
 *
 * `prior` (reconcile(), or charge()'s `maybeProcessed`): an earlier attempt under this key may have
 * been processed, last at `prior.lastAttemptAt` (undefined: not known), at `prior.endpoint`. The
 * history then starts as "may have been processed": only a success settles the key, or a decline
 * when the settle window had passed since that attempt before this one was sent (a gateway that
 * honours keys would have replayed an earlier debit instead). With the time not known, the window
 * counts from this send: a decline now leaves the key unknown, and a reconcile() after the window
 * can settle it. Any other answer, or none, leaves it unknown.
 */
async function attemptCharge(client, body, key, signal, only, firstUsedAt, prior, onSending) {
  const owner = currentRunOf(); // the store run this charge belongs to: its history goes there
  const startedAt = Date.now();
  const sent = {
    maybeSent: false,
    attempts: 0,
    lastAttemptAt: undefined,
    history: 0,
    endpoint: undefined,
    firstUsedAt: firstUsedAt ?? startedAt,
    replayed: false,
    prior,
    onSending,
  };
  const afterWindow =
    prior?.lastAttemptAt !== undefined && failedVerdictWaitMs(startedAt, prior.lastAttemptAt, prior.settleAfterMs ?? client.settleAfterMs) <= 0;
  let thrown;
  try {
    const answer = await send(client, body, key, signal, only, sent);
    // A final transient answer comes back unread (its body was not awaited inside the attempt).
    if (answer.text === undefined) answer.response.body?.cancel().catch(() => {});
    const earlier = prior !== undefined || historyMayHaveBeenProcessed(sent.history);
    const judged = answerOutcome(
      answer.response,
      parseBody(answer.text),
      historyVerdict(sent.history),
      sent.replayed,
      client.dialect,
      key,
      Date.now(),
      earlier,
    );
    if (judged.outcome !== undefined) return judged.outcome;
    // After an attempt that may have been processed, only a decline past the settle window is about the key.
    const settles = prior === undefined || (afterWindow && isInstance(judged.error, Declined));
    thrown = judged.unknown || !settles ? unknownError(client, key, startedAt, sent, judged.error) : judged.error;
  } catch (e) {
    thrown = failure(client, e, key, startedAt, sent, signal);
  }
  // The store judges the run by this history: an unknown outcome is remembered as "may have been
  // processed" even when this call's own attempts say otherwise (a 2xx naming no charge, the
  // attempt before it).
  const unknown = isInstance(thrown, OutcomeUnknownError) && historyVerdict(sent.history) !== VERDICT.UNKNOWN;
  rememberHistory(thrown, unknown ? historyRecord(0, ANSWER.NO_ANSWER) : sent.history, owner);
  throw thrown;
}

async function send(client, body, key, signal, only, sent) {
  if (only !== undefined) return post(client, only, body, key, signal, sent);
  try {
    return await post(client, client.endpoint, body, key, signal, sent);
  } catch (e) {
    if (isInstance(e, CircuitOpenError) && client.secondary !== undefined && !mayHaveBeenProcessed(sent)) {
      return post(client, client.secondary, body, key, signal, sent); // failover: the SAME key
    }
    throw e;
  }
}

/** The outcome for what attemptCharge (through the store) threw; rethrows programming errors. */
function outcomeOf(e, key, signal) {
  if (!isInstance(e, Declined) && (ABORTED.has(e) || ABORTED.has(fieldOf(e, 'cause')))) throw signal.reason;
  const outcome = failureOutcome(e, key);
  if (outcome === undefined) throw e;
  return outcome;
}

/** One charge of `request` (requestOf) under `key`, through the store. */
async function run(client, request, key, signal, prior, onSending) {
  let outcome;
  const only = prior === undefined ? undefined : endpointFor(client, prior.endpoint);
  if (prior !== undefined && only === undefined) return unknownEndpoint(client, key, prior.endpoint);
  // Past the gateway's retention window the same key is a NEW charge there: never re-sent.
  if (prior?.firstUsedAt !== undefined && client.dialect.keyExpired(prior.firstUsedAt, Date.now())) return expired(client, key, prior.firstUsedAt);
  try {
    outcome = await client.store.run(key, () => attemptCharge(client, request.body, key, signal, only, prior?.firstUsedAt, prior, onSending), {
      fingerprint: request.fingerprint,
      settleAfterMs: client.settleAfterMs,
    });
  } catch (e) {
    outcome = outcomeOf(e, key, signal);
  }
  if (outcome.status === 'unknown') client.unknownCharges.set(key, request);
  else client.unknownCharges.delete(key);
  return outcome;
}

/**
 * Re-send an unknown key's charge with the SAME key, on the SAME record: the store moves it from
 * unknown back to in flight in one compare-and-set (never delete-then-begin, so a failure in
 * between cannot forget a debit), to the endpoint that may have processed it. Its answer settles
 * it only when it is about the key: a success, or a decline sent after the settle window (a
 * gateway that honours keys would have replayed an earlier debit instead). Anything else leaves
 * it unknown.
 */
async function resubmit(client, key, given) {
  const { store, dialect } = client;
  const record = await store.peek(key);
  // No record, a settled one or one in flight: the store's own answers (replay, in flight, or a
  // different charge for this key: IdempotencyKeyReuseError) — nothing is joined or re-sent blind.
  if (record === undefined || record.status !== 'unknown') {
    // A key this client holds no record of, reconciled with its charge (after a reload, another
    // client's): reconciling is about a key that may have been processed, when is not known.
    if (given !== undefined) return run(client, given, key, undefined, record === undefined ? {} : undefined);
    if (record === undefined) return undefined;
    return record.status === 'done' ? record.result : { status: 'unknown', key };
  }
  const request = given ?? client.unknownCharges.get(key);
  if (request === undefined) return undefined;
  if (typeof store.resubmit !== 'function') {
    throw o.typeError('reconcile', 'store', 'a store with resubmit() (IdempotencyStore, createSharedIdempotencyStore)', store);
  }
  // The record's times are on the store's clock (Redis TIME for a Redis store): the window and the
  // retention are judged on it, and the times handed to the re-send are turned into this
  // process's, so a wall clock that is off frees nothing early.
  const now = await storeNow(store, key);
  const skew = now - Date.now();
  // Past the gateway's retention window the same key is a NEW charge there: never re-sent.
  if (dialect.keyExpired(record.startedAt, now)) return expired(client, key, record.startedAt);
  // Only to the endpoint that may have processed it, compared as URLs; one this client does not
  // have is refused, never sent elsewhere.
  const only = endpointFor(client, record.endpoint);
  if (only === undefined) return unknownEndpoint(client, key, record.endpoint);
  const windowMs = record.settleAfterMs ?? client.settleAfterMs;
  const last = record.lastAttemptAt ?? record.startedAt;
  const afterWindow = failedVerdictWaitMs(now, last, windowMs) <= 0;
  // The record's attempt may have been processed: the re-send's history starts there.
  const prior = { lastAttemptAt: last - skew, settleAfterMs: windowMs, endpoint: record.endpoint };
  let outcome;
  try {
    outcome = await store.resubmit(key, () => attemptCharge(client, request.body, key, undefined, only, record.startedAt - skew, prior), {
      fingerprint: request.fingerprint,
      startedAt: record.startedAt,
      settleAfterMs: client.settleAfterMs,
      refutes: (e) => afterWindow && isInstance(e, Declined),
    });
  } catch (e) {
    if (fieldOf(e, 'code') === 'KEY_WRONG_STATE' || fieldOf(e, 'code') === 'KEY_NOT_FOUND') {
      const now = await store.peek(key); // settled meanwhile (another reconcile, another tab): its answer stands
      return now?.status === 'done' ? now.result : { status: 'unknown', key };
    }
    outcome = outcomeOf(e, key, undefined);
    if (outcome.status === 'unknown') outcome.retryAfterMs = unknownRetryAfterMs(e);
  }
  if (outcome.status !== 'unknown') client.unknownCharges.delete(key);
  return outcome;
}

/** The outcome of a key past the dialect's retention window: not re-sent (a new charge there). */
function expired(client, key, firstUsedAt) {
  const { dialect } = client;
  const error = new IdempotencyKeyExpiredError(key, { firstUsedAt, retentionMs: dialect.retentionMs, dialect: dialect.name });
  return { status: 'unknown', key, reason: 'key-expired', retryAfterMs: Infinity, error };
}

/**
 * charge()'s `maybeProcessed`: `true`, or `{ lastAttemptAt, firstUsedAt, endpoint }` (each
 * optional), validated into attemptCharge's `prior`; undefined when absent or false.
 */
function priorOf(co) {
  const v = o.own(co, 'maybeProcessed');
  if (v === undefined || v === false) return undefined;
  if (v === true) return {};
  const m = o.misspelt(o.object(v, 'charge'), MAYBE_PROCESSED_FIELDS, 'charge');
  const time = (name) => {
    const t = o.own(m, name);
    if (t === undefined) return t;
    if (typeof t !== 'number') throw o.typeError('charge', `maybeProcessed.${name}`, 'a time in ms since the epoch (Date.now())', t);
    if (!(Number.isFinite(t) && t >= 0)) throw o.rangeError('charge', `maybeProcessed.${name}`, 'a time in ms since the epoch (Date.now())', t);
    return t;
  };
  const endpoint = o.own(m, 'endpoint');
  if (endpoint !== undefined && href(endpoint) === undefined) throw o.typeError('charge', 'maybeProcessed.endpoint', 'a URL string or URL', endpoint);
  return { lastAttemptAt: time('lastAttemptAt'), firstUsedAt: time('firstUsedAt'), endpoint: endpoint === undefined ? undefined : href(endpoint) };
}

/**
 * One pending promise per key. A charge passes its request's fingerprint: a double click of the
 * SAME charge shares the pending promise; another charge under the same key is refused (never
 * answered with this one's outcome); a charge meeting a reconciliation whose charge it cannot
 * compare waits for it, then goes through the store, which checks the binding.
 */
function once(client, key, start, fingerprint) {
  const pending = client.inFlight.get(key);
  if (pending !== undefined) {
    if (fingerprint === undefined || pending.fingerprint === fingerprint) return pending.promise;
    if (pending.fingerprint !== undefined) return Promise.reject(new IdempotencyKeyReuseError(key));
    return pending.promise.then(
      () => once(client, key, start, fingerprint),
      () => once(client, key, start, fingerprint),
    );
  }
  const promise = start().finally(() => client.inFlight.delete(key));
  client.inFlight.set(key, { promise, fingerprint });
  return promise;
}

/** The fingerprint of the request reconcile() would re-send for `key`, when this client knows it. */
function fingerprintFor(client, key) {
  return client.unknownCharges.get(key)?.fingerprint;
}

/** client.charge(): bad input rejects before anything is stored or sent. */
function chargeOnce(client, charge, chargeOptions) {
  let c;
  try {
    c = checkCharge(charge, 'charge');
  } catch (e) {
    return Promise.reject(e);
  }
  let co;
  try {
    co = o.misspelt(o.object(chargeOptions, 'charge', true), CHARGE_OPTIONS, 'charge');
  } catch (e) {
    return Promise.reject(e);
  }
  const key = o.own(co, 'idempotencyKey') ?? newIdempotencyKey();
  if (typeof key !== 'string') return Promise.reject(o.typeError('charge', 'idempotencyKey', 'a string', key));
  let request;
  let prior;
  try {
    client.dialect.headerValue(key, 'charge'); // the gateway's key rule, before anything is stored or sent
    request = requestOf(client, c, 'charge');
    prior = priorOf(co);
  } catch (e) {
    return Promise.reject(e);
  }
  const onSending = Object.hasOwn(co ?? {}, SENDING) && typeof co[SENDING] === 'function' ? co[SENDING] : undefined;
  return once(client, key, () => run(client, request, key, o.own(co, 'signal'), prior, onSending), request.fingerprint);
}

/** client.reconcile(): every unknown key of the store, in order; one key's trouble costs that key only. */
async function reconcileAll(client) {
  const out = [];
  for (const k of await client.store.unknownKeys()) {
    let outcome;
    try {
      outcome = await once(client, k, () => resubmit(client, k, undefined), fingerprintFor(client, k));
    } catch (error) {
      outcome = { status: 'unknown', key: k, retryAfterMs: UNAVAILABLE_RETRY_MS, error };
    }
    // A key this client did not make (another client's, on a shared store): skipped, reported.
    out.push(outcome ?? { status: 'skipped', reason: 'not-this-client', key: k });
  }
  return out;
}

/** client.reconcile(key, charge?): that key's outcome. */
function reconcileKey(client, key, charge) {
  if (typeof key !== 'string') return Promise.reject(o.typeError('reconcile', 'key', 'a string', key));
  let request;
  if (charge !== undefined) {
    try {
      request = requestOf(client, charge, 'reconcile');
    } catch (e) {
      return Promise.reject(e);
    }
    // The charge this client sent under the key, if it knows it: another one is refused before anything is sent.
    const mine = client.unknownCharges.get(key);
    if (mine !== undefined && mine.fingerprint !== request.fingerprint) return Promise.reject(new IdempotencyKeyReuseError(key));
  }
  return once(
    client,
    key,
    async () => {
      let outcome;
      try {
        outcome = await resubmit(client, key, request);
      } catch (e) {
        // A shared store that cannot answer: nothing was settled, the key stays as it was.
        if (fieldOf(e, 'code') === 'STORE_UNAVAILABLE' || fieldOf(e, 'code') === 'STORE_AMNESIA')
          return { status: 'unknown', key, retryAfterMs: UNAVAILABLE_RETRY_MS };
        throw e;
      }
      if (outcome === undefined) throw o.typeError('reconcile', 'charge', `the charge sent with key ${key} (this client did not make it)`, charge);
      return outcome;
    },
    request?.fingerprint ?? fingerprintFor(client, key),
  );
}

/**
 * A client made while the core is unavailable (module level under a strict CSP, `steadfast/lazy`
 * still loading; see deferred.js). Nothing can be sent safely without the core, so `charge()`
 * resolves `unavailable` with reason 'wasm' (the key, if the caller gave one, is free); once the
 * core has loaded, the real client is made from the same options and every call goes to it.
 */
function clientBeforeCore(options) {
  let real;
  const client = () => (real ??= createCheckoutClient(options));
  const now = (call) => {
    try {
      return call(client());
    } catch (e) {
      return Promise.reject(e); // options only the core validates, checked at this first use
    }
  };
  return {
    get store() {
      const unavailable = coreUnavailable('createCheckoutClient.store');
      if (unavailable !== undefined) throw unavailable;
      return client().store;
    },
    fingerprint(charge) {
      return client().fingerprint(charge);
    },
    charge(charge, chargeOptions) {
      if (coreUnavailable('charge') === undefined) return now((c) => c.charge(charge, chargeOptions));
      let key;
      try {
        checkCharge(charge, 'charge');
        key = o.own(o.misspelt(o.object(chargeOptions, 'charge', true), CHARGE_OPTIONS, 'charge'), 'idempotencyKey');
      } catch (e) {
        return Promise.reject(e);
      }
      if (key !== undefined && typeof key !== 'string') return Promise.reject(o.typeError('charge', 'idempotencyKey', 'a string', key));
      return Promise.resolve({ status: 'unavailable', reason: 'wasm', retryAfterMs: UNAVAILABLE_RETRY_MS, key });
    },
    reconcile(key, charge) {
      const unavailable = coreUnavailable('reconcile');
      if (unavailable !== undefined) return Promise.reject(unavailable);
      return now((c) => c.reconcile(key, charge));
    },
  };
}
