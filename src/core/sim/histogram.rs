//! The seed's experiment: N clients that failed together at `t = 0` each retry once; how many
//! retries land in each bucket?
//!
//! Why it matters: with a fixed (or un-jittered exponential) delay every client computes the same
//! number, so all N retries land in one bucket — "a scheduled stampede". Full jitter spreads them
//! over the whole window: the seed measured a peak of 1,048 per 100 ms instead of 10,000 (9.5×).
//!
//! How it is computed: one seeded draw per client, fed to the strategy's core [`Backoff`], added to
//! its bucket; no delay is stored (memory is O(buckets)). The deterministic strategies (`fixed`,
//! `none`) put all N clients in one bucket without a loop: that is the same answer, exactly.
//! Decorrelated jitter at attempt `a` uses `previous = ceiling(a)` (see [`super::jitter`]).
//!
//! # Default
//! `clients = 10_000`, `baseDelayMs = 1000`, `maxDelayMs = 30_000`, `attempt = 1`,
//! `bucketMs = 100`, `seed = 1`.

use super::super::backoff::Backoff;
use super::super::backoff::Jitter;
use super::super::error::{check, Error, Opt};
use super::super::rng::Rng;
use super::{bucket_of, effective_bucket_ms, rng_from_seed, Strategy};

/// Largest accepted `clients` for the histogram (it stores no per-client state).
pub const MAX_CLIENTS: u32 = 100_000_000;

/// Largest accepted `attempt`.
pub const MAX_ATTEMPT: u32 = 1_000;

/// Options, as JS numbers; validated by [`simulate_histogram`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistogramOptions {
    /// The retry strategy.
    pub strategy: Strategy,
    /// Clients that failed together (integer, 1 to 10^8).
    pub clients: f64,
    /// Base delay.
    pub base_delay_ms: f64,
    /// Cap.
    pub max_delay_ms: f64,
    /// The failed attempt the retry follows (1 = the first retry).
    pub attempt: f64,
    /// Bucket width (> 0; widened if more than [`super::MAX_BUCKETS`] buckets would be needed).
    pub bucket_ms: f64,
    /// Seed (integer, 1 to 2^32 − 1).
    pub seed: f64,
}

impl Default for HistogramOptions {
    fn default() -> Self {
        Self {
            strategy: Strategy::Full,
            clients: 10_000.0,
            base_delay_ms: 1_000.0,
            max_delay_ms: 30_000.0,
            attempt: 1.0,
            bucket_ms: 100.0,
            seed: 1.0,
        }
    }
}

/// Retries per bucket, bucket `i` covering `[i · bucket_ms, (i + 1) · bucket_ms)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    /// The bucket width used.
    pub bucket_ms: f64,
    /// Retries per bucket, from `t = 0` to the bucket of the largest possible delay.
    pub counts: Vec<u32>,
    /// The largest count.
    pub peak: u32,
    /// The (first) bucket holding the peak.
    pub peak_index: usize,
    /// Total retries (= clients).
    pub total: u64,
}

