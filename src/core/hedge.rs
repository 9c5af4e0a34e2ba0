//! The hedging decision: when a call is slow, when to start another copy of it, and when to stop.
//!
//! Why hedge: a retry waits for a failure, so a request stuck in a server's slow tail costs the
//! caller the whole tail. A hedge starts a second copy once the first has run "too long" (a fixed
//! delay, or a moving quantile of recent latencies, bounded) and takes the first definitive
//! answer. Why a decision function: the shell owns the clock, the copies and their abort signals;
//! the rule — how long is too long, how many copies, how many at once — lives here once, for the
//! JS driver and the simulator alike.
//!
//! What is *not* here, on purpose: whether a request may be hedged at all (the shell asks
//! [`crate::core::classify`]'s method rule: only safe methods, or a request carrying an idempotency
//! key, the same on every copy), the budget (a hedge withdraws from the same retry budget as a
//! retry, before it starts), and the verdict of a charge (every copy's evidence is folded into
//! the same [`crate::core::history`]).
//!
//! # Default
//! `delay_ms = None` (adaptive): the `quantile = 0.95` of the last `window_size = 100` answered
//! latencies, clamped to `[min_delay_ms = 10, max_delay_ms = 1000]`; until [`MIN_SAMPLES`]
//! latencies are known the delay is `max_delay_ms` (hedge little while knowing little).
//! `max_hedges = 1` (two copies at most), `max_in_flight = max_hedges + 1`.

use super::error::{check, Error, Expect, Opt};
use super::sort::heap_sort_by;

/// Largest accepted `maxHedges`.
pub const MAX_HEDGES: u32 = 10;
/// Largest accepted `windowSize`.
pub const MAX_WINDOW: u32 = 10_000;
/// Latencies the adaptive delay needs before it trusts its quantile (fewer when the window is
/// smaller).
pub const MIN_SAMPLES: u32 = 10;

/// A hedge's options as the user writes them (`None`: the default).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HedgeOptions {
    /// A fixed delay before each hedge, in ms. Excludes `quantile` and `window_size`.
    pub delay_ms: Option<f64>,
    /// The latency quantile to wait for, in (0, 1).
    pub quantile: Option<f64>,
    /// How many recent latencies the quantile is taken over.
    pub window_size: Option<f64>,
    /// The adaptive delay's floor, in ms.
    pub min_delay_ms: Option<f64>,
    /// The adaptive delay's ceiling (and its value while it knows too little), in ms.
    pub max_delay_ms: Option<f64>,
    /// Copies beyond the first.
    pub max_hedges: Option<f64>,
    /// Copies running at once.
    pub max_in_flight: Option<f64>,
}

/// The defaults, as numbers (the JS shell states and tests them).
pub const DEFAULTS: HedgeDefaults = HedgeDefaults {
    quantile: 0.95,
    window_size: 100,
    min_delay_ms: 10.0,
    max_delay_ms: 1_000.0,
    max_hedges: 1,
};

/// See [`DEFAULTS`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(missing_docs)]
pub struct HedgeDefaults {
    pub quantile: f64,
    pub window_size: u32,
    pub min_delay_ms: f64,
    pub max_delay_ms: f64,
    pub max_hedges: u32,
}

/// How the delay before a hedge is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Delay {
    Fixed(f64),
    Quantile {
        quantile: f64,
        min_delay_ms: f64,
        max_delay_ms: f64,
    },
}

/// [`Step::to_wire`]'s code for [`Step::Start`] (a wait is its delay, > 0).
pub const START_CODE: i32 = 0;
/// [`Step::to_wire`]'s code for [`Step::AwaitAnswer`].
pub const AWAIT_ANSWER_CODE: i32 = -1;
/// [`Step::to_wire`]'s code for [`Step::Exhausted`].
pub const EXHAUSTED_CODE: i32 = -2;

/// What the shell does next with a call's copies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// Start another copy now.
    Start,
    /// Nothing to start before `ms` from now (unless a copy answers first).
    Wait {
        /// Delay in ms, > 0.
        ms: f64,
    },
    /// No more copies may start now: wait for an answer.
    AwaitAnswer,
    /// Every copy started has answered and none won: the call's attempt failed (the retry policy
    /// decides what comes next).
    Exhausted,
}

impl Step {
    /// The wire form: `ms ≥ 0` wait (0 = start now), `-1` await an answer, `-2` exhausted.
    pub fn to_wire(self) -> f64 {
        match self {
            Step::Start => f64::from(START_CODE),
            Step::Wait { ms } => ms,
            Step::AwaitAnswer => f64::from(AWAIT_ANSWER_CODE),
            Step::Exhausted => f64::from(EXHAUSTED_CODE),
        }
    }
}

/// A validated hedge policy and its latency window (the only state).
#[derive(Debug, Clone, PartialEq)]
pub struct Hedge {
    delay: Delay,
    max_copies: u32,
    max_in_flight: u32,
    /// Ring buffer of the last `window.len()` latencies (capacity = window size).
    window: Vec<f64>,
    capacity: usize,
    next: usize,
    /// The quantile of the window, recomputed when a latency arrives (`None`: too few).
    cached: Option<f64>,
}

