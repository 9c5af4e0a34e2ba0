//! Free functions across the boundary: idempotency keys, classification, Retry-After.
use steadfast::wasm::{
    failed_verdict_wait_ms, is_transient_code, is_transient_response, method_is_retryable,
    new_idempotency_key, parse_retry_after, parse_should_retry, seed_random, settle_after_ms,
    SHOULD_RETRY_NONE,
};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::ok;

fn is_uuid_v4(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            14 => c == b'4',
            19 => matches!(c, b'8' | b'9' | b'a' | b'b'),
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(&c),
        })
}

#[wasm_bindgen_test]
fn new_idempotency_key_is_a_lowercase_uuid_v4() {
    let re = js_sys::RegExp::new(
        "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
        "",
    );
    let mut seen = std::collections::HashSet::new();
    for _ in 0..500 {
        let k = ok(new_idempotency_key());
        assert!(is_uuid_v4(&k), "{k}");
        assert!(re.test(&k), "{k}");
        assert!(seen.insert(k), "duplicate key");
    }
    assert!(!is_uuid_v4("00000000-0000-1000-8000-000000000000"));
    assert!(!is_uuid_v4("00000000-0000-4000-c000-000000000000"));
}

#[wasm_bindgen_test]
fn keys_do_not_follow_the_jitter_seed() {
    seed_random(42.0);
    let a = ok(new_idempotency_key());
    seed_random(42.0);
    let b = ok(new_idempotency_key());
    assert_ne!(
        a, b,
        "keys come from the CSPRNG, not the seeded jitter generator"
    );
}

#[wasm_bindgen_test]
fn transient_statuses_and_codes() {
    // A status alone (no Stripe-Should-Retry header): what isTransientResponse answers for it.
    for s in [408.0, 429.0, 500.0, 503.0, 599.0] {
        assert!(is_transient_response(s, SHOULD_RETRY_NONE), "{s}");
    }
    for s in [
        200.0,
        400.0,
        401.0,
        402.0,
        404.0,
        409.0,
        422.0,
        600.0,
        503.5,
        f64::NAN,
    ] {
        assert!(!is_transient_response(s, SHOULD_RETRY_NONE), "{s}");
    }
    for c in [
        "ECONNRESET",
        "ETIMEDOUT",
        "EAI_AGAIN",
        "ECONNREFUSED",
        "EPIPE",
        "UND_ERR_SOCKET",
    ] {
        assert!(is_transient_code(c), "{c}");
    }
    for c in ["card_declined", "econnreset", "", "ENOENT"] {
        assert!(!is_transient_code(c), "{c}");
    }
}

#[wasm_bindgen_test]
fn retry_after_and_should_retry_headers() {
    let now = 1_445_412_478_000.0; // Wed, 21 Oct 2015 07:27:58 GMT
    assert_eq!(parse_retry_after("3", now), 3000.0);
    assert_eq!(
        parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now),
        2000.0
    );
    assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now), 0.0);
    for bad in ["", "soon", "-1", "1.5"] {
        assert!(parse_retry_after(bad, now).is_nan(), "{bad}");
    }
    assert_eq!(parse_should_retry("true"), 2);
    assert_eq!(parse_should_retry(" false "), 1);
    assert_eq!(parse_should_retry("maybe"), 0);
}

#[wasm_bindgen_test]
fn method_rule_and_settle_window_cross_the_boundary() {
    assert!(method_is_retryable("QUERY", false));
    assert!(!method_is_retryable("TRACE", true));
    assert!(!method_is_retryable("POST", false));
    assert!(method_is_retryable("post", true));
    assert!(!method_is_retryable("\u{0}GET", false));
    assert_eq!(settle_after_ms(200.0, f64::NAN), 400.0);
    assert_eq!(settle_after_ms(f64::NAN, f64::NAN), 120_000.0);
    assert_eq!(settle_after_ms(-1.0, f64::INFINITY), 120_000.0);
    assert_eq!(failed_verdict_wait_ms(1_000.0, 900.0, 400.0), 300.0);
    assert_eq!(
        failed_verdict_wait_ms(1_000.0, f64::NAN, 400.0),
        f64::INFINITY
    );
    // RFC 850, two-digit year, read relative to `now` (2015): '94 is 1994, in the past.
    assert_eq!(
        parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", 1_445_412_478_000.0),
        0.0
    );
}
