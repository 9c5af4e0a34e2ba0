//! Reconciliation's settle window across the boundary (see `core::reconcile`).

use wasm_bindgen::prelude::*;

use crate::core::reconcile;

/// The settle window (ms) for an unknown produced under `attemptTimeoutMs` / `deadlineMs` (NaN,
/// or any value the core does not count as a limit: not set).
#[wasm_bindgen(js_name = settleAfterMs)]
pub fn settle_after_ms(attempt_timeout_ms: f64, deadline_ms: f64) -> f64 {
    reconcile::settle_after_ms(Some(attempt_timeout_ms), Some(deadline_ms))
}

/// Ms before a `failed` verdict may be believed (0: now; Infinity: never).
#[wasm_bindgen(js_name = failedVerdictWaitMs)]
pub fn failed_verdict_wait_ms(now_ms: f64, last_attempt_at_ms: f64, settle_after_ms: f64) -> f64 {
    reconcile::failed_verdict_wait_ms(now_ms, last_attempt_at_ms, settle_after_ms)
}
