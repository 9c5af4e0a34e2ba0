//! The retry decision: after a failed attempt, retry (after how long) or stop (why).
//!
//! Why a decision function and not a loop: the loop belongs to whoever owns the clock and the
//! event loop (the JS driver, the simulator). Every rule — attempts, retryability, Retry-After,
//! the cap, the overall deadline — lives here once.
//!
//! # Default
//! `max_elapsed_ms = None` (no overall deadline). A server's Retry-After is honoured as a floor
//! for the delay, capped by `max_delay_ms`.

use super::backoff::{Backoff, Jitter};
use super::error::{check, Error, Opt};

/// Largest accepted `maxAttempts`.
pub const MAX_ATTEMPTS: u32 = 1_000;

/// A retry policy's options when the caller names none: 3 attempts, 100 ms base delay, 10 s cap,
/// full jitter. `resilientFetch`, the checkout client and the Rust `RetryPolicy` builder start
/// from these.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryOptions {
    /// Calls in all, the first included.
    pub max_attempts: u32,
    /// The first retry's delay ceiling, in ms.
    pub base_delay_ms: f64,
    /// The cap on every delay, in ms.
    pub max_delay_ms: f64,
    /// How delays are spread below the ceiling.
    pub jitter: Jitter,
}

impl Default for RetryOptions {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            base_delay_ms: 100.0,
            max_delay_ms: 10_000.0,
            jitter: Jitter::Full,
        }
    }
}

impl RetryOptions {
    /// A policy's three numbers with each one the caller left out (`None`) filled from
    /// [`RetryOptions::default`]: `(max_attempts, base_delay_ms, max_delay_ms)`. A left-out bound
    /// keeps the pair ordered around the one given: only a base → the cap is the default cap or
    /// that base, whichever is larger; only a cap → the base is the default base or that cap,
    /// whichever is smaller. A given value is passed on as it is (validated by
    /// [`RetryPolicy::new`]), and a given bound that is not a number ≥ 0 moves nothing.
    pub fn filled(
        max_attempts: Option<f64>,
        base_delay_ms: Option<f64>,
        max_delay_ms: Option<f64>,
    ) -> (f64, f64, f64) {
        let d = Self::default();
        let bound = |v: Option<f64>| v.filter(|&x| x >= 0.0);
        let base = base_delay_ms.unwrap_or_else(|| {
            bound(max_delay_ms).map_or(d.base_delay_ms, |m| d.base_delay_ms.min(m))
        });
        let max = max_delay_ms.unwrap_or_else(|| {
            bound(base_delay_ms).map_or(d.max_delay_ms, |b| d.max_delay_ms.max(b))
        });
        (max_attempts.unwrap_or(f64::from(d.max_attempts)), base, max)
    }
}

/// A validated, immutable retry policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    max_attempts: u32,
    backoff: Backoff,
    max_elapsed_ms: Option<f64>,
}

/// Why the retry loop stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The error is permanent (a 400, a declined card): rethrow it at once.
    NotRetryable,
    /// `max_attempts` calls were made: rethrow the last error.
    AttemptsExhausted,
    /// The next sleep would end past `max_elapsed_ms`.
    DeadlineExceeded,
}

impl Stop {
    /// Every stop, by id − 1.
    pub const ALL: [Stop; 3] = [
        Stop::NotRetryable,
        Stop::AttemptsExhausted,
        Stop::DeadlineExceeded,
    ];

    /// Its name across the boundary.
    pub const fn name(self) -> &'static str {
        match self {
            Stop::NotRetryable => "not-retryable",
            Stop::AttemptsExhausted => "attempts-exhausted",
            Stop::DeadlineExceeded => "deadline-exceeded",
        }
    }

    /// Stable id across the boundary (1-based; 0 means "retry").
    pub const fn id(self) -> u32 {
        match self {
            Stop::NotRetryable => 1,
            Stop::AttemptsExhausted => 2,
            Stop::DeadlineExceeded => 3,
        }
    }
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    /// Sleep `delay_ms`, then make the next attempt.
    Retry {
        /// The delay.
        delay_ms: f64,
    },
    /// Stop and report.
    Stop(Stop),
}

