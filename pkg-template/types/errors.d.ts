/** Errors: every steadfast error, its `code`, and the brand guard `isSteadfastError`. */

import type { CheckoutRequestError, UnknownEndpointError } from './http.js';
import type { StateStoreUnavailableError, StoreAmnesiaError, StoreFullError } from './shared.js';
import type { HedgeNotSafeError } from './hedge.js';

export type SteadfastErrorCode =
  | 'CIRCUIT_OPEN'
  | 'DUPLICATE_IN_FLIGHT'
  | 'OUTCOME_UNKNOWN'
  | 'KEY_REUSED'
  | 'IDEMPOTENCY_KEY_EXPIRED'
  | 'RETRY_BUDGET_EXHAUSTED'
  | 'DEADLINE_EXCEEDED'
  | 'KEY_NOT_FOUND'
  | 'KEY_WRONG_STATE'
  | 'INVALID_OPTION'
  | 'INVALID_KEY'
  | 'RANDOM_UNAVAILABLE'
  | 'CHECKOUT_REJECTED'
  | 'UNKNOWN_ENDPOINT'
  | 'STORE_UNAVAILABLE'
  | 'OFFLINE'
  | 'HEDGE_NOT_SAFE'
  | 'STORE_FULL'
  | 'STORE_AMNESIA'
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
  /** The key, parked as unknown: blind retries with it are refused until reconciliation settles it. */
  readonly key: string;
  readonly startedAt: number;
  /** The error (or HTTP answer) that ended the run; an earlier attempt may have been processed. */
  readonly cause?: unknown;
  /** When a store parked the key: ms until a lookup's "no charge" can be believed (the settle window from the last attempt). */
  readonly retryAfterMs?: number;
  /** The checkout client: the endpoint that may have processed the charge (reconciliation re-sends there only). */
  readonly endpoint?: string;
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
/**
 * The key is bound to another request: another charge under the same key, or (`reason: 'changed'`)
 * the same charge object changed while its key was in use. Nothing was sent for that request.
 */
export class IdempotencyKeyReuseError extends SteadfastError {
  constructor(key: string, info?: { readonly reason?: 'changed'; readonly cause?: unknown });
  readonly code: 'KEY_REUSED';
  readonly key: string;
  /** `'changed'`: the charge changed between the call and a later attempt (absent otherwise). */
  readonly reason?: 'changed';
  /**
   * With `reason: 'changed'`, what the attempt before the refused one ended with (a 503, a dropped
   * connection); absent when no attempt was sent. A breaker judges the call by it: the refusal
   * itself says nothing about the gateway, the answer before it does.
   */
  readonly cause?: unknown;
}
/**
 * A re-send was refused: the key is older than the gateway's retention window, so the gateway may
 * have forgotten it and would charge again. An earlier attempt may have been processed: settle the
 * charge by lookup (`reconcile(store, lookup)`), never by re-sending.
 */
export class IdempotencyKeyExpiredError extends SteadfastError {
  constructor(key: string, info: { firstUsedAt: number; retentionMs: number; dialect: string; cause?: unknown });
  readonly code: 'IDEMPOTENCY_KEY_EXPIRED';
  readonly key: string;
  /** When the key was first used (ms since the epoch). */
  readonly firstUsedAt: number;
  readonly retentionMs: number;
  /** The dialect's name. */
  readonly dialect: string;
}
export class RetryBudgetExhaustedError extends SteadfastError {
  constructor(cause: unknown, attempt: number);
  readonly code: 'RETRY_BUDGET_EXHAUSTED';
  /** The last attempt's error. */
  readonly cause: unknown;
  readonly attempt: number;
}
export class DeadlineExceededError extends SteadfastError {
  /** @param inFlight default `false`. */
  constructor(maxElapsedMs: number, cause: unknown, attempt: number, inFlight?: boolean);
  readonly code: 'DEADLINE_EXCEEDED';
  /** The last error an attempt ended with before the deadline (undefined if the first attempt was cut off). */
  readonly cause: unknown;
  readonly maxElapsedMs: number;
  readonly attempt: number;
  /**
   * `true`: the deadline cut attempt `attempt` off (it may have reached the server; a breaker
   * judges the call by this error). `false`: no attempt was running — the next retry would not have
   * fitted, or the deadline passed during a sleep — so the call ended with `cause`, and a breaker
   * judges it by `cause`.
   */
  readonly inFlight: boolean;
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
  IDEMPOTENCY_KEY_EXPIRED: IdempotencyKeyExpiredError;
  RETRY_BUDGET_EXHAUSTED: RetryBudgetExhaustedError;
  DEADLINE_EXCEEDED: DeadlineExceededError;
  OFFLINE: OfflineError;
  STORE_FULL: StoreFullError;
  STORE_AMNESIA: StoreAmnesiaError;
  KEY_NOT_FOUND: IdempotencyStateError & { readonly code: 'KEY_NOT_FOUND' };
  KEY_WRONG_STATE: IdempotencyStateError & { readonly code: 'KEY_WRONG_STATE' };
  INVALID_OPTION: SteadfastInputError & { readonly code: 'INVALID_OPTION' };
  INVALID_KEY: SteadfastInputError & { readonly code: 'INVALID_KEY' };
  RANDOM_UNAVAILABLE: SteadfastError & { readonly code: 'RANDOM_UNAVAILABLE' };
  CHECKOUT_REJECTED: CheckoutRequestError;
  UNKNOWN_ENDPOINT: UnknownEndpointError;
  STORE_UNAVAILABLE: StateStoreUnavailableError;
  WASM_UNAVAILABLE: WasmUnavailableError;
  TIMEOUT: TimeoutError;
  BULKHEAD_REJECTED: BulkheadRejectedError;
  PERMANENT: PermanentError;
  HEDGE_NOT_SAFE: HedgeNotSafeError;
}

/**
 * Any steadfast error (also a branded TypeError/RangeError for bad input), across package copies.
 * With `code`, only that error, narrowed to its type: `isSteadfastError(e, 'CIRCUIT_OPEN')` → `CircuitOpenError`.
 * Never throws: a value whose reads throw (a revoked Proxy) is not a steadfast error.
 */
export function isSteadfastError(error: unknown): error is SteadfastError | SteadfastInputError;
export function isSteadfastError<C extends SteadfastErrorCode>(error: unknown, code: C): error is SteadfastErrorsByCode[C];
