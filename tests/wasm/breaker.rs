//! BreakerCore across the boundary: permit encoding, transition codes, snapshot/restore validation.
use steadfast::wasm::BreakerCore;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{ok, option_error};

/// Added to a permit by the acquire that moved the breaker to half-open.
const FLAG: f64 = 4_294_967_296.0;
/// Transition codes: state id + 1.
const TO_CLOSED: u32 = 1;
const TO_OPEN: u32 = 2;
const TO_ISOLATED: u32 = 4;
/// State ids.
const CLOSED: u32 = 0;
const OPEN: u32 = 1;
const HALF_OPEN: u32 = 2;
const ISOLATED: u32 = 3;

fn consecutive(threshold: f64) -> BreakerCore {
    ok(BreakerCore::consecutive(threshold, 1000.0, None))
}

/// The cooldown a rejection carries: `tryAcquire` returns `-1 - retryInMs` when it refuses.
fn rejected_for(b: &mut BreakerCore, now: f64) -> f64 {
    let r = b.try_acquire(now);
    assert!(r <= -1.0, "expected a rejection at {now}, got {r}");
    -1.0 - r
}

fn granted(b: &mut BreakerCore, now: f64) -> f64 {
    let p = b.try_acquire(now);
    assert!(p >= 0.0, "expected a permit at {now}, got {p}");
    p
}

#[wasm_bindgen_test]
fn bad_options_throw_option_and_rule() {
    let (o, r) = option_error(BreakerCore::rate(0.0, 0.5, None, 1.0, None));
    assert_eq!(
        (o.as_str(), r.as_str()),
        ("windowSize", "an integer from 1 to 100000")
    );
    let (o, r) = option_error(BreakerCore::rate(10.0, 1.5, None, 1.0, None));
    assert_eq!(
        (o.as_str(), r.as_str()),
        ("failureRateThreshold", "a number from 0 to 1")
    );
    let (o, r) = option_error(BreakerCore::rate(10.0, 0.5, Some(11.0), 1.0, None));
    assert_eq!(
        (o.as_str(), r.as_str()),
        ("minimumCalls", "at most windowSize")
    );
    let (o, _) = option_error(BreakerCore::rate(10.0, 0.5, None, f64::INFINITY, None));
    assert_eq!(o, "openDurationMs");
    let (o, _) = option_error(BreakerCore::rate(10.0, 0.5, None, 1.0, Some(0.0)));
    assert_eq!(o, "probesToClose");
    let (o, _) = option_error(BreakerCore::consecutive(0.0, 1.0, None));
    assert_eq!(o, "failureThreshold");
    let (o, r) = option_error(BreakerCore::consecutive(3.0, -1.0, None));
    assert_eq!(
        (o.as_str(), r.as_str()),
        (
            "openDurationMs",
            "a number of ms from 0 to 315360000000 (10 years)"
        )
    );
    // still alive
    assert_eq!(consecutive(1.0).state(0.0), CLOSED);
}

#[wasm_bindgen_test]
fn closed_permits_are_even_and_a_trip_reports_open() {
    let mut b = consecutive(2.0);
    let p1 = granted(&mut b, 0.0);
    let p2 = granted(&mut b, 0.0);
    assert_eq!(p1 % 2.0, 0.0, "a closed permit is not a probe");
    assert!(p1 < FLAG);
    assert_eq!(b.record_failure(p1, 10.0), 0);
    assert_eq!(b.record_failure(p2, 10.0), TO_OPEN);
    assert_eq!(b.state(10.0), OPEN);
    assert_eq!(rejected_for(&mut b, 10.0), 1000.0);
    assert_eq!(rejected_for(&mut b, 600.0), 410.0);
}

#[wasm_bindgen_test]
fn open_rejects_with_a_negative_code() {
    let mut b = consecutive(1.0);
    let p = granted(&mut b, 0.0);
    b.record_failure(p, 0.0);
    // −1 − retryInMs: the rejection carries the remaining cooldown
    assert_eq!(b.try_acquire(500.0), -501.0);
    assert_eq!(b.state(500.0), OPEN);
}

