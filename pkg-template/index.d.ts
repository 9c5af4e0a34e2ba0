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

/** The platform's `AbortSignal` (from the `dom` lib or @types/node); `AbortSignalLike` with neither. */
export type PlatformAbortSignal = typeof globalThis extends { AbortSignal: { prototype: infer S } } ? S : AbortSignalLike;

// ---------------------------------------------------------------------------------------------
// Loading

/**
 * Settles when loading the WebAssembly core has ended: resolves when it is ready, rejects with
 * `WasmUnavailableError` when it could not load (a Content-Security-Policy without
 * `'wasm-unsafe-eval'`, a 404 or wrong MIME type for the .wasm, Deno without `--allow-read`).
 * It follows the LATEST load: after a failed load, a successful `init(...)` makes it resolve.
 * Importing steadfast never rejects because of the wasm, and nobody has to listen to `ready`: every
 * call that needs the core throws (or, for async APIs, rejects with) a fresh `WasmUnavailableError`
 * until it has loaded. Constructing never needs the core: a `CircuitBreaker`, `RetryBudget`,
 * `RetryQuota`, `RateLimiter`, `IdempotencyStore`, `BreakerRegistry`, `retry()` policy or checkout
 * client made before it loaded works from its first call after it has (options only the core
 * validates, such as ranges, are then checked at that first call); a checkout client's `charge()`
 * resolves `{ status: 'unavailable', reason: 'wasm' }` until then.
 *
 * Each host gets its loader by export condition: Node (and Deno) compile the file next to the code
 * synchronously, so `ready` is already settled at import; Bun does too, from a file that
 * `bun build --compile` embeds; Cloudflare Workers (`workerd`) and Next.js's edge runtime
 * (`edge-light`) import the wasm as a module and instantiate it before the import ends; browsers and
 * bundlers fetch it, and the import waits. `steadfast/lazy` (same declarations) does not wait for the
 * wasm at import in browsers: await `ready` before the first call.
 */
export const ready: Promise<void>;

/** Where `init()` may load the core from: a URL, a fetch Response, the bytes, or a compiled module. */
export type WasmSource = string | { readonly href: string } | ArrayBuffer | ArrayBufferView | FetchResponse | Promise<FetchResponse> | WasmModule;
/** `WebAssembly.Module` from the environment's lib (`never` when it has none). */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } } ? M : never;

/**
 * Load the core again after a failure, optionally from `source` (browser: a URL or Response, bytes, or a
 * `WebAssembly.Module`; Node, Deno and Bun: bytes or a `WebAssembly.Module`; Workers and Next.js edge:
 * the `WebAssembly.Module` of `import wasm from 'steadfast/steadfast_core_bg.wasm'`). It settles `ready`
 * too: after a failed load, a successful `init` makes `ready` resolve. A core that has loaded is kept:
 * then it resolves at once. With no argument while the first load is running, it returns that load.
 */
export function init(source?: WasmSource): Promise<void>;

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
  /**
   * Aborts when the caller's `signal` aborts or `maxElapsedMs` passes; undefined when neither is set.
   * The platform's `AbortSignal` type, so `fetch(url, { signal })` type-checks (with
   * `exactOptionalPropertyTypes`, pass `signal ?? null`).
   */
  readonly signal: PlatformAbortSignal | undefined;
}

/** Frozen (`Object.freeze`) on every retry. */
export interface RetryInfo {
  /** The attempt that just failed, from 1. */
  readonly attempt: number;
  /** The delay before the next attempt. */
  readonly delayMs: number;
  /** What the failed attempt threw (undefined when `retryOnResult` rejected a result). */
  readonly error: unknown;
  /** The result `retryOnResult` asked to retry, when that is why. */
  readonly result?: unknown;
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
   * the call); only `true` retries. A `PermanentError` is never retried. Throwing p-retry's
   * `AbortError` does not stop steadfast (it is just another error to classify): throw a
   * `PermanentError`, or return false here.
   */
  readonly isRetryable?: (error: unknown) => boolean | PromiseLike<boolean>;
  /**
   * Retry on a returned result, not only on a thrown error (cockatiel's `handleResultType`, Polly's
   * `HandleResult`): true retries (same delays, budget and deadline); when no attempt is left, the
   * last result is returned. Default: none.
   */
  readonly retryOnResult?: (result: unknown) => boolean;
  /** Called before each sleep. A throwing callback rejects the call. */
  readonly onRetry?: (info: RetryInfo) => void;
  /** Consulted before every retry (never the first attempt); a RetryQuota is also refunded on success. Default: none. */
  readonly budget?: RetryBudget | RetryQuota;
  /** Paces every attempt, the first included, and learns from its 429s. Default: none. */
  readonly rateLimiter?: RateLimiter;
  /** `true`: a `new RateLimiter()` of this policy's own (ignored when `rateLimiter` is given). Default false. */
  readonly adaptive?: boolean;
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
export function withRetry<T>(fn: (ctx: RetryContext) => Promise<T> | T, policy?: RetryPolicy): Promise<T>;

