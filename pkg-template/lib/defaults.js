// Why: the numbers a caller gets without naming an option (the shared ratio budget, the retry
// policy and per-origin breaker of resilientFetch and the checkout client, the checkout's attempt
// timeout) live once, in the core's `Default` impls (src/core budget RatioOptions, retry
// RetryOptions, breaker RateOptions, reconcile CHECKOUT_ATTEMPT_TIMEOUT_MS), which the Rust fetch
// uses too. They are read here once, on first use (the wasm module may still be loading when this
// file is imported), and cached: no hot path calls into wasm for a default.

import { fetchDefaults as coreFetchDefaults, storeDefaults } from '../steadfast_core.js';

/** Jitter names by the core's id (src/core/backoff.rs `Jitter::ALL`): the one table in JS. */
export const JITTERS = Object.freeze(['full', 'equal', 'decorrelated', 'none']);

let defaults;

/**
 * @internal The core's defaults, frozen: `{ budget: { ratio, minRetriesPerSec, windowMs }, retry:
 * { maxAttempts, baseDelayMs, maxDelayMs, jitter }, breaker: { windowSize, minimumCalls,
 * failureRateThreshold, openDurationMs }, checkoutAttemptTimeoutMs, maxOrigins }` (src/wasm/defaults.rs layout).
 */
export function fetchDefaults() {
  if (defaults === undefined) {
    const [
      ratio,
      minRetriesPerSec,
      windowMs,
      maxAttempts,
      baseDelayMs,
      maxDelayMs,
      jitter,
      windowSize,
      minimumCalls,
      failureRateThreshold,
      openDurationMs,
      checkoutAttemptTimeoutMs,
      maxOrigins,
    ] = coreFetchDefaults();
    defaults = Object.freeze({
      budget: Object.freeze({ ratio, minRetriesPerSec, windowMs }),
      retry: Object.freeze({ maxAttempts, baseDelayMs, maxDelayMs, jitter: JITTERS[jitter] }),
      breaker: Object.freeze({ windowSize, minimumCalls, failureRateThreshold, openDurationMs }),
      checkoutAttemptTimeoutMs,
      maxOrigins,
    });
  }
  return defaults;
}

let idempotency;

/**
 * The core's defaults: `{ ttlMs, maxRecords, inFlightLeaseMs, unknownTtlMs, maxDurationMs }` (read
 * once; maxDurationMs bounds every duration option: 10 years).
 */
export function idempotencyDefaults() {
  if (idempotency === undefined) {
    const [ttlMs, maxRecords, inFlightLeaseMs, unknownTtlMs, maxDurationMs] = storeDefaults();
    idempotency = Object.freeze({ ttlMs, maxRecords, inFlightLeaseMs, unknownTtlMs, maxDurationMs });
  }
  return idempotency;
}
