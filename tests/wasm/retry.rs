//! RetryCore and jitterDelay across the boundary: validation strings, stop codes and delays.
use steadfast::wasm::{jitter_delay, RetryCore};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{ok, option_error};

const NONE: u32 = 3;
const FULL: u32 = 0;
const EQUAL: u32 = 1;
const DECORRELATED: u32 = 2;

/// 10 attempts, 100 ms base, 1 s cap, no deadline.
fn ten_attempts(jitter: u32) -> RetryCore {
    ok(RetryCore::new(
        Some(10.0),
        Some(100.0),
        Some(1000.0),
        jitter,
        None,
    ))
}

fn policy(jitter: u32, max_elapsed_ms: Option<f64>) -> RetryCore {
    ok(RetryCore::new(
        Some(3.0),
        Some(100.0),
        Some(1000.0),
        jitter,
        max_elapsed_ms,
    ))
}

#[wasm_bindgen_test]
fn bad_options_throw_option_and_rule() {
    let cases: [(Result<RetryCore, _>, &str, &str); 7] = [
        (
            RetryCore::new(Some(0.0), Some(1.0), Some(1.0), FULL, None),
            "maxAttempts",
            "an integer from 1 to 1000",
        ),
        (
            RetryCore::new(Some(1001.0), Some(1.0), Some(1.0), FULL, None),
            "maxAttempts",
            "an integer from 1 to 1000",
        ),
        (
            RetryCore::new(Some(2.5), Some(1.0), Some(1.0), FULL, None),
            "maxAttempts",
            "an integer from 1 to 1000",
        ),
        (
            RetryCore::new(Some(3.0), Some(-1.0), Some(1.0), FULL, None),
            "baseDelayMs",
            "a finite number >= 0",
        ),
        (
            RetryCore::new(Some(3.0), Some(10.0), Some(1.0), FULL, None),
            "maxDelayMs",
            "at least baseDelayMs",
        ),
        (
            RetryCore::new(Some(3.0), Some(1.0), Some(1.0), 9, None),
            "jitter",
            "one of 'full', 'equal', 'decorrelated', 'none'",
        ),
        (
            RetryCore::new(Some(3.0), Some(1.0), Some(1.0), FULL, Some(f64::NAN)),
            "maxElapsedMs",
            "a finite number >= 0",
        ),
    ];
    for (r, option, rule) in cases {
        assert_eq!(option_error(r), (option.to_owned(), rule.to_owned()));
    }
    // NaN is not a number the core accepts anywhere
    let (o, _) = option_error(RetryCore::new(
        Some(f64::NAN),
        Some(1.0),
        Some(1.0),
        FULL,
        None,
    ));
    assert_eq!(o, "maxAttempts");
    // and the boundary keeps working after every refusal (no trap)
    assert_eq!(policy(NONE, None).max_attempts(), 3);
}

#[wasm_bindgen_test]
fn numbers_left_undefined_are_the_cores_defaults_kept_in_order() {
    let d = ok(RetryCore::new(None, None, None, FULL, None));
    assert_eq!((d.max_attempts(), d.base_delay_ms()), (3, 100.0));
    let only_base = ok(RetryCore::new(None, Some(20_000.0), None, FULL, None));
    assert_eq!(
        only_base.base_delay_ms(),
        20_000.0,
        "a base above the default cap is not refused"
    );
    let only_cap = ok(RetryCore::new(Some(5.0), None, Some(50.0), FULL, None));
    assert_eq!(
        (only_cap.max_attempts(), only_cap.base_delay_ms()),
        (5, 50.0)
    );
    // A bad value the caller gave is still named, never one that was filled in.
    assert_eq!(
        option_error(RetryCore::new(None, None, Some(-5.0), FULL, None)).0,
        "maxDelayMs"
    );
}

#[wasm_bindgen_test]
fn getters_echo_the_validated_policy() {
    let p = policy(NONE, Some(5000.0));
    assert_eq!(p.max_attempts(), 3);
    assert_eq!(p.base_delay_ms(), 100.0);
    assert_eq!(p.max_elapsed_ms(), 5000.0);
    assert!(policy(NONE, None).max_elapsed_ms().is_nan());
    let inf = ok(RetryCore::new(
        Some(1.0),
        Some(0.0),
        Some(f64::INFINITY),
        FULL,
        Some(f64::INFINITY),
    ));
    assert_eq!(inf.max_elapsed_ms(), f64::INFINITY);
}

#[wasm_bindgen_test]
fn after_failure_stop_codes() {
    let p = policy(NONE, Some(250.0));
    // -1: not retryable, checked before anything else (even on the last attempt)
    assert_eq!(p.after_failure(1, 0.0, false, f64::NAN, 100.0, 0.5), -1.0);
    assert_eq!(p.after_failure(3, 0.0, false, f64::NAN, 100.0, 0.5), -1.0);
    // -2: attempts exhausted
    assert_eq!(p.after_failure(3, 0.0, true, f64::NAN, 100.0, 0.5), -2.0);
    assert_eq!(p.after_failure(4, 0.0, true, f64::NAN, 100.0, 0.5), -2.0);
    // -3: the sleep would cross the deadline (elapsed + delay >= maxElapsedMs)
    assert_eq!(p.after_failure(1, 149.0, true, f64::NAN, 100.0, 0.5), 100.0);
    assert_eq!(p.after_failure(1, 150.0, true, f64::NAN, 100.0, 0.5), -3.0);
}

