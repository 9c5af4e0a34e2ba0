/** HTTP: `resilientFetch` and the checkout client. */

import type { CircuitBreaker, CircuitBreakerOptions } from './breaker.js';
import type { HedgeOptions } from './hedge.js';
import type { RetryBudget } from './budget.js';
import type { IdempotencyKeyExpiredError, SteadfastError } from './errors.js';
import type { IdempotencyStore, ReconcilableStore } from './idempotency.js';
import type { Executor, IdempotencyRunner } from './pipeline.js';
import type { AbortSignalLike, FetchFn, FetchInit, FetchInput, FetchResponse } from './platform.js';
import type { Jitter, RetryInfo } from './retry.js';
import type { RateLimiter, RetryQuota } from './throttling.js';

export interface FetchRetryOptions {
  /** Calls at most for a retryable request. Default 3. */
  readonly maxAttempts?: number;
  /** Default 100 ms. */
  readonly baseDelayMs?: number;
  /** Cap on each delay, and on a server's Retry-After. Default 10,000 ms. */
  readonly maxDelayMs?: number;
  /** Default 'full'. */
  readonly jitter?: Jitter;
  /** Uniform draws in [0, 1). Default: seeded SplitMix64. */
  readonly random?: () => number;
}

/**
 * `resilientFetch`'s options. Compiled once per options object (breaker choice, budget, limiter,
 * dialect and one retry policy) and then `Object.freeze`d with its `retry`, as a `withRetry`
 * policy is: reuse one object for many requests, and spread it to change a field.
 */
export interface ResilientFetchOptions {
  /** The fetch to wrap. Default `globalThis.fetch`, read at call time. */
  readonly fetch?: FetchFn;
  readonly retry?: FetchRetryOptions;
  /** Abort one attempt after this long (it then counts as a transient failure). Default: none. */
  readonly attemptTimeoutMs?: number;
  /** Overall limit, sleeps included. Default: none. */
  readonly deadlineMs?: number;
  /**
   * A breaker for this call, a registry (one breaker per origin), or `false` for none.
   * Default: a process-wide registry with the core's defaults `{ windowSize: 20, minimumCalls: 10,
   * failureRateThreshold: 0.5, openDurationMs: 30_000 }`.
   */
  readonly breaker?: Executor | BreakerRegistry | false;
  /** Default: a process-wide RetryBudget({ ratio: 0.2, minRetriesPerSec: 10, windowMs: 10_000 }). */
  readonly budget?: RetryBudget | RetryQuota | false;
  /** Paces every attempt (first included) and learns from 429s / Retry-After. Default: none. */
  readonly rateLimiter?: RateLimiter;
  /**
   * `true`: a process-wide `new RateLimiter()` per origin (unless `rateLimiter` is given), for at most
   * 1,000 origins (the oldest never-throttled limiter is dropped first). Default false.
   */
  readonly adaptive?: boolean;
  /** Send this Idempotency-Key (or make one with 'auto', once, before the first attempt). */
  readonly idempotencyKey?: string | 'auto';
  /**
   * The gateway's idempotency dialect: `idempotencyKey` goes in its header and syntax, its
   * in-progress answer counts as "may have been processed", a replayed error is final (not
   * retried), and a re-send past its retention window rejects with `IdempotencyKeyExpiredError`.
   * Default: none (the key as `Idempotency-Key`, raw; the statuses as they are).
   */
  readonly dialect?: DialectName | CustomDialect;
  /**
   * Opt-in: send the attempt number (1 for the first attempt, 2 for the first re-send…) in this
   * request header, e.g. `'X-Attempt'`. Default: none.
   */
  readonly attemptHeader?: string;
  /**
   * The settle window an `OutcomeUnknownError` carries (how long after its last attempt your
   * server may still process a request, ms). Default: 2 × the smaller of `attemptTimeoutMs` and
   * `deadlineMs` (120,000 when neither is set).
   */
  readonly settleAfterMs?: number;
  /**
   * A `ReadableStream` body can be read once, so it is sent once (never retried). `true` reads it
   * into memory before the first attempt, so a retryable request (e.g. a keyed POST) can be
   * re-sent with the same bytes. Default false. (A keyed request's typed array, `ArrayBuffer`,
   * `URLSearchParams` or `FormData` body is always read into bytes once, before the first attempt,
   * with the content type fetch gives it: every attempt sends those bytes.)
   */
  readonly bufferBody?: boolean;
  readonly onRetry?: (info: RetryInfo) => void;
  /**
   * Race copies of a slow request (see `HedgeOptions`). Only for a request that may be repeated: a
   * GET/HEAD/OPTIONS/PUT/DELETE/QUERY, or a POST/PATCH with an Idempotency-Key (the same on every
   * copy); else `HedgeNotSafeError`, before anything is sent. Each copy beyond the first is paid from
   * `budget`, like a retry; a cancelled copy counts as possibly processed. Default: none.
   */
  readonly hedge?: HedgeOptions;
}