/// What the caller knows about the failed attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Failure {
    /// The attempt that failed, from 1.
    pub attempt: u32,
    /// Time since the first attempt started.
    pub elapsed_ms: f64,
    /// Whether the error is worth retrying (`isRetryable`).
    pub retryable: bool,
    /// A server-sent Retry-After, in ms, if any.
    pub retry_after_ms: Option<f64>,
    /// The previous delay (for decorrelated jitter; the base delay before the first retry).
    pub previous_delay_ms: f64,
}

impl RetryPolicy {
    /// Validate once.
    pub fn new(
        max_attempts: f64,
        base_delay_ms: f64,
        max_delay_ms: f64,
        jitter: Jitter,
        max_elapsed_ms: Option<f64>,
    ) -> Result<Self, Error> {
        let max_attempts = check::count(Opt::MaxAttempts, max_attempts, MAX_ATTEMPTS)?;
        let backoff = Backoff::new(base_delay_ms, max_delay_ms, jitter)?;
        let max_elapsed_ms = match max_elapsed_ms {
            None => None,
            Some(v) => Some(check::non_negative_or_inf(Opt::MaxElapsedMs, v)?),
        };
        Ok(Self {
            max_attempts,
            backoff,
            max_elapsed_ms,
        })
    }

    /// The attempt limit.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The backoff schedule.
    pub fn backoff(&self) -> &Backoff {
        &self.backoff
    }

    /// The overall deadline, if any.
    pub fn max_elapsed_ms(&self) -> Option<f64> {
        self.max_elapsed_ms
    }

