//! HedgeCore across the boundary: NaN means "not given", bad options name themselves, the wire
//! codes of the decision, and the moving window, in Node and Chromium.
use steadfast::wasm::{hedge_defaults, HedgeCore};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{ok, option_error};

const N: f64 = f64::NAN;

#[wasm_bindgen_test]
fn fixed_delay_wire_codes() {
    let h = ok(HedgeCore::new(50.0, N, N, N, N, 2.0, N));
    assert_eq!(h.max_copies(), 3);
    assert_eq!(h.next_step(0, 0, 0.0), 0.0, "start the first copy");
    assert_eq!(h.next_step(1, 1, 10.0), 40.0, "wait the rest of the delay");
    assert_eq!(h.next_step(1, 1, 50.0), 0.0, "hedge now");
    assert_eq!(
        h.next_step(3, 2, 500.0),
        -1.0,
        "all copies out: await an answer"
    );
    assert_eq!(
        h.next_step(2, 0, 5.0),
        -2.0,
        "every copy failed: the retry policy decides"
    );
    // A NaN or negative elapsed time never panics, and waits the whole delay.
    assert_eq!(h.next_step(1, 1, f64::NAN), 50.0);
    assert_eq!(h.next_step(1, 1, -3.0), 50.0);
}

#[wasm_bindgen_test]
fn adaptive_delay_follows_the_window() {
    let d = hedge_defaults();
    let mut h = ok(HedgeCore::new(N, 0.5, 10.0, 0.0, 1000.0, N, N));
    assert_eq!(
        h.delay_ms(),
        1000.0,
        "maxDelayMs until the window knows enough"
    );
    for ms in 1..=10 {
        h.record_latency(f64::from(ms));
    }
    assert_eq!(h.delay_ms(), 5.0, "the median of 1..10");
    h.record_latency(f64::NAN);
    h.record_latency(f64::INFINITY);
    assert_eq!(h.delay_ms(), 5.0, "non-finite latencies are ignored");
    assert_eq!(d.len(), 5);
}

#[wasm_bindgen_test]
fn bad_options_name_the_option() {
    assert_eq!(
        option_error(HedgeCore::new(-1.0, N, N, N, N, N, N)).0,
        "delayMs"
    );
    assert_eq!(
        option_error(HedgeCore::new(N, 0.0, N, N, N, N, N)).0,
        "quantile"
    );
    assert_eq!(
        option_error(HedgeCore::new(N, N, 0.5, N, N, N, N)).0,
        "windowSize"
    );
    assert_eq!(
        option_error(HedgeCore::new(N, N, N, N, N, 11.0, N)).0,
        "maxHedges"
    );
    assert_eq!(
        option_error(HedgeCore::new(N, N, N, N, N, N, 0.0)).0,
        "maxInFlight"
    );
    assert_eq!(
        option_error(HedgeCore::new(N, N, N, 20.0, 10.0, N, N)).0,
        "maxDelayMs"
    );
    assert_eq!(
        option_error(HedgeCore::new(5.0, 0.9, N, N, N, N, N)).0,
        "delayMs"
    );
}
