//! `fetchDefaults` across the boundary: the layout `lib/defaults.js` destructures, read from the
//! core's `Default` impls, and the documented numbers (the README and index.d.ts state them; a
//! change here is a change of public behaviour).
use steadfast::core::backoff::Jitter;
use steadfast::core::breaker::{RateOptions, DEFAULT_MAX_ORIGINS};
use steadfast::core::budget::RatioOptions;
use steadfast::core::reconcile::{CHECKOUT_ATTEMPT_TIMEOUT_MS, CHECKOUT_MAX_RESPONSE_BYTES};
use steadfast::core::retry::RetryOptions;
use steadfast::wasm::fetch_defaults;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn layout_is_the_core_defaults_in_order() {
    let (b, r, k) = (
        RatioOptions::default(),
        RetryOptions::default(),
        RateOptions::default(),
    );
    let want = vec![
        b.ratio,
        b.min_retries_per_sec,
        b.window_ms,
        f64::from(r.max_attempts),
        r.base_delay_ms,
        r.max_delay_ms,
        f64::from(r.jitter.id()),
        f64::from(k.window_size),
        f64::from(k.minimum_calls),
        k.failure_rate_threshold,
        k.open_duration_ms,
        CHECKOUT_ATTEMPT_TIMEOUT_MS,
        f64::from(DEFAULT_MAX_ORIGINS),
        CHECKOUT_MAX_RESPONSE_BYTES,
    ];
    assert_eq!(fetch_defaults(), want);
}

#[wasm_bindgen_test]
fn documented_values_do_not_move() {
    assert_eq!(
        fetch_defaults(),
        vec![
            0.2,
            10.0,
            10_000.0,
            3.0,
            100.0,
            10_000.0,
            0.0,
            20.0,
            10.0,
            0.5,
            30_000.0,
            10_000.0,
            1_000.0,
            1_048_576.0
        ]
    );
    assert_eq!(Jitter::from_id(0).ok(), Some(Jitter::Full));
    for j in Jitter::ALL {
        assert_eq!(Jitter::from_id(j.id()).ok(), Some(j));
    }
}