#[wasm_bindgen_test]
fn half_open_admits_one_flagged_probe() {
    let mut b = consecutive(1.0);
    let p = granted(&mut b, 0.0);
    b.record_failure(p, 0.0);
    assert_eq!(b.state(999.0), OPEN);
    assert_eq!(b.state(1000.0), HALF_OPEN);
    let probe = granted(&mut b, 1000.0);
    assert!(
        probe >= FLAG,
        "the acquire that moved it to half-open carries the flag: {probe}"
    );
    assert_eq!((probe - FLAG) % 2.0, 1.0, "a probe permit is odd");
    assert!(
        b.try_acquire(1000.0) < 0.0,
        "a second caller is treated as open"
    );
    assert_eq!(rejected_for(&mut b, 1000.0), 0.0);
    // the flag is stripped when the permit comes back
    assert_eq!(b.record_success(probe), TO_CLOSED);
    assert_eq!(b.state(1000.0), CLOSED);
}

#[wasm_bindgen_test]
fn failed_probe_reopens_for_a_fresh_cooldown() {
    let mut b = consecutive(1.0);
    let p = granted(&mut b, 0.0);
    b.record_failure(p, 0.0);
    let probe = granted(&mut b, 1000.0);
    assert_eq!(b.record_failure(probe, 1200.0), TO_OPEN);
    assert_eq!(rejected_for(&mut b, 1200.0), 1000.0);
    assert_eq!(b.state(2199.0), OPEN);
}

#[wasm_bindgen_test]
fn stale_and_garbage_permits_are_ignored() {
    let mut b = consecutive(1.0);
    let old = granted(&mut b, 0.0);
    let p = granted(&mut b, 0.0);
    assert_eq!(b.record_failure(p, 0.0), TO_OPEN);
    assert_eq!(b.record_success(old), 0, "a permit from before the trip");
    assert_eq!(b.record_failure(old, 0.0), 0);
    for garbage in [-1.0, f64::NAN, 1e300, -FLAG, 0.5] {
        assert_eq!(b.record_failure(garbage, 0.0), 0, "{garbage}");
        assert_eq!(b.record_success(garbage), 0, "{garbage}");
    }
    assert_eq!(b.state(10.0), OPEN);
}

#[wasm_bindgen_test]
fn rate_breaker_trips_on_a_full_window() {
    let mut b = ok(BreakerCore::rate(4.0, 0.5, None, 1000.0, None));
    let outcomes = [false, true, false];
    for failed in outcomes {
        let p = granted(&mut b, 0.0);
        let t = if failed {
            b.record_failure(p, 0.0)
        } else {
            b.record_success(p)
        };
        assert_eq!(t, 0);
    }
    let p = granted(&mut b, 5.0);
    assert_eq!(b.record_failure(p, 5.0), TO_OPEN);
    assert_eq!(rejected_for(&mut b, 5.0), 1000.0);
}

#[wasm_bindgen_test]
fn isolate_reset_and_open_until_report_transitions() {
    let mut b = consecutive(3.0);
    assert_eq!(b.isolate(), TO_ISOLATED);
    assert_eq!(b.isolate(), 0);
    assert_eq!(b.state(1e12), ISOLATED);
    assert_eq!(rejected_for(&mut b, 0.0), f64::INFINITY);
    assert!(b.try_acquire(1e12) < 0.0);
    assert_eq!(
        b.open_until(500.0, 0.0),
        0,
        "isolation wins over a peer's openUntil"
    );
    assert_eq!(b.reset(), TO_CLOSED);
    assert_eq!(b.reset(), 0);
    assert_eq!(b.open_until(f64::NAN, 0.0), 0);
    assert_eq!(
        b.open_until(500.0, f64::NAN),
        0,
        "no clock, nothing applied"
    );
    assert_eq!(b.state(0.0), CLOSED);
    assert_eq!(b.open_until(500.0, 0.0), TO_OPEN);
    assert_eq!(b.open_until(400.0, 0.0), 0, "never shortens");
    assert_eq!(rejected_for(&mut b, 100.0), 400.0);
    assert_eq!(
        b.open_until(900.0, 0.0),
        0,
        "extends without a new transition"
    );
    assert_eq!(rejected_for(&mut b, 100.0), 800.0);
    // A peer's deadline is clamped to now + openDurationMs (1000): 1e300 cannot hold it open.
    assert_eq!(b.open_until(1e300, 100.0), 0);
    assert_eq!(rejected_for(&mut b, 100.0), 1000.0);
}

