/**
 * steadfast: full-jitter retries, a client-side circuit breaker, a retry budget and exactly one
 * idempotency key per charge. A pure Rust core compiled to WebAssembly; the same semantics in
 * Node 24 and browsers.
 *
 * These declarations need no `dom` lib: the few web types used are declared structurally below.
 */

/** The part of `AbortSignal` steadfast uses (a real `AbortSignal` satisfies it). */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

// ---------------------------------------------------------------------------------------------
// Jitter

/** Uniform in `[0, min(maxDelayMs, baseDelayMs · 2^(attempt−1)))`; `attempt` counts from 1. */
export function fullJitter(attempt: number, baseDelayMs: number, maxDelayMs: number): number;
/** `c/2 + uniform [0, c/2)` with `c` the exponential ceiling: a guaranteed minimum gap. */
export function equalJitter(attempt: number, baseDelayMs: number, maxDelayMs: number): number;
/** `min(maxDelayMs, uniform [baseDelayMs, previousDelayMs · 3))`: chains from the previous delay. */
export function decorrelatedJitter(previousDelayMs: number, baseDelayMs: number, maxDelayMs: number): number;

/** Reseed the generator behind the jitter functions and `withRetry` (default: seeded once from crypto). */
export function seedRandom(seed: number): void;

// ---------------------------------------------------------------------------------------------
// Classification

/**
 * Whether an error is worth retrying: HTTP 408, 429 and ≥ 500 (`status`, `statusCode` or
 * `response.status`); network codes ECONNRESET, ETIMEDOUT, EAI_AGAIN, ECONNREFUSED, EPIPE,
 * ENOTFOUND… (also nested as `cause.code`); a fetch network error in any engine
 * (`isFetchNetworkError`); `TimeoutError`/`AbortError`. Every other 4xx is not. Of steadfast's own
 * errors, an unknown outcome and a deadline are; an open circuit and `OfflineError` are not
 * (nothing was sent, so a store frees the key).
 */
export function isTransientError(error: unknown): boolean;

/**
 * Whether this is the `TypeError` that `fetch` rejects with on a network error: Chromium "Failed to
 * fetch", Firefox "NetworkError when attempting to fetch resource.", WebKit "Load failed", undici
 * "fetch failed" (and the other engines `is-network-error` knows). By name and message, across realms.
 */
export function isFetchNetworkError(error: unknown): boolean;

/** A `Retry-After` header value (delta-seconds or HTTP-date) in ms from `nowMs`; NaN if unparseable. */
export function parseRetryAfter(value: string, nowMs: number): number;

// ---------------------------------------------------------------------------------------------
// Retry

export type Jitter = 'full' | 'equal' | 'decorrelated' | 'none';

/** Frozen (`Object.freeze`) on every attempt. */
export interface RetryContext {
  /** This attempt's number, from 1. */
  readonly attempt: number;
  /** Aborts when the caller's `signal` aborts or `maxElapsedMs` passes; undefined when neither is set. */
  readonly signal: AbortSignalLike | undefined;
}

/** Frozen (`Object.freeze`) on every retry. */
export interface RetryInfo {
  /** The attempt that just failed, from 1. */
  readonly attempt: number;
  /** The delay before the next attempt. */
  readonly delayMs: number;
  /** What the failed attempt threw. */
  readonly error: unknown;
}

/**
 * A retry policy. Validated and frozen (`Object.freeze`) on first use: mutating a policy at runtime
 * is a race (seed pitfall #1).
 */
export interface RetryPolicy {
  /** Calls at most, first attempt included: an integer from 1 to 1000. */
  readonly maxAttempts: number;
  /** Ceiling of the first retry's delay (ms, finite, ≥ 0). */
  readonly baseDelayMs: number;
  /** Cap on every delay (ms, ≥ baseDelayMs; `Infinity` allowed). */
  readonly maxDelayMs: number;
  /** Jitter variant. Default `'full'`. */
  readonly jitter?: Jitter;
  /** Overall deadline including sleeps (ms). Default: none. On expiry: `DeadlineExceededError`. */
  readonly maxElapsedMs?: number;
  /**
   * Whether to retry an error. Default `isTransientError`. A Promise is awaited (a rejection rejects
   * the call); only `true` retries. To stop on an error, return false here: throwing p-retry's
   * `AbortError` does not stop steadfast (it is just another error to classify).
   */
  readonly isRetryable?: (error: unknown) => boolean | PromiseLike<boolean>;
  /** Called before each sleep. A throwing callback rejects the call. */
  readonly onRetry?: (info: RetryInfo) => void;
  /** Consulted before every retry (never the first attempt). Default: none. */
  readonly budget?: RetryBudget;
  /** Aborts the attempt and the sleep; the call rejects with `signal.reason`. */
  readonly signal?: AbortSignalLike;
  /** Uniform draws in [0, 1) for jitter. Default: a SplitMix64 seeded once from crypto. */
  readonly random?: () => number;
  /** Clock for `maxElapsedMs` (ms). Default `Date.now`, read at call time. */
  readonly clock?: () => number;
}

