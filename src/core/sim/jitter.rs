//! The seed's jitter table: min / median / max (and mean) of each variant over many draws at one
//! attempt.
//!
//! Why two decorrelated rows: the seed's figures (1,001 / 12,411 / 24,000 ms at attempt 4, base
//! 1,000, cap 30 s) are those of `min(cap, uniform [base, 3 · previous))` with `previous` = the
//! exponential ceiling at that attempt (8,000 ms): uniform on `[1000, 24000)`, median 12,500. That
//! row is [`JitterVariant::Decorrelated`]. Real decorrelated jitter chains: `previous` is the delay
//! actually drawn before, starting from `base` at attempt 1, so at attempt 4 it is the fourth link
//! of a random chain and sits far lower (median ≈ 3.6 s at the defaults). That row is
//! [`JitterVariant::DecorrelatedChained`]: the number a client would really see.
//!
//! Each row draws from its own generator seeded with `seed`, so a row never depends on the rows
//! before it.
//!
//! # Default
//! `samples = 20_000`, `attempt = 4`, `baseDelayMs = 1000`, `maxDelayMs = 30_000`, `seed = 1`.

use super::super::backoff::{Backoff, Jitter};
use super::super::error::{check, Error, Opt};
use super::rng_from_seed;

/// Largest accepted `samples` (they are stored to take the median: 8 bytes each).
pub const MAX_SAMPLES: u32 = 4_000_000;

/// Options, as JS numbers; validated by [`jitter_table`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JitterOptions {
    /// Draws per variant (integer, 1 to 4 · 10^6).
    pub samples: f64,
    /// The attempt (integer from 1).
    pub attempt: f64,
    /// Base delay.
    pub base_delay_ms: f64,
    /// Cap.
    pub max_delay_ms: f64,
    /// Seed (integer, 1 to 2^32 − 1).
    pub seed: f64,
}

impl Default for JitterOptions {
    fn default() -> Self {
        Self {
            samples: 20_000.0,
            attempt: 4.0,
            base_delay_ms: 1_000.0,
            max_delay_ms: 30_000.0,
            seed: 1.0,
        }
    }
}

/// A row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JitterVariant {
    /// Uniform `[0, ceiling)`.
    Full,
    /// `ceiling/2 + uniform [0, ceiling/2)`.
    Equal,
    /// `min(cap, uniform [base, 3 · ceiling(attempt)))`: the seed's row.
    Decorrelated,
    /// `min(cap, uniform [base, 3 · previous))` chained from `previous = base` at attempt 1.
    DecorrelatedChained,
    /// The exponential ceiling (no jitter).
    None,
}

impl JitterVariant {
    /// All rows, in table order.
    pub const ALL: [JitterVariant; 5] = [
        JitterVariant::Full,
        JitterVariant::Equal,
        JitterVariant::Decorrelated,
        JitterVariant::DecorrelatedChained,
        JitterVariant::None,
    ];

    /// The name used by the JS API.
    pub const fn name(self) -> &'static str {
        match self {
            JitterVariant::Full => "full",
            JitterVariant::Equal => "equal",
            JitterVariant::Decorrelated => "decorrelated",
            JitterVariant::DecorrelatedChained => "decorrelatedChained",
            JitterVariant::None => "none",
        }
    }
}

/// One row's statistics, in ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JitterRow {
    /// Which variant.
    pub variant: JitterVariant,
    /// Smallest draw.
    pub min: f64,
    /// Median (mean of the two middle draws when `samples` is even).
    pub median: f64,
    /// Largest draw.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
}

