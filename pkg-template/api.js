// The public API of steadfast. Loaded by index.node.js / index.browser.js after the wasm core is
// instantiated; nothing here calls into wasm at import time.

export { fullJitter, equalJitter, decorrelatedJitter, withRetry, DEFAULT_RETRY_POLICY } from './lib/retry.js';
import { isTransientError as transient, parseRetryAfter as retryAfter } from './lib/classify.js';
export { isFetchNetworkError } from './lib/classify.js';
export { CircuitBreaker } from './lib/breaker.js';
export { RetryBudget } from './lib/budget.js';
import { retryErrorClass as errorClass } from './lib/quota.js';
export { RetryQuota } from './lib/quota.js';
export { RateLimiter } from './lib/limiter.js';
export { IdempotencyStore } from './lib/idempotency.js';
import { newIdempotencyKey as newKey } from './lib/idempotency.js';
export { chargeCustomer, chargeFingerprint } from './lib/charge.js';
export { reconcile } from './lib/reconcile.js';
export { resilientFetch, BreakerRegistry } from './lib/fetch.js';
import { gatewayDialect as resolveDialect, isReplayed as replayed } from './lib/dialect.js';
export { createCheckoutClient, CheckoutRequestError, UnknownEndpointError } from './lib/checkout.js';
export {
  SteadfastError,
  CircuitOpenError,
  DuplicateRequestError,
  OutcomeUnknownError,
  IdempotencyKeyReuseError,
  IdempotencyKeyExpiredError,
  RetryBudgetExhaustedError,
  DeadlineExceededError,
  IdempotencyStateError,
  OfflineError,
  WasmUnavailableError,
  PermanentError,
  isSteadfastError,
} from './lib/errors.js';
export { wrap, pipeline, retry, timeout, bulkhead, fallback, idempotency, hedge, TimeoutError, BulkheadRejectedError } from './lib/policies.js';
export { HedgeNotSafeError } from './lib/hedge.js';
export { events } from './lib/events.js';
import { version as coreVersion } from './steadfast_core.js';
import { seedRandom as reseed } from './lib/random.js';
import { requireCore } from './lib/loader.js';
export { init } from './lib/loader.js';
export {
  StateStoreUnavailableError,
  StoreAmnesiaError,
  StoreFullError,
  memoryStateStore,
  redisStateStore,
  SharedCircuitBreaker,
  createSharedBreaker,
  SharedIdempotencyStore,
  createSharedIdempotencyStore,
  createRedisBreaker,
  createRedisIdempotencyStore,
  shareBreakerAcrossTabs,
  persistentCheckoutKey,
} from './lib/shared/index.js';

// The exports that call into wasm directly (not through a constructor, which options.core guards)
// check first, so that a failed load reports WasmUnavailableError, not an engine TypeError.

/** Whether an error is worth retrying (see index.d.ts). */
export function isTransientError(error) {
  requireCore('isTransientError');
  return transient(error);
}

/** A Retry-After value in ms from `nowMs`; NaN if unparseable. */
export function parseRetryAfter(value, nowMs) {
  requireCore('parseRetryAfter');
  return retryAfter(value, nowMs);
}

/** The retry quota's class of an error: 'timeout', 'throttled' or 'serverError' (see index.d.ts). */
export function retryErrorClass(error) {
  requireCore('retryErrorClass');
  return errorClass(error);
}

/** A UUID v4 from the platform CSPRNG. */
export function newIdempotencyKey() {
  requireCore('newIdempotencyKey');
  return newKey();
}

/** Reseed the generator behind the jitter functions and withRetry. */
export function seedRandom(seed) {
  requireCore('seedRandom');
  reseed(seed);
}

/** The crate version. */
export function version() {
  requireCore('version');
  return coreVersion();
}

/** A gateway dialect, resolved and validated by the core (see index.d.ts). */
export function gatewayDialect(dialect) {
  requireCore('gatewayDialect');
  return resolveDialect(dialect);
}

/** Whether a Response carries the dialect's replay marker (see index.d.ts). */
export function isReplayed(response, dialect) {
  requireCore('isReplayed');
  return replayed(response, dialect);
}