/**
 * Call `fn` until it succeeds, at most `maxAttempts` times. After failed attempt `n` it retries
 * only if `isRetryable(error)`, sleeping the jittered delay for `n` (at least a server's
 * Retry-After, capped by `maxDelayMs`). The last error is rethrown as is; a permanent error at once.
 */
export function withRetry<T>(fn: (ctx: RetryContext) => Promise<T> | T, policy: RetryPolicy): Promise<T>;

// ---------------------------------------------------------------------------------------------
// Circuit breaker

export type BreakerState = 'closed' | 'open' | 'half-open';

interface BreakerCommon {
  /** How long the circuit stays open before one probe is allowed (ms, finite, ≥ 0). */
  readonly openDurationMs: number;
  /** Consecutive probe successes that close the circuit. Default 1. */
  readonly probesToClose?: number;
  /** Clock (ms). Default `Date.now`, read at call time. */
  readonly clock?: () => number;
  /** Called on every transition ('half-open' | 'open' | 'closed' | 'isolated'). */
  readonly onStateChange?: (state: BreakerState | 'isolated') => void;
  /** Which errors count against the dependency. Default: every error. */
  readonly isFailure?: (error: unknown) => boolean;
  /** Restore a snapshot from `toJSON()` of a breaker with the same options. */
  readonly state?: BreakerSnapshot;
}

/** Trip on the failure rate over the last `windowSize` outcomes. */
export interface RateBreakerOptions extends BreakerCommon {
  /** Outcomes in the rolling window: an integer from 1 to 1,000,000. */
  readonly windowSize: number;
  /** Trip when failures ÷ outcomes ≥ this (0 to 1), judged each time a failure is recorded (a success never trips). */
  readonly failureRateThreshold: number;
  /** Outcomes needed before the rate is judged (≤ windowSize). Default: a full window. */
  readonly minimumCalls?: number;
  readonly failureThreshold?: never;
}

/** Trip after `failureThreshold` consecutive failures. */
export interface ConsecutiveBreakerOptions extends BreakerCommon {
  /** Failures in a row: an integer from 1 to 1,000,000. */
  readonly failureThreshold: number;
  readonly windowSize?: never;
  readonly failureRateThreshold?: never;
  readonly minimumCalls?: never;
}

export type CircuitBreakerOptions = RateBreakerOptions | ConsecutiveBreakerOptions;

/** Plain data from `toJSON()`. */
export interface BreakerSnapshot {
  readonly version: 1;
  readonly kind: 'rate' | 'consecutive';
  readonly state: BreakerState | 'isolated';
  /** When an open circuit admits a probe (ms on the breaker's clock); null unless open. */
  readonly openUntil: number | null;
  readonly probeSuccesses: number;
  readonly consecutiveFailures: number;
  /** Rolling window, oldest first, 1 = failure (rate breakers). */
  readonly window: readonly number[];
}

export class CircuitBreaker {
  constructor(options: CircuitBreakerOptions);
  /** The state now (an open circuit past its cooldown reads 'half-open'; isolated reads 'open'). */
  readonly currentState: BreakerState;
  /** Whether `isolate()` holds it open. */
  readonly isolated: boolean;
  /**
   * Run `fn` if admitted. When open (or while the half-open probe is in flight): `fallback()` if
   * given, else reject with `CircuitOpenError` without calling `fn`.
   */
  execute<T>(fn: () => Promise<T> | T, fallback?: () => Promise<T> | T): Promise<T>;
  /** Hold open until `reset()`. */
  isolate(): void;
  /** Close and forget every outcome. */
  reset(): void;
  /** Open until `untilMs` (breaker clock) because a peer saw it trip. */
  openUntil(untilMs: number): void;
  toJSON(): BreakerSnapshot;
}