/// Run the experiment.
pub fn simulate_histogram(o: &HistogramOptions) -> Result<Histogram, Error> {
    let clients = check::count(Opt::Clients, o.clients, MAX_CLIENTS)?;
    let backoff = o.strategy.backoff(o.base_delay_ms, o.max_delay_ms)?;
    let attempt = check::count(Opt::Attempt, o.attempt, MAX_ATTEMPT)?;
    let bucket_ms = check::positive(Opt::BucketMs, o.bucket_ms)?;
    let mut rng = rng_from_seed(o.seed)?;

    let previous = backoff.ceiling(attempt);
    // The supremum of the delay (`delay_from_unit` clamps 1.0 to the largest unit below 1).
    let span = backoff.delay_from_unit(attempt, previous, 1.0);
    let bucket_ms = effective_bucket_ms(bucket_ms, span);
    let len = bucket_of(span, bucket_ms, usize::MAX) + 1;
    let mut counts = vec![0u32; len];

    if backoff.jitter() == Jitter::None {
        // Deterministic: every client computes the same delay.
        let at = bucket_of(
            backoff.delay_from_unit(attempt, previous, 0.0),
            bucket_ms,
            len,
        );
        if let Some(c) = counts.get_mut(at) {
            *c = clients;
        }
    } else {
        // The line in bucket units: one multiply-add and a truncation per client.
        let line = Affine::of(&backoff, attempt, previous).scaled(1.0 / bucket_ms);
        // The cap is applied to the index: `floor` is monotone, so `min(floor(x), last)` is
        // `floor(min(x, cap))` (the last bucket is the cap's, or the supremum's when it is lower).
        let last = (len - 1) as u32;
        // Two clients per 64-bit draw (32 bits each: a resolution of 2^-32 of the window, far
        // below any bucket), counted into two arrays so that consecutive increments never wait
        // on each other's store.
        let mut odd = vec![0u32; len];
        for _ in 0..clients / 2 {
            let bits = rng.next_u64();
            let i = (line.uncapped((bits >> 32) as u32) as u32).min(last) as usize;
            let j = (line.uncapped(bits as u32) as u32).min(last) as usize;
            if let Some(c) = counts.get_mut(i) {
                *c += 1;
            }
            if let Some(c) = odd.get_mut(j) {
                *c += 1;
            }
        }
        if clients % 2 == 1 {
            let i = (line.uncapped((rng.next_u64() >> 32) as u32) as u32).min(last) as usize;
            if let Some(c) = counts.get_mut(i) {
                *c += 1;
            }
        }
        counts.iter_mut().zip(&odd).for_each(|(c, o)| *c += o);
    }

    let (peak_index, peak) =
        counts.iter().copied().enumerate().fold(
            (0, 0),
            |best, (i, c)| if c > best.1 { (i, c) } else { best },
        );
    Ok(Histogram {
        bucket_ms,
        counts,
        peak,
        peak_index,
        total: u64::from(clients),
    })
}

const UNIT_32: f64 = 1.0 / 4_294_967_296.0;

/// A jittered delay is affine in the uniform draw, then capped: `min(cap, lo + u · slope)`. The
/// line is read off the core [`Backoff`] (its value at 0 and at a point below the cap), never
/// re-derived from the formulas, so the histogram follows whatever the core does; a test checks
/// that it agrees with [`Backoff::delay_from_unit`] to 1e-9. The hot loop then costs one
/// multiply-add per client instead of the whole schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Affine {
    lo: f64,
    slope: f64,
    per_bit: f64,
    cap: f64,
}

impl Affine {
    fn of(b: &Backoff, attempt: u32, previous: f64) -> Self {
        let lo = b.delay_from_unit(attempt, previous, 0.0);
        let cap = b.max_delay_ms();
        // Halve until the point is below the cap (decorrelated jitter may reach it early).
        let mut u = 0.5;
        let mut f = b.delay_from_unit(attempt, previous, u);
        while f >= cap && u > 1e-9 {
            u /= 2.0;
            f = b.delay_from_unit(attempt, previous, u);
        }
        let slope = (f - lo) / u;
        Self {
            lo,
            slope,
            per_bit: slope * UNIT_32,
            cap,
        }
    }

    /// The same line in other units (`k` = 1 / bucket width: bucket units).
    fn scaled(&self, k: f64) -> Self {
        Self {
            lo: self.lo * k,
            slope: self.slope * k,
            per_bit: self.per_bit * k,
            cap: self.cap * k,
        }
    }

    #[cfg(test)]
    fn at(&self, u: f64) -> f64 {
        (self.lo + u * self.slope).min(self.cap)
    }

    /// The line at the unit `bits / 2^32`, before the cap (`per_bit` = `slope / 2^32`).
    #[inline]
    fn uncapped(&self, bits: u32) -> f64 {
        self.lo + f64::from(bits) * self.per_bit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::backoff::Jitter;
    use crate::core::rng::SplitMix64;

    #[test]
    fn the_line_agrees_with_the_core_backoff() {
        let mut rng = SplitMix64::new(11);
        for _ in 0..2_000 {
            let base = (rng.next_unit() * 5_000.0).floor();
            let max = base + (rng.next_unit() * 60_000.0).floor();
            let attempt = 1 + (rng.next_unit() * 12.0) as u32;
            for jitter in [Jitter::Full, Jitter::Equal, Jitter::Decorrelated] {
                let b = Backoff::new(base, max, jitter).unwrap();
                let previous = b.ceiling(attempt);
                let line = Affine::of(&b, attempt, previous);
                for _ in 0..50 {
                    let u = rng.next_unit();
                    let want = b.delay_from_unit(attempt, previous, u);
                    let got = line.at(u);
                    assert!(
                        (got - want).abs() <= 1e-9 * want.max(1.0),
                        "{jitter:?} base {base} max {max} attempt {attempt} u {u}: {got} vs {want}"
                    );
                }
            }
        }
    }
}
