//! The retry-storm simulator: the seed's 10,000-client histogram, its jitter table, and an outage
//! model where clients, a gateway, a breaker and a budget play out a hiccup or a long outage.
//!
//! Why in the core: the simulator runs the very [`Backoff`], [`RetryPolicy`],
//! [`Breaker`](super::breaker::Breaker) and [`RetryBudget`](super::budget::RetryBudget) that
//! production uses, millions of times, with a seeded [`SplitMix64`]. A figure it prints is a
//! property of the shipped code, not of a re-implementation, and the same seed gives the same
//! output on every platform (native tests, wasm, the example page).
//!
//! Four experiments:
//! - [`histogram`]: N clients that failed together at `t = 0` retry once; count retries per
//!   bucket. O(N) time, O(buckets) memory (no delay is stored), O(1) for the deterministic
//!   strategies.
//! - [`jitter`]: min / median / max / mean of each jitter variant at one attempt.
//! - [`outage`]: a closed-loop client population against a gateway with a per-tick capacity and
//!   an outage window; per-bucket offered / served / failed / retries / breaker-rejected, and a
//!   summary (peaks, amplification, time to recover, requests that finally failed). Discrete
//!   ticks with a timing wheel: O(events + ticks), linear in clients.
//! - [`tail`]: a server with a slow tail, p50 / p99 / p99.9 with and without hedging, and the
//!   copies per request that hedging adds.
//!
//! Every option is validated into [`Error`] naming the option (see [`Opt`]).
//!
//! [`RetryPolicy`]: super::retry::RetryPolicy

use super::backoff::{Backoff, Jitter};
use super::error::{check, Error, Expect, Opt};
use super::rng::SplitMix64;

pub mod histogram;
pub mod jitter;
pub mod outage;
pub mod tail;

pub use histogram::{simulate_histogram, Histogram, HistogramOptions};
pub use jitter::{jitter_table, JitterOptions, JitterRow, JitterVariant};
pub use outage::{simulate_outage, OutageOptions, OutageResult, OutageSummary};
pub use tail::{simulate_tail, TailOptions, TailResult, TailRun};

/// Most buckets a result reports. A `bucketMs` that would need more is widened (the result says
/// which width was used), so a tiny bucket can never exhaust wasm memory.
pub const MAX_BUCKETS: usize = 1 << 20;

/// Largest accepted `seed`.
pub const MAX_SEED: u32 = u32::MAX;

/// A retry strategy: a jitter variant, or `Fixed` (the naive loop: every retry waits exactly
/// `baseDelayMs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Uniform `[0, ceiling)`.
    #[default]
    Full,
    /// `ceiling/2 + uniform [0, ceiling/2)`.
    Equal,
    /// `min(max, uniform [base, 3 · previous))`.
    Decorrelated,
    /// The exponential ceiling itself: 1 s, 2 s, 4 s … (the seed's "Your backoff is 1s, 2s, 4s").
    None,
    /// Always `baseDelayMs` (the seed's histogram: "everybody at 1000ms").
    Fixed,
}

impl Strategy {
    /// All strategies, by id. Ids 0–3 are the [`Jitter`] ids; `Fixed` is 4.
    pub const ALL: [Strategy; 5] = [
        Strategy::Full,
        Strategy::Equal,
        Strategy::Decorrelated,
        Strategy::None,
        Strategy::Fixed,
    ];

    /// The name used by the JS API.
    pub const fn name(self) -> &'static str {
        match self {
            Strategy::Full => "full",
            Strategy::Equal => "equal",
            Strategy::Decorrelated => "decorrelated",
            Strategy::None => "none",
            Strategy::Fixed => "fixed",
        }
    }

    /// Parse a numeric id (index in [`Strategy::ALL`]).
    pub fn from_id(id: u32) -> Result<Self, Error> {
        Strategy::ALL.get(id as usize).copied().ok_or(Error::option(
            Opt::Strategy,
            Expect::OneOf("'full', 'equal', 'decorrelated', 'none', 'fixed'"),
        ))
    }

    /// Stable numeric id.
    pub fn id(self) -> u32 {
        Strategy::ALL.iter().position(|s| *s == self).unwrap_or(0) as u32
    }

    /// The schedule this strategy follows. `Fixed` is the exponential schedule with its cap at the
    /// base (`min(base, base · 2^k) = base`), so every strategy is a core [`Backoff`]; the user's
    /// `max_delay_ms` is still validated.
    pub fn backoff(self, base_delay_ms: f64, max_delay_ms: f64) -> Result<Backoff, Error> {
        let (jitter, fixed) = match self {
            Strategy::Full => (Jitter::Full, false),
            Strategy::Equal => (Jitter::Equal, false),
            Strategy::Decorrelated => (Jitter::Decorrelated, false),
            Strategy::None => (Jitter::None, false),
            Strategy::Fixed => (Jitter::None, true),
        };
        let b = Backoff::new(base_delay_ms, max_delay_ms, jitter)?;
        if fixed {
            Backoff::new(base_delay_ms, base_delay_ms, Jitter::None)
        } else {
            Ok(b)
        }
    }
}

/// `seed`: an integer from 1 to 2^32 − 1 (the same seed gives the same output everywhere).
pub(crate) fn rng_from_seed(seed: f64) -> Result<SplitMix64, Error> {
    check::count(Opt::Seed, seed, MAX_SEED).map(|s| SplitMix64::new(u64::from(s)))
}

/// The bucket width actually used: `bucket_ms`, widened if `span_ms` would need more than
/// [`MAX_BUCKETS`] buckets.
pub(crate) fn effective_bucket_ms(bucket_ms: f64, span_ms: f64) -> f64 {
    let min = span_ms / (MAX_BUCKETS - 1) as f64;
    if min.is_finite() && min > bucket_ms {
        min
    } else {
        bucket_ms
    }
}

/// Bucket index of `t_ms`, clamped into `0..len` (never out of bounds, never lossy: a value past
/// the end lands in the last bucket).
#[inline]
pub(crate) fn bucket_of(t_ms: f64, bucket_ms: f64, len: usize) -> usize {
    // `as` saturates (NaN → 0), so this never panics.
    ((t_ms / bucket_ms) as usize).min(len.saturating_sub(1))
}