/**
 * `fetch` with retries done right. Retries GET/HEAD/OPTIONS/PUT/DELETE/QUERY, and POST/PATCH only
 * with an Idempotency-Key (the same on every attempt); never TRACE (fetch refuses it: a TypeError
 * before anything is sent). Retries network errors (any rejection of the fetch call that is not
 * the caller's abort), 408, 429, 5xx (or what `Stripe-Should-Retry` says), never other 4xx;
 * honours Retry-After. A `ReadableStream` body is sent once unless `bufferBody`. Resolves with the
 * final Response, untouched, for any status. Rejects with `OutcomeUnknownError` when a keyed
 * POST/PATCH may have been processed (any attempt may have reached the server), `OfflineError`
 * when `navigator.onLine` was false before sending, `CircuitOpenError` when the breaker refused.
 */
export function resilientFetch(input: FetchInput, init?: FetchInit, options?: ResilientFetchOptions): Promise<FetchResponse>;

/** One CircuitBreaker per origin, all with the same options. */
export class BreakerRegistry {
  /**
   * Default options: `{ windowSize: 20, minimumCalls: 10, failureRateThreshold: 0.5, openDurationMs: 30_000 }`.
   * `maxOrigins` (default 1000): past it, the oldest breaker that is neither pinned nor holding
   * protection (`holdsProtection`: not closed, or a failure on record) is dropped, so origins taken
   * from client input cannot grow memory without bound. When every kept breaker is pinned or in use,
   * nothing is dropped: a new origin gets a breaker that is not kept (it guards that call only).
   * `pinned` (default `[]`): origins or URLs whose breakers are never evicted (see `pin`).
   */
  constructor(breakerOptions?: CircuitBreakerOptions & { readonly maxOrigins?: number; readonly pinned?: ReadonlyArray<string | { readonly href: string }> });
  /**
   * Keep `origin`'s breaker for the registry's lifetime (never evicted; it still counts toward
   * `maxOrigins`). Takes an origin, a URL string or anything with an `href`; returns that origin's
   * breaker. A checkout client pins the endpoints it names. A `TypeError` for anything that is not a URL.
   */
  pin(origin: string | { readonly href: string }): CircuitBreaker;
  get(origin: string): CircuitBreaker;
  origins(): string[];
}

/** A built-in gateway dialect (the contract doc's table lists what each one means). */
export type DialectName = 'stripe' | 'ietf' | 'adyen' | 'paypal' | 'checkout';

/** A dialect of your own: every field defaults to `base`'s. An object is read once, at its first use (later changes to it are not seen). */
export interface CustomDialect {
  /** The built-in dialect the other fields default to. Default 'stripe'. */
  readonly base?: DialectName;
  /** Shown in errors. Default `custom(<base>)`. */
  readonly name?: string;
  /**
   * The request header that carries the key: an HTTP token a request may carry. A name fetch
   * sets, drops or forbids (the Fetch standard's forbidden request headers: `Host`,
   * `Connection`, `Content-Length`, `Cookie`, `Origin`, `Referer`, `Transfer-Encoding`, `Sec-*`,
   * `Proxy-*`, …) or that the client sets itself (`Content-Type`) is a `RangeError` naming
   * `header`: the key would never reach the gateway.
   */
  readonly header?: string;
  /** `'sf-string'`: the key quoted as an RFC 9651 string (IETF draft); `'raw'`: as is. */
  readonly syntax?: 'raw' | 'sf-string';
  /** The longest key the gateway accepts, 1 to 255 characters. */
  readonly maxKeyLength?: number;
  /** How long the gateway keeps a key from its first use, ms (> 0, or Infinity: no limit). */
  readonly retentionMs?: number;
  /** The status meaning "a request with this key is in progress" (400 to 599, 0 for none). */
  readonly inProgressStatus?: number;
  /** Up to two statuses meaning "key reused for another request" (400 to 599). */
  readonly reuseStatuses?: readonly number[];
  /** The error type a reuse status must carry (problem+json `type`, else `error.type`); '' for none. */
  readonly reuseErrorType?: string;
  /** The response header whose value `true` marks a replay; '' for none. */
  readonly replayHeader?: string;
}

