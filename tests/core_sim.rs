//! The retry-storm simulator, natively: the seed's figures, determinism, conservation, and the
//! story the numbers must tell (naive retries make a second peak, jitter flattens it, the breaker
//! cuts wasted attempts, the budget caps amplification).

use steadfast::core::breaker::BreakerConfig;
use steadfast::core::budget::{RatioBudget, RetryBudget};
use steadfast::core::error::{Error, Expect, Opt};
use steadfast::core::sim::*;

fn hist(strategy: Strategy, seed: f64) -> Histogram {
    simulate_histogram(&HistogramOptions {
        strategy,
        seed,
        ..Default::default()
    })
    .unwrap()
}

fn outage(o: OutageOptions) -> OutageResult {
    simulate_outage(&o).unwrap()
}

fn breaker() -> BreakerConfig {
    BreakerConfig::rate(100.0, 0.5, None, 5_000.0, None).unwrap()
}

fn budget() -> RetryBudget {
    RetryBudget::Ratio(RatioBudget::new(0.2, 10.0, 10_000.0).unwrap())
}

/// The long outage, with fewer clients (and a gateway scaled to match) so debug runs stay fast.
fn long(clients: f64) -> OutageOptions {
    OutageOptions {
        clients,
        capacity_per_tick: 150.0 * clients / 10_000.0,
        ..OutageOptions::long_outage()
    }
}

#[test]
fn same_seed_same_output_other_seed_other_output() {
    for s in Strategy::ALL {
        assert_eq!(hist(s, 7.0), hist(s, 7.0));
    }
    assert_ne!(hist(Strategy::Full, 7.0), hist(Strategy::Full, 8.0));
    let t = jitter_table(&JitterOptions::default()).unwrap();
    assert_eq!(t, jitter_table(&JitterOptions::default()).unwrap());
    let run = |seed| {
        format!(
            "{:?}",
            outage(OutageOptions {
                seed,
                breaker: Some(breaker()),
                budget: Some(budget()),
                ..Default::default()
            })
        )
    };
    assert_eq!(run(3.0), run(3.0));
    assert_ne!(run(3.0), run(4.0));
}

#[test]
fn histogram_reproduces_the_seed_figures() {
    // Naive: every client at 1000 ms, one bucket of 10,000.
    for s in [Strategy::Fixed, Strategy::None] {
        let h = hist(s, 1.0);
        assert_eq!((h.peak, h.peak_index, h.total), (10_000, 10, 10_000));
        assert_eq!(h.counts.iter().sum::<u32>(), 10_000);
    }
    // Full jitter: ~1,000 per 100 ms over [0, 1000); the seed's run peaked at 1,048 (9.5× lower).
    // The max of 10 Binomial(10,000, 0.1) buckets (σ = 30) stays within 1,000..1,130.
    for seed in 1..=5 {
        let h = hist(Strategy::Full, f64::from(seed));
        assert_eq!(h.counts.len(), 10);
        assert_eq!(h.counts.iter().map(|&c| u64::from(c)).sum::<u64>(), 10_000);
        assert!((1_000..=1_130).contains(&h.peak), "seed {seed}: {}", h.peak);
        assert!(10_000.0 / f64::from(h.peak) > 8.8);
        assert!(h.counts.iter().all(|&c| (870..=1_130).contains(&c)));
    }
    // Equal jitter lives in [500, 1000); decorrelated (previous = ceiling) in [1000, 3000).
    // (The supremum 1000 − ε rounds to 1000.0, so an always-empty last bucket ends the range.)
    let h = hist(Strategy::Equal, 1.0);
    assert_eq!(h.counts.len(), 11);
    assert!(h.counts[..5].iter().all(|&c| c == 0));
    assert!(h.counts[5..10].iter().all(|&c| c > 1_800));
    assert_eq!(h.counts[10], 0);
    let h = hist(Strategy::Decorrelated, 1.0);
    assert_eq!(h.counts.len(), 31);
    assert!(h.counts[..10].iter().all(|&c| c == 0) && h.counts[10..30].iter().all(|&c| c > 400));
    assert_eq!(h.counts[30], 0);
}

