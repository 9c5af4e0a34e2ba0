//! The circuit breaker across the boundary.

use wasm_bindgen::prelude::*;

use super::throw;
use crate::core::breaker::{
    Acquire, Breaker, BreakerConfig, Outcome, Permit, Snapshot, State, Trip,
};
use crate::core::error::{Error, Expect, Opt};

/// A breaker. `tryAcquire` / `recordSuccess` / `recordFailure` are the hot path: numbers only.
#[wasm_bindgen]
pub struct BreakerCore {
    breaker: Breaker,
    /// [`Breaker::quiet_success`] as a JS number (NaN: none), refreshed by every method that can
    /// change the state: the JS breaker reads it from wasm memory (`quietCell`) when a call
    /// succeeds, and skips the `recordSuccess` crossing for that permit.
    quiet: f64,
}

/// Added to a permit when the acquire moved the breaker to half-open (fits a JS number exactly).
const TRANSITION_FLAG: f64 = 4_294_967_296.0;
/// What `tryAcquireClosed` answers when the circuit is not closed.
const NOT_CLOSED: f64 = -2.0;
/// The named constants of this boundary, published by `wireLayouts`.
pub(super) const CONSTANTS: [(&str, i64); 2] = [
    ("transitionFlag", TRANSITION_FLAG as i64),
    ("notClosed", NOT_CLOSED as i64),
];

/// `recordTimed`'s verdicts, by code.
pub(super) const VERDICT: [&str; 3] = ["success", "failure", "excluded"];

/// The slots of [`BreakerCore::config`]. `kind` is a `Trip::id` (`Trip::KINDS`: 0 rate, 1
/// consecutive); the fields of the other kind are 0.
pub(super) const CONFIG: [&str; 7] = [
    "kind",
    "windowSize",
    "failureRateThreshold",
    "minimumCalls",
    "failureThreshold",
    "openDurationMs",
    "probesToClose",
];

/// The head of [`BreakerCore::snapshot`] (`state` is a `State::id`); the window follows it.
pub(super) const SNAPSHOT: [&str; 4] = [
    "state",
    "openUntilMs",
    "probeSuccesses",
    "consecutiveFailures",
];

fn transition(t: Option<State>) -> u32 {
    t.map_or(0, |s| s.id() + 1)
}

#[wasm_bindgen]
impl BreakerCore {
    /// A failure-rate breaker over the last `window_size` outcomes.
    pub fn rate(
        window_size: f64,
        failure_rate_threshold: f64,
        minimum_calls: Option<f64>,
        open_duration_ms: f64,
        probes_to_close: Option<f64>,
    ) -> Result<BreakerCore, JsValue> {
        BreakerConfig::rate(
            window_size,
            failure_rate_threshold,
            minimum_calls,
            open_duration_ms,
            probes_to_close,
        )
        .map(BreakerCore::new)
        .map_err(throw)
    }

    /// A consecutive-failures breaker.
    pub fn consecutive(
        failure_threshold: f64,
        open_duration_ms: f64,
        probes_to_close: Option<f64>,
    ) -> Result<BreakerCore, JsValue> {
        BreakerConfig::consecutive(failure_threshold, open_duration_ms, probes_to_close)
            .map(BreakerCore::new)
            .map_err(throw)
    }

    /// A permit (≥ 0; plus 2^32 when this call moved the breaker to half-open), or, when rejected,
    /// `−1 − retryInMs` (≤ −1; `−Infinity` when isolated): the rejection carries its cooldown so
    /// the caller needs no second crossing to build its error.
    #[wasm_bindgen(js_name = tryAcquire)]
    pub fn try_acquire(&mut self, now_ms: f64) -> f64 {
        let acquired = self.breaker.try_acquire(now_ms);
        self.refresh();
        match acquired {
            Acquire::Granted { permit, transition } => {
                f64::from(permit.to_bits())
                    + if transition.is_some() {
                        TRANSITION_FLAG
                    } else {
                        0.0
                    }
            }
            // `max` also maps a NaN clock to 0, as `retry_in_ms` does.
            Acquire::Rejected { retry_in_ms } => -1.0 - retry_in_ms.max(0.0),
        }
    }

    /// The hot path of a closed circuit: a permit when the decision needs no clock (the circuit
    /// is closed, where admission ignores time), else −2: read the clock and call `tryAcquire`.
    /// Saves a clock read per call on the success path.
    #[wasm_bindgen(js_name = tryAcquireClosed)]
    pub fn try_acquire_closed(&mut self) -> f64 {
        // `state` of a closed breaker does not depend on the time; NaN never reads as closed
        // for any other state.
        if self.breaker.state(f64::NAN) == State::Closed {
            self.try_acquire(f64::NAN)
        } else {
            NOT_CLOSED
        }
    }

