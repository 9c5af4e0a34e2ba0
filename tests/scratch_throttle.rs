use steadfast::core::limiter::LimiterConfig;
use steadfast::core::quota::QuotaConfig;
use steadfast::core::sim::*;
#[test]
fn explore() {
    let base = OutageOptions::throttling();
    let show = |name: &str, o: OutageOptions| {
        let r = simulate_outage(&o).unwrap();
        let s = r.summary;
        println!("{name:40} att {:7} off/s {:6.0} good/s {:6.0} 429 {:7} ({:4.1}%) paced {:7} fail {:6} (ex {} q {}) logical {} conv {:?} | last10s off {} 429 {}",
          s.attempts, s.offered_per_sec, s.goodput_per_sec, s.throttled, 100.0*s.throttled_share, s.paced, s.failed(), s.failed_exhausted, s.failed_quota, s.logical_requests, s.converged_at_ms,
          r.offered[50..].iter().sum::<u32>(), r.throttled[50..].iter().sum::<u32>());
    };
    for ra in [0.0, 1000.0] {
        println!("retry-after {ra}");
        let b = OutageOptions {
            retry_after_ms: ra,
            ..base.clone()
        };
        show("full", b.clone());
        show(
            "full+quota",
            OutageOptions {
                quota: Some(QuotaConfig::default()),
                ..b.clone()
            },
        );
        for g in [1.0, 10.0, 100.0] {
            show(
                &format!("full+cubic g{g}"),
                OutageOptions {
                    limiter: Some(LimiterConfig::default()),
                    limiter_groups: g,
                    ..b.clone()
                },
            );
            show(
                &format!("full+aws g{g}"),
                OutageOptions {
                    limiter: Some(LimiterConfig::aws_adaptive()),
                    limiter_groups: g,
                    ..b.clone()
                },
            );
            show(
                &format!("full+aimd g{g}"),
                OutageOptions {
                    limiter: Some(LimiterConfig::aimd()),
                    limiter_groups: g,
                    ..b.clone()
                },
            );
        }
    }
}
#[test]
fn series() {
    for (name, l) in [
        ("cubic", LimiterConfig::default()),
        ("aws", LimiterConfig::aws_adaptive()),
        ("aimd", LimiterConfig::aimd()),
    ] {
        let o = OutageOptions {
            limiter: Some(l),
            limiter_groups: 100.0,
            ..OutageOptions::throttling()
        };
        let r = simulate_outage(&o).unwrap();
        println!("{name}: served {:?}", &r.served);
        println!("{name}: 429    {:?}", &r.throttled);
    }
}
