//! Backoff delays: how long to wait before retry number `attempt`.
//!
//! Why jitter: clients that failed together and back off by the same formula come back together.
//! `full` jitter draws uniformly below the exponential ceiling, which spreads 10,000 synchronized
//! clients evenly over the window instead of landing them all at `t = ceiling`.
//!
//! Attempts count from 1: the delay after the first failed attempt uses `attempt = 1`, whose
//! ceiling is `baseDelayMs` (the seed formula `base · 2^(attempt−1)`).
//!
//! # Default
//! `jitter = Full`. Every delay is finite and `<= max_delay_ms` for any `attempt` (no overflow:
//! the exponent saturates).

use super::error::{check, Error, Expect, Opt};
use super::rng::Rng;

/// The jitter variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Jitter {
    /// uniform `[0, c)` where `c = min(max, base · 2^(attempt−1))`.
    #[default]
    Full,
    /// `c/2 + uniform [0, c/2)`: a guaranteed minimum gap of half the ceiling.
    Equal,
    /// `min(max, uniform [base, previous · 3))`: chains from the previous delay.
    Decorrelated,
    /// The exponential ceiling itself, no randomness (the "naive" schedule).
    None,
}

impl Jitter {
    /// All variants, by id.
    pub const ALL: [Jitter; 4] = [
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::None,
    ];

    /// The name used by the JS API.
    pub const fn name(self) -> &'static str {
        match self {
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
            Jitter::None => "none",
        }
    }

    /// Parse a JS name.
    pub fn from_name(name: &str) -> Result<Self, Error> {
        Jitter::ALL
            .into_iter()
            .find(|j| j.name() == name)
            .ok_or(Error::option(
                Opt::Jitter,
                Expect::OneOf("'full', 'equal', 'decorrelated', 'none'"),
            ))
    }

    /// The numeric id (index in [`Jitter::ALL`]) used across the boundary.
    pub const fn id(self) -> u32 {
        match self {
            Jitter::Full => 0,
            Jitter::Equal => 1,
            Jitter::Decorrelated => 2,
            Jitter::None => 3,
        }
    }

    /// Parse a numeric id (index in [`Jitter::ALL`]).
    pub fn from_id(id: u32) -> Result<Self, Error> {
        Jitter::ALL.get(id as usize).copied().ok_or(Error::option(
            Opt::Jitter,
            Expect::OneOf("'full', 'equal', 'decorrelated', 'none'"),
        ))
    }
}

/// A validated, immutable backoff schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    base_delay_ms: f64,
    max_delay_ms: f64,
    jitter: Jitter,
}

impl Backoff {
    /// Validate once. `base_delay_ms` must be finite and ≥ 0; `max_delay_ms` ≥ `base_delay_ms`
    /// (`+Infinity` allowed).
    pub fn new(base_delay_ms: f64, max_delay_ms: f64, jitter: Jitter) -> Result<Self, Error> {
        let base_delay_ms = check::non_negative(Opt::BaseDelayMs, base_delay_ms)?;
        let max_delay_ms = check::non_negative_or_inf(Opt::MaxDelayMs, max_delay_ms)?;
        if max_delay_ms < base_delay_ms {
            return Err(Error::option(
                Opt::MaxDelayMs,
                Expect::AtLeast(Opt::BaseDelayMs),
            ));
        }
        Ok(Self {
            base_delay_ms,
            max_delay_ms,
            jitter,
        })
    }

    /// The configured jitter.
    pub fn jitter(&self) -> Jitter {
        self.jitter
    }

    /// The base delay.
    pub fn base_delay_ms(&self) -> f64 {
        self.base_delay_ms
    }

    /// The cap.
    pub fn max_delay_ms(&self) -> f64 {
        self.max_delay_ms
    }

    /// `min(max, base · 2^(attempt−1))`, saturating; attempt 0 is treated as 1.
    pub fn ceiling(&self, attempt: u32) -> f64 {
        exponential_ceiling(attempt, self.base_delay_ms, self.max_delay_ms)
    }

    /// The delay before the retry that follows failed attempt `attempt`, given a uniform draw
    /// `unit` in `[0, 1)` and, for decorrelated jitter, the previous delay (use `base` for the
    /// first retry). Out-of-range `unit` values are clamped, so a bad `random()` cannot produce a
    /// negative or over-cap delay.
    pub fn delay_from_unit(&self, attempt: u32, previous_delay_ms: f64, unit: f64) -> f64 {
        let u = clamp_unit(unit);
        match self.jitter {
            Jitter::Full => u * self.ceiling(attempt),
            Jitter::Equal => {
                let half = self.ceiling(attempt) / 2.0;
                half + u * half
            }
            Jitter::Decorrelated => {
                decorrelated(previous_delay_ms, self.base_delay_ms, self.max_delay_ms, u)
            }
            Jitter::None => self.ceiling(attempt),
        }
    }

    /// Like [`Backoff::delay_from_unit`] with a draw from `rng`.
    pub fn delay(&self, attempt: u32, previous_delay_ms: f64, rng: &mut impl Rng) -> f64 {
        self.delay_from_unit(attempt, previous_delay_ms, rng.next_unit())
    }
}

fn clamp_unit(u: f64) -> f64 {
    if u.is_nan() || u < 0.0 {
        0.0
    } else if u >= 1.0 {
        // Largest double below 1.
        1.0 - f64::EPSILON / 2.0
    } else {
        u
    }
}

