//! Pins the outage model's exact output (every series and every summary field, bit for bit) for
//! a spread of configurations: every strategy, breaker, budget, throttling with Retry-After,
//! quota, limiter, and delays beyond the timing wheel's span (its overflow list). Issue 15 rewrote
//! the model's data layout (no per-client table; events carry the client state) for speed; these
//! fingerprints were recorded from the layout before it, so the rewrite is proven result-neutral.

use steadfast::core::breaker::BreakerConfig;
use steadfast::core::budget::{RatioBudget, RetryBudget};
use steadfast::core::limiter::LimiterConfig;
use steadfast::core::quota::QuotaConfig;
use steadfast::core::sim::*;

/// FNV-1a over every series value and the bits of every summary field.
fn fingerprint(r: &OutageResult) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |v: u64| {
        for b in v.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(r.bucket_ms.to_bits());
    for s in [
        &r.offered,
        &r.served,
        &r.failed,
        &r.retries,
        &r.rejected,
        &r.throttled,
    ] {
        eat(s.len() as u64);
        for &v in s.iter() {
            eat(u64::from(v));
        }
    }
    let s = &r.summary;
    for v in [
        s.logical_requests,
        s.succeeded,
        s.failed_exhausted,
        s.failed_budget,
        s.failed_rejected,
        s.failed_quota,
        s.throttled,
        s.paced,
        s.pending,
        s.attempts,
        s.retries,
        s.peak_offered,
        s.second_peak_offered,
        s.outage_attempts,
    ] {
        eat(v);
    }
    for v in [
        s.throttled_share,
        s.offered_per_sec,
        s.goodput_per_sec,
        s.converged_at_ms,
        s.peak_offered_at_ms,
        s.second_peak_at_ms,
        s.amplification,
        s.recovered_at_ms,
        s.time_to_recover_ms,
        s.outage_end_ms,
    ] {
        eat(v.to_bits());
    }
    h
}

fn configs() -> Vec<(&'static str, OutageOptions)> {
    let small = OutageOptions {
        clients: 3_000.0,
        capacity_per_tick: 45.0,
        ..OutageOptions::default()
    };
    let mut v = vec![("default 10k", OutageOptions::default())];
    for (name, strategy) in [
        ("equal", Strategy::Equal),
        ("decorrelated", Strategy::Decorrelated),
        ("fixed", Strategy::Fixed),
        ("none", Strategy::None),
    ] {
        v.push((
            name,
            OutageOptions {
                strategy,
                seed: 7.0,
                ..small.clone()
            },
        ));
    }
    v.push((
        "long outage, breaker + budget",
        OutageOptions {
            clients: 2_000.0,
            capacity_per_tick: 30.0,
            breaker: Some(BreakerConfig::rate(100.0, 0.5, None, 5_000.0, None).unwrap()),
            budget: Some(RetryBudget::Ratio(
                RatioBudget::new(0.2, 10.0, 10_000.0).unwrap(),
            )),
            ..OutageOptions::long_outage()
        },
    ));
    v.push((
        "throttling, Retry-After past the wheel, quota, limiter",
        OutageOptions {
            clients: 2_000.0,
            capacity_per_tick: 5.0,
            limiter_groups: 20.0,
            duration_ms: 120_000.0,
            max_delay_ms: 2_000.0,
            retry_after_ms: 45_000.0,
            quota: Some(QuotaConfig::new(10.0, 5.0, 1.0, 10.0, 1.0).unwrap()),
            limiter: Some(LimiterConfig::default()),
            ..OutageOptions::throttling()
        },
    ));
    v.push((
        "throttling, limiter only",
        OutageOptions {
            clients: 2_000.0,
            capacity_per_tick: 5.0,
            limiter_groups: 20.0,
            duration_ms: 40_000.0,
            limiter: Some(LimiterConfig::default()),
            ..OutageOptions::throttling()
        },
    ));
    v.push((
        "ends mid-flight (pending)",
        OutageOptions {
            duration_ms: 5_300.0,
            outage_start_ms: 5_000.0,
            outage_duration_ms: 10_000.0,
            ..small
        },
    ));
    v
}

#[test]
fn outage_output_is_pinned_bit_for_bit() {
    let got: Vec<(&str, u64)> = configs()
        .into_iter()
        .map(|(name, o)| (name, fingerprint(&simulate_outage(&o).unwrap())))
        .collect();
    for (name, h) in &got {
        println!("{name}: {h:#018x}");
    }
    let want: &[u64] = &[
        0xd09b29ed56125c78,
        0x3f00bcbed786cb9a,
        0x7e5165271c599d16,
        0x3cb23eb653a534fe,
        0x3f9c8a87b585d5df,
        0x4bcaeef0b98aaeb6,
        0x706b9d919fc52d68,
        0xc5f4641cca3ef01d,
        0x4c26e3fb807be493,
    ];
    assert_eq!(got.iter().map(|g| g.1).collect::<Vec<_>>(), want);
}