// ---------------------------------------------------------------------------------------------
// Retry budget

export interface TokenBucketBudgetOptions {
  /** Tokens when full (finite, ≥ 0). The bucket starts full. */
  readonly capacity: number;
  /** Tokens added per second, lazily (finite, ≥ 0). */
  readonly refillPerSec: number;
  readonly clock?: () => number;
  readonly ratio?: never;
}

export interface RatioBudgetOptions {
  /** Retries allowed per request in the window (0 to 1000). Default 0.2. */
  readonly ratio?: number;
  /** Reserve so quiet callers can still retry. Default 10. */
  readonly minRetriesPerSec?: number;
  /** Sliding window (ms, > 0). Default 10,000. */
  readonly windowMs?: number;
  readonly clock?: () => number;
  readonly capacity?: never;
}

export class RetryBudget {
  constructor(options: TokenBucketBudgetOptions | RatioBudgetOptions);
  /** Take one retry: true if the budget allows it. */
  tryConsume(): boolean;
  /** Count one first attempt (withRetry does this for you; a no-op for token buckets). */
  recordRequest(): void;
  /** Retries available now. */
  readonly available: number;
}

// ---------------------------------------------------------------------------------------------
// Idempotency

/** What an unknown record keeps for reconciliation (absent when the store was not told). */
export interface UnknownRecordMeta {
  /** When its last attempt started (or, when not reported, when the failure was seen), ms. */
  readonly lastAttemptAt?: number;
  /** Attempts sent. */
  readonly attempts?: number;
  /** The settle window of the limits that produced the unknown (see `reconcile`). */
  readonly settleAfterMs?: number;
}

export type IdempotencyRecord<T> =
  | { readonly status: 'in-flight'; readonly startedAt: number }
  | { readonly status: 'done'; readonly result: T }
  | ({ readonly status: 'unknown'; readonly error: string; readonly startedAt: number } & UnknownRecordMeta);

/** Options of `run()`. */
export interface RunOptions {
  /** Binds the key to one request: another fingerprint rejects with `IdempotencyKeyReuseError`. */
  readonly fingerprint?: string;
  /** The settle window to keep if this run ends unknown (an OutcomeUnknownError's own wins). */
  readonly settleAfterMs?: number;
  /** Updated by the caller as attempts start (`attempts`, `lastAttemptAt`); read if the run ends unknown. */
  readonly progress?: { attempts?: number; lastAttemptAt?: number };
}

export type Resolution<T> = { readonly status: 'done'; readonly result: T } | { readonly status: 'failed' };

export interface IdempotencyStoreOptions {
  /** How long a done key replays its result (ms). Default 86,400,000 (24 h). Unknown keys never expire. */
  readonly ttlMs?: number;
  /** Clock (ms). Default `Date.now`. */
  readonly clock?: () => number;
  /** Which failures park a key as unknown. Default `isTransientError`. */
  readonly isTransient?: (error: unknown) => boolean;
}

export class IdempotencyStore<T = unknown> {
  constructor(options?: IdempotencyStoreOptions);
  /**
   * Run `fn` once per key. Keys are 1–255 printable ASCII characters. `fingerprint` binds the key to
   * one request: another fingerprint rejects with `IdempotencyKeyReuseError`.
   */
  run(key: string, fn: () => Promise<T> | T, options?: RunOptions): Promise<T>;
  peek(key: string): IdempotencyRecord<T> | undefined;
  /** Settle an unknown key (reconciliation). */
  resolve(key: string, outcome: Resolution<T>): void;
  /** Unknown keys, oldest first. */
  unknownKeys(): string[];
  /** Records held. */
  readonly size: number;
}

/** A UUID v4 from the platform CSPRNG. Make it once per logical charge, at the API boundary. */
export function newIdempotencyKey(): string;

export interface ReconcileReport {
  /** Unknown keys looked up. */
  readonly checked: number;
  /** Settled as done (the charge happened; its result replays from now on). */
  readonly done: number;
  /** Settled as failed (the charge never happened; the key is free). */
  readonly failed: number;
  /** Answered failed inside the settle window: not believed yet, left unknown. */
  readonly deferred: number;
  /** Left unknown (lookup answered undefined, threw, or answered nonsense). */
  readonly stillUnknown: number;
  /** When deferred > 0: ms until the earliest deferred key's "failed" may be believed; else undefined. */
  readonly retryAfterMs: number | undefined;
  readonly errors: ReadonlyArray<{ readonly key: string; readonly error: unknown }>;
}

