//! BudgetCore across the boundary.
use steadfast::wasm::BudgetCore;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{ok, option_error};

#[wasm_bindgen_test]
fn token_bucket_starts_full_and_refills_lazily() {
    let mut b = ok(BudgetCore::token_bucket(2.0, 1.0));
    assert!(!b.counts_requests());
    assert_eq!(b.available(0.0), 2.0);
    assert!(b.try_withdraw(0.0));
    assert!(b.try_withdraw(0.0));
    assert!(!b.try_withdraw(0.0));
    assert!(!b.try_withdraw(999.0));
    assert!(b.try_withdraw(1000.0));
    b.record_request(1000.0); // a no-op for a bucket
    assert!(!b.try_withdraw(1000.0));
    assert_eq!(b.available(1e9), 2.0);
}

#[wasm_bindgen_test]
fn ratio_budget_earns_retries_from_requests() {
    let mut b = ok(BudgetCore::ratio(0.5, 0.0, 1000.0));
    assert!(b.counts_requests());
    assert!(!b.try_withdraw(0.0));
    for _ in 0..4 {
        b.record_request(0.0);
    }
    assert_eq!(b.available(0.0), 2.0);
    assert!(b.try_withdraw(0.0));
    assert!(b.try_withdraw(0.0));
    assert!(!b.try_withdraw(0.0));
    assert_eq!(b.available(2000.0), 0.0, "the window slid past them");
    let mut reserve = ok(BudgetCore::ratio(0.0, 2.0, 5000.0));
    assert_eq!(reserve.available(0.0), 10.0);
}

#[wasm_bindgen_test]
fn bad_options_throw_option_and_rule() {
    let (o, r) = option_error(BudgetCore::token_bucket(-1.0, 1.0));
    assert_eq!(
        (o.as_str(), r.as_str()),
        ("capacity", "a finite number >= 0")
    );
    let (o, _) = option_error(BudgetCore::token_bucket(1.0, f64::NAN));
    assert_eq!(o, "refillPerSec");
    let (o, _) = option_error(BudgetCore::ratio(-0.1, 1.0, 1000.0));
    assert_eq!(o, "ratio");
    let (o, _) = option_error(BudgetCore::ratio(1000.5, 1.0, 1000.0));
    assert_eq!(o, "ratio");
    let (o, _) = option_error(BudgetCore::ratio(0.1, -1.0, 1000.0));
    assert_eq!(o, "minRetriesPerSec");
    let (o, r) = option_error(BudgetCore::ratio(0.1, 1.0, 0.0));
    assert_eq!(
        (o.as_str(), r.as_str()),
        (
            "windowMs",
            "a number of ms > 0 and at most 315360000000 (10 years)"
        )
    );
    assert!(ok(BudgetCore::token_bucket(1.0, 0.0)).try_withdraw(0.0));
}