    /// Report a success. Returns 0, or the new state's id + 1 if this report changed it.
    #[wasm_bindgen(js_name = recordSuccess)]
    pub fn record_success(&mut self, permit: f64) -> u32 {
        // A success never starts a timer, so it needs no clock reading.
        let t = self
            .breaker
            .record(to_permit(permit), Outcome::Success, 0.0);
        self.changed(t)
    }

    /// Report a failure at `now_ms`. Returns 0, or the new state's id + 1.
    #[wasm_bindgen(js_name = recordFailure)]
    pub fn record_failure(&mut self, permit: f64, now_ms: f64) -> u32 {
        let t = self
            .breaker
            .record(to_permit(permit), Outcome::Failure, now_ms);
        self.changed(t)
    }

    /// Set the slow-call threshold (`core::breaker::BreakerConfig::with_slow_call_duration_ms`),
    /// once, right after construction.
    #[wasm_bindgen(js_name = setSlowCallDurationMs)]
    pub fn set_slow_call_duration_ms(&mut self, ms: f64) -> Result<(), JsValue> {
        let config = self
            .breaker
            .config()
            .with_slow_call_duration_ms(ms)
            .map_err(throw)?;
        *self = BreakerCore::new(config);
        Ok(())
    }

    /// Report a call that took `duration_ms`: `verdict` (an index of [`VERDICT`]) 0 success, 1
    /// failure, 2 excluded (counts as neither); the core applies the slow-call threshold. Returns 0, or the new state's id + 1.
    #[wasm_bindgen(js_name = recordTimed)]
    pub fn record_timed(
        &mut self,
        permit: f64,
        verdict: u32,
        duration_ms: f64,
        now_ms: f64,
    ) -> u32 {
        let outcome = self.timed_outcome(verdict, duration_ms);
        let t = self.breaker.record(to_permit(permit), outcome, now_ms);
        self.changed(t)
    }

    /// How a call that ended after `duration_ms` counts, as an index of [`VERDICT`]: `verdict` as
    /// the caller judged it, with the slow-call threshold applied (what `recordTimed` records). For
    /// a breaker whose outcomes are recorded elsewhere: a shared breaker's state store.
    #[wasm_bindgen(js_name = outcomeOf)]
    pub fn outcome_of(&self, verdict: u32, duration_ms: f64) -> u32 {
        match self.timed_outcome(verdict, duration_ms) {
            Outcome::Success => 0,
            Outcome::Failure => 1,
            Outcome::Excluded => 2,
        }
    }

    /// Report a call that counts as neither success nor failure. Returns 0 (nothing changes state).
    #[wasm_bindgen(js_name = recordExcluded)]
    pub fn record_excluded(&mut self, permit: f64) -> u32 {
        let t = self
            .breaker
            .record(to_permit(permit), Outcome::Excluded, 0.0);
        self.changed(t)
    }

    /// State id at `now_ms`: 0 closed, 1 open, 2 half-open, 3 isolated.
    pub fn state(&self, now_ms: f64) -> u32 {
        self.breaker.state(now_ms).id()
    }

    /// The validated configuration with every default filled in, as the core holds it, in
    /// [`CONFIG`] order: `[kind, windowSize, failureRateThreshold, minimumCalls,
    /// failureThreshold, openDurationMs, probesToClose]` (fields of the other kind are 0). The JS
    /// shell hands this to the shared stores, so options are parsed once, here.
    pub fn config(&self) -> Vec<f64> {
        let c = self.breaker.config();
        let trip = c.trip();
        let (window, threshold, minimum, failures) = match trip {
            Trip::Rate {
                window_size,
                failure_rate_threshold,
                minimum_calls,
            } => (
                f64::from(window_size),
                failure_rate_threshold,
                f64::from(minimum_calls),
                0.0,
            ),
            Trip::Consecutive { failure_threshold } => {
                (0.0, 0.0, 0.0, f64::from(failure_threshold))
            }
        };
        let slots: [f64; CONFIG.len()] = [
            f64::from(trip.id()),
            window,
            threshold,
            minimum,
            failures,
            c.open_duration_ms(),
            f64::from(c.probes_to_close()),
        ];
        slots.to_vec()
    }

    /// Remaining cooldown at `now_ms` (0 unless open; `Infinity` when isolated): what a state
    /// query needs, without serialising the window.
    #[wasm_bindgen(js_name = retryInMs)]
    pub fn retry_in_ms(&self, now_ms: f64) -> f64 {
        self.breaker.retry_in_ms(now_ms)
    }

    /// Whether a registry must keep this breaker: not closed, or a failure on record
    /// ([`Breaker::holds_protection`]; the eviction rule is [`crate::core::breaker::evictable`]).
    #[wasm_bindgen(js_name = holdsProtection)]
    pub fn holds_protection(&self) -> bool {
        self.breaker.holds_protection()
    }