#[test]
fn histogram_widens_buckets_instead_of_exhausting_memory() {
    let h = simulate_histogram(&HistogramOptions {
        bucket_ms: 1e-9,
        clients: 1_000.0,
        ..Default::default()
    })
    .unwrap();
    assert!(h.counts.len() <= MAX_BUCKETS);
    assert!(h.bucket_ms > 1e-9);
    assert_eq!(h.counts.iter().sum::<u32>(), 1_000);
}

#[test]
fn jitter_table_matches_the_seed_within_sampling_error() {
    let rows = jitter_table(&JitterOptions::default()).unwrap();
    let row = |v: JitterVariant| *rows.iter().find(|r| r.variant == v).unwrap();
    let within =
        |x: f64, lo: f64, hi: f64| assert!((lo..=hi).contains(&x), "{x} not in {lo}..{hi}");
    // Seed: full 1 / 3,973 / 7,999. The median of 20,000 uniform draws has σ ≈ 28 ms here.
    let r = row(JitterVariant::Full);
    within(r.min, 0.0, 5.0);
    within(r.median, 3_850.0, 4_150.0);
    within(r.max, 7_990.0, 7_999.999);
    within(3_973.0, 3_850.0, 4_150.0);
    // Seed: equal 4,000 / 5,988 / 8,000.
    let r = row(JitterVariant::Equal);
    within(r.min, 4_000.0, 4_005.0);
    within(r.median, 5_900.0, 6_100.0);
    within(r.max, 7_995.0, 7_999.999);
    // Seed: decorrelated 1,001 / 12,411 / 24,000 = uniform [1000, 24000) (previous = 8,000).
    let r = row(JitterVariant::Decorrelated);
    within(r.min, 1_000.0, 1_010.0);
    within(r.median, 12_150.0, 12_850.0);
    within(12_411.0, 12_150.0, 12_850.0);
    within(r.max, 23_950.0, 23_999.999);
    // The chained version backs off less at attempt 4 (but can reach the cap).
    let c = row(JitterVariant::DecorrelatedChained);
    within(c.min, 1_000.0, 1_010.0);
    assert!(c.median < r.median - 3_000.0, "{}", c.median);
    assert!(c.max <= 30_000.0);
    let n = row(JitterVariant::None);
    assert_eq!(
        (n.min, n.median, n.max, n.mean),
        (8_000.0, 8_000.0, 8_000.0, 8_000.0)
    );
}

fn assert_conserved(r: &OutageResult) {
    let s = r.summary;
    assert_eq!(s.logical_requests, s.succeeded + s.failed() + s.pending);
    let sum = |v: &[u32]| v.iter().map(|&x| u64::from(x)).sum::<u64>();
    assert_eq!(sum(&r.offered), s.attempts);
    assert_eq!(sum(&r.retries), s.retries);
    assert_eq!(sum(&r.rejected), s.failed_rejected);
    for i in 0..r.offered.len() {
        assert_eq!(r.offered[i], r.served[i] + r.failed[i]);
        assert!(r.retries[i] <= r.offered[i]);
    }
}

#[test]
fn every_logical_request_ends_exactly_once() {
    for strategy in Strategy::ALL {
        for (b, g) in [(None, None), (Some(breaker()), Some(budget()))] {
            let r = outage(OutageOptions {
                strategy,
                breaker: b,
                budget: g,
                ..Default::default()
            });
            assert_conserved(&r);
            assert!(r.summary.pending <= 10_000);
        }
    }
    assert_conserved(&outage(long(1_000.0)));
}

