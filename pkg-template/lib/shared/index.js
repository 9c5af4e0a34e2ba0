// Why: one import point for the shared-state layer: the state-store interface and its memory and
// Redis implementations, the drivers over them, and the browser helpers (tabs, reload-safe keys).

import { REDIS_OPTIONS, redisStateStore } from './redis.js';
import { SHARED_BREAKER_OPTIONS, SharedCircuitBreaker } from './breaker.js';
import { SHARED_STORE_OPTIONS, SharedIdempotencyStore } from './idempotency.js';
import * as o from '../options.js';

/**
 * Split own options into the Redis store's and the driver's (inherited properties are ignored),
 * after refusing a name near one of either (`driver`: the driver's option names).
 */
function split(options, where, driver) {
  const opts = o.misspelt(o.object(options, where), [...REDIS_OPTIONS, ...driver], where);
  const redis = Object.create(null);
  const rest = Object.create(null);
  for (const k of Object.keys(opts)) (REDIS_OPTIONS.includes(k) ? redis : rest)[k] = opts[k];
  return { redis, rest };
}

export { StateStoreUnavailableError, StoreAmnesiaError, StoreFullError } from './errors.js';
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
  const { redis, rest } = split(options, 'createRedisBreaker', SHARED_BREAKER_OPTIONS);
  rest.store = redisStateStore(redis);
  return new SharedCircuitBreaker(rest);
}

/**
 * Idempotency records shared by every process using the same Redis and `prefix`.
 * `{ client, prefix = 'steadfast', timeoutMs = 250, evictionPolicy = 'refuse', persistence = 'warn', buckets = 64,
 * waitReplicas = 0, waitTimeoutMs = 100, firstUse = 'initialize', legacyLayout = 'refuse', onWarning, ttlMs = 24 h,
 * inFlightLeaseMs = 120 s, maxRecords = 1,000,000, unknownTtlMs = 30 days, isTransient, onStoreError, onLateCompletion }`.
 */
export function createRedisIdempotencyStore(options) {
  const { redis, rest } = split(options, 'createRedisIdempotencyStore', SHARED_STORE_OPTIONS);
  rest.store = redisStateStore(redis);
  return new SharedIdempotencyStore(rest);
}