/** What `reconcile` needs of a store: `IdempotencyStore` or a shared (Redis) one (async is fine). */
export interface ReconcilableStore<T> {
  unknownKeys(): string[] | Promise<string[]>;
  peek(key: string): IdempotencyRecord<T> | undefined | Promise<IdempotencyRecord<T> | undefined>;
  resolve(key: string, outcome: Resolution<T>): void | Promise<void>;
}

/**
 * Settle every unknown key of `store` through `lookup(key, record)` (e.g. the gateway's settlement
 * listing): `{ status: 'done', result }`, `{ status: 'failed' }`, or `undefined` to leave it unknown.
 * A `done` is applied at once. A `failed` ("never happened") is applied only once the record's
 * settle window has passed since its last attempt — a request the client gave up on may still be
 * processed — and is `deferred` until then. Prefer `createCheckoutClient(...).reconcile()` (re-sends
 * the same key) against a gateway that honours idempotency keys.
 */
export function reconcile<T>(
  store: ReconcilableStore<T>,
  lookup: (key: string, record: IdempotencyRecord<T> & { readonly status: 'unknown' }) => Promise<Resolution<T> | undefined> | Resolution<T> | undefined,
  options?: {
    /** Keys looked up at once. Default 8. */
    readonly concurrency?: number;
    /** The window for records that carry none (ms). Default 120,000 (2 × 60 s: nothing bounded the attempts). */
    readonly settleAfterMs?: number;
    /** Clock (ms). Default `Date.now`. */
    readonly clock?: () => number;
  },
): Promise<ReconcileReport>;

// ---------------------------------------------------------------------------------------------
// The pipeline

export interface Charge {
  readonly idempotencyKey: string;
  /** A positive integer. */
  readonly amountCents: number;
  readonly currency: string;
}

export interface ChargeResult {
  readonly reference: string;
  readonly amountCents: number;
}

/** What `chargeCustomer` needs of a store: `IdempotencyStore` or a shared (Redis) one. */
export interface IdempotencyRunner<T> {
  run(key: string, fn: () => Promise<T> | T, options?: RunOptions): Promise<T>;
}

/** What the pipelines need of a breaker: `CircuitBreaker` or a shared (Redis) one. */
export interface Executor {
  execute<T>(fn: () => Promise<T> | T, fallback?: () => Promise<T> | T): Promise<T>;
}

export interface ChargeDeps<C extends Charge = Charge, R = ChargeResult> {
  readonly store: IdempotencyRunner<R>;
  readonly breaker: Executor;
  readonly gateway: (charge: C, ctx: RetryContext) => Promise<R>;
  readonly policy: RetryPolicy;
  /** The settle window (ms) kept on the key if the charge ends unknown (see `reconcile`). Default: none (reconcile's default). */
  readonly settleAfterMs?: number;
}

/**
 * `store.run(key, () => breaker.execute(() => withRetry(() => gateway(charge), policy)))`:
 * idempotency outside, breaker in the middle, retry inside. The key's fingerprint is the amount and
 * currency.
 */
export function chargeCustomer<C extends Charge = Charge, R = ChargeResult>(charge: C, deps: ChargeDeps<C, R>): Promise<R>;

// ---------------------------------------------------------------------------------------------
// Errors

export type SteadfastErrorCode =
  | 'CIRCUIT_OPEN'
  | 'DUPLICATE_IN_FLIGHT'
  | 'OUTCOME_UNKNOWN'
  | 'KEY_REUSED'
  | 'RETRY_BUDGET_EXHAUSTED'
  | 'DEADLINE_EXCEEDED'
  | 'KEY_NOT_FOUND'
  | 'KEY_WRONG_STATE'
  | 'INVALID_OPTION'
  | 'INVALID_KEY'
  | 'RANDOM_UNAVAILABLE'
  | 'CHECKOUT_REJECTED'
  | 'STORE_UNAVAILABLE'
  | 'OFFLINE';

