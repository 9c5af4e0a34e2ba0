// The public API of steadfast. Loaded by index.node.js / index.browser.js after the wasm core is
// instantiated; nothing here calls into wasm at import time.

export { fullJitter, equalJitter, decorrelatedJitter, withRetry } from './lib/retry.js';
export { isTransientError, isFetchNetworkError, parseRetryAfter } from './lib/classify.js';
export { CircuitBreaker } from './lib/breaker.js';
export { RetryBudget } from './lib/budget.js';
export { IdempotencyStore, newIdempotencyKey } from './lib/idempotency.js';
export { chargeCustomer } from './lib/charge.js';
export { reconcile } from './lib/reconcile.js';
export { resilientFetch, BreakerRegistry } from './lib/fetch.js';
export { createCheckoutClient, CheckoutRequestError } from './lib/checkout.js';
export {
  SteadfastError,
  CircuitOpenError,
  DuplicateRequestError,
  OutcomeUnknownError,
  IdempotencyKeyReuseError,
  RetryBudgetExhaustedError,
  DeadlineExceededError,
  IdempotencyStateError,
  OfflineError,
  isSteadfastError,
} from './lib/errors.js';
export { version } from './steadfast_core.js';
export { seedRandom } from './lib/random.js';
export {
  StateStoreUnavailableError,
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