/** A dialect as resolved by the core (`gatewayDialect`). */
export interface GatewayDialect {
  readonly name: string;
  readonly header: string;
  readonly syntax: 'raw' | 'sf-string';
  readonly maxKeyLength: number;
  /** Infinity when the gateway does not publish one. */
  readonly retentionMs: number;
  readonly inProgressStatus: number | undefined;
  readonly reuseStatuses: readonly number[];
  readonly reuseErrorType: string | undefined;
  readonly replayHeader: string | undefined;
}

/** Resolve and validate a dialect (TypeError/RangeError naming the field). Default 'stripe'. */
export function gatewayDialect(dialect?: DialectName | CustomDialect): GatewayDialect;

/** Whether a Response carries the dialect's replay marker (e.g. `Idempotent-Replayed: true`). Default dialect 'stripe'. */
export function isReplayed(response: FetchResponse, dialect?: DialectName | CustomDialect): boolean;

export type ChargeOutcome =
  /** `replayed`: the gateway marked this answer a replay of an earlier charge with the key (count it once). */
  | { readonly status: 'succeeded'; readonly reference: string; readonly key: string; readonly replayed?: true }
  | { readonly status: 'declined'; readonly reason: string; readonly key: string }
  /** It may have been processed: show "we're checking", never "try again"; the key refuses a blind retry until reconciled. */
  | { readonly status: 'unknown'; readonly key: string; readonly retryAfterMs?: number }
  /**
   * It may have been processed at an endpoint that is neither this client's `endpoint` nor its
   * `secondaryEndpoint` (compared as URLs): not re-sent (another gateway would charge it a second
   * time); reconcile it with a client for that endpoint, or by lookup.
   */
  | {
      readonly status: 'unknown';
      readonly key: string;
      readonly reason: 'unknown-endpoint';
      readonly retryAfterMs: number;
      readonly error: UnknownEndpointError;
    }
  /** The key is past the dialect's retention window: not re-sent (it would be a new charge); settle it by lookup. */
  | {
      readonly status: 'unknown';
      readonly key: string;
      readonly reason: 'key-expired';
      readonly retryAfterMs: number;
      readonly error: IdempotencyKeyExpiredError;
    }
  /**
   * Provably nothing was sent — an open circuit, offline, a refused connection (Node), a shared store
   * that could not record the start. The key is free: charge again with it after `retryAfterMs` (the
   * circuit's cooldown; 1,000 ms otherwise, a hint).
   */
  | {
      readonly status: 'unavailable';
      readonly reason: 'circuit-open' | 'offline' | 'connection-refused' | 'rate-limited' | 'store-unavailable' | 'store-full' | 'aborted';
      readonly retryAfterMs: number;
      readonly key: string;
    }
  /**
   * The WebAssembly core is not loaded (a strict Content-Security-Policy, still loading under
   * `steadfast/lazy`, a host that needs `init(...)`): nothing was sent. `key` is the caller's
   * `idempotencyKey` if one was given (it is free), else undefined. `retryAfterMs`: 1,000 ms, a hint;
   * `ready` says when the core is there.
   */
  | { readonly status: 'unavailable'; readonly reason: 'wasm'; readonly retryAfterMs: number; readonly key: string | undefined };

/** A store the checkout client can use: an `IdempotencyStore`, or a shared (Redis) one. */
export type CheckoutStore = IdempotencyRunner<ChargeOutcome> & ReconcilableStore<ChargeOutcome>;