/** Base class of steadfast's errors. */
export class SteadfastError extends Error {
  constructor(message: string, code: SteadfastErrorCode, options?: { cause?: unknown });
  readonly code: SteadfastErrorCode;
}
/**
 * The breaker refused the call; nothing was sent. It is flow control, so it carries no stack trace,
 * and the calls rejected during one open period share one frozen instance.
 */
export class CircuitOpenError extends SteadfastError {
  constructor(retryAfterMs?: number, message?: string);
  readonly code: 'CIRCUIT_OPEN';
  /** Remaining cooldown as of when it is read (0 while a probe is in flight; Infinity when isolated). */
  readonly retryAfterMs: number;
}
export class DuplicateRequestError extends SteadfastError {
  constructor(key: string, startedAt: number);
  readonly code: 'DUPLICATE_IN_FLIGHT';
  readonly key: string;
  readonly startedAt: number;
}
export class OutcomeUnknownError extends SteadfastError {
  constructor(key: string, startedAt: number, options?: { cause?: unknown; attempts?: number; lastAttemptAt?: number; settleAfterMs?: number });
  readonly code: 'OUTCOME_UNKNOWN';
  readonly key: string;
  readonly startedAt: number;
  /** Attempts sent (resilientFetch and the checkout client set it). */
  readonly attempts?: number;
  /** When the last attempt started (ms). */
  readonly lastAttemptAt?: number;
  /** The settle window of the limits that produced it (ms). */
  readonly settleAfterMs?: number;
}
/** `navigator.onLine` was false before sending: nothing was sent. Not transient for a store (frees the key). */
export class OfflineError extends SteadfastError {
  constructor(message?: string);
  readonly code: 'OFFLINE';
}
export class IdempotencyKeyReuseError extends SteadfastError {
  constructor(key: string);
  readonly code: 'KEY_REUSED';
  readonly key: string;
}
export class RetryBudgetExhaustedError extends SteadfastError {
  constructor(cause: unknown, attempt: number);
  readonly code: 'RETRY_BUDGET_EXHAUSTED';
  /** The last attempt's error. */
  readonly cause: unknown;
  readonly attempt: number;
}
export class DeadlineExceededError extends SteadfastError {
  constructor(maxElapsedMs: number, cause: unknown, attempt: number);
  readonly code: 'DEADLINE_EXCEEDED';
  readonly cause: unknown;
  readonly maxElapsedMs: number;
  readonly attempt: number;
}
export class IdempotencyStateError extends SteadfastError {
  constructor(key: string, code: 'KEY_NOT_FOUND' | 'KEY_WRONG_STATE', message: string);
  readonly code: 'KEY_NOT_FOUND' | 'KEY_WRONG_STATE';
  readonly key: string;
}

/** Any steadfast error (also a branded TypeError/RangeError for bad input), across package copies. */
export function isSteadfastError(error: unknown): error is SteadfastError | ((TypeError | RangeError) & { code: SteadfastErrorCode });

/** The crate version. */
export function version(): string;

// ---------------------------------------------------------------------------------------------
// HTTP: resilientFetch and the checkout client
//
// The web types come from whichever lib the project has (`dom`, or @types/node's fetch globals);
// with neither, minimal structural types stand in, so the declarations still compile.

interface ResponseLike {
  readonly ok: boolean;
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  json(): Promise<unknown>;
  text(): Promise<string>;
}
/** `Response` from the environment's lib. */
export type FetchResponse = typeof globalThis extends { Response: { prototype: infer R } } ? R : ResponseLike;
/** `RequestInit` from the environment's lib. */
export type FetchInit = typeof globalThis extends { fetch: (input: never, init?: infer I) => unknown } ? NonNullable<I> : {
  method?: string;
  headers?: Record<string, string> | [string, string][];
  body?: unknown;
  signal?: AbortSignalLike | null;
};
/** `fetch`'s first argument from the environment's lib. */
export type FetchInput = typeof globalThis extends { fetch: (input: infer I, init?: never) => unknown } ? I : string | { readonly href: string } | { readonly url: string };
/** A fetch implementation. */
export type FetchFn = (input: FetchInput, init?: FetchInit) => Promise<FetchResponse>;

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
   * Default: a process-wide registry with DEFAULT_BREAKER options.
   */
  readonly breaker?: Executor | BreakerRegistry | false;
  /** Default: a process-wide RetryBudget({ ratio: 0.2, minRetriesPerSec: 10, windowMs: 10_000 }). */
  readonly budget?: RetryBudget | false;
  /** Send this Idempotency-Key (or make one with 'auto', once, before the first attempt). */
  readonly idempotencyKey?: string | 'auto';
  /**
   * The settle window an `OutcomeUnknownError` carries (how long after its last attempt your
   * server may still process a request, ms). Default: 2 × the smaller of `attemptTimeoutMs` and
   * `deadlineMs` (120,000 when neither is set).
   */
  readonly settleAfterMs?: number;
  /**
   * A `ReadableStream` body can be read once, so it is sent once (never retried). `true` reads it
   * into memory before the first attempt, so a retryable request (e.g. a keyed POST) can be
   * re-sent with the same bytes. Default false.
   */
  readonly bufferBody?: boolean;
  readonly onRetry?: (info: RetryInfo) => void;
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
  /** Default options: `{ windowSize: 20, minimumCalls: 10, failureRateThreshold: 0.5, openDurationMs: 30_000 }`. */
  constructor(breakerOptions?: CircuitBreakerOptions);
  get(origin: string): CircuitBreaker;
  origins(): string[];
}