/// `min(max, base · 2^(attempt−1))` with attempt 0 treated as 1 and no overflow for any attempt.
/// Out of line: inlined, it was copied into each jitter kind of every caller (wasm size).
#[inline(never)]
pub fn exponential_ceiling(attempt: u32, base_delay_ms: f64, max_delay_ms: f64) -> f64 {
    if base_delay_ms <= 0.0 {
        return 0.0;
    }
    let exponent = attempt.saturating_sub(1).min(1023) as i32;
    let raw = base_delay_ms * 2f64.powi(exponent);
    // raw may be +inf for huge attempts; min() brings it back to the cap, and to the largest
    // finite double when the cap itself is +inf.
    raw.min(max_delay_ms).min(f64::MAX)
}

/// `min(max, uniform [base, previous·3))`; `previous` below `base` (or not finite) is treated as
/// `base`, so the chain always starts sane.
pub fn decorrelated(
    previous_delay_ms: f64,
    base_delay_ms: f64,
    max_delay_ms: f64,
    unit: f64,
) -> f64 {
    let u = clamp_unit(unit);
    let prev = if previous_delay_ms.is_finite() && previous_delay_ms > base_delay_ms {
        previous_delay_ms
    } else {
        base_delay_ms
    };
    // A huge (finite) previous delay must not overflow to +inf: `0 · inf` is NaN.
    let upper = (prev * 3.0).min(f64::MAX);
    (base_delay_ms + u * (upper - base_delay_ms)).min(max_delay_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::rng::SplitMix64;

    fn b(j: Jitter) -> Backoff {
        Backoff::new(1000.0, 30_000.0, j).unwrap()
    }

    #[test]
    fn ceiling_doubles_from_attempt_one_and_caps() {
        let f = b(Jitter::None);
        assert_eq!(f.ceiling(0), 1000.0);
        assert_eq!(f.ceiling(1), 1000.0);
        assert_eq!(f.ceiling(2), 2000.0);
        assert_eq!(f.ceiling(4), 8000.0);
        assert_eq!(f.ceiling(6), 30_000.0);
        assert_eq!(f.ceiling(u32::MAX), 30_000.0);
    }

    #[test]
    fn no_overflow_with_infinite_cap() {
        let f = Backoff::new(1.0, f64::INFINITY, Jitter::Full).unwrap();
        // The exponent saturates at 2^1023: huge but finite, never NaN or infinity.
        let c = f.ceiling(u32::MAX);
        assert!(c.is_finite() && c > 1e307);
        let f = Backoff::new(0.0, f64::INFINITY, Jitter::Full).unwrap();
        assert_eq!(f.ceiling(u32::MAX), 0.0);
    }

    #[test]
    fn variants_at_unit_extremes() {
        assert_eq!(b(Jitter::Full).delay_from_unit(4, 0.0, 0.0), 0.0);
        assert!(b(Jitter::Full).delay_from_unit(4, 0.0, 0.999_999) < 8000.0);
        assert_eq!(b(Jitter::Equal).delay_from_unit(4, 0.0, 0.0), 4000.0);
        assert_eq!(
            b(Jitter::Decorrelated).delay_from_unit(4, 8000.0, 0.0),
            1000.0
        );
        assert_eq!(
            b(Jitter::Decorrelated).delay_from_unit(9, 20_000.0, 0.99),
            30_000.0
        );
        assert_eq!(b(Jitter::None).delay_from_unit(3, 0.0, 0.5), 4000.0);
    }

    #[test]
    fn bad_units_are_clamped() {
        let f = b(Jitter::Full);
        assert_eq!(f.delay_from_unit(1, 0.0, f64::NAN), 0.0);
        assert_eq!(f.delay_from_unit(1, 0.0, -3.0), 0.0);
        assert!(f.delay_from_unit(1, 0.0, 7.0) < 1000.0);
    }

    #[test]
    fn validation() {
        assert!(Backoff::new(f64::NAN, 1.0, Jitter::Full).is_err());
        assert!(Backoff::new(-1.0, 1.0, Jitter::Full).is_err());
        assert_eq!(
            Backoff::new(10.0, 5.0, Jitter::Full),
            Err(Error::option(
                Opt::MaxDelayMs,
                Expect::AtLeast(Opt::BaseDelayMs)
            ))
        );
        assert!(Backoff::new(10.0, f64::NAN, Jitter::Full).is_err());
        assert_eq!(Jitter::from_name("equal"), Ok(Jitter::Equal));
        assert!(Jitter::from_name("exponential").is_err());
        assert!(Jitter::from_id(4).is_err());
    }

    /// Statistical check with a fixed seed: full jitter at attempt 4 over 20,000 samples has a
    /// median near 4,000 ms (the seed's table: 3,973) and never reaches 8,000.
    #[test]
    fn full_jitter_distribution_matches_the_seed_table() {
        let f = b(Jitter::Full);
        let mut rng = SplitMix64::new(7);
        let mut v: Vec<f64> = (0..20_000).map(|_| f.delay(4, 0.0, &mut rng)).collect();
        v.sort_by(f64::total_cmp);
        let median = v[10_000];
        assert!((3_850.0..4_150.0).contains(&median), "median {median}");
        assert!(v[0] < 5.0 && v[19_999] < 8_000.0 && v[19_999] > 7_990.0);
    }

    #[test]
    fn equal_jitter_has_a_floor_of_half_the_ceiling() {
        let f = b(Jitter::Equal);
        let mut rng = SplitMix64::new(9);
        for _ in 0..10_000 {
            let d = f.delay(4, 0.0, &mut rng);
            assert!((4_000.0..8_000.0).contains(&d));
        }
    }
}