export interface CheckoutClientOptions<S extends CheckoutStore = IdempotencyStore<ChargeOutcome>> {
  /** The charge endpoint, e.g. 'https://api.example.com/v1/charges'. */
  readonly endpoint: string | { readonly href: string };
  /** Used, with the SAME key, when the primary's breaker is open. */
  readonly secondaryEndpoint?: string | { readonly href: string };
  readonly fetch?: FetchFn;
  /** Default: `{ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 10_000 }`. */
  readonly retry?: FetchRetryOptions;
  /**
   * A breaker, a registry, options for a per-origin registry, or `false` for none. Default: a registry with `{ windowSize: 20, minimumCalls: 10, failureRateThreshold: 0.5, openDurationMs: 30_000 }`.
   * The client pins the origins of its endpoints in the registry (a shared one too): other URLs fetched through it never evict them.
   */
  readonly breaker?: Executor | BreakerRegistry | CircuitBreakerOptions | false;
  /**
   * Top-level charge fields that are sent but do not identify the charge (a per-attempt SDK nonce):
   * left out of the key's fingerprint (`chargeFingerprint`). Default `[]`. Charges must be plain JSON
   * data: `JSON.stringify(charge)` is the request body, and exactly that is fingerprinted.
   */
  readonly volatileFields?: readonly string[];
  /** Default: a RetryBudget({ ratio: 0.2, minRetriesPerSec: 10, windowMs: 10_000 }) per client. */
  readonly budget?: RetryBudget | RetryQuota;
  /** Paces every HTTP attempt (first included). Default: none. */
  readonly rateLimiter?: RateLimiter;
  /** `true`: the process-wide per-origin limiter of `resilientFetch({ adaptive: true })`. Default false. */
  readonly adaptive?: boolean;
  /** Default: a new IdempotencyStore per client. */
  readonly store?: S;
  /**
   * How the charge endpoint speaks idempotency: the key's header and syntax, its limit, which
   * answers mean "in progress" and "key reused", the replay marker (→ `outcome.replayed`), and the
   * retention window (past it an unknown key is never re-sent). Default 'stripe'.
   */
  readonly dialect?: DialectName | CustomDialect;
  /**
   * Opt-in: send the attempt number (1 for the first attempt, 2 for the first re-send…) in this
   * request header, e.g. `'X-Attempt'`. Default: none.
   */
  readonly attemptHeader?: string;
  /** Default 10,000 ms. With `deadlineMs`, sets the settle window an unknown keeps (2 × the smaller). */
  readonly attemptTimeoutMs?: number;
  readonly deadlineMs?: number;
  /**
   * The most of an answer's body the client reads, in bytes (an integer >= 1). Default 1,048,576
   * (1 MiB). A longer body (by its `Content-Length`, or as it streams in) is abandoned unread: that
   * attempt got no answer, so it is retried under the same key, and a charge none of whose attempts
   * was read is `unknown`, never `succeeded` or `declined`.
   */
  readonly maxResponseBytes?: number;
  /**
   * How long after its last attempt a request may still be processed by your gateway (ms): the settle
   * window an unknown charge keeps, before which `reconcile()` never believes "it never happened".
   * Default: 2 × the smaller of `attemptTimeoutMs` and `deadlineMs`.
   */
  readonly settleAfterMs?: number;
  /** Called before every HTTP attempt (logging, UI). */
  readonly onAttempt?: (info: { readonly attempt: number; readonly key: string; readonly url: string }) => void;
}

export interface ChargeRequest {
  /** A positive integer. */
  readonly amountCents: number;
  readonly currency: string;
  readonly [field: string]: unknown;
}