impl Hedge {
    /// Validate `options` (see the module's defaults).
    pub fn new(options: HedgeOptions) -> Result<Self, Error> {
        let d = DEFAULTS;
        let max_hedges = match options.max_hedges {
            Some(v) => check::count(Opt::MaxHedges, v, MAX_HEDGES)?,
            None => d.max_hedges,
        };
        let max_copies = max_hedges + 1;
        let max_in_flight = match options.max_in_flight {
            // 1 never hedges (a copy starts only while another runs); more than the copies is
            // the copies.
            Some(v) => check::count(Opt::MaxInFlight, v, MAX_HEDGES + 1)?.min(max_copies),
            None => max_copies,
        };
        let mut capacity = 0usize;
        let delay = match options.delay_ms {
            Some(ms) => {
                if options.quantile.is_some() || options.window_size.is_some() {
                    return Err(Error::option(
                        Opt::DelayMs,
                        Expect::OneOf("a fixed delay, or quantile/windowSize, not both"),
                    ));
                }
                Delay::Fixed(check::non_negative(Opt::DelayMs, ms)?)
            }
            None => {
                let quantile = match options.quantile {
                    Some(q) if q > 0.0 && q < 1.0 => q,
                    Some(_) => return Err(Error::option(Opt::Quantile, Expect::OpenUnitInterval)),
                    None => d.quantile,
                };
                capacity = match options.window_size {
                    Some(v) => check::count(Opt::WindowSize, v, MAX_WINDOW)?,
                    None => d.window_size,
                } as usize;
                let min_delay_ms = match options.min_delay_ms {
                    Some(v) => check::non_negative(Opt::MinDelayMs, v)?,
                    None => d.min_delay_ms,
                };
                let max_delay_ms = match options.max_delay_ms {
                    Some(v) => check::non_negative(Opt::MaxDelayMs, v)?,
                    None => d.max_delay_ms.max(min_delay_ms),
                };
                if max_delay_ms < min_delay_ms {
                    return Err(Error::option(
                        Opt::MaxDelayMs,
                        Expect::AtLeast(Opt::MinDelayMs),
                    ));
                }
                Delay::Quantile {
                    quantile,
                    min_delay_ms,
                    max_delay_ms,
                }
            }
        };
        if matches!(delay, Delay::Fixed(_))
            && (options.min_delay_ms.is_some() || options.max_delay_ms.is_some())
        {
            return Err(Error::option(
                Opt::DelayMs,
                Expect::OneOf("a fixed delay, or minDelayMs/maxDelayMs bounds, not both"),
            ));
        }
        Ok(Self {
            delay,
            max_copies,
            max_in_flight,
            window: Vec::with_capacity(capacity),
            capacity,
            next: 0,
            cached: None,
        })
    }

    /// Copies in all, the first included (`maxHedges + 1`).
    pub fn max_copies(&self) -> u32 {
        self.max_copies
    }

    /// Copies running at once.
    pub fn max_in_flight(&self) -> u32 {
        self.max_in_flight
    }

    /// Whether the delay follows recent latencies.
    pub fn is_adaptive(&self) -> bool {
        matches!(self.delay, Delay::Quantile { .. })
    }

    /// The delay before the next hedge, from its predecessor's start, in ms.
    pub fn delay_ms(&self) -> f64 {
        match self.delay {
            Delay::Fixed(ms) => ms,
            Delay::Quantile {
                min_delay_ms,
                max_delay_ms,
                ..
            } => self
                .cached
                .map_or(max_delay_ms, |q| q.max(min_delay_ms).min(max_delay_ms)),
        }
    }

    /// An answered copy took `ms` from its own start (ignored by a fixed delay; a value that is
    /// not a finite number ≥ 0 is ignored).
    pub fn record_latency(&mut self, ms: f64) {
        let Delay::Quantile { quantile, .. } = self.delay else {
            return;
        };
        if !(ms.is_finite() && ms >= 0.0) || self.capacity == 0 {
            return;
        }
        if self.window.len() < self.capacity {
            self.window.push(ms);
        } else if let Some(slot) = self.window.get_mut(self.next) {
            *slot = ms;
        }
        // No `%` and no `clamp`: both carry a panic path (and its formatting) into the wasm.
        self.next = if self.next + 1 >= self.capacity {
            0
        } else {
            self.next + 1
        };
        let needed = (MIN_SAMPLES as usize).min(self.capacity);
        self.cached = if self.window.len() < needed {
            None
        } else {
            Some(nearest_rank(&self.window, quantile))
        };
    }

    /// What to do now, given the copies `started` so far, those still `in_flight` (started and
    /// not answered) and the time since the latest copy started.
    pub fn next_step(&self, started: u32, in_flight: u32, since_last_start_ms: f64) -> Step {
        if started == 0 {
            return Step::Start;
        }
        if in_flight == 0 {
            // Every copy answered without a winner: a failure is the retry policy's business
            // (its backoff), never a reason to hedge at once.
            return Step::Exhausted;
        }
        if started >= self.max_copies || in_flight >= self.max_in_flight {
            return Step::AwaitAnswer;
        }
        let wait = self.delay_ms() - since_last_start_ms.max(0.0);
        if wait > 0.0 {
            Step::Wait { ms: wait }
        } else {
            Step::Start
        }
    }
}

/// The nearest-rank `q`-quantile of `samples` (not empty), in O(n log n) without allocation
/// beyond one copy.
fn nearest_rank(samples: &[f64], q: f64) -> f64 {
    let mut sorted = samples.to_vec();
    heap_sort_by(&mut sorted, |a, b| a < b);
    quantile_of_sorted(&sorted, q)
}

/// The nearest-rank `q`-quantile of ascending `sorted` (0 when empty).
pub fn quantile_of_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    let rank = ((q * n as f64).ceil() as usize).max(1).min(n);
    sorted.get(rank.saturating_sub(1)).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_matches_the_definition() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(nearest_rank(&v, 0.95), 95.0);
        assert_eq!(nearest_rank(&v, 0.5), 50.0);
        assert_eq!(nearest_rank(&[7.0], 0.99), 7.0);
    }
}
