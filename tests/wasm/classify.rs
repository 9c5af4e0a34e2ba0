//! The transient-response rule across the boundary: JS reads `Stripe-Should-Retry` with
//! `parseShouldRetry` (a tri-state number) and asks `isTransientResponse(status, verdict)`; the
//! answer must be the core's `is_transient_response` on the raw header, which the Rust fetch asks.
use steadfast::core::classify;
use steadfast::wasm::{
    is_transient_response, parse_should_retry, SHOULD_RETRY_FALSE, SHOULD_RETRY_NONE,
    SHOULD_RETRY_TRUE,
};
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn verdict_codes_are_the_documented_tri_state() {
    assert_eq!(parse_should_retry("true"), SHOULD_RETRY_TRUE);
    assert_eq!(parse_should_retry(" false "), SHOULD_RETRY_FALSE);
    assert_eq!(parse_should_retry("maybe"), SHOULD_RETRY_NONE);
    assert_eq!(
        (SHOULD_RETRY_NONE, SHOULD_RETRY_FALSE, SHOULD_RETRY_TRUE),
        (0, 1, 2)
    );
}

#[wasm_bindgen_test]
fn the_server_verdict_wins_else_the_status_rule() {
    // No verdict: 408, 429 and 5xx only.
    for (status, want) in [
        (200.0, false),
        (400.0, false),
        (408.0, true),
        (409.0, false),
        (429.0, true),
        (500.0, true),
        (503.0, true),
        (599.0, true),
        (600.0, false),
        (f64::NAN, false),
        (503.5, false),
    ] {
        assert_eq!(
            is_transient_response(status, SHOULD_RETRY_NONE),
            want,
            "{status}"
        );
    }
    // A 409 "key in use" with `true` is retried; a 503 with `false` is not.
    assert!(is_transient_response(409.0, SHOULD_RETRY_TRUE));
    assert!(!is_transient_response(503.0, SHOULD_RETRY_FALSE));
    // An unknown code is no verdict (never a trap): the status rule decides.
    assert!(is_transient_response(503.0, 7));
    assert!(!is_transient_response(400.0, u32::MAX));
}

#[wasm_bindgen_test]
fn js_two_step_path_equals_the_core_on_the_raw_header() {
    let headers = [
        None,
        Some("true"),
        Some("false"),
        Some(" true "),
        Some(""),
        Some("TRUE"),
    ];
    for status in [
        100.0, 200.0, 404.0, 408.0, 409.0, 429.0, 500.0, 502.0, 599.0, 999.0,
    ] {
        for header in headers {
            let verdict = header.map_or(SHOULD_RETRY_NONE, parse_should_retry);
            assert_eq!(
                is_transient_response(status, verdict),
                classify::is_transient_response(status, header),
                "{status} {header:?}"
            );
        }
    }
}
