//! The circuit breaker: stop calling a dependency that has proven itself dead, and fail in
//! microseconds instead of after a timeout.
//!
//! Why a state machine that only decides: the caller (JS driver, simulator, test) asks
//! [`Breaker::try_acquire`] before a call and reports with [`Breaker::record`] after it; the
//! breaker never calls, sleeps or reads a clock. Time comes in as `now_ms`.
//!
//! States: `Closed` (traffic flows, outcomes are judged), `Open { until }` (every call is
//! rejected), `HalfOpen` (exactly one probe in flight at a time; `probes_to_close` consecutive probe
//! successes close the circuit, one failed probe re-opens it at once), and `Isolated` (held open by
//! hand until [`Breaker::reset`]).
//!
//! Two trip rules, as the seeds describe them:
//! - [`Trip::Rate`]: the failure RATE over the last `window_size` outcomes, judged when a failure
//!   is recorded once the window holds `minimum_calls` outcomes (default: a full window). A success
//!   never opens the circuit. "Five failures out of five is a
//!   dead provider, five out of 10,000 is a Tuesday."
//! - [`Trip::Consecutive`]: `failure_threshold` failures in a row.
//!
//! Permits carry the breaker's generation: an outcome that arrives after the state moved on (a
//! slow call from before the trip, a probe that outlived its lease) is ignored, so it can neither
//! close nor re-trip a circuit it no longer belongs to.
//!
//! # Default
//! `probes_to_close = 1`; rate breaker `minimum_calls = window_size`.

mod config;
pub mod registry;
mod snapshot;
mod window;

pub use config::{BreakerConfig, RateOptions, Trip, MAX_COUNT, MAX_WINDOW};
pub use registry::Registry;
pub use snapshot::Snapshot;
use window::Window;

/// The state as callers see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Calls flow; outcomes are judged.
    Closed,
    /// Calls are rejected until the cooldown ends.
    Open,
    /// One probe at a time decides whether to close.
    HalfOpen,
    /// Held open by hand (`isolate`) until `reset`.
    Isolated,
}

impl State {
    /// Every state, by id.
    pub const ALL: [State; 4] = [State::Closed, State::Open, State::HalfOpen, State::Isolated];

    /// The state's name, as both shells write it (a breaker's `toJSON()`, `currentState`, the
    /// shared stores' answers): `"closed"`, `"open"`, `"half-open"`, `"isolated"`.
    pub const fn name(self) -> &'static str {
        match self {
            State::Closed => "closed",
            State::Open => "open",
            State::HalfOpen => "half-open",
            State::Isolated => "isolated",
        }
    }

    /// Inverse of [`State::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Stable numeric id used across the wasm boundary and in snapshots.
    pub const fn id(self) -> u32 {
        match self {
            State::Closed => 0,
            State::Open => 1,
            State::HalfOpen => 2,
            State::Isolated => 3,
        }
    }

    /// Inverse of [`State::id`].
    pub fn from_id(id: u32) -> Option<Self> {
        Self::ALL.get(id as usize).copied()
    }
}

/// The outcome of one admitted call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The call succeeded (or failed in a way the caller does not count against the dependency).
    Success,
    /// The call failed.
    Failure,
    /// Neither: the outcome says nothing about the dependency's health (a bulkhead that refused
    /// without running, the caller's own abort, a `409` "still processing", a decline). Nothing is
    /// counted; a half-open probe gives its slot back so the next call may probe.
    Excluded,
}

/// Permission to make one call. Hand it back to [`Breaker::record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Permit(u32);

impl Permit {
    /// Whether this call is the half-open probe.
    pub const fn is_probe(self) -> bool {
        self.0 & 1 == 1
    }

    /// Encoded form (fits in a JS number): `generation << 1 | probe`.
    pub const fn to_bits(self) -> u32 {
        self.0
    }

    /// Decode; any value is safe (a forged permit is just a stale one).
    pub const fn from_bits(bits: u32) -> Self {
        Permit(bits)
    }
}

