//! Model-based breaker test: random operation sequences from up to 500 concurrent callers,
//! checked step by step against a small reference model that re-implements the documented rules.
//!
//! Why a model: a breaker's bugs live in interleavings (a slow call from before the trip, a lost
//! probe, a reset while calls are in flight) that example tests never reach.

use std::collections::{BTreeMap, VecDeque};

use proptest::prelude::*;
use steadfast::core::breaker::{Acquire, Breaker, BreakerConfig, Outcome, Permit, State, Trip};

/// The reference model. Thresholds are `percent / 100`, judged in exact integer arithmetic.
#[derive(Debug, Clone)]
struct Model {
    rate: Option<(usize, u64, usize)>, // (window_size, threshold percent, minimum_calls)
    consecutive_threshold: u32,
    open_ms: f64,
    probes_to_close: u32,
    state: M,
    window: VecDeque<bool>,
    consecutive: u32,
    /// Bumped on every transition; a permit is current iff it was granted in this epoch.
    epoch: u64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum M {
    Closed,
    Open(f64),
    HalfOpen {
        probe_since: Option<f64>,
        successes: u32,
    },
    Isolated,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Answer {
    Granted {
        probe: bool,
        transition: Option<State>,
    },
    Rejected(f64),
}

impl Model {
    fn transition(&mut self, to: M) {
        self.state = to;
        self.window.clear();
        self.consecutive = 0;
        self.epoch += 1;
    }

    fn acquire(&mut self, now: f64) -> Answer {
        let grant = |transition| Answer::Granted {
            probe: true,
            transition,
        };
        match self.state {
            M::Closed => Answer::Granted {
                probe: false,
                transition: None,
            },
            M::Open(until) if now >= until => {
                self.transition(M::HalfOpen {
                    probe_since: Some(now),
                    successes: 0,
                });
                grant(Some(State::HalfOpen))
            }
            M::Open(until) => Answer::Rejected(until - now),
            M::HalfOpen {
                probe_since: None,
                successes,
            } => {
                self.state = M::HalfOpen {
                    probe_since: Some(now),
                    successes,
                };
                grant(None)
            }
            M::HalfOpen {
                probe_since: Some(at),
                successes,
            } => {
                // A probe outstanding longer than 2 × max(openDuration, 1) may be replaced; its
                // late report is then stale.
                if now - at > 2.0 * self.open_ms.max(1.0) {
                    self.epoch += 1;
                    self.state = M::HalfOpen {
                        probe_since: Some(now),
                        successes,
                    };
                    grant(None)
                } else {
                    Answer::Rejected(0.0)
                }
            }
            M::Isolated => Answer::Rejected(f64::INFINITY),
        }
    }

    fn record(&mut self, epoch: u64, probe: bool, failed: bool, now: f64) -> Option<State> {
        if epoch != self.epoch {
            return None; // stale: from before a transition
        }
        match self.state {
            M::Closed if !probe => {
                let trip = if let Some((size, percent, minimum)) = self.rate {
                    if self.window.len() == size {
                        self.window.pop_front();
                    }
                    self.window.push_back(failed);
                    let (len, f) = (
                        self.window.len(),
                        self.window.iter().filter(|&&x| x).count(),
                    );
                    failed && len >= minimum && f as u64 * 100 >= percent * len as u64
                } else {
                    self.consecutive = if failed { self.consecutive + 1 } else { 0 };
                    self.consecutive >= self.consecutive_threshold
                };
                trip.then(|| {
                    self.transition(M::Open(now + self.open_ms));
                    State::Open
                })
            }
            M::HalfOpen { successes, .. } if probe => {
                if failed {
                    self.transition(M::Open(now + self.open_ms));
                    Some(State::Open)
                } else if successes + 1 >= self.probes_to_close {
                    self.transition(M::Closed);
                    Some(State::Closed)
                } else {
                    let successes = successes + 1;
                    self.state = M::HalfOpen {
                        probe_since: None,
                        successes,
                    };
                    None
                }
            }
            _ => None,
        }
    }

    fn public_state(&self, now: f64) -> State {
        match self.state {
            M::Closed => State::Closed,
            M::Open(until) if now >= until => State::HalfOpen,
            M::Open(_) => State::Open,
            M::HalfOpen { .. } => State::HalfOpen,
            M::Isolated => State::Isolated,
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Acquire(usize),
    Record(usize, bool),
    Advance(f64),
    Isolate,
    Reset,
    SnapshotRestore,
}

/// Operations of up to `callers` concurrent callers whose calls fail with probability `p_fail`.
fn ops(callers: usize, p_fail: f64) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        30 => (0..callers).prop_map(Op::Acquire),
        30 => (any::<usize>(), prop::bool::weighted(p_fail)).prop_map(|(i, f)| Op::Record(i, f)),
        12 => (0u32..40).prop_map(|ms| Op::Advance(f64::from(ms))),
        8 => (0u32..6000).prop_map(|ms| Op::Advance(f64::from(ms) / 2.0)),
        1 => Just(Op::Isolate),
        2 => Just(Op::Reset),
        3 => Just(Op::SnapshotRestore),
    ];
    prop::collection::vec(op, 1..250)
}

/// A valid config and its model, for either trip rule.
fn configs() -> impl Strategy<Value = (BreakerConfig, Model)> {
    let open_ms = prop_oneof![
        Just(0.0),
        Just(1.0),
        Just(10.0),
        Just(250.0),
        0.0f64..3000.0
    ];
    let probes = prop::option::of(1u32..4);
    let window = prop_oneof![3 => 1usize..16, 1 => 16usize..120];
    let rate = (
        window,
        0u64..=100,
        any::<prop::sample::Index>(),
        any::<bool>(),
    );
    let trip = prop_oneof![
        rate.prop_map(|(size, percent, min, full)| {
            let minimum = if full { size } else { 1 + min.index(size) };
            (Some((size, percent, minimum)), 0)
        }),
        (1u32..8).prop_map(|t| (None, t)),
    ];
    (trip, open_ms, probes).prop_map(|((rate, threshold), open_ms, probes)| {
        let probe_opt = probes.map(f64::from);
        let config = match rate {
            Some((size, percent, minimum)) => {
                let min = (minimum != size || minimum == 1).then_some(minimum as f64);
                BreakerConfig::rate(size as f64, percent as f64 / 100.0, min, open_ms, probe_opt)
            }
            None => BreakerConfig::consecutive(f64::from(threshold), open_ms, probe_opt),
        };
        let model = Model {
            rate,
            consecutive_threshold: threshold,
            open_ms,
            probes_to_close: probes.unwrap_or(1),
            state: M::Closed,
            window: VecDeque::new(),
            consecutive: 0,
            epoch: 0,
        };
        (config.unwrap(), model)
    })
}

fn answer(a: Acquire) -> (Answer, Option<Permit>) {
    match a {
        Acquire::Granted { permit, transition } => {
            let probe = permit.is_probe();
            (Answer::Granted { probe, transition }, Some(permit))
        }
        Acquire::Rejected { retry_in_ms } => (Answer::Rejected(retry_in_ms), None),
    }
}

/// Run `ops` against the breaker and the model; every answer, state and snapshot must agree.
/// `held` maps caller → (SUT permit, model epoch, probe).
fn run(
    config: BreakerConfig,
    mut model: Model,
    ops: &[Op],
    start: f64,
) -> Result<(), TestCaseError> {
    let mut b = Breaker::new(config);
    let mut held: BTreeMap<usize, (Permit, u64, bool)> = BTreeMap::new();
    let mut now = start;
    for (step, op) in ops.iter().enumerate() {
        match *op {
            Op::Acquire(caller) if !held.contains_key(&caller) => {
                let (got, permit) = answer(b.try_acquire(now));
                let want = model.acquire(now);
                prop_assert_eq!(got, want, "step {} {:?}", step, op);
                if let (Some(p), Answer::Granted { probe, .. }) = (permit, want) {
                    // The breaker's own generation (in the permit bits) must never hand out a
                    // second live probe: no outstanding permit may carry the same probe bits.
                    if probe {
                        prop_assert!(
                            held.values().all(|h| h.0 != p),
                            "two live probes at {}",
                            step
                        );
                    }
                    held.insert(caller, (p, model.epoch, probe));
                }
            }
            Op::Acquire(_) => {}
            Op::Record(i, failed) if !held.is_empty() => {
                let caller = *held.keys().nth(i % held.len()).unwrap();
                let (permit, epoch, probe) = held.remove(&caller).unwrap();
                let outcome = if failed {
                    Outcome::Failure
                } else {
                    Outcome::Success
                };
                let got = b.record(permit, outcome, now);
                prop_assert_eq!(
                    got,
                    model.record(epoch, probe, failed, now),
                    "step {}",
                    step
                );
            }
            Op::Record(..) => {}
            Op::Advance(ms) => now += ms,
            Op::Isolate => {
                let want = (model.state != M::Isolated).then_some(State::Isolated);
                if want.is_some() {
                    model.transition(M::Isolated);
                }
                prop_assert_eq!(b.isolate(), want);
            }
            Op::Reset => {
                // Reset closes and forgets every outcome: calls in flight become stale too.
                let want = (model.state != M::Closed).then_some(State::Closed);
                model.transition(M::Closed);
                prop_assert_eq!(b.reset(), want);
            }
            Op::SnapshotRestore => {
                let snap = b.snapshot();
                b = Breaker::restore(config, &snap).unwrap();
                prop_assert_eq!(b.snapshot(), snap);
                // A restored breaker is a new instance: whoever held a permit (or the probe) is
                // gone, so the callers drop their permits and the probe is no longer in flight.
                held.clear();
                model.epoch += 1;
                if let M::HalfOpen { successes, .. } = model.state {
                    model.state = M::HalfOpen {
                        probe_since: None,
                        successes,
                    };
                }
            }
        }
        prop_assert_eq!(
            b.state(now),
            model.public_state(now),
            "state after step {}",
            step
        );
        let snap = b.snapshot();
        let (state, until, successes) = match model.state {
            M::Closed => (State::Closed, 0.0, 0),
            M::Open(until) => (State::Open, until, 0),
            M::HalfOpen { successes, .. } => (State::HalfOpen, 0.0, successes),
            M::Isolated => (State::Isolated, 0.0, 0),
        };
        prop_assert_eq!(
            (snap.state, snap.open_until_ms, snap.probe_successes),
            (state, until, successes)
        );
        prop_assert_eq!(snap.consecutive_failures, model.consecutive);
        if model.rate.is_some() {
            prop_assert!(
                snap.window_failures.iter().eq(model.window.iter()),
                "window at {}",
                step
            );
        }
        let live_probes = held.values().filter(|h| h.2 && h.1 == model.epoch).count();
        prop_assert!(
            live_probes <= 1,
            "{} live probes at step {}",
            live_probes,
            step
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn breaker_matches_the_reference_model(
        (config, model) in configs(),
        seq in (1usize..=500, 0.05f64..0.95).prop_flat_map(|(n, p)| ops(n, p)),
        start in 0.0f64..1e12,
    ) {
        run(config, model, &seq, start.floor())?;
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Obs {
    Acquired(Answer),
    Recorded(Option<State>),
    Changed(Option<State>),
    Nothing,
}

/// Apply one operation to a breaker with its callers' permits; return what a caller observes.
fn drive(
    b: &mut Breaker,
    config: BreakerConfig,
    held: &mut BTreeMap<usize, Permit>,
    op: &Op,
    now: &mut f64,
) -> Obs {
    match *op {
        Op::Acquire(caller) if !held.contains_key(&caller) => {
            let (a, permit) = answer(b.try_acquire(*now));
            if let Some(p) = permit {
                held.insert(caller, p);
            }
            Obs::Acquired(a)
        }
        Op::Record(i, failed) if !held.is_empty() => {
            let caller = *held.keys().nth(i % held.len()).unwrap();
            let permit = held.remove(&caller).unwrap();
            let outcome = if failed {
                Outcome::Failure
            } else {
                Outcome::Success
            };
            Obs::Recorded(b.record(permit, outcome, *now))
        }
        Op::Advance(ms) => {
            *now += ms;
            Obs::Nothing
        }
        Op::Isolate => Obs::Changed(b.isolate()),
        Op::Reset => Obs::Changed(b.reset()),
        Op::SnapshotRestore => {
            *b = Breaker::restore(config, &b.snapshot()).unwrap();
            held.clear();
            Obs::Nothing
        }
        _ => Obs::Nothing,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    /// snapshot → restore → the same operations give the same answers, states and snapshots.
    /// The snapshot is taken once every caller has reported (a restored breaker has no probe in
    /// flight, so an outstanding probe would rightly make the two differ).
    #[test]
    fn restore_then_replay_behaves_identically(
        (config, _) in configs(),
        (prefix, suffix) in (1usize..=500, 0.05f64..0.95).prop_flat_map(|(n, p)| (ops(n, p), ops(n, p))),
        drain_failures in any::<bool>(),
    ) {
        let (mut a, mut held_a, mut now) = (Breaker::new(config), BTreeMap::new(), 0.0);
        for op in &prefix {
            drive(&mut a, config, &mut held_a, op, &mut now);
        }
        while let Some((_, p)) = held_a.pop_first() {
            let outcome = if drain_failures { Outcome::Failure } else { Outcome::Success };
            a.record(p, outcome, now);
        }
        let mut b = Breaker::restore(config, &a.snapshot()).unwrap();
        prop_assert_eq!(b.snapshot(), a.snapshot());
        let (mut held_b, mut now_b) = (BTreeMap::new(), now);
        for (step, op) in suffix.iter().enumerate() {
            let oa = drive(&mut a, config, &mut held_a, op, &mut now);
            let ob = drive(&mut b, config, &mut held_b, op, &mut now_b);
            prop_assert_eq!(oa, ob, "step {} {:?}", step, op);
            prop_assert_eq!(a.state(now), b.state(now));
            prop_assert_eq!(a.snapshot(), b.snapshot());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    /// `quiet_success` never lies: after any sequence of calls, the permit it names is one whose
    /// success report changes nothing (no transition, the same snapshot, the same answers to the
    /// next operations), so a shell that skips that report behaves as one that sends it. And it
    /// names one whenever a closed consecutive breaker has no failure in its run.
    #[test]
    fn a_quiet_success_changes_nothing(
        (config, _) in configs(),
        (prefix, suffix) in (1usize..=300, 0.05f64..0.95).prop_flat_map(|(n, p)| (ops(n, p), ops(n, p))),
    ) {
        let (mut b, mut held, mut now) = (Breaker::new(config), BTreeMap::new(), 0.0);
        for op in &prefix {
            drive(&mut b, config, &mut held, op, &mut now);
            let consecutive = matches!(config.trip(), Trip::Consecutive { .. });
            let empty_run = b.snapshot().consecutive_failures == 0;
            prop_assert_eq!(b.quiet_success().is_some(), consecutive && b.state(now) == State::Closed && empty_run);
            prop_assert_eq!(b.ever_quiet(), consecutive);
            let Some(permit) = b.quiet_success() else { continue };
            let mut reported = b.clone();
            prop_assert_eq!(reported.record(permit, Outcome::Success, now), None);
            prop_assert_eq!(reported.snapshot(), b.snapshot());
            let (mut held_r, mut now_r) = (held.clone(), now);
            let (mut skipped, mut held_s, mut now_s) = (b.clone(), held.clone(), now);
            for op in suffix.iter().take(20) {
                let a = drive(&mut reported, config, &mut held_r, op, &mut now_r);
                let z = drive(&mut skipped, config, &mut held_s, op, &mut now_s);
                prop_assert_eq!(a, z);
                prop_assert_eq!(reported.snapshot(), skipped.snapshot());
            }
        }
    }
}

/// Regression: the documented rule is `failures / outcomes >= failureRateThreshold`, but the
/// breaker computed `failures >= threshold · outcomes` in floats, and `0.07 · 100` rounds UP to
/// 7.000000000000001: 7 failures in 100 (exactly 7 %) did not trip a 7 % breaker. Same for
/// 0.14 · 50, 0.28 · 25, 0.56 · 25, … (27 (threshold, window) pairs with window ≤ 200).
#[test]
fn a_failure_rate_exactly_at_the_threshold_trips() {
    for (window, threshold, failures) in [(100u32, 0.07, 7u32), (50, 0.14, 7), (25, 0.28, 7)] {
        let config = BreakerConfig::rate(f64::from(window), threshold, None, 1000.0, None).unwrap();
        let mut b = Breaker::new(config);
        for i in 0..window {
            let Acquire::Granted { permit, .. } = b.try_acquire(0.0) else {
                panic!("rejected while closed")
            };
            // Failures last: the breaker judges the rate when a failure arrives.
            let outcome = if i >= window - failures {
                Outcome::Failure
            } else {
                Outcome::Success
            };
            let tripped = b.record(permit, outcome, 0.0);
            let want = (i + 1 == window).then_some(State::Open);
            assert_eq!(
                tripped, want,
                "{failures}/{window} at threshold {threshold}"
            );
        }
    }
}

/// Regression: restoring by swapping in a fresh `Breaker::restore` (generation 0) once made a permit
/// issued before a trip current again, so a slow call from before the state moved on could re-trip
/// the closed circuit. `restore_in_place` (what the wasm layer uses) moves the generation on.
#[test]
fn a_permit_from_before_a_trip_stays_stale_across_an_in_place_restore() {
    let config = BreakerConfig::consecutive(1.0, 100.0, None).unwrap();
    let mut b = Breaker::new(config);
    let Acquire::Granted { permit: slow, .. } = b.try_acquire(0.0) else {
        panic!()
    };
    let Acquire::Granted { permit: fails, .. } = b.try_acquire(0.0) else {
        panic!()
    };
    assert_eq!(b.record(fails, Outcome::Failure, 0.0), Some(State::Open)); // generation 1
    let Acquire::Granted { permit: probe, .. } = b.try_acquire(100.0) else {
        panic!()
    }; // 2
    assert_eq!(
        b.record(probe, Outcome::Success, 100.0),
        Some(State::Closed)
    ); // 3
    assert_eq!(
        b.record(slow, Outcome::Failure, 101.0),
        None,
        "stale before restore"
    );
    let snapshot = b.snapshot();
    b.restore_in_place(&snapshot, 0.0).unwrap(); // what BreakerCore::restore does
    assert_eq!(
        b.record(slow, Outcome::Failure, 102.0),
        None,
        "stale after restore"
    );
    assert_eq!(b.state(102.0), State::Closed);
}