#[test]
fn naive_retries_make_a_second_peak_jitter_flattens_it() {
    for seed in 1..=3 {
        let run = |strategy| {
            outage(OutageOptions {
                strategy,
                seed: f64::from(seed),
                ..Default::default()
            })
            .summary
        };
        let full = run(Strategy::Full);
        for naive in [Strategy::Fixed, Strategy::None] {
            let n = run(naive);
            assert!(
                n.second_peak_offered >= 5 * full.second_peak_offered,
                "seed {seed} {naive:?}: {} vs {}",
                n.second_peak_offered,
                full.second_peak_offered
            );
            // The synchronized wave lands one base delay after the outage ends (5.4 s).
            assert_eq!(n.second_peak_at_ms, 6_400.0);
            // …far above capacity (150 per 10 ms tick = 1,500 per bucket): most of it fails for
            // good, and recovery takes seconds; full jitter loses nothing and recovers at once.
            assert!(n.failed_exhausted > 5_000, "{}", n.failed_exhausted);
            assert!(n.time_to_recover_ms >= 3_000.0);
        }
        assert_eq!(full.failed(), 0);
        assert!(
            full.time_to_recover_ms <= 200.0,
            "{}",
            full.time_to_recover_ms
        );
        assert!(full.second_peak_offered < 1_500);
    }
}

#[test]
fn the_breaker_cuts_wasted_attempts_in_a_long_outage() {
    let without = outage(long(1_000.0)).summary;
    let with = outage(OutageOptions {
        breaker: Some(breaker()),
        ..long(1_000.0)
    })
    .summary;
    // Without: every client keeps knocking for 40 minutes (each attempt hangs until timeoutMs).
    assert!(
        without.outage_attempts > 150_000,
        "{}",
        without.outage_attempts
    );
    // With: one probe per cooldown.
    assert!(
        with.outage_attempts * 100 < without.outage_attempts,
        "{} vs {}",
        with.outage_attempts,
        without.outage_attempts
    );
    assert!(with.failed_rejected > 0);
    // And the system still recovers once the gateway is back.
    assert!(with.time_to_recover_ms.is_finite() && with.time_to_recover_ms <= 20_000.0);
}

#[test]
fn the_budget_caps_amplification() {
    for (strategy, o) in [
        (Strategy::None, OutageOptions::default()),
        (Strategy::Full, long(1_000.0)),
    ] {
        let without = outage(OutageOptions {
            strategy,
            ..o.clone()
        })
        .summary;
        let with = outage(OutageOptions {
            strategy,
            budget: Some(budget()),
            ..o.clone()
        })
        .summary;
        // ratio 0.2 plus a reserve of 10 retries/s over the whole run.
        let reserve = 10.0 * o.duration_ms / 1_000.0 / with.logical_requests as f64;
        assert!(
            with.amplification <= 1.2 + reserve + 0.01,
            "{strategy:?}: {} (reserve {reserve})",
            with.amplification
        );
        assert!(with.amplification < without.amplification);
        assert!(with.failed_budget > 0);
    }
}