/**
 * The policy `withRetry` uses when given none: `{ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 10_000 }`,
 * full jitter, retrying what `isTransientError` accepts. Frozen; spread it to change a field.
 */
export const DEFAULT_RETRY_POLICY: Readonly<{ maxAttempts: 3; baseDelayMs: 100; maxDelayMs: 10_000 }> & RetryPolicy;

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
  execute<T>(fn: () => Promise<T> | T): Promise<T>;
  execute<T, F>(fn: () => Promise<T> | T, fallback: () => Promise<F> | F): Promise<T | F>;
  /** Hold open until `reset()`. */
  isolate(): void;
  /** Close and forget every outcome. */
  reset(): void;
  /** Open until `untilMs` (breaker clock) because a peer saw it trip; clamped to now + openDurationMs. */
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
// Throttling: weighted retry quota and adaptive rate limiter (issue 18)

/** How the quota charges a failure: 429 → throttled; no response (timeout, network error) or 408 → timeout; else serverError. */
export type RetryErrorClass = 'timeout' | 'throttled' | 'serverError';

/** The class `RetryQuota` charges `error` by. */
export function retryErrorClass(error: unknown): RetryErrorClass;

export interface RetryQuotaOptions {
  /**
   * `'steadfast'` (default): capacity 500; a retry costs 10 after a timeout, 5 after a 429, 5 after
   * another failure; a success without retry refunds 1. `'aws'`: the AWS SDK v3 standard mode
   * (`@smithy/util-retry`): 500; 10, 5, 10 (500/502/503/504 are "transient" there); refund 1.
   */
  readonly preset?: 'steadfast' | 'aws';
  /** Tokens when full (integer ≥ 1); it starts full. */
  readonly capacity?: number;
  /** Integer ≥ 0. */
  readonly timeoutCost?: number;
  /** Integer ≥ 0. */
  readonly throttledCost?: number;
  /** Integer ≥ 0. */
  readonly serverErrorCost?: number;
  /** Refund of a success without retry (integer ≥ 0). A success after retries refunds its last retry's cost. */
  readonly successRefund?: number;
}

/**
 * A weighted retry quota, usable wherever a RetryBudget is (`budget` of withRetry, resilientFetch,
 * the checkout client). Local to the process (or tab) that holds it.
 */
export class RetryQuota {
  constructor(options?: RetryQuotaOptions);
  /** Pay for one retry after `error` (by its class): true if the quota covers it. */
  tryConsume(error: unknown): boolean;
  /** Report a success; `retryCost` = what its last retry paid (omit when it never retried). */
  recordSuccess(retryCost?: number): void;
  readonly capacity: number;
  readonly available: number;
}

export interface RateLimiterOptions {
  /**
   * `'cubic'` (default): CUBIC with the AWS SDK's constants plus our rules (one cut per burst of
   * 429s; a throttle before the first half-second is measured, not taken as rate 0).
   * `'aws'`: the AWS SDK's `DefaultRateLimiter` exactly. `'aimd'`: additive increase,
   * multiplicative decrease (beta 0.5, increasePerSec 10).
   */
  readonly preset?: 'cubic' | 'aws' | 'aimd';
  /** Share of the rate kept on a throttle, in (0, 1). Default 0.7 (AIMD 0.5). */
  readonly beta?: number;
  /** CUBIC's C. Default 0.4. */
  readonly scaleConstant?: number;
  /** Weight of the newest half-second in the measured rate, in (0, 1]. Default 0.8. */
  readonly smooth?: number;
  /** Floor of the send rate (per second, > 0). Default 0.5. */
  readonly minRatePerSec?: number;
  /** Floor of the bucket size (> 0). Default 1. */
  readonly minCapacity?: number;
  /** AIMD's additive increase (per second, per second). Default 10. */
  readonly increasePerSec?: number;
  /** Longest Retry-After honoured (ms). Default 60,000. */
  readonly maxHoldMs?: number;
  /** Monotonic clock (ms). Default `performance.now`. */
  readonly clock?: () => number;
}