    /// Hold open until reset. Returns a transition code like `recordFailure`.
    pub fn isolate(&mut self) -> u32 {
        let t = self.breaker.isolate();
        self.changed(t)
    }

    /// Close and forget. Returns a transition code.
    pub fn reset(&mut self) -> u32 {
        let t = self.breaker.reset();
        self.changed(t)
    }

    /// Open until `until_ms` because a peer saw it trip, clamped to `now_ms + openDurationMs`
    /// (non-finite or past deadlines are ignored). Returns a transition code.
    #[wasm_bindgen(js_name = openUntil)]
    pub fn open_until(&mut self, until_ms: f64, now_ms: f64) -> u32 {
        let t = self.breaker.open_until(until_ms, now_ms);
        self.changed(t)
    }

    /// [`SNAPSHOT`]'s slots `[state, openUntilMs, probeSuccesses, consecutiveFailures]`, then the
    /// window (1 = failure).
    pub fn snapshot(&self) -> Vec<f64> {
        let s = self.breaker.snapshot();
        let head: [f64; SNAPSHOT.len()] = [
            f64::from(s.state.id()),
            s.open_until_ms,
            f64::from(s.probe_successes),
            f64::from(s.consecutive_failures),
        ];
        let mut v = head.to_vec();
        v.extend(s.window_failures.iter().map(|&f| if f { 1.0 } else { 0.0 }));
        v
    }

    /// Replace the state with a `snapshot()` array (validated against this breaker's options; an
    /// open deadline is clamped to `now_ms + openDurationMs`).
    pub fn restore(&mut self, data: &[f64], now_ms: f64) -> Result<(), JsValue> {
        let snapshot = read_snapshot(data)
            .ok_or_else(|| throw(Error::option(Opt::State, Expect::Snapshot)))?;
        let restored = self.breaker.restore_in_place(&snapshot, now_ms);
        self.refresh();
        restored.map_err(throw)
    }

    /// The address in wasm memory of the f64 that names the permit whose success report changes
    /// nothing (NaN: none; [`Breaker::quiet_success`]), or 0 for a breaker that never has one
    /// ([`Breaker::ever_quiet`]: nothing to read). It stays at this address while the breaker
    /// lives; a view of it is detached when memory grows (its reads are then undefined, which
    /// names no permit, and the JS side makes a new view).
    #[wasm_bindgen(js_name = quietCell)]
    pub fn quiet_cell(&self) -> u32 {
        if !self.breaker.ever_quiet() {
            return 0;
        }
        // A wasm32 address fits in u32; natively (boundary tests) this is only an identifier.
        (&raw const self.quiet) as usize as u32
    }
}

/// A `snapshot()` array as the core's [`Snapshot`], or `None` when it is not one. Every way to
/// be malformed is the same error, so it is built once, by the caller (wasm size).
fn read_snapshot(data: &[f64]) -> Option<Snapshot> {
    let count = |v: f64| {
        (v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= f64::from(u32::MAX))
            .then_some(v as u32)
    };
    let [state, open_until_ms, probes, consecutive, window @ ..] = data else {
        return None;
    };
    let state = State::from_id(count(*state)?)?;
    let window_failures = window
        .iter()
        .map(|&b| match b {
            0.0 => Some(false),
            1.0 => Some(true),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Snapshot {
        state,
        open_until_ms: *open_until_ms,
        probe_successes: count(*probes)?,
        consecutive_failures: count(*consecutive)?,
        window_failures,
    })
}

impl BreakerCore {
    fn new(config: BreakerConfig) -> Self {
        let mut core = BreakerCore {
            breaker: Breaker::new(config),
            quiet: f64::NAN,
        };
        core.refresh();
        core
    }

    /// Publish [`Breaker::quiet_success`] in `quiet`: every method that can change the state
    /// calls this (or [`BreakerCore::changed`]) before it returns. Not inlined: one copy for every
    /// method (wasm size).
    #[inline(never)]
    fn refresh(&mut self) {
        self.quiet = self
            .breaker
            .quiet_success()
            .map_or(f64::NAN, |p| f64::from(p.to_bits()));
    }

    /// `refresh`, then the transition code of `t`.
    fn changed(&mut self, t: Option<State>) -> u32 {
        self.refresh();
        transition(t)
    }

    /// A [`VERDICT`] index (0 success, 1 failure, anything else excluded) and a duration as the
    /// core's outcome, the slow-call threshold applied: `recordTimed` and `outcomeOf` both ask it.
    fn timed_outcome(&self, verdict: u32, duration_ms: f64) -> Outcome {
        let failed = match verdict {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        };
        self.breaker.config().outcome(failed, duration_ms)
    }
}

fn to_permit(p: f64) -> Permit {
    // Strip the transition flag; anything else out of range is just a stale permit.
    let p = p % TRANSITION_FLAG;
    Permit::from_bits(if p >= 0.0 { p as u32 } else { u32::MAX })
}
