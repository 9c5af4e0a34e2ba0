//! The hedging decision: when the next copy starts, how many run at once, that a failed call is the
//! retry policy's business, and that the adaptive delay follows recent latencies within its bounds.
//! Then the tail-latency model: hedging cuts p99 of a slow-tail server, and a budget caps the load.

use proptest::prelude::*;
use steadfast::core::budget::{RatioBudget, RetryBudget};
use steadfast::core::hedge::{Hedge, HedgeOptions, Step, DEFAULTS};
use steadfast::core::sim::{simulate_tail, TailOptions};

fn fixed(delay_ms: f64, max_hedges: f64) -> Hedge {
    Hedge::new(HedgeOptions {
        delay_ms: Some(delay_ms),
        max_hedges: Some(max_hedges),
        ..HedgeOptions::default()
    })
    .unwrap()
}

#[test]
fn first_copy_starts_at_once_then_the_hedge_after_its_delay() {
    let h = fixed(50.0, 1.0);
    assert_eq!(h.next_step(0, 0, 0.0), Step::Start);
    assert_eq!(h.next_step(1, 1, 0.0), Step::Wait { ms: 50.0 });
    assert_eq!(h.next_step(1, 1, 20.0), Step::Wait { ms: 30.0 });
    assert_eq!(h.next_step(1, 1, 50.0), Step::Start);
    // Two copies out of two: only an answer can end it.
    assert_eq!(h.next_step(2, 2, 500.0), Step::AwaitAnswer);
}

#[test]
fn a_call_whose_copies_all_failed_is_exhausted_not_hedged_at_once() {
    let h = fixed(50.0, 3.0);
    assert_eq!(h.next_step(1, 0, 5.0), Step::Exhausted);
    assert_eq!(h.next_step(3, 0, 500.0), Step::Exhausted);
}

#[test]
fn max_in_flight_caps_copies_at_once_and_one_never_hedges() {
    let h = Hedge::new(HedgeOptions {
        delay_ms: Some(10.0),
        max_hedges: Some(3.0),
        max_in_flight: Some(2.0),
        ..HedgeOptions::default()
    })
    .unwrap();
    assert_eq!(h.next_step(2, 2, 100.0), Step::AwaitAnswer);
    // One of the two answered (a transient failure): a third copy may go.
    assert_eq!(h.next_step(2, 1, 100.0), Step::Start);
    let one = Hedge::new(HedgeOptions {
        delay_ms: Some(10.0),
        max_in_flight: Some(1.0),
        ..HedgeOptions::default()
    })
    .unwrap();
    assert_eq!(one.next_step(1, 1, 1e9), Step::AwaitAnswer);
}

#[test]
fn adaptive_delay_waits_max_until_it_knows_then_follows_the_quantile_within_bounds() {
    let mut h = Hedge::new(HedgeOptions::default()).unwrap();
    assert!(h.is_adaptive());
    assert_eq!(h.delay_ms(), DEFAULTS.max_delay_ms);
    for ms in 1..=9 {
        h.record_latency(f64::from(ms) * 10.0);
    }
    assert_eq!(
        h.delay_ms(),
        DEFAULTS.max_delay_ms,
        "9 samples are not enough"
    );
    for ms in 10..=100 {
        h.record_latency(f64::from(ms) * 10.0);
    }
    // Window 1..100 × 10 ms: the nearest-rank p95 is 950 ms.
    assert_eq!(h.delay_ms(), 950.0);
    // The window moves: 100 fast answers push the old ones out; the floor holds.
    for _ in 0..100 {
        h.record_latency(1.0);
    }
    assert_eq!(h.delay_ms(), DEFAULTS.min_delay_ms);
    h.record_latency(f64::NAN);
    h.record_latency(-5.0);
    assert_eq!(
        h.delay_ms(),
        DEFAULTS.min_delay_ms,
        "garbage latencies are ignored"
    );
}