#[test]
fn a_million_clients() {
    // Release: the full 10^6. Debug (unoptimized, ~30× slower): 10^5, same shape.
    let clients = if cfg!(debug_assertions) {
        100_000.0
    } else {
        1_000_000.0
    };
    let h = simulate_histogram(&HistogramOptions {
        clients,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(h.total, clients as u64);
    let expected = clients / 10.0;
    assert!(f64::from(h.peak) < expected * 1.02 && f64::from(h.peak) > expected);

    let run = |strategy| {
        outage(OutageOptions {
            strategy,
            clients: clients / 10.0,
            capacity_per_tick: 15.0 * clients / 10_000.0,
            duration_ms: 8_000.0,
            ..Default::default()
        })
    };
    let (n, f) = (run(Strategy::None), run(Strategy::Full));
    assert_conserved(&n);
    assert!(n.summary.second_peak_offered >= 5 * f.summary.second_peak_offered);
    if !cfg!(debug_assertions) {
        let r = outage(OutageOptions {
            clients,
            capacity_per_tick: 15_000.0,
            duration_ms: 8_000.0,
            ..Default::default()
        });
        assert_conserved(&r);
        assert!(r.summary.logical_requests > clients as u64);
    }
}

#[test]
fn options_are_validated_by_name() {
    let bad = |o: OutageOptions| simulate_outage(&o).unwrap_err();
    let opt = |e: Error| match e {
        Error::InvalidOption { option, .. } => option,
        other => panic!("{other:?}"),
    };
    let d = OutageOptions::default;
    assert_eq!(
        opt(bad(OutageOptions {
            clients: 0.0,
            ..d()
        })),
        Opt::Clients
    );
    assert_eq!(
        opt(bad(OutageOptions {
            clients: 1.5,
            ..d()
        })),
        Opt::Clients
    );
    assert_eq!(
        opt(bad(OutageOptions {
            tick_ms: 0.5,
            ..d()
        })),
        Opt::TickMs
    );
    assert_eq!(
        bad(OutageOptions {
            bucket_ms: 5.0,
            ..d()
        }),
        Error::option(Opt::BucketMs, Expect::AtLeast(Opt::TickMs))
    );
    assert_eq!(
        bad(OutageOptions {
            timeout_ms: 10.0,
            ..d()
        }),
        Error::option(Opt::TimeoutMs, Expect::AtLeast(Opt::LatencyMs))
    );
    assert_eq!(
        opt(bad(OutageOptions {
            think_time_ms: -1.0,
            ..d()
        })),
        Opt::ThinkTimeMs
    );
    assert_eq!(
        opt(bad(OutageOptions {
            outage_start_ms: f64::NAN,
            ..d()
        })),
        Opt::OutageStartMs
    );
    assert_eq!(
        opt(bad(OutageOptions {
            outage_duration_ms: f64::INFINITY,
            ..d()
        })),
        Opt::OutageDurationMs
    );
    assert_eq!(
        opt(bad(OutageOptions {
            duration_ms: 0.0,
            ..d()
        })),
        Opt::DurationMs
    );
    assert_eq!(
        opt(bad(OutageOptions {
            capacity_per_tick: 0.0,
            ..d()
        })),
        Opt::CapacityPerTick
    );
    assert_eq!(
        opt(bad(OutageOptions {
            max_attempts: 0.0,
            ..d()
        })),
        Opt::MaxAttempts
    );
    assert_eq!(opt(bad(OutageOptions { seed: 0.0, ..d() })), Opt::Seed);
    assert_eq!(
        opt(bad(OutageOptions {
            max_delay_ms: 1.0,
            ..d()
        })),
        Opt::MaxDelayMs
    );
    let h = |o: HistogramOptions| opt(simulate_histogram(&o).unwrap_err());
    let hd = HistogramOptions::default;
    assert_eq!(
        h(HistogramOptions {
            clients: 0.0,
            ..hd()
        }),
        Opt::Clients
    );
    assert_eq!(
        h(HistogramOptions {
            bucket_ms: 0.0,
            ..hd()
        }),
        Opt::BucketMs
    );
    assert_eq!(
        h(HistogramOptions {
            attempt: 0.0,
            ..hd()
        }),
        Opt::Attempt
    );
    assert_eq!(
        h(HistogramOptions {
            base_delay_ms: -1.0,
            ..hd()
        }),
        Opt::BaseDelayMs
    );
    let j = |o: JitterOptions| opt(jitter_table(&o).unwrap_err());
    assert_eq!(
        j(JitterOptions {
            samples: 0.0,
            ..Default::default()
        }),
        Opt::Samples
    );
    assert_eq!(
        j(JitterOptions {
            seed: -1.0,
            ..Default::default()
        }),
        Opt::Seed
    );
    assert_eq!(Strategy::from_id(5).map_err(opt), Err(Opt::Strategy));
    for s in Strategy::ALL {
        assert_eq!(Strategy::from_id(s.id()), Ok(s));
    }
}

#[test]
fn an_outage_of_zero_changes_nothing_and_a_tiny_run_works() {
    let r = outage(OutageOptions {
        outage_duration_ms: 0.0,
        ..Default::default()
    });
    assert_eq!(r.summary.failed(), 0);
    assert_eq!(r.summary.retries, 0);
    let r = outage(OutageOptions {
        clients: 1.0,
        duration_ms: 1.0,
        tick_ms: 1.0,
        bucket_ms: 1.0,
        ..Default::default()
    });
    assert_eq!(r.offered.len(), 1);
    assert_conserved(&r);
}

/// The outage results of the release before the throttling model (issue 18), pinned: the new
/// options (429s, quota, limiter) default to off and draw no random numbers, so every existing
/// run is bit for bit what it was. Figures computed at commit c808cd5.
#[test]
fn outage_results_are_unchanged_by_the_throttling_model() {
    let hash = |v: &[u32]| {
        v.iter().enumerate().fold(0u64, |a, (i, &x)| {
            a.wrapping_mul(1_000_003)
                .wrapping_add(u64::from(x) ^ i as u64)
        })
    };
    let runs = [
        OutageOptions::default(),
        OutageOptions {
            strategy: Strategy::None,
            ..Default::default()
        },
        OutageOptions {
            breaker: Some(breaker()),
            budget: Some(budget()),
            seed: 7.0,
            ..Default::default()
        },
        long(1_000.0),
    ];
    let expected = [
        "95646 90689 0 0 0 4957 102444 6798 1063 1063 0.0 6940459884949137092 3237986985840096258 16237222793574217302 14966663035644583302 4350233494128179140",
        "77421 66043 6387 0 0 4991 97402 19981 6938 6938 7100.0 3934257198612266378 15236150579862029514 5691263099802062964 16943052955100084263 4350233494128179140",
        "127187 59998 0 1271 60880 5038 71770 0 916 916 6100.0 8413206285384577746 7608799624828702072 10610984421575386366 4350233494128179140 1609864183033064464",
        "353376 299146 53741 0 0 489 515800 162424 5056 5056 5000.0 256585800810928346 2494590246970397687 325337734289776573 10894880320900942342 10011504863119267590",
    ];
    for (o, want) in runs.iter().zip(expected) {
        let r = outage(o.clone());
        let s = r.summary;
        let got = format!(
            "{} {} {} {} {} {} {} {} {} {} {:?} {} {} {} {} {}",
            s.logical_requests,
            s.succeeded,
            s.failed_exhausted,
            s.failed_budget,
            s.failed_rejected,
            s.pending,
            s.attempts,
            s.retries,
            s.peak_offered,
            s.second_peak_offered,
            s.time_to_recover_ms,
            hash(&r.offered),
            hash(&r.served),
            hash(&r.failed),
            hash(&r.retries),
            hash(&r.rejected)
        );
        assert_eq!(got, want);
        // Without `throttle`, nothing is a 429 and no quota or limiter is involved.
        assert_eq!((s.throttled, s.failed_quota, s.paced), (0, 0, 0));
    }
}

/// The throttling experiment, scaled down for debug runs: 2,000 clients in 20 processes against a
/// gateway at half their demand that answers 429 above capacity.
fn throttling(
    limiter: Option<steadfast::core::limiter::LimiterConfig>,
    retry_after_ms: f64,
) -> OutageResult {
    outage(OutageOptions {
        clients: 2_000.0,
        capacity_per_tick: 5.0,
        limiter_groups: 20.0,
        duration_ms: 40_000.0,
        retry_after_ms,
        limiter,
        ..OutageOptions::throttling()
    })
}

#[test]
fn the_limiter_lowers_429s_and_offered_load_and_keeps_goodput() {
    use steadfast::core::limiter::LimiterConfig;
    let capacity_per_sec = 500.0;
    for retry_after_ms in [0.0, 1_000.0] {
        let jitter = throttling(None, retry_after_ms);
        assert_conserved(&jitter);
        let j = jitter.summary;
        // Jitter alone: the gateway is saturated, most attempts are 429s, it never converges.
        assert!(j.throttled_share > 0.4, "{}", j.throttled_share);
        assert!(j.converged_at_ms.is_nan());
        assert!(j.goodput_per_sec > 0.95 * capacity_per_sec);
        for (name, l) in [
            ("cubic", LimiterConfig::default()),
            ("aws", LimiterConfig::aws_adaptive()),
            ("aimd", LimiterConfig::aimd()),
        ] {
            let r = throttling(Some(l), retry_after_ms);
            assert_conserved(&r);
            let s = r.summary;
            let sum = |v: &[u32]| v.iter().map(|&x| u64::from(x)).sum::<u64>();
            assert_eq!(sum(&r.throttled), s.throttled);
            assert!(s.paced > 0);
            // 429s fall by more than 10×, offered load by more than half.
            assert!(
                s.throttled * 10 < j.throttled,
                "{name} ra {retry_after_ms}: {} vs {}",
                s.throttled,
                j.throttled
            );
            assert!(
                s.offered_per_sec * 2.0 < j.offered_per_sec,
                "{name} ra {retry_after_ms}: {} vs {}",
                s.offered_per_sec,
                j.offered_per_sec
            );
            // Goodput stays a large share of capacity (the CUBIC sawtooth costs some).
            assert!(
                s.goodput_per_sec > 0.6 * capacity_per_sec,
                "{name} ra {retry_after_ms}: {}",
                s.goodput_per_sec
            );
            assert!(
                s.failed() * 20 < s.logical_requests,
                "{name}: {}",
                s.failed()
            );
        }
    }
}

#[test]
fn throttling_options_are_validated_and_429s_are_counted() {
    let bad = |o: OutageOptions| simulate_outage(&o).unwrap_err();
    assert_eq!(
        bad(OutageOptions {
            burst_ms: 1.0,
            ..OutageOptions::throttling()
        }),
        Error::option(Opt::BurstMs, Expect::AtLeast(Opt::TickMs))
    );
    assert!(matches!(
        bad(OutageOptions {
            retry_after_ms: -1.0,
            ..OutageOptions::throttling()
        }),
        Error::InvalidOption {
            option: Opt::RetryAfterMs,
            ..
        }
    ));
    assert!(matches!(
        bad(OutageOptions {
            limiter_groups: 0.0,
            ..OutageOptions::throttling()
        }),
        Error::InvalidOption {
            option: Opt::LimiterGroups,
            ..
        }
    ));
    // The same saturated gateway without `throttle` sheds (503s): no 429s, same attempts.
    let shed = outage(OutageOptions {
        throttle: false,
        clients: 2_000.0,
        capacity_per_tick: 5.0,
        duration_ms: 10_000.0,
        ..OutageOptions::throttling()
    });
    assert_eq!(shed.summary.throttled, 0);
    assert!(shed.summary.attempts > shed.summary.logical_requests);
}

#[test]
fn retry_after_stretches_retries_and_the_quota_refuses_by_class() {
    use steadfast::core::quota::QuotaConfig;
    let base = OutageOptions {
        clients: 2_000.0,
        capacity_per_tick: 5.0,
        duration_ms: 20_000.0,
        ..OutageOptions::throttling()
    };
    let plain = outage(base.clone()).summary;
    let ra = outage(OutageOptions {
        retry_after_ms: 2_000.0,
        ..base.clone()
    })
    .summary;
    // Retry-After 2 s is a floor on every retry delay: fewer retries in the same time.
    assert!(
        ra.retries < plain.retries,
        "{} vs {}",
        ra.retries,
        plain.retries
    );
    // A quota whose 429 cost is 0 never refuses after a 429; one whose cost is huge always does.
    let free = QuotaConfig::new(10.0, 1000.0, 0.0, 1000.0, 0.0).unwrap();
    let dear = QuotaConfig::new(10.0, 0.0, 11.0, 0.0, 0.0).unwrap();
    let with = |q| {
        outage(OutageOptions {
            quota: Some(q),
            ..base.clone()
        })
        .summary
    };
    let (f, d) = (with(free), with(dear));
    assert_eq!(f.failed_quota, 0);
    assert_eq!(f.retries, plain.retries);
    assert_eq!(d.retries, 0);
    assert!(d.failed_quota > 0);
    assert_eq!(d.failed_quota, d.logical_requests - d.succeeded - d.pending);
}
