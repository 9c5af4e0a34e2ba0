//! The defaults a caller of `resilientFetch` or the checkout client gets without naming an
//! option, read once by the JS shell (`lib/defaults.js`) from the core's `Default` impls so the
//! numbers live in one place. The slots' names are [`FETCH_DEFAULTS`] (see `wire.rs`).

use wasm_bindgen::prelude::*;

use crate::core::breaker::{RateOptions, DEFAULT_MAX_ORIGINS};
use crate::core::budget::RatioOptions;
use crate::core::reconcile::{CHECKOUT_ATTEMPT_TIMEOUT_MS, CHECKOUT_MAX_RESPONSE_BYTES};
use crate::core::retry::RetryOptions;

/// The names of [`fetch_defaults`]'s slots, in order (published by `wireLayouts`; a dot nests:
/// `budget.ratio` is `fetchDefaults().budget.ratio` in JS). `retry.jitter` is an id of
/// `Jitter::ALL`.
pub(super) const FETCH_DEFAULTS: [&str; 14] = [
    "budget.ratio",
    "budget.minRetriesPerSec",
    "budget.windowMs",
    "retry.maxAttempts",
    "retry.baseDelayMs",
    "retry.maxDelayMs",
    "retry.jitter",
    "breaker.windowSize",
    "breaker.minimumCalls",
    "breaker.failureRateThreshold",
    "breaker.openDurationMs",
    "checkoutAttemptTimeoutMs",
    "maxOrigins",
    "checkoutMaxResponseBytes",
];

/// The defaults, in [`FETCH_DEFAULTS`] order.
#[wasm_bindgen(js_name = fetchDefaults)]
pub fn fetch_defaults() -> Vec<f64> {
    let budget = RatioOptions::default();
    let retry = RetryOptions::default();
    let breaker = RateOptions::default();
    let slots: [f64; FETCH_DEFAULTS.len()] = [
        budget.ratio,
        budget.min_retries_per_sec,
        budget.window_ms,
        f64::from(retry.max_attempts),
        retry.base_delay_ms,
        retry.max_delay_ms,
        f64::from(retry.jitter.id()),
        f64::from(breaker.window_size),
        f64::from(breaker.minimum_calls),
        breaker.failure_rate_threshold,
        breaker.open_duration_ms,
        CHECKOUT_ATTEMPT_TIMEOUT_MS,
        f64::from(DEFAULT_MAX_ORIGINS),
        CHECKOUT_MAX_RESPONSE_BYTES,
    ];
    slots.to_vec()
}