export type ChargeOutcome =
  | { readonly status: 'succeeded'; readonly reference: string; readonly key: string }
  | { readonly status: 'declined'; readonly reason: string; readonly key: string }
  /** It may have been processed: show "we're checking", never "try again"; the key refuses a blind retry until reconciled. */
  | { readonly status: 'unknown'; readonly key: string; readonly retryAfterMs?: number }
  /**
   * Provably nothing was sent — an open circuit, offline, a refused connection (Node), a shared store
   * that could not record the start. The key is free: charge again with it after `retryAfterMs` (the
   * circuit's cooldown; 1,000 ms otherwise, a hint).
   */
  | {
      readonly status: 'unavailable';
      readonly reason: 'circuit-open' | 'offline' | 'connection-refused' | 'store-unavailable';
      readonly retryAfterMs: number;
      readonly key: string;
    };

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
  /** A breaker, a registry, options for a per-origin registry, or `false` for none. Default: DEFAULT_BREAKER options. */
  readonly breaker?: Executor | BreakerRegistry | CircuitBreakerOptions | false;
  /** Default: a RetryBudget({ ratio: 0.2, minRetriesPerSec: 10, windowMs: 10_000 }) per client. */
  readonly budget?: RetryBudget;
  /** Default: a new IdempotencyStore per client. */
  readonly store?: S;
  /** Default 10,000 ms. With `deadlineMs`, sets the settle window an unknown keeps (2 × the smaller). */
  readonly attemptTimeoutMs?: number;
  readonly deadlineMs?: number;
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
   * One logical charge per key (default: a new key per call). A second call with the same key while
   * the first is in flight returns the same promise. Resolves for everything the network or the
   * gateway can do (succeeded, declined, unknown, unavailable); rejects only for programming errors
   * (bad input, `CheckoutRequestError`, `IdempotencyKeyReuseError`) and with the signal's reason when
   * the caller aborts (the key is then unknown if anything may have been sent).
   */
  charge(charge: ChargeRequest, options?: { readonly idempotencyKey?: string; readonly signal?: AbortSignalLike }): Promise<ChargeOutcome>;
  /**
   * Get an unknown charge out of unknown by re-sending it with the SAME key: a gateway that honours
   * keys replays the first outcome, processes it once, or answers 409 while it still runs (then it
   * stays `unknown`). The outcome also settles the store (succeeded → replayed from now on; declined
   * → key free). `charge` is needed only when this client did not make the charge (after a reload).
   * Without a key: every unknown key of the store, one after another.
   */
  reconcile(key: string, charge?: ChargeRequest): Promise<ChargeOutcome>;
  reconcile(): Promise<ChargeOutcome[]>;
}

export function createCheckoutClient<S extends CheckoutStore = IdempotencyStore<ChargeOutcome>>(options: CheckoutClientOptions<S>): CheckoutClient<S>;

/** The gateway rejected the request itself (400, 401, 404…): a programming error, thrown. */
export class CheckoutRequestError extends SteadfastError {
  constructor(status: number, body: unknown);
  readonly code: 'CHECKOUT_REJECTED';
  readonly status: number;
  readonly body: unknown;
}

// ---------------------------------------------------------------------------------------------
// Shared state: many processes (a state store, Redis) and many tabs (BroadcastChannel, storage)

