//! Breaker options, validated once: which trip rule, how long to stay open, how many probes close.
//!
//! Why a separate, immutable value: the same config drives the in-process breaker, the simulator
//! and (as plain numbers) the Redis twin; validating it once means no call path re-parses options.
//!
//! # Default
//! `probes_to_close = 1`; rate breaker `minimum_calls = window_size`.

use crate::core::error::{check, Error, Expect, Opt};

/// Largest accepted `windowSize`, `failureThreshold`, `minimumCalls` and `probesToClose`.
pub const MAX_COUNT: u32 = 1_000_000;

/// Largest accepted `windowSize`: a window costs one bit per outcome, so 100,000 outcomes are
/// 12.5 KB per breaker (a registry of many origins multiplies it).
pub const MAX_WINDOW: u32 = 100_000;

/// How a closed breaker decides to trip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Trip {
    /// Failure rate over the last `window_size` outcomes.
    Rate {
        /// Outcomes in the rolling window.
        window_size: u32,
        /// Trip when `failures / outcomes >= failure_rate_threshold` (and at least one failure).
        failure_rate_threshold: f64,
        /// Outcomes needed before the rate is judged (≤ `window_size`).
        minimum_calls: u32,
    },
    /// `failure_threshold` consecutive failures.
    Consecutive {
        /// Failures in a row that trip the breaker.
        failure_threshold: u32,
    },
}

impl Trip {
    /// The kinds, by id (`Trip::id`): the names a breaker's snapshot and options use.
    pub const KINDS: [&'static str; 2] = ["rate", "consecutive"];

    /// Stable id across the boundary: 0 rate, 1 consecutive.
    pub const fn id(&self) -> u32 {
        match self {
            Trip::Rate { .. } => 0,
            Trip::Consecutive { .. } => 1,
        }
    }

    /// `"rate"` or `"consecutive"`.
    pub const fn name(&self) -> &'static str {
        match self {
            Trip::Rate { .. } => "rate",
            Trip::Consecutive { .. } => "consecutive",
        }
    }
}

/// The rate breaker's options when the caller names none: the per-origin breaker of
/// `resilientFetch`, the checkout client and the Rust `fetch` judges the last 20 outcomes once 10
/// are in, trips at a 50 % failure rate and stays open 30 s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateOptions {
    /// Outcomes in the rolling window.
    pub window_size: u32,
    /// Outcomes needed before the rate is judged.
    pub minimum_calls: u32,
    /// Trip at this failure rate.
    pub failure_rate_threshold: f64,
    /// How long the circuit stays open, in ms.
    pub open_duration_ms: f64,
}

impl Default for RateOptions {
    fn default() -> Self {
        Self {
            window_size: 20,
            minimum_calls: 10,
            failure_rate_threshold: 0.5,
            open_duration_ms: 30_000.0,
        }
    }
}

/// A validated, immutable breaker configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerConfig {
    pub(super) trip: Trip,
    pub(super) open_duration_ms: f64,
    pub(super) probes_to_close: u32,
    pub(super) slow_call_duration_ms: f64,
}

impl BreakerConfig {
    /// A rate-window breaker. `minimum_calls = None` means "judge only a full window".
    pub fn rate(
        window_size: f64,
        failure_rate_threshold: f64,
        minimum_calls: Option<f64>,
        open_duration_ms: f64,
        probes_to_close: Option<f64>,
    ) -> Result<Self, Error> {
        let window_size = check::count(Opt::WindowSize, window_size, MAX_WINDOW)?;
        let failure_rate_threshold =
            check::unit(Opt::FailureRateThreshold, failure_rate_threshold)?;
        let minimum_calls = match minimum_calls {
            None => window_size,
            Some(m) => {
                let m = check::count(Opt::MinimumCalls, m, MAX_COUNT)?;
                if m > window_size {
                    return Err(Error::option(
                        Opt::MinimumCalls,
                        Expect::AtMost(Opt::WindowSize),
                    ));
                }
                m
            }
        };
        Self::finish(
            Trip::Rate {
                window_size,
                failure_rate_threshold,
                minimum_calls,
            },
            open_duration_ms,
            probes_to_close,
        )
    }

    /// A consecutive-failures breaker.
    pub fn consecutive(
        failure_threshold: f64,
        open_duration_ms: f64,
        probes_to_close: Option<f64>,
    ) -> Result<Self, Error> {
        let failure_threshold = check::count(Opt::FailureThreshold, failure_threshold, MAX_COUNT)?;
        Self::finish(
            Trip::Consecutive { failure_threshold },
            open_duration_ms,
            probes_to_close,
        )
    }

    fn finish(
        trip: Trip,
        open_duration_ms: f64,
        probes_to_close: Option<f64>,
    ) -> Result<Self, Error> {
        let open_duration_ms = check::duration(Opt::OpenDurationMs, open_duration_ms, true)?;
        let probes_to_close = match probes_to_close {
            None => 1,
            Some(p) => check::count(Opt::ProbesToClose, p, MAX_COUNT)?,
        };
        Ok(Self {
            trip,
            open_duration_ms,
            probes_to_close,
            slow_call_duration_ms: f64::INFINITY,
        })
    }

    /// With a slow-call threshold: a call that succeeds but takes at least `ms` counts as a
    /// failure (resilience4j's `slowCallDurationThreshold`, folded into the one failure rule of
    /// each trip kind). `Infinity` (the default): no call is slow.
    pub fn with_slow_call_duration_ms(mut self, ms: f64) -> Result<Self, Error> {
        if ms.is_nan() || ms <= 0.0 {
            return Err(Error::option(Opt::SlowCallDurationMs, Expect::Positive));
        }
        self.slow_call_duration_ms = ms;
        Ok(self)
    }

    /// The slow-call threshold, ms (`Infinity`: none).
    pub fn slow_call_duration_ms(&self) -> f64 {
        self.slow_call_duration_ms
    }

    /// The outcome of a call that ended after `duration_ms`: `failed` as the caller judged it
    /// (`None`: excluded — counts as neither), a success as slow as the threshold is a failure.
    pub fn outcome(&self, failed: Option<bool>, duration_ms: f64) -> super::Outcome {
        match failed {
            None => super::Outcome::Excluded,
            Some(true) => super::Outcome::Failure,
            Some(false) if duration_ms >= self.slow_call_duration_ms => super::Outcome::Failure,
            Some(false) => super::Outcome::Success,
        }
    }

    /// The trip rule.
    pub fn trip(&self) -> Trip {
        self.trip
    }

    /// How long the circuit stays open before a probe is allowed.
    pub fn open_duration_ms(&self) -> f64 {
        self.open_duration_ms
    }

    /// Consecutive probe successes needed to close.
    pub fn probes_to_close(&self) -> u32 {
        self.probes_to_close
    }
}
