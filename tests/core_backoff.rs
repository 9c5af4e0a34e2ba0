//! Backoff properties: every delay is finite, non-negative and capped for ANY attempt, cap and
//! draw (the ceiling saturates), and the seeded distributions match the seed table.
//!
//! Why property tests: the edge cases that break backoff in production are the ones nobody types
//! by hand (attempt `u32::MAX`, `maxDelayMs = Infinity`, a `random()` that returns NaN or 1.0).

use proptest::prelude::*;
use steadfast::core::backoff::{decorrelated, exponential_ceiling, Backoff, Jitter};
use steadfast::core::rng::SplitMix64;

fn attempts() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..80, 1000u32..1100, any::<u32>(), Just(u32::MAX)]
}

/// Finite, ≥ 0 bases: zero, realistic, and huge (normal numbers only: a subnormal ceiling cannot
/// hold `u · c < c`, and no one configures a 1e-320 ms base).
fn bases() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        1e-300f64..1.0,
        1.0f64..1e6,
        1e6f64..1e300,
        Just(f64::MAX),
    ]
}

/// `(base, max)` with `max ≥ base`: equal, a finite multiple, anything up to `f64::MAX`, or `+∞`.
fn base_and_max() -> impl Strategy<Value = (f64, f64)> {
    bases().prop_flat_map(|base| {
        let max = prop_oneof![
            Just(base),
            (1.0f64..64.0).prop_map(move |k| (base * k).min(f64::MAX)),
            (base..=f64::MAX),
            Just(f64::INFINITY),
        ];
        (Just(base), max)
    })
}

/// Unit draws from a well-behaved or a broken `random()`.
fn units() -> impl Strategy<Value = f64> {
    prop_oneof![
        0.0f64..1.0,
        Just(0.0),
        Just(1.0 - f64::EPSILON / 2.0),
        Just(1.0),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        -1e9f64..0.0,
        1.0f64..1e9,
        any::<f64>(),
    ]
}