/** A store call failed or timed out (`timeoutMs`). Idempotency never starts a charge it cannot record. */
export class StateStoreUnavailableError extends SteadfastError {
  readonly code: 'STORE_UNAVAILABLE';
  /** The store operation: 'acquire' | 'record' | 'state' | 'isolate' | 'reset' | 'begin' | 'complete' | 'peek' | 'resolve' | 'unknownKeys'. */
  readonly op: string;
  readonly key?: string;
}

/** What `onStoreError` receives. */
export interface StoreErrorEvent {
  readonly op: string;
  readonly error: StateStoreUnavailableError;
  /** The breaker's name (breaker events). */
  readonly name?: string;
  /** The idempotency key (idempotency events). */
  readonly key?: string;
}

/** Internal numbers: state 0 closed, 1 open, 2 half-open, 3 isolated; transition -1 = none. */
export interface BreakerStoreHandle {
  acquire(): Promise<{ granted: boolean; state: number; permit?: unknown; retryInMs: number; transition: number }>;
  record(permit: unknown, failed: boolean): Promise<{ state: number; transition: number }>;
  state(): Promise<{ state: number; retryInMs: number }>;
  isolate(): Promise<{ state: number; transition: number }>;
  reset(): Promise<{ state: number; transition: number }>;
}

export interface IdempotencyStoreHandle {
  begin(key: string, fingerprint: string | undefined, token: string): Promise<
    | { status: 'run'; startedAt?: number; token: unknown }
    | { status: 'done'; result: unknown }
    | { status: 'in-flight'; startedAt: number }
    | { status: 'unknown'; startedAt: number; error: string }
    | { status: 'mismatch' }
  >;
  /** `meta`: what an unknown record keeps for reconcile. */
  complete(key: string, token: unknown, outcome: 'done' | 'unknown' | 'failed', value: unknown, meta?: UnknownRecordMeta): Promise<boolean>;
  peek(key: string): Promise<IdempotencyRecord<unknown> | undefined>;
  /** 1 settled, -2 no record, -3 not unknown. */
  resolve(key: string, outcome: 'done' | 'failed', result?: unknown): Promise<1 | -2 | -3>;
  unknownKeys(): Promise<string[]>;
}

/** The async state-store interface behind SharedCircuitBreaker and SharedIdempotencyStore. */
export interface StateStore {
  readonly kind: string;
  breaker(name: string, config: object): BreakerStoreHandle;
  idempotency(options: { readonly ttlMs: number; readonly inFlightLeaseMs: number }): IdempotencyStoreHandle;
}

/** In-process store (the default): the wasm core decides, through CircuitBreaker and IdempotencyStore. */
export function memoryStateStore(): StateStore;

/** A node-redis (4+) or ioredis (5+) client, connected by you. steadfast depends on neither. */
export type RedisClientLike = { sendCommand(args: string[]): Promise<unknown> } | { call(...args: string[]): Promise<unknown>; evalsha: Function };

export interface RedisStoreOptions {
  readonly client: RedisClientLike;
  /** Key namespace. Default 'steadfast'. */
  readonly prefix?: string;
  /** Bound on every Redis call (ms). Default 250. */
  readonly timeoutMs?: number;
}

/** Every decision is one Lua script on Redis's clock (TIME); every call is bounded by timeoutMs. */
export function redisStateStore(options: RedisStoreOptions): StateStore;

type SharedBreakerExtra = {
  /** Breakers with the same store and name share one state. */
  readonly name: string;
  /** Default: the process's memory store. */
  readonly store?: StateStore;
  /** Store unreachable: 'local' (default) runs an in-process breaker with the same options; 'reject' rejects with StateStoreUnavailableError. */
  readonly whenUnavailable?: 'local' | 'reject';
  /** How long a process answers "open" by itself before asking again. Default 1000 (remote stores), 0 (memory). */
  readonly localCacheMs?: number;
  readonly onStoreError?: (event: StoreErrorEvent) => void;
  readonly onStateChange?: (state: BreakerState | 'isolated') => void;
  readonly clock?: never;
  readonly state?: never;
};
export type SharedBreakerOptions =
  | (Omit<RateBreakerOptions, 'clock' | 'state' | 'onStateChange'> & SharedBreakerExtra)
  | (Omit<ConsecutiveBreakerOptions, 'clock' | 'state' | 'onStateChange'> & SharedBreakerExtra);