/// Answer of [`Breaker::try_acquire`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Acquire {
    /// Go ahead; `transition` is `Some(HalfOpen)` when this call ended the cooldown.
    Granted {
        /// The permit to report back.
        permit: Permit,
        /// A state change caused by this acquire.
        transition: Option<State>,
    },
    /// Rejected: fail fast. `retry_in_ms` is the remaining cooldown (0 while a probe is in
    /// flight, `+Infinity` when isolated).
    Rejected {
        /// Time until a call may be admitted again, as far as the breaker knows.
        retry_in_ms: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Inner {
    Closed,
    Open {
        until: f64,
    },
    HalfOpen {
        probe_started_at: Option<f64>,
        successes: u32,
    },
    Isolated,
}

/// The breaker. See the module docs for the rules.
#[derive(Debug, Clone)]
pub struct Breaker {
    config: BreakerConfig,
    inner: Inner,
    window: Window,
    consecutive_failures: u32,
    /// Bumped on every transition; permits from an older generation are stale.
    generation: u32,
}

const GENERATION_MASK: u32 = u32::MAX >> 1;

impl Breaker {
    /// A closed breaker.
    pub fn new(config: BreakerConfig) -> Self {
        let size = match config.trip {
            Trip::Rate { window_size, .. } => window_size,
            Trip::Consecutive { .. } => 1,
        };
        Self {
            config,
            inner: Inner::Closed,
            window: Window::new(size),
            consecutive_failures: 0,
            generation: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &BreakerConfig {
        &self.config
    }

    /// The state as of `now_ms`, without changing anything: an open circuit whose cooldown has
    /// ended reads as `HalfOpen` (the transition itself happens on the next acquire).
    pub fn state(&self, now_ms: f64) -> State {
        match self.inner {
            Inner::Closed => State::Closed,
            Inner::Open { until } if now_ms >= until => State::HalfOpen,
            Inner::Open { .. } => State::Open,
            Inner::HalfOpen { .. } => State::HalfOpen,
            Inner::Isolated => State::Isolated,
        }
    }

    /// Remaining cooldown at `now_ms` (0 unless open; `+Infinity` when isolated).
    pub fn retry_in_ms(&self, now_ms: f64) -> f64 {
        match self.inner {
            Inner::Open { until } => (until - now_ms).max(0.0),
            Inner::Isolated => f64::INFINITY,
            _ => 0.0,
        }
    }

    fn bump(&mut self) {
        self.generation = (self.generation + 1) & GENERATION_MASK;
    }

    fn permit(&self, probe: bool) -> Permit {
        Permit(self.generation << 1 | u32::from(probe))
    }

    /// Ask to make one call at `now_ms`.
    pub fn try_acquire(&mut self, now_ms: f64) -> Acquire {
        match self.inner {
            Inner::Closed => Acquire::Granted {
                permit: self.permit(false),
                transition: None,
            },
            Inner::Open { until } => {
                if now_ms >= until {
                    self.inner = Inner::HalfOpen {
                        probe_started_at: Some(now_ms),
                        successes: 0,
                    };
                    self.bump();
                    Acquire::Granted {
                        permit: self.permit(true),
                        transition: Some(State::HalfOpen),
                    }
                } else {
                    Acquire::Rejected {
                        retry_in_ms: until - now_ms,
                    }
                }
            }
            Inner::HalfOpen {
                probe_started_at,
                successes,
            } => {
                let lease_expired = probe_started_at
                    .is_some_and(|at| now_ms - at > self.config.open_duration_ms.max(1.0) * 2.0);
                if probe_started_at.is_none() || lease_expired {
                    if lease_expired {
                        // The probe never reported back (lost callback, dead worker): forget it so
                        // the circuit cannot stay half-open forever; its late report is stale.
                        self.bump();
                    }
                    self.inner = Inner::HalfOpen {
                        probe_started_at: Some(now_ms),
                        successes,
                    };
                    Acquire::Granted {
                        permit: self.permit(true),
                        transition: None,
                    }
                } else {
                    Acquire::Rejected { retry_in_ms: 0.0 }
                }
            }
            Inner::Isolated => Acquire::Rejected {
                retry_in_ms: f64::INFINITY,
            },
        }
    }

    /// Report the outcome of a call admitted with `permit`, at `now_ms`. Returns the new state if
    /// this report changed it. Stale permits are ignored.
    pub fn record(&mut self, permit: Permit, outcome: Outcome, now_ms: f64) -> Option<State> {
        if permit.0 >> 1 != self.generation {
            return None;
        }
        let failed = outcome == Outcome::Failure;
        if outcome == Outcome::Excluded {
            if let Inner::HalfOpen { successes, .. } = self.inner {
                if permit.is_probe() {
                    self.inner = Inner::HalfOpen {
                        probe_started_at: None,
                        successes,
                    };
                }
            }
            return None;
        }
        match self.inner {
            Inner::Closed => {
                if permit.is_probe() {
                    return None;
                }
                if self.closed_should_trip(failed) {
                    self.open(now_ms);
                    return Some(State::Open);
                }
                None
            }
            Inner::HalfOpen { successes, .. } if permit.is_probe() => {
                if failed {
                    self.open(now_ms);
                    return Some(State::Open);
                }
                let successes = successes + 1;
                if successes >= self.config.probes_to_close {
                    self.close();
                    Some(State::Closed)
                } else {
                    self.inner = Inner::HalfOpen {
                        probe_started_at: None,
                        successes,
                    };
                    None
                }
            }
            _ => None,
        }
    }

    fn closed_should_trip(&mut self, failed: bool) -> bool {
        match self.config.trip {
            Trip::Consecutive { failure_threshold } => {
                self.consecutive_failures = if failed {
                    self.consecutive_failures + 1
                } else {
                    0
                };
                self.consecutive_failures >= failure_threshold
            }
            Trip::Rate {
                failure_rate_threshold,
                minimum_calls,
                ..
            } => {
                self.window.push(failed);
                let w = &self.window;
                // Divide, as documented: `failures >= threshold · len` rounds (0.07 · 100 is
                // 7.000000000000001), while `7 / 100` rounds to the same double as `0.07`.
                // Judged only when a failure arrives: a success can only lower the rate, and a
                // success never opens the circuit (so recording one needs no clock).
                failed
                    && w.len >= minimum_calls
                    && f64::from(w.failures) / f64::from(w.len) >= failure_rate_threshold
            }
        }
    }

    fn open(&mut self, now_ms: f64) {
        self.inner = Inner::Open {
            until: now_ms + self.config.open_duration_ms,
        };
        self.window.clear();
        self.consecutive_failures = 0;
        self.bump();
    }

    fn close(&mut self) {
        self.inner = Inner::Closed;
        self.window.clear();
        self.consecutive_failures = 0;
        self.bump();
    }

    /// Hold the circuit open until [`Breaker::reset`] (maintenance, a known-bad deploy).
    pub fn isolate(&mut self) -> Option<State> {
        if self.inner == Inner::Isolated {
            return None;
        }
        self.inner = Inner::Isolated;
        self.window.clear();
        self.consecutive_failures = 0;
        self.bump();
        Some(State::Isolated)
    }

    /// Close the circuit and forget every outcome.
    pub fn reset(&mut self) -> Option<State> {
        let was_closed = self.inner == Inner::Closed;
        self.close();
        (!was_closed).then_some(State::Closed)
    }

    /// Whether this breaker protects anything a registry would lose by forgetting it: any state
    /// but closed (open, half-open, isolated), or a closed breaker with a failure recorded (in its
    /// rate window, or in its consecutive run). A forgotten breaker comes back closed and empty, so
    /// only a closed breaker with no failure on record may be evicted ([`evictable`]).
    pub fn holds_protection(&self) -> bool {
        self.inner != Inner::Closed || self.window.failures > 0 || self.consecutive_failures > 0
    }

    /// The permit whose success report would change nothing, if there is one: a closed
    /// consecutive-failures breaker with no failure in its run, and the permit every call of the
    /// current generation holds. [`Breaker::record`] of that permit and [`Outcome::Success`]
    /// returns `None` and leaves the state as it is, so a shell may skip the report (the JS
    /// breaker reads it from wasm memory instead of crossing). A rate breaker counts every
    /// success in its window: never quiet.
    pub fn quiet_success(&self) -> Option<Permit> {
        (self.ever_quiet() && self.inner == Inner::Closed && self.consecutive_failures == 0)
            .then(|| self.permit(false))
    }

    /// Whether [`Breaker::quiet_success`] can ever name a permit for this breaker: only a
    /// consecutive-failures one (a shell need not look for a quiet permit of any other).
    pub fn ever_quiet(&self) -> bool {
        matches!(self.config.trip, Trip::Consecutive { .. })
    }

    /// The latest deadline accepted from outside at `now_ms`: `now + openDurationMs` (a peer or a
    /// stored snapshot cannot hold the circuit open longer than one trip would). `None` when
    /// `now_ms` is not finite (nothing from outside is applied on a broken clock).
    pub fn latest_deadline(&self, now_ms: f64) -> Option<f64> {
        now_ms
            .is_finite()
            .then_some(now_ms + self.config.open_duration_ms)
    }

    /// Open the circuit until `until_ms` because someone else (another process or tab) saw it
    /// trip. The deadline is clamped to [`Breaker::latest_deadline`]; a non-finite one, or one
    /// already past, is ignored. No-op when isolated or already open at least that long.
    pub fn open_until(&mut self, until_ms: f64, now_ms: f64) -> Option<State> {
        let latest = self.latest_deadline(now_ms)?;
        if !until_ms.is_finite() || until_ms <= now_ms {
            return None;
        }
        let until_ms = until_ms.min(latest);
        match self.inner {
            Inner::Isolated => None,
            Inner::Open { until } if until >= until_ms => None,
            Inner::Open { .. } => {
                self.inner = Inner::Open { until: until_ms };
                None
            }
            _ => {
                self.inner = Inner::Open { until: until_ms };
                self.window.clear();
                self.consecutive_failures = 0;
                self.bump();
                Some(State::Open)
            }
        }
    }
}

/// How many origins a per-origin breaker registry keeps by default (JS `BreakerRegistry`, the Rust
/// `fetch`'s registry): past it, the oldest [`evictable`] entry is dropped.
pub const DEFAULT_MAX_ORIGINS: u32 = 1000;

/// The eviction rule of every per-origin (or per-name) breaker registry, in both shells: an entry
/// may be dropped to make room only if the caller did not pin it and its breaker does not
/// [`Breaker::holds_protection`]. A registry evicts the oldest such entry; when there is none it
/// evicts nothing (a new name then gets a breaker that is not kept: protection in use is never
/// traded for a newcomer's).
pub fn evictable(pinned: bool, breaker: &Breaker) -> bool {
    evictable_by(pinned, breaker.holds_protection())
}

/// [`evictable`], from what a shell knows of its breaker (its `holds_protection`).
pub fn evictable_by(pinned: bool, holds_protection: bool) -> bool {
    !pinned && !holds_protection
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::error::{Error, Expect, Opt};

    fn rate(window: u32, threshold: f64) -> Breaker {
        Breaker::new(BreakerConfig::rate(f64::from(window), threshold, None, 1000.0, None).unwrap())
    }

    #[test]
    fn excluded_outcomes_count_as_neither_in_both_trip_kinds() {
        // Rate: 1 failure in a window of 2 at 0.5 trips; excluded calls between change nothing.
        let mut b = rate(2, 0.5);
        for _ in 0..50 {
            assert_eq!(call(&mut b, Outcome::Excluded, 0.0), Ok(None));
        }
        assert_eq!(call(&mut b, Outcome::Success, 0.0), Ok(None));
        assert_eq!(call(&mut b, Outcome::Failure, 0.0), Ok(Some(State::Open)));
        // Consecutive: excluded calls neither reset nor extend the run of failures.
        let mut c = Breaker::new(BreakerConfig::consecutive(2.0, 1000.0, None).unwrap());
        assert_eq!(call(&mut c, Outcome::Failure, 0.0), Ok(None));
        assert_eq!(call(&mut c, Outcome::Excluded, 0.0), Ok(None));
        assert_eq!(call(&mut c, Outcome::Failure, 0.0), Ok(Some(State::Open)));
    }

    #[test]
    fn an_excluded_probe_gives_its_slot_back() {
        let mut c = Breaker::new(BreakerConfig::consecutive(1.0, 10.0, None).unwrap());
        assert_eq!(call(&mut c, Outcome::Failure, 0.0), Ok(Some(State::Open)));
        let Acquire::Granted { permit, .. } = c.try_acquire(10.0) else {
            panic!("the probe")
        };
        assert!(
            matches!(c.try_acquire(10.0), Acquire::Rejected { .. }),
            "one probe at a time"
        );
        assert_eq!(c.record(permit, Outcome::Excluded, 10.0), None);
        assert_eq!(c.state(10.0), State::HalfOpen);
        assert_eq!(
            call(&mut c, Outcome::Success, 10.0),
            Ok(Some(State::Closed))
        );
    }

    #[test]
    fn a_slow_success_is_a_failure_and_the_default_has_no_slow_calls() {
        let config = BreakerConfig::consecutive(1.0, 1000.0, None).unwrap();
        assert_eq!(config.outcome(Some(false), 1e12), Outcome::Success);
        let slow = config.with_slow_call_duration_ms(200.0).unwrap();
        assert_eq!(slow.outcome(Some(false), 199.0), Outcome::Success);
        assert_eq!(slow.outcome(Some(false), 200.0), Outcome::Failure);
        assert_eq!(slow.outcome(Some(true), 0.0), Outcome::Failure);
        assert_eq!(slow.outcome(None, 1e9), Outcome::Excluded);
        for bad in [0.0, -1.0, f64::NAN] {
            assert_eq!(
                config.with_slow_call_duration_ms(bad),
                Err(Error::option(Opt::SlowCallDurationMs, Expect::Positive))
            );
        }
        assert!(config.with_slow_call_duration_ms(f64::INFINITY).is_ok());
    }

    fn call(b: &mut Breaker, outcome: Outcome, now: f64) -> Result<Option<State>, f64> {
        match b.try_acquire(now) {
            Acquire::Granted { permit, .. } => Ok(b.record(permit, outcome, now)),
            Acquire::Rejected { retry_in_ms } => Err(retry_in_ms),
        }
    }

    #[test]
    fn stays_closed_below_threshold_and_judges_only_a_full_window() {
        let mut b = rate(5, 0.5);
        // Four failures in a 5-window: not judged yet.
        for _ in 0..4 {
            assert_eq!(call(&mut b, Outcome::Failure, 0.0), Ok(None));
        }
        assert_eq!(b.state(0.0), State::Closed);
        let mut b = rate(10, 0.5);
        for i in 0..100 {
            let o = if i % 3 == 0 {
                Outcome::Failure
            } else {
                Outcome::Success
            };
            assert_eq!(call(&mut b, o, 0.0), Ok(None));
        }
        assert_eq!(b.state(0.0), State::Closed);
    }

    #[test]
    fn trips_when_the_rate_crosses_the_threshold() {
        let mut b = rate(4, 0.5);
        assert_eq!(call(&mut b, Outcome::Success, 0.0), Ok(None));
        assert_eq!(call(&mut b, Outcome::Failure, 0.0), Ok(None));
        assert_eq!(call(&mut b, Outcome::Success, 0.0), Ok(None));
        assert_eq!(call(&mut b, Outcome::Failure, 5.0), Ok(Some(State::Open)));
        assert_eq!(b.state(5.0), State::Open);
        assert_eq!(call(&mut b, Outcome::Success, 6.0), Err(999.0));
    }

    #[test]
    fn minimum_calls_judges_a_partial_window() {
        let mut b = Breaker::new(BreakerConfig::rate(100.0, 0.5, Some(4.0), 10.0, None).unwrap());
        for _ in 0..3 {
            assert_eq!(call(&mut b, Outcome::Failure, 0.0), Ok(None));
        }
        assert_eq!(call(&mut b, Outcome::Failure, 0.0), Ok(Some(State::Open)));
    }

    #[test]
    fn a_window_without_failures_never_trips_even_at_threshold_zero() {
        let mut b = rate(3, 0.0);
        for _ in 0..10 {
            assert_eq!(call(&mut b, Outcome::Success, 0.0), Ok(None));
        }
        assert_eq!(call(&mut b, Outcome::Failure, 0.0), Ok(Some(State::Open)));
    }

    #[test]
    fn half_open_admits_exactly_one_probe_and_closes_on_success() {
        let mut b = rate(2, 0.5);
        call(&mut b, Outcome::Failure, 0.0).unwrap();
        call(&mut b, Outcome::Failure, 0.0).unwrap();
        assert_eq!(b.state(999.0), State::Open);
        assert_eq!(b.state(1000.0), State::HalfOpen);
        let probe = match b.try_acquire(1000.0) {
            Acquire::Granted { permit, transition } => {
                assert!(permit.is_probe());
                assert_eq!(transition, Some(State::HalfOpen));
                permit
            }
            r => panic!("{r:?}"),
        };
        // A concurrent caller is treated as open.
        assert_eq!(
            b.try_acquire(1001.0),
            Acquire::Rejected { retry_in_ms: 0.0 }
        );
        assert_eq!(
            b.record(probe, Outcome::Success, 1002.0),
            Some(State::Closed)
        );
        assert_eq!(b.state(1002.0), State::Closed);
    }

    #[test]
    fn a_failed_probe_reopens_at_once() {
        let mut b = rate(1, 1.0);
        call(&mut b, Outcome::Failure, 0.0).unwrap();
        assert_eq!(
            call(&mut b, Outcome::Failure, 1000.0),
            Ok(Some(State::Open))
        );
        assert_eq!(b.retry_in_ms(1000.0), 1000.0);
    }

    #[test]
    fn probes_to_close_needs_consecutive_probe_successes() {
        let mut b = Breaker::new(BreakerConfig::consecutive(1.0, 100.0, Some(3.0)).unwrap());
        assert_eq!(call(&mut b, Outcome::Failure, 0.0), Ok(Some(State::Open)));
        assert_eq!(call(&mut b, Outcome::Success, 100.0), Ok(None));
        assert_eq!(call(&mut b, Outcome::Success, 101.0), Ok(None));
        assert_eq!(b.state(101.0), State::HalfOpen);
        assert_eq!(
            call(&mut b, Outcome::Success, 102.0),
            Ok(Some(State::Closed))
        );
    }

    #[test]
    fn consecutive_breaker_counts_only_streaks() {
        let mut b = Breaker::new(BreakerConfig::consecutive(3.0, 100.0, None).unwrap());
        for _ in 0..5 {
            call(&mut b, Outcome::Failure, 0.0).unwrap();
            call(&mut b, Outcome::Failure, 0.0).unwrap();
            call(&mut b, Outcome::Success, 0.0).unwrap();
        }
        assert_eq!(b.state(0.0), State::Closed);
        call(&mut b, Outcome::Failure, 0.0).unwrap();
        call(&mut b, Outcome::Failure, 0.0).unwrap();
        assert_eq!(call(&mut b, Outcome::Failure, 0.0), Ok(Some(State::Open)));
    }

    #[test]
    fn stale_outcomes_are_ignored() {
        let mut b = Breaker::new(BreakerConfig::consecutive(1.0, 100.0, None).unwrap());
        let Acquire::Granted { permit: slow, .. } = b.try_acquire(0.0) else {
            panic!()
        };
        assert_eq!(call(&mut b, Outcome::Failure, 0.0), Ok(Some(State::Open)));
        // The slow call from the closed period must not close or re-trip anything.
        assert_eq!(b.record(slow, Outcome::Success, 150.0), None);
        assert_eq!(b.state(50.0), State::Open);
        let Acquire::Granted { permit: probe, .. } = b.try_acquire(150.0) else {
            panic!()
        };
        assert_eq!(b.record(slow, Outcome::Failure, 151.0), None);
        assert_eq!(
            b.record(probe, Outcome::Success, 152.0),
            Some(State::Closed)
        );
    }

    #[test]
    fn a_lost_probe_is_replaced_after_its_lease() {
        let mut b = Breaker::new(BreakerConfig::consecutive(1.0, 100.0, None).unwrap());
        call(&mut b, Outcome::Failure, 0.0).unwrap();
        let Acquire::Granted { permit: lost, .. } = b.try_acquire(100.0) else {
            panic!()
        };
        assert!(matches!(b.try_acquire(200.0), Acquire::Rejected { .. }));
        let Acquire::Granted { permit: fresh, .. } = b.try_acquire(301.0) else {
            panic!()
        };
        assert_eq!(b.record(lost, Outcome::Failure, 302.0), None);
        assert_eq!(
            b.record(fresh, Outcome::Success, 302.0),
            Some(State::Closed)
        );
    }

    #[test]
    fn isolate_and_reset() {
        let mut b = rate(2, 0.5);
        assert_eq!(b.isolate(), Some(State::Isolated));
        assert_eq!(b.isolate(), None);
        assert_eq!(
            b.try_acquire(1e12),
            Acquire::Rejected {
                retry_in_ms: f64::INFINITY
            }
        );
        assert_eq!(b.reset(), Some(State::Closed));
        assert_eq!(b.reset(), None);
        assert!(matches!(b.try_acquire(0.0), Acquire::Granted { .. }));
    }

    #[test]
    fn open_until_from_a_peer() {
        let mut b = rate(2, 0.5); // openDurationMs 1000
        assert_eq!(b.open_until(500.0, 100.0), Some(State::Open));
        assert_eq!(b.open_until(400.0, 100.0), None);
        assert_eq!(b.retry_in_ms(100.0), 400.0);
        assert_eq!(b.open_until(900.0, 100.0), None);
        assert_eq!(b.retry_in_ms(100.0), 800.0);
        // From outside, a deadline is clamped to now + openDurationMs; nonsense is ignored.
        assert_eq!(b.open_until(1e300, 100.0), None);
        assert_eq!(b.retry_in_ms(100.0), 1000.0);
        let mut b = rate(2, 0.5);
        for (until, now) in [
            (f64::NAN, 0.0),
            (f64::INFINITY, 0.0),
            (5.0, 10.0),
            (50.0, f64::NAN),
        ] {
            assert_eq!(b.open_until(until, now), None, "{until} at {now}");
        }
        assert_eq!(b.state(0.0), State::Closed);
    }

    #[test]
    fn snapshot_restore_round_trips() {
        let cfg = BreakerConfig::rate(4.0, 0.75, None, 10.0, Some(2.0)).unwrap();
        let mut b = Breaker::new(cfg);
        call(&mut b, Outcome::Failure, 0.0).unwrap();
        call(&mut b, Outcome::Success, 0.0).unwrap();
        call(&mut b, Outcome::Failure, 0.0).unwrap();
        let snap = b.snapshot();
        assert_eq!(snap.window_failures, vec![true, false, true]);
        let mut r = Breaker::restore(cfg, &snap).unwrap();
        assert_eq!(r.snapshot(), snap);
        // Same next behaviour: one more failure trips both.
        assert_eq!(call(&mut b, Outcome::Failure, 1.0), Ok(Some(State::Open)));
        assert_eq!(call(&mut r, Outcome::Failure, 1.0), Ok(Some(State::Open)));
        assert_eq!(
            Breaker::restore(cfg, &b.snapshot()).unwrap().snapshot(),
            b.snapshot()
        );
    }

    #[test]
    fn restore_rejects_snapshots_that_do_not_fit() {
        let cfg = BreakerConfig::rate(2.0, 0.5, None, 10.0, None).unwrap();
        let mut s = Breaker::new(cfg).snapshot();
        s.window_failures = vec![false; 3];
        assert!(Breaker::restore(cfg, &s).is_err());
        let cfg = BreakerConfig::consecutive(2.0, 10.0, None).unwrap();
        let mut s = Breaker::new(cfg).snapshot();
        s.consecutive_failures = 2;
        assert!(Breaker::restore(cfg, &s).is_err());
        s.consecutive_failures = 0;
        s.state = State::Open;
        s.open_until_ms = f64::NAN;
        assert!(Breaker::restore(cfg, &s).is_err());
    }

    #[test]
    fn config_validation() {
        assert!(BreakerConfig::rate(0.0, 0.5, None, 1.0, None).is_err());
        assert!(BreakerConfig::rate(2.5, 0.5, None, 1.0, None).is_err());
        assert!(BreakerConfig::rate(10.0, 1.5, None, 1.0, None).is_err());
        assert!(BreakerConfig::rate(10.0, f64::NAN, None, 1.0, None).is_err());
        assert_eq!(
            BreakerConfig::rate(10.0, 0.5, Some(11.0), 1.0, None),
            Err(Error::option(
                Opt::MinimumCalls,
                Expect::AtMost(Opt::WindowSize)
            ))
        );
        assert!(BreakerConfig::rate(10.0, 0.5, None, -1.0, None).is_err());
        assert!(BreakerConfig::rate(10.0, 0.5, None, f64::INFINITY, None).is_err());
        assert!(BreakerConfig::consecutive(3.0, 1.0, Some(0.0)).is_err());
        assert!(BreakerConfig::consecutive(f64::from(MAX_COUNT) + 1.0, 1.0, None).is_err());
    }
}