#[wasm_bindgen_test]
fn after_failure_delays_per_jitter() {
    // unit 0.5: none = ceiling, full = ceiling/2, equal = 3/4 ceiling, decorrelated from previous
    let none = policy(NONE, None);
    assert_eq!(
        none.after_failure(1, 0.0, true, f64::NAN, 100.0, 0.5),
        100.0
    );
    assert_eq!(
        none.after_failure(2, 0.0, true, f64::NAN, 100.0, 0.5),
        200.0
    );
    let full = ten_attempts(FULL);
    assert_eq!(full.after_failure(1, 0.0, true, f64::NAN, 100.0, 0.5), 50.0);
    assert_eq!(
        full.after_failure(5, 0.0, true, f64::NAN, 100.0, 0.5),
        500.0
    );
    assert_eq!(
        full.after_failure(9, 0.0, true, f64::NAN, 100.0, 0.5),
        500.0
    ); // capped ceiling 1000
    assert_eq!(full.after_failure(1, 0.0, true, f64::NAN, 100.0, 0.0), 0.0);
    let equal = ten_attempts(EQUAL);
    assert_eq!(
        equal.after_failure(2, 0.0, true, f64::NAN, 100.0, 0.5),
        150.0
    );
    let dec = ten_attempts(DECORRELATED);
    assert_eq!(dec.after_failure(1, 0.0, true, f64::NAN, 100.0, 0.5), 200.0);
    assert_eq!(dec.after_failure(2, 0.0, true, f64::NAN, 200.0, 0.5), 350.0);
    assert_eq!(
        dec.after_failure(3, 0.0, true, f64::NAN, 900.0, 0.99),
        1000.0
    );
}

#[wasm_bindgen_test]
fn after_failure_nan_unit_draws_from_the_seeded_generator() {
    let full = ten_attempts(FULL);
    for attempt in 1..=8 {
        let d = full.after_failure(attempt, 0.0, true, f64::NAN, 100.0, f64::NAN);
        let ceiling = (100.0 * 2f64.powi(attempt as i32 - 1)).min(1000.0);
        assert!((0.0..ceiling).contains(&d), "attempt {attempt}: {d}");
    }
}

#[wasm_bindgen_test]
fn retry_after_is_a_floor_capped_by_max_delay() {
    let p = policy(NONE, None);
    assert_eq!(p.after_failure(1, 0.0, true, 700.0, 100.0, 0.5), 700.0);
    assert_eq!(p.after_failure(1, 0.0, true, 50_000.0, 100.0, 0.5), 1000.0);
    assert_eq!(p.after_failure(2, 0.0, true, 10.0, 100.0, 0.5), 200.0);
    assert_eq!(
        p.after_failure(1, 0.0, true, f64::INFINITY, 100.0, 0.5),
        1000.0
    );
    // a Retry-After past the deadline stops the loop
    let d = policy(NONE, Some(3000.0));
    assert_eq!(d.after_failure(1, 0.0, true, 5000.0, 100.0, 0.5), 1000.0);
    let d = ok(RetryCore::new(
        Some(3.0),
        Some(100.0),
        Some(10_000.0),
        NONE,
        Some(3000.0),
    ));
    assert_eq!(d.after_failure(1, 0.0, true, 5000.0, 100.0, 0.5), -3.0);
}

#[wasm_bindgen_test]
fn jitter_delay_draws_and_validates() {
    assert_eq!(ok(jitter_delay(FULL, 4.0, 1000.0, 30_000.0, 0.5)), 4000.0);
    assert_eq!(ok(jitter_delay(EQUAL, 4.0, 1000.0, 30_000.0, 0.0)), 4000.0);
    assert_eq!(ok(jitter_delay(NONE, 4.0, 1000.0, 30_000.0, 0.9)), 8000.0);
    assert_eq!(
        ok(jitter_delay(DECORRELATED, 8000.0, 1000.0, 30_000.0, 0.0)),
        1000.0
    );
    assert_eq!(
        ok(jitter_delay(DECORRELATED, 20_000.0, 1000.0, 30_000.0, 0.99)),
        30_000.0
    );
    let d = ok(jitter_delay(FULL, 4.0, 1000.0, 30_000.0, f64::NAN));
    assert!((0.0..8000.0).contains(&d));
    let cases = [
        (jitter_delay(FULL, 0.0, 1.0, 1.0, 0.5), "attempt"),
        (jitter_delay(FULL, 1.5, 1.0, 1.0, 0.5), "attempt"),
        (jitter_delay(FULL, 1.0, -1.0, 1.0, 0.5), "baseDelayMs"),
        (jitter_delay(EQUAL, 1.0, 10.0, 1.0, 0.5), "maxDelayMs"),
        (
            jitter_delay(DECORRELATED, -1.0, 1.0, 10.0, 0.5),
            "previousDelayMs",
        ),
        (jitter_delay(7, 1.0, 1.0, 1.0, 0.5), "jitter"),
    ];
    for (r, option) in cases {
        assert_eq!(option_error(r).0, option);
    }
}