export class SharedCircuitBreaker {
  constructor(options: SharedBreakerOptions);
  readonly name: string;
  /** The state this process last saw. */
  readonly currentState: BreakerState | 'isolated';
  execute<T>(fn: () => Promise<T> | T): Promise<T>;
  execute<T, F>(fn: () => Promise<T> | T, fallback: () => Promise<F> | F): Promise<T | F>;
  /** Ask the store now. */
  state(): Promise<BreakerState | 'isolated'>;
  isolate(): Promise<void>;
  reset(): Promise<void>;
}
export function createSharedBreaker(options: SharedBreakerOptions): SharedCircuitBreaker;
export function createRedisBreaker(options: SharedBreakerOptions & RedisStoreOptions): SharedCircuitBreaker;

export interface SharedIdempotencyStoreOptions {
  /** Default: a new memory store. */
  readonly store?: StateStore;
  /** How long done records replay. Default 86_400_000 (24 h). */
  readonly ttlMs?: number;
  /** An in-flight record whose owner has not reported for this long reads as unknown. Default 120_000. */
  readonly inFlightLeaseMs?: number;
  readonly isTransient?: (error: unknown) => boolean;
  readonly onStoreError?: (event: StoreErrorEvent) => void;
}

/** IdempotencyStore's contract over a shared store; results must be JSON-serialisable for Redis. */
export class SharedIdempotencyStore<T = unknown> {
  constructor(options?: SharedIdempotencyStoreOptions);
  /** Rejects with StateStoreUnavailableError without calling `fn` when the start cannot be recorded. */
  run(key: string, fn: () => Promise<T> | T, options?: RunOptions): Promise<T>;
  peek(key: string): Promise<IdempotencyRecord<T> | undefined>;
  resolve(key: string, outcome: Resolution<T>): Promise<void>;
  unknownKeys(): Promise<string[]>;
}
export function createSharedIdempotencyStore<T = unknown>(options?: SharedIdempotencyStoreOptions): SharedIdempotencyStore<T>;
export function createRedisIdempotencyStore<T = unknown>(options: SharedIdempotencyStoreOptions & RedisStoreOptions): SharedIdempotencyStore<T>;

export interface TabSharing {
  readonly channel: string;
  /** Call it from the breaker's onStateChange. */
  onStateChange(state: BreakerState | 'isolated'): void;
  close(): void;
}
/** Share a CircuitBreaker's trips with the origin's other tabs (BroadcastChannel). */
export function shareBreakerAcrossTabs(
  breaker: CircuitBreaker,
  options?: { readonly channel?: string; readonly BroadcastChannel?: unknown; readonly onRemote?: (event: { type: 'open'; until: number } | { type: 'closed' }) => void },
): TabSharing;

export type CheckoutKeyStatus = 'new' | 'in-flight' | 'unknown' | 'succeeded' | 'declined' | 'replaced';
export interface CheckoutKeyState {
  readonly key: string;
  readonly status: CheckoutKeyStatus;
  readonly startedAt?: number;
  /** A charge was in flight when its page went away (reload, crash): its outcome is unknown. */
  readonly interrupted?: boolean;
  readonly outcome?: ChargeOutcome;
}
export interface PersistentCheckoutKey {
  readonly key: string;
  readonly cartId: string;
  state(): Promise<CheckoutKeyState>;
  /** `{ status: 'in-flight' }` when another tab is charging; `{ status: 'unknown' }` after an interrupted/unknown charge unless `resume`. */
  charge(
    client: CheckoutClient,
    charge: ChargeRequest,
    options?: { readonly resume?: boolean; readonly signal?: AbortSignalLike },
  ): Promise<ChargeOutcome | { readonly status: 'in-flight' | 'unknown' | 'replaced'; readonly key: string }>;
  clear(): void;
}
/** One idempotency key per cart, kept in `storage` (default localStorage) across reloads and tabs. */
export function persistentCheckoutKey(options: {
  readonly cartId: string;
  readonly storage?: { getItem(key: string): string | null; setItem(key: string, value: string): void; removeItem?(key: string): void };
  /** Default navigator.locks; null to go without (no cross-tab mutual exclusion). */
  readonly locks?: unknown;
}): Promise<PersistentCheckoutKey>;
