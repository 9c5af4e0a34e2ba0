// Why: the numbers a caller gets without naming an option (the shared ratio budget, the retry
// policy and per-origin breaker of resilientFetch and the checkout client, the checkout's attempt
// timeout) live once, in the core's `Default` impls (src/core budget RatioOptions, retry
// RetryOptions, breaker RateOptions, reconcile CHECKOUT_ATTEMPT_TIMEOUT_MS), which the Rust fetch
// uses too. They are read here once, on first use (the wasm module may still be loading when this
// file is imported), and cached: no hot path calls into wasm for a default.

import { fetchDefaults as coreFetchDefaults, storeDefaults } from '../steadfast_core.js';
import { JITTERS, LAYOUT, namedSlots } from './wire.js';

/** Jitter names by the core's id (src/core/backoff.rs `Jitter::ALL`, read through lib/wire.js). */
export { JITTERS };

let defaults;

/**
 * @internal The core's defaults, frozen: `{ budget: { ratio, minRetriesPerSec, windowMs }, retry:
 * { maxAttempts, baseDelayMs, maxDelayMs, jitter }, breaker: { windowSize, minimumCalls,
 * failureRateThreshold, openDurationMs }, checkoutAttemptTimeoutMs, maxOrigins,
 * checkoutMaxResponseBytes }`, by the slot names
 * the core publishes (src/wasm/defaults.rs FETCH_DEFAULTS); `retry.jitter` as its name.
 */
export function fetchDefaults() {
  if (defaults === undefined) {
    const values = Array.from(coreFetchDefaults());
    const jitter = LAYOUT.fetchDefaults.indexOf('retry.jitter');
    values[jitter] = JITTERS[values[jitter]];
    defaults = namedSlots(LAYOUT.fetchDefaults, values);
  }
  return defaults;
}

let idempotency;

/**
 * The core's defaults: `{ ttlMs, maxRecords, inFlightLeaseMs, unknownTtlMs, maxDurationMs }` (read
 * once, by the slot names the core publishes; maxDurationMs bounds every duration option: 10 years).
 */
export function idempotencyDefaults() {
  idempotency ??= namedSlots(LAYOUT.storeDefaults, storeDefaults());
  return idempotency;
}