/// Build the table: one row per [`JitterVariant::ALL`], in that order.
pub fn jitter_table(o: &JitterOptions) -> Result<Vec<JitterRow>, Error> {
    let samples = check::count(Opt::Samples, o.samples, MAX_SAMPLES)? as usize;
    let attempt = check::count(Opt::Attempt, o.attempt, super::histogram::MAX_ATTEMPT)?;
    let full = Backoff::new(o.base_delay_ms, o.max_delay_ms, Jitter::Full)?;
    rng_from_seed(o.seed)?;
    let equal = Backoff::new(o.base_delay_ms, o.max_delay_ms, Jitter::Equal)?;
    let decor = Backoff::new(o.base_delay_ms, o.max_delay_ms, Jitter::Decorrelated)?;
    let none = Backoff::new(o.base_delay_ms, o.max_delay_ms, Jitter::None)?;
    let base = full.base_delay_ms();
    let ceiling = full.ceiling(attempt);

    let mut buf = Vec::with_capacity(samples);
    let mut rows = Vec::with_capacity(JitterVariant::ALL.len());
    for variant in JitterVariant::ALL {
        // (schedule, previous delay for a single draw, links in the chain)
        let (b, previous, links) = match variant {
            JitterVariant::Full => (full, 0.0, 1),
            JitterVariant::Equal => (equal, 0.0, 1),
            JitterVariant::Decorrelated => (decor, ceiling, 1),
            JitterVariant::DecorrelatedChained => (decor, base, attempt),
            JitterVariant::None => (none, 0.0, 1),
        };
        let mut rng = rng_from_seed(o.seed)?;
        buf.clear();
        for _ in 0..samples {
            // One link for every row but the chained one, whose `previous` starts at `base` and
            // is each draw in turn.
            let mut d = previous;
            for _ in 0..links {
                d = b.delay(attempt, d, &mut rng);
            }
            buf.push(d);
        }
        rows.push(stats(variant, &mut buf));
    }
    Ok(rows)
}

/// Min, median, max and mean of `v`, in O(n) expected time (quickselect; the samples are
/// random, so the middle pivot is as good as any).
fn stats(variant: JitterVariant, v: &mut [f64]) -> JitterRow {
    let n = v.len();
    let mean = v.iter().sum::<f64>() / n as f64;
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mid = n / 2;
    let upper = select(v, mid);
    let median = if n % 2 == 1 {
        upper
    } else {
        // After the selection, everything left of `mid` is ≤ it: the lower middle is their max.
        let lower = v.get(..mid).map_or(upper, |l| {
            l.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        });
        (lower + upper) / 2.0
    };
    JitterRow {
        variant,
        min,
        median,
        max,
        mean,
    }
}

/// Hoare-partition quickselect: afterwards `v[k]` is the k-th smallest and `v[..k]` ≤ it ≤
/// `v[k+1..]`. Written here rather than `select_nth_unstable_by`, whose generic machinery costs
/// ~6 KB of wasm. NaN cannot occur (delays are finite).
fn select(v: &mut [f64], k: usize) -> f64 {
    let at = |v: &[f64], i: usize| v.get(i).copied().unwrap_or(f64::NAN);
    let (mut lo, mut hi) = (0, v.len().saturating_sub(1));
    while lo < hi {
        let pivot = at(v, lo + (hi - lo) / 2);
        let (mut i, mut j) = (lo, hi);
        loop {
            while at(v, i) < pivot {
                i += 1;
            }
            while at(v, j) > pivot {
                j -= 1;
            }
            if i >= j {
                break;
            }
            v.swap(i, j);
            i += 1;
            j -= 1;
        }
        // Now v[lo..=j] ≤ pivot ≤ v[j+1..=hi].
        if k <= j {
            hi = j;
        } else {
            lo = j + 1;
        }
    }
    at(v, k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rng::{Rng, SplitMix64};

    #[test]
    fn select_agrees_with_sorting() {
        let mut rng = SplitMix64::new(3);
        for n in [1usize, 2, 3, 4, 5, 10, 101, 1000] {
            for dup in [false, true] {
                let v: Vec<f64> = (0..n)
                    .map(|_| {
                        let u = rng.next_unit();
                        if dup {
                            (u * 4.0).floor()
                        } else {
                            u
                        }
                    })
                    .collect();
                let mut sorted = v.clone();
                sorted.sort_by(f64::total_cmp);
                for k in [0, n / 2, n - 1] {
                    let mut w = v.clone();
                    assert_eq!(select(&mut w, k), sorted[k], "n {n} k {k}");
                    assert!(w[..k].iter().all(|&x| x <= sorted[k]));
                    assert!(w[k + 1..].iter().all(|&x| x >= sorted[k]));
                }
                let mut w = v.clone();
                let row = stats(JitterVariant::Full, &mut w);
                let median = if n % 2 == 1 {
                    sorted[n / 2]
                } else {
                    (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
                };
                assert_eq!(row.median, median);
                assert_eq!(row.min, sorted[0]);
                assert_eq!(row.max, sorted[n - 1]);
            }
        }
    }
}