export interface CheckoutClient<S extends CheckoutStore = IdempotencyStore<ChargeOutcome>> {
  readonly store: S;
  /**
   * The text a charge's key is bound to, as this client computes it: the canonical JSON of the charge
   * without `idempotencyKey` and the client's `volatileFields`. `persistentCheckoutKey` keeps its
   * digest to refuse a changed cart under an old key.
   */
  fingerprint(charge: ChargeRequest): string;
  /**
   * One logical charge per key (default: a new key per call). A second call with the same key while
   * the first is in flight returns the same promise. Resolves for everything the network or the
   * gateway can do (succeeded, declined, unknown, unavailable); rejects only for programming errors
   * (bad input, `CheckoutRequestError`, `IdempotencyKeyReuseError`) and with the signal's reason when
   * the caller aborts (the key is then unknown if anything may have been sent). The request is
   * fixed when `charge` is handed over: every attempt, the failover and `reconcile()` send its JSON
   * text as it was then, whatever becomes of the object afterwards. A charge whose fields read
   * differently from its JSON text (a Proxy) rejects with a `TypeError` (`INVALID_OPTION`), unsent.
   *
   * A 2xx is `succeeded` only when its body names the charge (`reference` or `id`, a non-empty
   * string or a number); one carrying `{ error: { type: 'card_error' } }` instead is a decline; one
   * that names nothing (empty, not JSON, neither field) is `unknown`.
   */
  charge(
    charge: ChargeRequest,
    options?: {
      readonly idempotencyKey?: string;
      readonly signal?: AbortSignalLike;
      /**
       * The key was sent before (another page, before a reload) and that charge may have been
       * processed (`true`, or what is known of it). The charge's history then starts as "may have
       * been processed": it is sent only to `endpoint` (default: the primary; never failed over),
       * only a success settles it, or a decline sent after `settleAfterMs` from `lastAttemptAt`;
       * any other answer, or no `lastAttemptAt`, leaves it `unknown` (then `reconcile()` after the
       * window settles it). Past the dialect's retention window from `firstUsedAt` it is not sent
       * (`reason: 'key-expired'`); an `endpoint` this client does not have is not sent either
       * (`reason: 'unknown-endpoint'`). `persistentCheckoutKey`'s `resume` passes it.
       */
      readonly maybeProcessed?:
        | boolean
        | {
            /** When its last attempt was sent (ms since the epoch), or later: an upper bound is safe. */
            readonly lastAttemptAt?: number;
            /** When the key was first sent (ms since the epoch), or earlier. */
            readonly firstUsedAt?: number;
            /** Where it may have been processed: this client's `endpoint` or `secondaryEndpoint`. */
            readonly endpoint?: string | { readonly href: string };
          };
    },
  ): Promise<ChargeOutcome>;
  /**
   * Get an unknown charge out of unknown by re-sending it with the SAME key: a gateway that honours
   * keys replays the first outcome, processes it once, or answers 409 while it still runs (then it
   * stays `unknown`). The outcome also settles the store (succeeded → replayed from now on; declined
   * → key free, when sent after the settle window). It goes only to the endpoint the record names
   * (compared as URLs); one this client does not have resolves `{ status: 'unknown', reason:
   * 'unknown-endpoint', error: UnknownEndpointError }`, nothing sent. `charge` is needed only when
   * this client did not make the charge (after a reload): a key this client holds no record of is
   * re-sent as one that may have been processed at a time not known, so a decline leaves it
   * `unknown` and a `reconcile(key)` after the settle window from this re-send can settle it.
   * Without a key: every unknown key of the store, one after another.
   */
  reconcile(key: string, charge?: ChargeRequest): Promise<ChargeOutcome>;
  /** Keys this client did not make (another client's, on a shared store) are skipped and reported. */
  reconcile(): Promise<
    Array<
      | ChargeOutcome
      | { readonly status: 'skipped'; readonly reason: 'not-this-client'; readonly key: string }
      | { readonly status: 'unknown'; readonly key: string; readonly retryAfterMs: number; readonly error: unknown }
    >
  >;
}

export function createCheckoutClient<S extends CheckoutStore = IdempotencyStore<ChargeOutcome>>(options: CheckoutClientOptions<S>): CheckoutClient<S>;

/**
 * A key that may have been processed at `endpoint` is not re-sent: it is neither this client's
 * `endpoint` nor its `secondaryEndpoint` (compared as URLs), and another gateway would charge it a
 * second time. Carried by `{ status: 'unknown', reason: 'unknown-endpoint', error }`.
 */
export class UnknownEndpointError extends SteadfastError {
  constructor(key: string, endpoint: string, endpoints: string[]);
  readonly code: 'UNKNOWN_ENDPOINT';
  readonly key: string;
  /** Where the key may have been processed (the record's). */
  readonly endpoint: string;
  /** This client's endpoints. */
  readonly endpoints: readonly string[];
}

/** The gateway rejected the request itself (400, 401, 404…): a programming error, thrown. */
export class CheckoutRequestError extends SteadfastError {
  constructor(status: number, body: unknown);
  readonly code: 'CHECKOUT_REJECTED';
  readonly status: number;
  readonly body: unknown;
}
