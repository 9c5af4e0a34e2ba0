//! Error classification and header parsing across the boundary.

use wasm_bindgen::prelude::*;

use crate::core::classify;
use crate::core::history::{self, answer_from_code, History};

/// ECONNRESET, ETIMEDOUT, EAI_AGAIN and their siblings.
#[wasm_bindgen(js_name = isTransientCode)]
pub fn is_transient_code(code: &str) -> bool {
    classify::is_transient_code(code)
}

/// A payment SDK's error `type` that means "may have been processed" (StripeConnectionError,
/// Braintree's unexpectedError…: `core::classify::is_transient_type`).
#[wasm_bindgen(js_name = isTransientType)]
pub fn is_transient_type(error_type: &str) -> bool {
    classify::is_transient_type(error_type)
}

/// `Retry-After` (delta-seconds or HTTP-date) in ms from `now_ms`; NaN when unparseable.
#[wasm_bindgen(js_name = parseRetryAfter)]
pub fn parse_retry_after(value: &str, now_ms: f64) -> f64 {
    classify::parse_retry_after(value, now_ms).unwrap_or(f64::NAN)
}

/// `Stripe-Should-Retry` verdict wire code: absent or unparseable.
pub const SHOULD_RETRY_NONE: u32 = 0;
/// `Stripe-Should-Retry` verdict wire code: `false`.
pub const SHOULD_RETRY_FALSE: u32 = 1;
/// `Stripe-Should-Retry` verdict wire code: `true`.
pub const SHOULD_RETRY_TRUE: u32 = 2;

/// `Stripe-Should-Retry`: 2 true, 1 false, 0 absent or unparseable.
#[wasm_bindgen(js_name = parseShouldRetry)]
pub fn parse_should_retry(value: &str) -> u32 {
    match classify::parse_should_retry(value) {
        Some(true) => SHOULD_RETRY_TRUE,
        Some(false) => SHOULD_RETRY_FALSE,
        None => SHOULD_RETRY_NONE,
    }
}

/// Whether an HTTP answer is worth retrying (`core::classify::is_transient_verdict`): `verdict`
/// is the `Stripe-Should-Retry` wire code of [`parse_should_retry`] (2 true, 1 false; 0 — or any
/// other number — absent), which wins over the status rule. Numbers only: no string crosses on
/// the common path of a response without the header.
#[wasm_bindgen(js_name = isTransientResponse)]
pub fn is_transient_response(status: f64, verdict: u32) -> bool {
    let verdict = match verdict {
        SHOULD_RETRY_TRUE => Some(true),
        SHOULD_RETRY_FALSE => Some(false),
        _ => None,
    };
    classify::is_transient_verdict(status, verdict)
}

/// Whether a request with `method` may be repeated (see `core::classify::method_is_retryable`):
/// GET HEAD OPTIONS PUT DELETE QUERY always, POST and PATCH only with an Idempotency-Key.
#[wasm_bindgen(js_name = methodIsRetryable)]
pub fn method_is_retryable(method: &str, has_idempotency_key: bool) -> bool {
    classify::method_is_retryable(method, has_idempotency_key)
}

/// Whether `method` only an Idempotency-Key makes repeatable (`core::classify::method_is_keyed`).
#[wasm_bindgen(js_name = methodIsKeyed)]
pub fn method_is_keyed(method: &str) -> bool {
    classify::method_is_keyed(method)
}

/// Fold one attempt into a charge's history (`core::history::History`, a plain `u32` the caller
/// keeps): `answer` is `-1` not sent, `-2` no answer, `-3` refused without a status, or the HTTP
/// status (`core::history::answer_from_code`). Numbers only: called once per failed attempt.
#[wasm_bindgen(js_name = historyRecord)]
pub fn history_record(history: u32, answer: f64) -> u32 {
    History(history).record(answer_from_code(answer)).0
}

/// The verdict of a history: 0 done, 1 unknown (park the key), 2 refused (free), 3 not processed
/// (free; the charge is unavailable, not unknown).
#[wasm_bindgen(js_name = historyVerdict)]
pub fn history_verdict(history: u32) -> u32 {
    History(history).verdict().id()
}

/// Whether some attempt of a history may have been processed
/// (`core::history::History::may_have_been_processed`, sticky): a success after it is still the
/// key's answer, but a success that says nothing about the charge (a `2xx` carrying a decline) is
/// not.
#[wasm_bindgen(js_name = historyMayHaveBeenProcessed)]
pub fn history_may_have_been_processed(history: u32) -> bool {
    History(history).may_have_been_processed()
}

/// Whether a network error code proves nothing was sent (`core::history::proves_not_sent`).
#[wasm_bindgen(js_name = provesNotSent)]
pub fn proves_not_sent(code: &str) -> bool {
    history::proves_not_sent(code)
}

/// Whether a network error's message proves nothing was sent (Deno's connect-stage failures:
/// `core::classify::message_proves_not_sent`). Crosses a string only for a failed attempt.
#[wasm_bindgen(js_name = messageProvesNotSent)]
pub fn message_proves_not_sent(message: &str) -> bool {
    classify::message_proves_not_sent(message)
}
