// Why: one import point for the shared-state layer: the state-store interface and its memory and
// Redis implementations, the drivers over them, and the browser helpers (tabs, reload-safe keys).

import { redisStateStore } from './redis.js';
import { SharedCircuitBreaker } from './breaker.js';
import { SharedIdempotencyStore } from './idempotency.js';

export { StateStoreUnavailableError } from './errors.js';
export { memoryStateStore } from './store.js';
export { redisStateStore } from './redis.js';
export { SharedCircuitBreaker, createSharedBreaker } from './breaker.js';
export { SharedIdempotencyStore, createSharedIdempotencyStore } from './idempotency.js';
export { shareBreakerAcrossTabs, persistentCheckoutKey } from './tabs.js';

/**
 * A circuit breaker shared by every process using the same Redis, `prefix` and `name`.
 * `{ client, name, prefix = 'steadfast', timeoutMs = 250, ...SharedCircuitBreaker options }`.
 */
export function createRedisBreaker(options) {
  const { client, prefix, timeoutMs, ...rest } = options ?? {};
  return new SharedCircuitBreaker({ ...rest, store: redisStateStore({ client, prefix, timeoutMs }) });
}

/**
 * Idempotency records shared by every process using the same Redis and `prefix`.
 * `{ client, prefix = 'steadfast', timeoutMs = 250, ttlMs = 24 h, inFlightLeaseMs = 120 s, isTransient, onStoreError }`.
 */
export function createRedisIdempotencyStore(options) {
  const { client, prefix, timeoutMs, ...rest } = options ?? {};
  return new SharedIdempotencyStore({ ...rest, store: redisStateStore({ client, prefix, timeoutMs }) });
}
