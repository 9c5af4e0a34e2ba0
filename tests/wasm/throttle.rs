//! QuotaCore and LimiterCore across the boundary (issue 18): presets come from the core, bad
//! options throw the option and the rule, and weird clocks never trap.
use steadfast::wasm::{limiter_preset, quota_error_class, quota_preset, LimiterCore, QuotaCore};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{ok, option_error};

#[wasm_bindgen_test]
fn quota_charges_by_class_and_refunds() {
    assert_eq!(quota_preset(0), vec![500.0, 10.0, 5.0, 5.0, 1.0]);
    assert_eq!(quota_preset(1), vec![500.0, 10.0, 5.0, 10.0, 1.0]);
    assert_eq!(
        [f64::NAN, 408.0, 429.0, 503.0].map(quota_error_class),
        [0, 0, 1, 2]
    );
    let mut q = ok(QuotaCore::new(12.0, 10.0, 5.0, 2.0, 1.0));
    assert_eq!(q.try_acquire(0), 10.0);
    assert_eq!(q.try_acquire(1), -1.0);
    assert_eq!(q.try_acquire(2), 2.0);
    assert_eq!(
        q.try_acquire(99),
        -1.0,
        "an unknown class is a server error, and 0 are left"
    );
    q.record_success(10.0);
    q.record_success(f64::NAN);
    assert_eq!(q.available(), 11.0);
    q.record_success(1e300);
    assert_eq!(q.available(), q.capacity());
}

#[wasm_bindgen_test]
fn quota_options_throw_option_and_rule() {
    let (o, r) = option_error(QuotaCore::new(0.0, 1.0, 1.0, 1.0, 1.0));
    assert_eq!(
        (o.as_str(), r.as_str()),
        ("capacity", "an integer from 1 to 1000000000")
    );
    let (o, r) = option_error(QuotaCore::new(1.0, 0.5, 1.0, 1.0, 1.0));
    assert_eq!(
        (o.as_str(), r.as_str()),
        ("timeoutCost", "an integer from 0 to 1000000000")
    );
    let (o, _) = option_error(QuotaCore::new(1.0, 1.0, f64::NAN, 1.0, 1.0));
    assert_eq!(o, "throttledCost");
}

#[wasm_bindgen_test]
fn limiter_paces_after_a_throttle_and_survives_weird_clocks() {
    let p = limiter_preset(1);
    assert_eq!(p, vec![0.0, 0.7, 0.4, 0.8, 0.5, 1.0, 10.0, 60_000.0, 1.0]);
    let mut l = ok(LimiterCore::new(
        0, 0.7, 0.4, 0.8, 0.5, 1.0, 10.0, 60_000.0, false,
    ));
    assert!(!l.enabled());
    assert_eq!(l.acquire(0.0), 0.0);
    l.record(10.0, 10.0, true);
    assert!(l.enabled());
    l.hold(10.0, 500.0);
    assert_eq!(
        l.acquire(20.0),
        -490.0,
        "held: ask again after the Retry-After"
    );
    for now in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1e300, 1e300] {
        l.record(now, now, true);
        l.hold(now, now);
        assert!(l.acquire(now).is_finite());
    }
    assert!(l.rate_per_sec().is_finite() && l.rate_per_sec() >= 0.5);
}

#[wasm_bindgen_test]
fn limiter_options_throw_option_and_rule() {
    let (o, r) = option_error(LimiterCore::new(
        0, 1.0, 0.4, 0.8, 0.5, 1.0, 10.0, 0.0, false,
    ));
    assert_eq!(
        (o.as_str(), r.as_str()),
        ("beta", "a number between 0 and 1, both excluded")
    );
    let (o, _) = option_error(LimiterCore::new(
        7, 0.7, 0.4, 0.8, 0.5, 1.0, 10.0, 0.0, false,
    ));
    assert_eq!(o, "limiter");
    let (o, _) = option_error(LimiterCore::new(
        1, 0.7, 0.4, 0.8, 0.0, 1.0, 10.0, 0.0, false,
    ));
    assert_eq!(o, "minRatePerSec");
}