/// Previous delays a caller might pass (decorrelated chains from them).
fn previous() -> impl Strategy<Value = f64> {
    prop_oneof![
        0.0f64..1e7,
        Just(f64::MAX),
        1e300f64..f64::MAX,
        any::<f64>()
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_delay_is_finite_non_negative_and_capped(
        (base, max) in base_and_max(), attempt in attempts(), unit in units(), prev in previous(),
    ) {
        for jitter in Jitter::ALL {
            let b = Backoff::new(base, max, jitter).unwrap();
            let c = b.ceiling(attempt);
            prop_assert!(c.is_finite() && c >= 0.0 && c <= max, "ceiling {c} for {jitter:?}");
            let d = b.delay_from_unit(attempt, prev, unit);
            prop_assert!(d.is_finite(), "{jitter:?}: delay {d} not finite");
            prop_assert!(d >= 0.0 && d <= max, "{jitter:?}: delay {d} outside [0, {max}]");
            match jitter {
                Jitter::Full if c > 0.0 => prop_assert!(d < c, "full {d} !< ceiling {c}"),
                Jitter::Full => prop_assert_eq!(d, 0.0),
                Jitter::Equal => prop_assert!(d >= c / 2.0, "equal {d} < {c}/2"),
                Jitter::Decorrelated => prop_assert!(d >= base, "decorrelated {d} < base {base}"),
                Jitter::None => prop_assert_eq!(d, c),
            }
        }
    }

    #[test]
    fn decorrelated_starts_at_base_and_stays_below_three_previous(
        (base, max) in base_and_max(), unit in 0.0f64..1.0, prev in previous(),
    ) {
        let d = decorrelated(prev, base, max, unit);
        prop_assert!(d.is_finite() && d >= base && d <= max, "{d}");
        // A draw of 0 is the bottom of [base, 3·previous): exactly base, whatever previous was.
        prop_assert_eq!(decorrelated(prev, base, max, 0.0), base);
        let p = if prev.is_finite() && prev > base { prev } else { base };
        if p * 3.0 <= f64::MAX && p > 0.0 {
            prop_assert!(d <= (p * 3.0).min(max), "{d} > 3 * {p}");
        }
    }

    #[test]
    fn ceiling_is_monotone_in_attempt((base, max) in base_and_max(), a in attempts(), b in attempts()) {
        let (lo, hi) = (a.min(b), a.max(b));
        let (c_lo, c_hi) = (exponential_ceiling(lo, base, max), exponential_ceiling(hi, base, max));
        prop_assert!(c_lo <= c_hi, "ceiling({lo}) = {c_lo} > ceiling({hi}) = {c_hi}");
        // Attempts count from 1 (attempt 0 reads as 1): the first ceiling is the base, capped.
        prop_assert_eq!(exponential_ceiling(1, base, max), base.min(max));
        prop_assert_eq!(exponential_ceiling(0, base, max), exponential_ceiling(1, base, max));
    }
}

/// Sorted delays of 20,000 seeded draws (attempt 4, base 1000, cap 30000).
fn samples(jitter: Jitter, previous_delay_ms: f64, seed: u64) -> Vec<f64> {
    let b = Backoff::new(1000.0, 30_000.0, jitter).unwrap();
    let mut rng = SplitMix64::new(seed);
    let mut v: Vec<f64> = (0..20_000)
        .map(|_| b.delay(4, previous_delay_ms, &mut rng))
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Kolmogorov–Smirnov distance between the sorted sample and uniform `[lo, hi)`.
fn ks_uniform(sorted: &[f64], lo: f64, hi: f64) -> f64 {
    let n = sorted.len() as f64;
    sorted.iter().enumerate().fold(0.0, |acc: f64, (i, &x)| {
        let cdf = (x - lo) / (hi - lo);
        acc.max((cdf - i as f64 / n).abs())
            .max((cdf - (i + 1) as f64 / n).abs())
    })
}

/// Tolerances (n = 20,000, fixed seeds, so no flakes; the bounds would hold for ~any seed):
/// - the sample median of uniform [lo, hi) has sd 0.5/√n · (hi − lo) ≈ 0.0035 · width; we allow 5 sd;
/// - min − lo and hi − max are ~Exp(mean width/n); we allow width/1000 (P(miss) ≈ e^−20);
/// - KS distance ≤ 1.95/√n ≈ 0.0138 is the 0.1 % critical value.
fn check_uniform(name: &str, v: &[f64], lo: f64, hi: f64, table_median: f64) {
    let width = hi - lo;
    let n = v.len() as f64;
    let (min, median, max) = (v[0], v[v.len() / 2], v[v.len() - 1]);
    assert!(
        min >= lo && max < hi,
        "{name}: [{min}, {max}] outside [{lo}, {hi})"
    );
    assert!(min - lo < width / 1000.0, "{name}: min {min}");
    assert!(hi - max < width / 1000.0, "{name}: max {max}");
    let sd = 0.5 / n.sqrt() * width;
    assert!(
        (median - (lo + hi) / 2.0).abs() < 5.0 * sd,
        "{name}: median {median}"
    );
    // The seed table's median is itself one such sample: it must be within the same band.
    assert!(
        (table_median - (lo + hi) / 2.0).abs() < 5.0 * sd,
        "{name}: table"
    );
    let ks = ks_uniform(v, lo, hi);
    assert!(ks < 1.95 / n.sqrt(), "{name}: KS distance {ks}");
}

#[test]
fn seeded_distributions_reproduce_the_seed_table() {
    // full: uniform [0, 8000): table min ≈ 1, median ≈ 3973, max ≈ 7999.
    check_uniform("full", &samples(Jitter::Full, 0.0, 7), 0.0, 8000.0, 3973.0);
    // equal: 4000 + uniform [0, 4000): table 4000 / ~6000 / 8000.
    check_uniform(
        "equal",
        &samples(Jitter::Equal, 0.0, 8),
        4000.0,
        8000.0,
        6000.0,
    );
    // decorrelated from previous = 8000 (the ceiling at attempt 4): uniform [1000, 24000), under
    // the 30000 cap: table min ≈ 1001, median ≈ 12,400, max ≈ 24,000.
    let d = samples(Jitter::Decorrelated, 8000.0, 9);
    check_uniform("decorrelated", &d, 1000.0, 24_000.0, 12_400.0);
    // none: always the ceiling.
    assert!(samples(Jitter::None, 0.0, 10).iter().all(|&x| x == 8000.0));
}

#[test]
fn the_same_seed_gives_the_same_schedule() {
    assert_eq!(
        samples(Jitter::Full, 0.0, 42),
        samples(Jitter::Full, 0.0, 42)
    );
    assert_ne!(
        samples(Jitter::Full, 0.0, 42),
        samples(Jitter::Full, 0.0, 43)
    );
}

/// Regression (found by the properties above): `base · 2^(attempt−1)` overflowed to `+∞` with
/// `maxDelayMs = Infinity`, although the docs promise a finite delay for any attempt.
#[test]
fn an_infinite_cap_never_yields_an_infinite_delay() {
    for base in [2.0, 100.0, 1e300] {
        let b = Backoff::new(base, f64::INFINITY, Jitter::None).unwrap();
        assert!(b.ceiling(1025).is_finite(), "base {base}");
        assert!(b.ceiling(u32::MAX).is_finite(), "base {base}");
    }
}

/// Regression: `previous · 3` overflowed, so a huge previous delay gave `+∞` (infinite cap) or
/// the cap instead of `base` for a zero draw (`0 · ∞ = NaN`, and `NaN.min(cap)` is the cap).
#[test]
fn a_huge_previous_delay_does_not_overflow_decorrelated_jitter() {
    assert_eq!(decorrelated(f64::MAX, 1.0, 30_000.0, 0.0), 1.0);
    assert!(decorrelated(1e308, 1.0, f64::INFINITY, 0.5).is_finite());
}