    /// Decide, given a uniform draw `unit` in `[0, 1)`.
    pub fn after_failure(&self, f: Failure, unit: f64) -> Decision {
        if !f.retryable {
            return Decision::Stop(Stop::NotRetryable);
        }
        if f.attempt >= self.max_attempts {
            return Decision::Stop(Stop::AttemptsExhausted);
        }
        let jittered = self
            .backoff
            .delay_from_unit(f.attempt, f.previous_delay_ms, unit);
        let delay_ms = match f.retry_after_ms {
            Some(ra) if ra.is_finite() || ra == f64::INFINITY => {
                jittered.max(ra).min(self.backoff.max_delay_ms())
            }
            _ => jittered,
        };
        if let Some(deadline) = self.max_elapsed_ms {
            // `>=` with NaN-safe elapsed (max(0) drops NaN); an infinite deadline never stops.
            if f.elapsed_ms.max(0.0) + delay_ms >= deadline {
                return Decision::Stop(Stop::DeadlineExceeded);
            }
        }
        Decision::Retry { delay_ms }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(max_elapsed: Option<f64>) -> RetryPolicy {
        RetryPolicy::new(3.0, 100.0, 1000.0, Jitter::None, max_elapsed).unwrap()
    }

    fn failure(attempt: u32) -> Failure {
        Failure {
            attempt,
            elapsed_ms: 0.0,
            retryable: true,
            retry_after_ms: None,
            previous_delay_ms: 100.0,
        }
    }

    #[test]
    fn retries_until_max_attempts() {
        let p = policy(None);
        assert_eq!(
            p.after_failure(failure(1), 0.5),
            Decision::Retry { delay_ms: 100.0 }
        );
        assert_eq!(
            p.after_failure(failure(2), 0.5),
            Decision::Retry { delay_ms: 200.0 }
        );
        assert_eq!(
            p.after_failure(failure(3), 0.5),
            Decision::Stop(Stop::AttemptsExhausted)
        );
    }

    #[test]
    fn permanent_errors_stop_at_once() {
        let f = Failure {
            retryable: false,
            ..failure(1)
        };
        assert_eq!(
            policy(None).after_failure(f, 0.5),
            Decision::Stop(Stop::NotRetryable)
        );
    }

    #[test]
    fn retry_after_is_a_floor_capped_by_max_delay() {
        let p = policy(None);
        let f = Failure {
            retry_after_ms: Some(700.0),
            ..failure(1)
        };
        assert_eq!(p.after_failure(f, 0.5), Decision::Retry { delay_ms: 700.0 });
        let f = Failure {
            retry_after_ms: Some(50_000.0),
            ..failure(1)
        };
        assert_eq!(
            p.after_failure(f, 0.5),
            Decision::Retry { delay_ms: 1000.0 }
        );
        let f = Failure {
            retry_after_ms: Some(10.0),
            ..failure(2)
        };
        assert_eq!(p.after_failure(f, 0.5), Decision::Retry { delay_ms: 200.0 });
        let f = Failure {
            retry_after_ms: Some(f64::NAN),
            ..failure(1)
        };
        assert_eq!(p.after_failure(f, 0.5), Decision::Retry { delay_ms: 100.0 });
    }

    #[test]
    fn the_deadline_counts_the_sleep() {
        let p = policy(Some(250.0));
        let f = Failure {
            elapsed_ms: 149.0,
            ..failure(1)
        };
        assert_eq!(p.after_failure(f, 0.5), Decision::Retry { delay_ms: 100.0 });
        let f = Failure {
            elapsed_ms: 150.0,
            ..failure(1)
        };
        assert_eq!(
            p.after_failure(f, 0.5),
            Decision::Stop(Stop::DeadlineExceeded)
        );
        let f = Failure {
            elapsed_ms: f64::NAN,
            ..failure(1)
        };
        assert_eq!(p.after_failure(f, 0.5), Decision::Retry { delay_ms: 100.0 });
    }

    #[test]
    fn validation() {
        assert!(RetryPolicy::new(0.0, 1.0, 1.0, Jitter::Full, None).is_err());
        // Left-out numbers: the defaults, a left-out bound ordered around the one given.
        let d = RetryOptions::default();
        let (da, db, dm) = (f64::from(d.max_attempts), d.base_delay_ms, d.max_delay_ms);
        assert_eq!(RetryOptions::filled(None, None, None), (da, db, dm));
        assert_eq!(RetryOptions::filled(Some(5.0), None, None), (5.0, db, dm));
        assert_eq!(
            RetryOptions::filled(None, Some(20_000.0), None),
            (da, 20_000.0, 20_000.0)
        );
        assert_eq!(RetryOptions::filled(None, Some(50.0), None), (da, 50.0, dm));
        assert_eq!(
            RetryOptions::filled(None, None, Some(50.0)),
            (da, 50.0, 50.0)
        );
        assert_eq!(
            RetryOptions::filled(None, None, Some(f64::INFINITY)),
            (da, db, f64::INFINITY)
        );
        assert_eq!(
            RetryOptions::filled(None, Some(1.0), Some(2.0)),
            (da, 1.0, 2.0)
        );
        // A bad bound moves nothing: the error is about the value the caller gave.
        assert_eq!(RetryOptions::filled(None, None, Some(-5.0)), (da, db, -5.0));
        let (_, b, m) = RetryOptions::filled(None, Some(f64::NAN), None);
        assert!(b.is_nan() && m == dm);
        for (base, max) in [
            (None, Some(-5.0)),
            (Some(f64::NAN), None),
            (Some(f64::INFINITY), None),
        ] {
            let (a, b, m) = RetryOptions::filled(None, base, max);
            assert!(
                RetryPolicy::new(a, b, m, Jitter::Full, None).is_err(),
                "{base:?} {max:?}"
            );
        }
        assert!(RetryPolicy::new(1001.0, 1.0, 1.0, Jitter::Full, None).is_err());
        assert!(RetryPolicy::new(3.0, 1.0, 1.0, Jitter::Full, Some(-1.0)).is_err());
        assert!(RetryPolicy::new(3.0, 1.0, 1.0, Jitter::Full, Some(f64::INFINITY)).is_ok());
    }
}