/**
 * An adaptive client-side rate limiter: a token bucket whose rate follows the server's 429s
 * (CUBIC as the AWS SDKs' adaptive mode, or AIMD), applied before every attempt; a Retry-After
 * holds every send until it passes. Off (no waiting) until the first 429. Local to one process
 * or tab by design: it learns from that process's own answers, as each AWS SDK client does.
 */
export class RateLimiter {
  constructor(options?: RateLimiterOptions);
  /** Wait until a send is allowed (rejects with `signal.reason` if it aborts first). */
  acquire(signal?: AbortSignalLike): Promise<void>;
  /** Report an answer (withRetry, resilientFetch and the checkout client do it for you). */
  record(outcome: { readonly throttled?: boolean; readonly retryAfterMs?: number; readonly sentAtMs?: number }): void;
  /** Run `fn` once, paced: acquire, call, report its outcome (a 429 is a throttle). */
  run<T>(fn: () => Promise<T> | T, signal?: AbortSignalLike): Promise<T>;
  readonly preset: 'cubic' | 'aws' | 'aimd';
  /** Current send rate (per second). */
  readonly ratePerSec: number;
  /** Measured rate of answers (per second). */
  readonly measuredRatePerSec: number;
  /** Whether a 429 has switched pacing on. */
  readonly enabled: boolean;
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

/**
 * Options of `run()`. `fingerprint` and `scope` bind the key to one request. `fingerprint`: the
 * request (any string; `chargeCustomer` and the checkout client use the whole charge, canonical
 * JSON). `scope`: the principal a client-supplied key belongs to (a customer or tenant id): another
 * scope's use of the key is `IdempotencyKeyReuseError`, never a replay of this one's result. Both are
 * hashed by the core (SHA-256, first 128 bits).
 */
export interface RunOptions {
  /** Binds the key to one request: another fingerprint (or none) rejects with `IdempotencyKeyReuseError`. */
  readonly fingerprint?: string;
  /** The principal a client-supplied key belongs to. */
  readonly scope?: string;
  /** The settle window to keep if this run ends unknown (an OutcomeUnknownError's own wins). */
  readonly settleAfterMs?: number;
  /** Updated by the caller as attempts start (`attempts`, `lastAttemptAt`); read if the run ends unknown. */
  readonly progress?: { attempts?: number; lastAttemptAt?: number };
}

/**
 * How reconciliation settles an unknown key. With `startedAt` (from `peek()`), only the attempt that
 * began then is settled (compare-and-set): a stale answer about an earlier attempt cannot free a
 * newer one (it rejects with `KEY_WRONG_STATE`).
 */
export type Resolution<T> =
  { readonly status: 'done'; readonly result: T; readonly startedAt?: number } | { readonly status: 'failed'; readonly startedAt?: number };

export interface IdempotencyStoreOptions {
  /** How long a done key replays its result (ms). Default 86,400,000 (24 h). Unknown keys never expire. */
  readonly ttlMs?: number;
  /**
   * Records held at most (in flight, unknown, done within the TTL). Default 1,000,000. A new key
   * beyond it rejects with `StoreFullError` before anything runs; nothing live is evicted.
   */
  readonly maxRecords?: number;
  /** Clock (ms). Default `Date.now`. */
  readonly clock?: () => number;
  /** Which failures park a key as unknown. Default `isTransientError`. */
  readonly isTransient?: (error: unknown) => boolean;
}

export class IdempotencyStore<T = unknown> {
  constructor(options?: IdempotencyStoreOptions);
  /**
   * Run `fn` once per key. Keys are 1–255 printable ASCII characters, not starting or ending with a
   * space. `fingerprint` and `scope` bind the key to one request: another request (or none, when the
   * key was bound to one) rejects with `IdempotencyKeyReuseError`, in every status. A new key in a
   * full store rejects with `StoreFullError`.
   * The result type is `fn`'s (a subtype of the store's `T`): a replay returns what that key's `fn` returned.
   */
  run<R extends T = T>(key: string, fn: () => Promise<R> | R, options?: RunOptions): Promise<R>;
  peek(key: string): IdempotencyRecord<T> | undefined;
  /** Settle an unknown key (reconciliation). */
  resolve(key: string, outcome: Resolution<T>): void;
  /** Unknown keys, oldest first. */
  unknownKeys(): string[];
  /** Records held. */
  readonly size: number;
  /** The `maxRecords` limit. */
  readonly maxRecords: number;
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
  execute<T>(fn: () => Promise<T> | T): Promise<T>;
  execute<T, F>(fn: () => Promise<T> | T, fallback: () => Promise<F> | F): Promise<T | F>;
}

export interface ChargeDeps<C extends Charge = Charge, R = ChargeResult> {
  /** Its result type is not used to infer `R`: the gateway's is (an `IdempotencyStore()` of unknown fits any). */
  readonly store: IdempotencyRunner<NoInfer<R>>;
  readonly breaker: Executor;
  readonly gateway: (charge: C, ctx: RetryContext) => Promise<R>;
  /** Default `DEFAULT_RETRY_POLICY`. */
  readonly policy?: RetryPolicy;
  /** The principal a client-supplied key belongs to: part of the key's binding (see `RunOptions`). */
  readonly scope?: string;
  /** The settle window (ms) kept on the key if the charge ends unknown (see `reconcile`). Default: none (reconcile's default). */
  readonly settleAfterMs?: number;
}

/**
 * `store.run(key, () => breaker.execute(() => withRetry(() => gateway(charge), policy)))`:
 * idempotency outside, breaker in the middle, retry inside. The key's fingerprint is the whole charge
 * (every own field but `idempotencyKey`, canonical JSON): the same key for another amount, currency
 * or customer is `IdempotencyKeyReuseError`, never a replay. Options are read from own properties.
 */
export function chargeCustomer<C extends Charge = Charge, R = ChargeResult>(charge: C, deps: ChargeDeps<C, R>): Promise<R>;

// ---------------------------------------------------------------------------------------------
// Composable policies (cockatiel-style)

/** What each stage of a policy passes to the function it runs. */
export interface PolicyContext {
  /** The retry attempt, from 1 (1 outside a retry). */
  readonly attempt: number;
  /** Aborts when the caller's signal aborts, a timeout passes, or the retry's deadline passes. */
  readonly signal: PlatformAbortSignal | undefined;
  /** From `execute(fn, { idempotencyKey })`: what an `idempotency(store)` stage keys the call by. */
  readonly idempotencyKey: string | undefined;
  readonly fingerprint: string | undefined;
}

export interface PolicyExecuteOptions {
  readonly signal?: AbortSignalLike;
  /** Required by an `idempotency(store)` stage: the call runs once per key. */
  readonly idempotencyKey?: string;
  /** Binds the key to one request (see `IdempotencyStore.run`). */
  readonly fingerprint?: string;
}

/** A composable policy. `R` is what it adds to the result type (a fallback's value). */
export interface Policy<R = never> {
  execute<T>(fn: (ctx: PolicyContext) => Promise<T> | T, options?: PolicyExecuteOptions): Promise<T | R>;
}

/** Anything `wrap`/`pipeline` accept: a steadfast policy, a CircuitBreaker, a shared breaker, any `execute(fn)`. */
export type PolicyLike<R = never> = Policy<R> | Executor;

type FallbackOf<P> = P extends Policy<infer R> ? R : never;

/** Compose policies, outermost first: `wrap(a, b, c).execute(fn)` runs `a(b(c(fn)))`. */
export function wrap<P extends readonly PolicyLike<unknown>[]>(...policies: P): Policy<FallbackOf<P[number]>>;

export interface PipelineStages<F = never> {
  /** Outermost: answers when everything inside failed. */
  readonly fallback?: Policy<F>;
  /** One run per `idempotencyKey` passed to `execute` (a store, or `idempotency(store)`). */
  readonly idempotency?: IdempotencyRunner<unknown> | Policy;
  readonly bulkhead?: Policy;
  /** A CircuitBreaker or a shared one. */
  readonly breaker?: Executor;
  /** A retry policy (its `budget` included), or `retry(policy)`. */
  readonly retry?: RetryPolicy | Policy;
  /** Per attempt: ms, or `timeout(ms)`. */
  readonly timeout?: number | Policy;
}

/**
 * The seed's order whatever order the stages are written in: fallback → idempotency → bulkhead →
 * breaker → retry (budget) → timeout per attempt → fn. Omitted stages are skipped.
 */
export function pipeline<F = never>(stages: PipelineStages<F>): Policy<F>;

/** `withRetry` as a policy (validated and frozen now). Each attempt gets its `attempt` and `signal`. */
export function retry(policy?: RetryPolicy): Policy;

/** Reject with `TimeoutError` after `ms` and abort the context's signal (ms ≥ 0). */
export function timeout(ms: number): Policy;

/** A bulkhead: its policy, plus what it holds now. */
export interface Bulkhead extends Policy {
  stats(): { readonly running: number; readonly queued: number };
}

/**
 * At most `limit` (integer ≥ 1) calls at once; `queue` (default 0; an integer or Infinity) more wait in
 * order; beyond that `BulkheadRejectedError` without running. A waiting call whose signal aborts leaves.
 */
export function bulkhead(limit: number, queue?: number): Bulkhead;

/**
 * Answer `fallback(error)` (or the value) when the call fails and `when(error)` agrees (default: every
 * error). The result type becomes `T | F`.
 */
export function fallback<F>(value: F | ((error: unknown) => Promise<F> | F), options?: { readonly when?: (error: unknown) => boolean }): Policy<F>;

/** An idempotency store as a policy: `execute(fn, { idempotencyKey, fingerprint? })` runs once per key. */
export function idempotency(store: IdempotencyRunner<unknown>): Policy;

// ---------------------------------------------------------------------------------------------
// Events

/** Removes the listener it was returned for (idempotent). */
export type Unsubscribe = () => void;

export interface RetryEvent extends RetryInfo {}
export type GiveUpReason = 'attempts' | 'not-retryable' | 'permanent' | 'deadline' | 'budget';
export type GiveUpEvent =
  | { readonly attempt: number; readonly error: unknown; readonly reason: GiveUpReason }
  | { readonly attempt: number; readonly result: unknown; readonly reason: 'attempts' | 'deadline' | 'budget' };
export interface BreakerStateEvent {
  readonly breaker: CircuitBreaker;
  readonly state: BreakerState | 'isolated';
}
export interface BudgetRefusedEvent {
  readonly attempt: number;
  /** The error the refused retry would have answered. */
  readonly error: unknown;
}
/**
 * `run`: the key is new (or free again) and runs; `replay`, `in-flight`, `unknown`, `mismatch`: what
 * `run()` answered instead of running; `done`, `failed`, `parked-unknown`: how a run settled.
 */
export type IdempotencyOutcome = 'run' | 'replay' | 'in-flight' | 'unknown' | 'mismatch' | 'full' | 'done' | 'failed' | 'parked-unknown';
export interface IdempotencyEvent {
  readonly store: IdempotencyStore<unknown>;
  readonly key: string;
  readonly outcome: IdempotencyOutcome;
}

/**
 * Process-wide events of every steadfast component (this copy of the package). Any number of
 * listeners; each `on…` returns its disposer. A throwing listener never disturbs steadfast or the
 * other listeners: its error is reported as uncaught, asynchronously (like node:diagnostics_channel).
 */
export interface SteadfastEvents {
  /** Before each retry's sleep (every withRetry, retry() policy, chargeCustomer). */
  onRetry(listener: (event: RetryEvent) => void): Unsubscribe;
  /** A retried call failed for good. */
  onGiveUp(listener: (event: GiveUpEvent) => void): Unsubscribe;
  /** A CircuitBreaker changed state. */
  onBreakerStateChange(listener: (event: BreakerStateEvent) => void): Unsubscribe;
  /** A RetryBudget refused a retry. */
  onBudgetRefused(listener: (event: BudgetRefusedEvent) => void): Unsubscribe;
  /** An IdempotencyStore decided or settled a key. */
  onIdempotency(listener: (event: IdempotencyEvent) => void): Unsubscribe;
}
export const events: SteadfastEvents;

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
  | 'OFFLINE'
  | 'STORE_FULL'
  | 'WASM_UNAVAILABLE'
  | 'TIMEOUT'
  | 'BULKHEAD_REJECTED'
  | 'PERMANENT';

/** Base class of steadfast's errors. */
export class SteadfastError extends Error {
  constructor(message: string, code: SteadfastErrorCode, options?: { cause?: unknown });
  readonly code: SteadfastErrorCode;
}
/**
 * The breaker refused the call; nothing was sent. It is flow control, so it carries no stack trace.
 * Each rejection is a fresh object: catch code may tag it (`error.requestId = …`).
 */
export class CircuitOpenError extends SteadfastError {
  constructor(retryAfterMs?: number, message?: string);
  readonly code: 'CIRCUIT_OPEN';
  readonly name: 'CircuitOpenError';
  /** Remaining cooldown when the call was refused (0 while a probe is in flight; Infinity when isolated). */
  retryAfterMs: number;
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

/**
 * The WebAssembly core could not be loaded, so the call that needed it could not run. The message
 * names the cause and the fix (for a Content-Security-Policy: add `'wasm-unsafe-eval'` to `script-src`).
 */
export class WasmUnavailableError extends SteadfastError {
  constructor(cause?: unknown, where?: string);
  readonly code: 'WASM_UNAVAILABLE';
  readonly name: 'WasmUnavailableError';
  /**
   * `'csp'`: a Content-Security-Policy refused WebAssembly; `'permission'`: Deno refused to read the
   * .wasm (run with `--allow-read`); `'load'`: fetching or compiling failed; `'pending'`: still loading.
   */
  readonly reason: 'csp' | 'permission' | 'load' | 'pending';
  /** What the platform threw. */
  readonly cause?: unknown;
}

/**
 * Throw it from inside a retried function to stop at once (p-retry's `AbortError`, a bail):
 * `throw new PermanentError(error)`; withRetry rejects with `error` itself.
 */
export class PermanentError extends SteadfastError {
  constructor(cause: unknown, message?: string);
  readonly code: 'PERMANENT';
  readonly name: 'PermanentError';
  readonly cause: unknown;
}

/** A `timeout(ms)` stage gave up (named 'TimeoutError': `isTransientError` retries it). */
export class TimeoutError extends SteadfastError {
  constructor(timeoutMs: number);
  readonly code: 'TIMEOUT';
  readonly name: 'TimeoutError';
  readonly timeoutMs: number;
}

/** A `bulkhead(limit, queue)` was full; the call did not run. */
export class BulkheadRejectedError extends SteadfastError {
  constructor(limit: number, queue: number);
  readonly code: 'BULKHEAD_REJECTED';
  readonly name: 'BulkheadRejectedError';
  readonly limit: number;
  readonly queue: number;
}

/** A branded TypeError/RangeError: steadfast rejected an input. */
export type SteadfastInputError = (TypeError | RangeError) & {
  readonly code: 'INVALID_OPTION' | 'INVALID_KEY';
  /** The option at fault, when the error is about one. */
  readonly option?: string;
};

/** The error type each `code` comes with, for `isSteadfastError(error, code)`. */
export interface SteadfastErrorsByCode {
  CIRCUIT_OPEN: CircuitOpenError;
  DUPLICATE_IN_FLIGHT: DuplicateRequestError;
  OUTCOME_UNKNOWN: OutcomeUnknownError;
  KEY_REUSED: IdempotencyKeyReuseError;
  RETRY_BUDGET_EXHAUSTED: RetryBudgetExhaustedError;
  DEADLINE_EXCEEDED: DeadlineExceededError;
  OFFLINE: OfflineError;
  STORE_FULL: StoreFullError;
  KEY_NOT_FOUND: IdempotencyStateError & { readonly code: 'KEY_NOT_FOUND' };
  KEY_WRONG_STATE: IdempotencyStateError & { readonly code: 'KEY_WRONG_STATE' };
  INVALID_OPTION: SteadfastInputError & { readonly code: 'INVALID_OPTION' };
  INVALID_KEY: SteadfastInputError & { readonly code: 'INVALID_KEY' };
  RANDOM_UNAVAILABLE: SteadfastError & { readonly code: 'RANDOM_UNAVAILABLE' };
  CHECKOUT_REJECTED: CheckoutRequestError;
  STORE_UNAVAILABLE: StateStoreUnavailableError;
  WASM_UNAVAILABLE: WasmUnavailableError;
  TIMEOUT: TimeoutError;
  BULKHEAD_REJECTED: BulkheadRejectedError;
  PERMANENT: PermanentError;
}

/**
 * Any steadfast error (also a branded TypeError/RangeError for bad input), across package copies.
 * With `code`, only that error, narrowed to its type: `isSteadfastError(e, 'CIRCUIT_OPEN')` → `CircuitOpenError`.
 */
export function isSteadfastError(error: unknown): error is SteadfastError | SteadfastInputError;
export function isSteadfastError<C extends SteadfastErrorCode>(error: unknown, code: C): error is SteadfastErrorsByCode[C];

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
export type FetchInit = typeof globalThis extends { fetch: (input: never, init?: infer I) => unknown }
  ? NonNullable<I>
  : {
      method?: string;
      headers?: Record<string, string> | [string, string][];
      body?: unknown;
      signal?: AbortSignalLike | null;
    };
/** `fetch`'s first argument from the environment's lib. */
export type FetchInput = typeof globalThis extends { fetch: (input: infer I, init?: never) => unknown }
  ? I
  : string | { readonly href: string } | { readonly url: string };
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
  /**
   * Default options: `{ windowSize: 20, minimumCalls: 10, failureRateThreshold: 0.5, openDurationMs: 30_000 }`.
   * `maxOrigins` (default 1000): past it, the oldest closed origin's breaker is dropped (the oldest of
   * all when none is closed), so origins taken from client input cannot grow memory without bound.
   */
  constructor(breakerOptions?: CircuitBreakerOptions & { readonly maxOrigins?: number });
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
  /** A breaker, a registry, options for a per-origin registry, or `false` for none. Default: a registry with `{ windowSize: 20, minimumCalls: 10, failureRateThreshold: 0.5, openDurationMs: 30_000 }`. */
  readonly breaker?: Executor | BreakerRegistry | CircuitBreakerOptions | false;
  /** Default: a RetryBudget({ ratio: 0.2, minRetriesPerSec: 10, windowMs: 10_000 }) per client. */
  readonly budget?: RetryBudget | RetryQuota;
  /** Paces every HTTP attempt (first included). Default: none. */
  readonly rateLimiter?: RateLimiter;
  /** `true`: the process-wide per-origin limiter of `resilientFetch({ adaptive: true })`. Default false. */
  readonly adaptive?: boolean;
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

/** A store holds `maxRecords` live records: a NEW key is refused before anything runs (nothing live is evicted). */
export class StoreFullError extends SteadfastError {
  readonly code: 'STORE_FULL';
  readonly key: string;
  readonly maxRecords: number;
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

/** A shared breaker's state as a store handle answers it (the names `onStateChange` reports). */
export type BreakerStoreState = BreakerState | 'isolated';

/** The state a store call moved the breaker to (what `onStateChange` then reports), or 'none'. */
export type BreakerStoreTransition = BreakerStoreState | 'none';

/**
 * One breaker in a store. Every answer speaks state names; `permit` is the store's own opaque
 * token, handed back unchanged to `record`. `retryInMs`: how long a refused call waits (`Infinity`
 * while isolated); `state()` answers the open circuit's remaining cooldown, else 0.
 */
export interface BreakerStoreHandle {
  acquire(): Promise<{ granted: boolean; state: BreakerStoreState; permit?: unknown; retryInMs: number; transition: BreakerStoreTransition }>;
  record(permit: unknown, failed: boolean): Promise<{ state: BreakerStoreState; transition: BreakerStoreTransition }>;
  state(): Promise<{ state: BreakerStoreState; retryInMs: number }>;
  isolate(): Promise<{ state: BreakerStoreState; transition: BreakerStoreTransition }>;
  reset(): Promise<{ state: BreakerStoreState; transition: BreakerStoreTransition }>;
}

export interface IdempotencyStoreHandle {
  /**
   * `fingerprint`: the fingerprint TEXT; the store hashes it (Redis: the core's SHA-256/128, the same
   * in every process; the memory state store: a SipHash-128 keyed by its own secret seed).
   */
  begin(
    key: string,
    fingerprint: string | undefined,
    token: string,
  ): Promise<
    | { status: 'run'; startedAt?: number; token: unknown }
    | { status: 'done'; result: unknown }
    | { status: 'in-flight'; startedAt: number }
    | { status: 'unknown'; startedAt: number; error: string }
    | { status: 'mismatch' }
    | { status: 'full'; maxRecords: number }
  >;
  /**
   * `meta`: what an unknown record keeps for reconcile. 'late': the record was settled (or taken by
   * another attempt) before this owner reported.
   */
  complete(key: string, token: unknown, outcome: 'done' | 'unknown' | 'failed', value: unknown, meta?: UnknownRecordMeta): Promise<'ok' | 'late'>;
  peek(key: string): Promise<IdempotencyRecord<unknown> | undefined>;
  resolve(key: string, outcome: 'done' | 'failed', result?: unknown, startedAt?: number): Promise<'resolved' | 'not-found' | 'wrong-state'>;
  unknownKeys(): Promise<string[]>;
}

/** A shared breaker's options as a store receives them (defaults filled in). */
export type SharedBreakerConfig =
  | { readonly kind: 'consecutive'; readonly failureThreshold: number; readonly openDurationMs: number; readonly probesToClose: number }
  | {
      readonly kind: 'rate';
      readonly windowSize: number;
      readonly failureRateThreshold: number;
      readonly minimumCalls: number;
      readonly openDurationMs: number;
      readonly probesToClose: number;
    };

/** The async state-store interface behind SharedCircuitBreaker and SharedIdempotencyStore. */
export interface StateStore {
  readonly kind: string;
  breaker(name: string, config: SharedBreakerConfig): BreakerStoreHandle;
  /** `maxRecords` and `unknownTtlMs` default to the core's (1,000,000 and 30 days). */
  idempotency(options: {
    readonly ttlMs: number;
    readonly inFlightLeaseMs: number;
    readonly maxRecords?: number;
    readonly unknownTtlMs?: number;
  }): IdempotencyStoreHandle;
}

/**
 * In-process store (the default): handles directly on the wasm core (BreakerCore, StoreCore). At most
 * 10,000 breaker names (past it the oldest closed one is dropped); each record set is bounded by its `maxRecords`.
 */
export function memoryStateStore(): StateStore;

/** A node-redis (4+) or ioredis (5+) client, connected by you. steadfast depends on neither. */
export type RedisClientLike =
  | { sendCommand(args: string[]): Promise<unknown> }
  | { call(...args: string[]): Promise<unknown>; evalsha(sha: string, numKeys: number | string, ...args: (string | number)[]): Promise<unknown> };

export interface RedisStoreOptions {
  readonly client: RedisClientLike;
  /**
   * This service's name (1–64 letters, digits, `.`, `_`, `-`): the default prefix becomes
   * `steadfast:<service>`, so two services on one Redis never share a breaker or a key by accident.
   */
  readonly service?: string;
  /**
   * Key namespace; overrides the one `service` gives. Default `'steadfast:<service>'`, or
   * `'steadfast'` when no service is named — shared by every such store on the Redis, reported
   * through `onWarning` (for each such store), else once per process by `process.emitWarning` (code
   * `STEADFAST_SHARED_PREFIX`).
   */
  readonly prefix?: string;
  /** Bound on every Redis call (ms). Default 250. */
  readonly timeoutMs?: number;
  /**
   * Redis's maxmemory-policy may evict keys (anything but 'noeviction'): 'refuse' (default) rejects
   * idempotency calls with StateStoreUnavailableError (op 'policy'); 'warn' goes on and calls
   * `onWarning` once. Checked on first use and at most once a minute; a Redis that forbids CONFIG
   * cannot be checked and is used as is.
   */
  readonly evictionPolicy?: 'refuse' | 'warn';
  /** Called once for each warning (eviction policy under 'warn', the shared default prefix). */
  readonly onWarning?: (message: string) => void;
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
  /** Live records held at most; a new key beyond it rejects with StoreFullError. Default 1,000,000. */
  readonly maxRecords?: number;
  /** How long Redis keeps an unknown record for reconciliation (ms). Default 2,592,000,000 (30 days). */
  readonly unknownTtlMs?: number;
  /**
   * An owner reported after its record was settled by someone else (its lease lapsed and reconcile
   * resolved it). A late success or unknown re-parks the key as unknown (back on the worklist).
   */
  readonly onLateCompletion?: (event: { readonly key: string; readonly outcome: 'done' | 'unknown' | 'failed' }) => void;
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
  options?: {
    readonly channel?: string;
    readonly BroadcastChannel?: unknown;
    readonly onRemote?: (event: { type: 'open'; until: number } | { type: 'closed' } | { type: 'invalid'; reason: string }) => void;
  },
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
  /** Entries older than this are pruned (ms). Default 86,400,000 (the gateway's key retention). */
  readonly maxAgeMs?: number;
  /** Carts kept per storage, oldest pruned first. Default 100. */
  readonly maxEntries?: number;
}): Promise<PersistentCheckoutKey>;
