//! Error classification and header parsing across the boundary.

use wasm_bindgen::prelude::*;

use crate::core::classify;

/// HTTP 408, 429 and ≥ 500.
#[wasm_bindgen(js_name = isTransientStatus)]
pub fn is_transient_status(status: f64) -> bool {
    classify::is_transient_status(status)
}

/// ECONNRESET, ETIMEDOUT, EAI_AGAIN and their siblings.
#[wasm_bindgen(js_name = isTransientCode)]
pub fn is_transient_code(code: &str) -> bool {
    classify::is_transient_code(code)
}

/// `Retry-After` (delta-seconds or HTTP-date) in ms from `now_ms`; NaN when unparseable.
#[wasm_bindgen(js_name = parseRetryAfter)]
pub fn parse_retry_after(value: &str, now_ms: f64) -> f64 {
    classify::parse_retry_after(value, now_ms).unwrap_or(f64::NAN)
}

/// `Stripe-Should-Retry`: 2 true, 1 false, 0 absent or unparseable.
#[wasm_bindgen(js_name = parseShouldRetry)]
pub fn parse_should_retry(value: &str) -> u32 {
    match classify::parse_should_retry(value) {
        Some(true) => 2,
        Some(false) => 1,
        None => 0,
    }
}

/// Whether a request with `method` may be repeated (see `core::classify::method_is_retryable`):
/// GET HEAD OPTIONS PUT DELETE QUERY always, POST and PATCH only with an Idempotency-Key.
#[wasm_bindgen(js_name = methodIsRetryable)]
pub fn method_is_retryable(method: &str, has_idempotency_key: bool) -> bool {
    classify::method_is_retryable(method, has_idempotency_key)
}