#[test]
fn options_are_validated_naming_the_option() {
    let bad = |o: HedgeOptions| Hedge::new(o).unwrap_err().to_string();
    assert!(bad(HedgeOptions {
        delay_ms: Some(-1.0),
        ..Default::default()
    })
    .starts_with("delayMs"));
    assert!(bad(HedgeOptions {
        quantile: Some(1.0),
        ..Default::default()
    })
    .starts_with("quantile"));
    assert!(bad(HedgeOptions {
        max_hedges: Some(0.0),
        ..Default::default()
    })
    .starts_with("maxHedges"));
    assert!(bad(HedgeOptions {
        max_in_flight: Some(0.5),
        ..Default::default()
    })
    .starts_with("maxInFlight"));
    assert!(bad(HedgeOptions {
        window_size: Some(0.0),
        ..Default::default()
    })
    .starts_with("windowSize"));
    assert!(bad(HedgeOptions {
        min_delay_ms: Some(100.0),
        max_delay_ms: Some(10.0),
        ..Default::default()
    })
    .starts_with("maxDelayMs"));
    assert!(bad(HedgeOptions {
        delay_ms: Some(10.0),
        quantile: Some(0.9),
        ..Default::default()
    })
    .starts_with("delayMs"));
}

proptest! {
    /// Whatever the state: never more than maxHedges + 1 copies, never more than maxInFlight at
    /// once, never a start before the delay has passed since the last one, and never a hedge when
    /// nothing runs.
    #[test]
    fn the_rule_never_exceeds_its_bounds(
        delay in 0.0f64..1000.0,
        hedges in 1u32..=10,
        flight in 1u32..=11,
        started in 0u32..=11,
        running in 0u32..=11,
        since in 0.0f64..2000.0,
    ) {
        let h = Hedge::new(HedgeOptions {
            delay_ms: Some(delay),
            max_hedges: Some(f64::from(hedges)),
            max_in_flight: Some(f64::from(flight)),
            ..HedgeOptions::default()
        }).unwrap();
        let running = running.min(started);
        match h.next_step(started, running, since) {
            Step::Start => {
                prop_assert!(started == 0 || (started < hedges + 1 && running < flight && running > 0 && since >= delay));
            }
            Step::Wait { ms } => {
                prop_assert!(ms > 0.0 && (since + ms - delay).abs() < 1e-9);
            }
            Step::AwaitAnswer => prop_assert!(running > 0),
            Step::Exhausted => prop_assert!(started > 0 && running == 0),
        }
    }

    /// The adaptive delay always stays within [minDelayMs, maxDelayMs].
    #[test]
    fn the_adaptive_delay_stays_within_its_bounds(
        lo in 0.0f64..100.0,
        span in 0.0f64..1000.0,
        q in 0.01f64..0.99,
        samples in prop::collection::vec(0.0f64..5000.0, 0..300),
    ) {
        let mut h = Hedge::new(HedgeOptions {
            quantile: Some(q),
            min_delay_ms: Some(lo),
            max_delay_ms: Some(lo + span),
            window_size: Some(50.0),
            ..HedgeOptions::default()
        }).unwrap();
        for s in samples {
            h.record_latency(s);
            let d = h.delay_ms();
            prop_assert!(d >= lo && d <= lo + span);
        }
    }
}

#[test]
fn hedging_cuts_the_tail_and_a_budget_caps_its_load() {
    let options = TailOptions {
        requests: 20_000.0,
        ..TailOptions::default()
    };
    let hedge = Hedge::new(HedgeOptions::default()).unwrap();
    let r = simulate_tail(&options, &hedge, None).unwrap();
    // 2 % of answers take 500–1500 ms: without hedging p99 is in the tail.
    assert!(r.plain.p99_ms > 500.0, "{:?}", r.plain);
    assert_eq!(r.plain.copies_per_request, 1.0);
    // Hedged after ~p95 (≤ 30 ms): the second copy almost always answers fast.
    assert!(r.hedged.p99_ms < 100.0, "{:?}", r.hedged);
    assert!(
        r.hedged.copies_per_request > 1.0 && r.hedged.copies_per_request < 1.2,
        "{:?}",
        r.hedged
    );
    // A 1 % ratio budget: hedges stop at about one per hundred requests.
    let budget = RetryBudget::Ratio(RatioBudget::new(0.01, 0.0, 10_000.0).unwrap());
    let b = simulate_tail(&options, &hedge, Some(budget)).unwrap();
    assert!(b.hedged.refused > 0.0);
    assert!(b.hedged.copies_per_request <= 1.011, "{:?}", b.hedged);
    // Same seed, same draws: the plain run is identical.
    assert_eq!(b.plain, r.plain);
}