#[wasm_bindgen_test]
fn snapshot_layout_and_round_trip() {
    let mut a = ok(BreakerCore::rate(4.0, 0.5, None, 1000.0, None));
    let p = granted(&mut a, 0.0);
    a.record_failure(p, 0.0);
    let p = granted(&mut a, 0.0);
    a.record_success(p);
    // [state, openUntil, probeSuccesses, consecutiveFailures, ...window (1 = failure)]
    assert_eq!(a.snapshot(), vec![0.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    let mut b = ok(BreakerCore::rate(4.0, 0.5, None, 1000.0, None));
    ok(b.restore(&a.snapshot(), 0.0));
    assert_eq!(b.snapshot(), a.snapshot());
    // the restored window counts: one success and one failure more make 2 of 4
    let p = granted(&mut b, 0.0);
    b.record_success(p);
    let p = granted(&mut b, 7.0);
    assert_eq!(b.record_failure(p, 7.0), TO_OPEN);
    assert_eq!(b.snapshot(), vec![1.0, 1007.0, 0.0, 0.0]);
    let mut c = ok(BreakerCore::rate(4.0, 0.5, None, 1000.0, None));
    ok(c.restore(&b.snapshot(), 7.0));
    assert_eq!(c.state(1006.0), OPEN);
    assert_eq!(c.state(1007.0), HALF_OPEN);
}

#[wasm_bindgen_test]
fn restore_refuses_what_does_not_fit() {
    let bad: [&[f64]; 11] = [
        &[],
        &[0.0, 0.0, 0.0],
        &[4.0, 0.0, 0.0, 0.0],
        &[1.5, 0.0, 0.0, 0.0],
        &[-1.0, 0.0, 0.0, 0.0],
        &[f64::NAN, 0.0, 0.0, 0.0],
        &[0.0, 0.0, 0.0, 0.0, 2.0],
        &[0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0], // longer than windowSize 4
        &[1.0, f64::INFINITY, 0.0, 0.0],
        &[1.0, f64::NAN, 0.0, 0.0],
        &[2.0, 0.0, 1.0, 0.0], // half-open with probesToClose (1) successes already
    ];
    let mut b = ok(BreakerCore::rate(4.0, 0.5, None, 1000.0, None));
    for data in bad {
        let (o, r) = option_error(b.restore(data, 0.0));
        assert_eq!(o, "state", "{data:?}");
        assert!(r.starts_with("a snapshot from toJSON()"), "{r}");
    }
    let mut c = ok(BreakerCore::consecutive(3.0, 1000.0, Some(2.0)));
    let (o, _) = option_error(c.restore(&[0.0, 0.0, 0.0, 3.0], 0.0));
    assert_eq!(o, "state", "3 consecutive failures would already be open");
    let (o, _) = option_error(c.restore(&[0.0, 0.0, 0.0, -1.0], 0.0));
    assert_eq!(o, "state");
    // a refused restore leaves the breaker as it was, and it keeps working
    assert_eq!(b.snapshot(), vec![0.0, 0.0, 0.0, 0.0]);
    let p = granted(&mut b, 0.0);
    assert_eq!(b.record_success(p), 0);
    ok(c.restore(&[2.0, 0.0, 1.0, 0.0], 0.0));
    assert_eq!(c.state(0.0), HALF_OPEN);
    // A stored open deadline far in the future is clamped to now + openDurationMs.
    ok(c.restore(&[1.0, 1e300, 0.0, 0.0], 50.0));
    assert_eq!(c.snapshot()[1], 1050.0);
}
