//! Snapshots: a breaker's state as plain data, for persistence, sharing across tabs and tests.
//!
//! Why clamped: a snapshot or a peer's "open until" may come from storage or a BroadcastChannel
//! that any same-origin script can write. A deadline further than `openDurationMs` from now would
//! hold the circuit open for good, so deadlines from outside are clamped to `now + openDurationMs`
//! ([`Breaker::restore_in_place`], [`Breaker::open_until`]).

use super::{Breaker, BreakerConfig, Inner, State, Trip, GENERATION_MASK};
use crate::core::error::{Error, Expect, Opt};

/// Plain-data copy of a breaker's state: for persistence, sharing across processes, and tests.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The state.
    pub state: State,
    /// When an open circuit may admit a probe (ms, caller's clock); 0 otherwise.
    pub open_until_ms: f64,
    /// Consecutive probe successes so far (half-open).
    pub probe_successes: u32,
    /// Consecutive failures so far (consecutive breaker, closed).
    pub consecutive_failures: u32,
    /// The rolling window, oldest first, `true` = failure (rate breaker, closed).
    pub window_failures: Vec<bool>,
}

impl Breaker {
    /// A plain-data copy of the state.
    pub fn snapshot(&self) -> Snapshot {
        let (state, open_until_ms, probe_successes) = match self.inner {
            Inner::Closed => (State::Closed, 0.0, 0),
            Inner::Open { until } => (State::Open, until, 0),
            Inner::HalfOpen { successes, .. } => (State::HalfOpen, 0.0, successes),
            Inner::Isolated => (State::Isolated, 0.0, 0),
        };
        let window_failures = match self.config.trip {
            Trip::Rate { .. } => self.window.outcomes(),
            Trip::Consecutive { .. } => Vec::new(),
        };
        Snapshot {
            state,
            open_until_ms,
            probe_successes,
            consecutive_failures: self.consecutive_failures,
            window_failures,
        }
    }

    /// Replace this breaker's state with `snapshot` (validated against its config), read at
    /// `now_ms`: an open deadline is clamped to [`Breaker::latest_deadline`] (a stored snapshot
    /// may have been written by anyone). Permits handed out before the restore stay stale: the
    /// generation moves on rather than restarting.
    pub fn restore_in_place(&mut self, snapshot: &Snapshot, now_ms: f64) -> Result<(), Error> {
        let mut fresh = Breaker::restore(self.config, snapshot)?;
        if let Inner::Open { until } = fresh.inner {
            let latest = self
                .latest_deadline(now_ms)
                .ok_or(Error::option(Opt::State, Expect::Snapshot))?;
            fresh.inner = Inner::Open {
                until: until.min(latest),
            };
        }
        fresh.generation = (self.generation + 1) & GENERATION_MASK;
        *self = fresh;
        Ok(())
    }

    /// A breaker with `config` in the state `snapshot` describes. A half-open snapshot restores
    /// with no probe in flight (whoever held it is gone). Rejects snapshots that do not fit the
    /// config (window longer than `window_size`, counters at or past their threshold, a
    /// non-finite open deadline).
    pub fn restore(config: BreakerConfig, snapshot: &Snapshot) -> Result<Self, Error> {
        let bad = Error::option(Opt::State, Expect::Snapshot);
        let mut b = Breaker::new(config);
        match snapshot.state {
            State::Closed => match config.trip {
                Trip::Rate { window_size, .. } => {
                    if snapshot.window_failures.len() > window_size as usize {
                        return Err(bad);
                    }
                    for &f in &snapshot.window_failures {
                        b.window.push(f);
                    }
                }
                Trip::Consecutive { failure_threshold } => {
                    if snapshot.consecutive_failures >= failure_threshold {
                        return Err(bad);
                    }
                    b.consecutive_failures = snapshot.consecutive_failures;
                }
            },
            State::Open => {
                if !snapshot.open_until_ms.is_finite() {
                    return Err(bad);
                }
                b.inner = Inner::Open {
                    until: snapshot.open_until_ms,
                };
            }
            State::HalfOpen => {
                if snapshot.probe_successes >= config.probes_to_close {
                    return Err(bad);
                }
                b.inner = Inner::HalfOpen {
                    probe_started_at: None,
                    successes: snapshot.probe_successes,
                };
            }
            State::Isolated => b.inner = Inner::Isolated,
        }
        Ok(b)
    }
}
