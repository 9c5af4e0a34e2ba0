//! Adaptive rate limiter properties: in AWS mode the fill rate follows a plain re-statement of
//! `@smithy/util-retry`'s `DefaultRateLimiter` (CUBIC) step by step; in every mode the bucket never
//! grants more than `rate × time + capacity` sends, the rate never leaves [minRatePerSec, 2 ×
//! measured], and a Retry-After hold is honoured.
//!
//! Why a reference model: the constants and the update order are what make the AWS SDKs' fleets
//! converge; "roughly CUBIC" is a different algorithm.

use proptest::prelude::*;
use steadfast::core::limiter::{Acquire, LimiterConfig, Mode, RateLimiter};

/// `DefaultRateLimiter` (smithy-typescript, packages/core/.../util-retry/DefaultRateLimiter.ts),
/// restated from its published rules in seconds, without its 8-decimal rounding.
struct Aws {
    beta: f64,
    c: f64,
    smooth: f64,
    min_fill: f64,
    min_cap: f64,
    enabled: bool,
    last_max: f64,
    measured: f64,
    count: f64,
    fill: f64,
    last_throttle: f64,
    last_bucket: Option<f64>,
    window: f64,
}

impl Aws {
    fn new() -> Self {
        Self {
            beta: 0.7,
            c: 0.4,
            smooth: 0.8,
            min_fill: 0.5,
            min_cap: 1.0,
            enabled: false,
            last_max: 0.0,
            measured: 0.0,
            count: 0.0,
            fill: 0.5,
            last_throttle: f64::NEG_INFINITY,
            last_bucket: None,
            window: 0.0,
        }
    }
    /// As AWS constructs it at `t` (seconds): its first rate bucket and its "last throttle" start there.
    fn created(t: f64) -> Self {
        Self {
            last_throttle: t,
            last_bucket: Some((t * 2.0).floor() / 2.0),
            ..Self::new()
        }
    }
    fn update(&mut self, t: f64, throttled: bool) {
        let bucket = (t * 2.0).floor() / 2.0;
        self.count += 1.0;
        match self.last_bucket {
            None => self.last_bucket = Some(bucket),
            Some(last) if bucket > last => {
                let rate = self.count / (bucket - last);
                self.measured = rate * self.smooth + self.measured * (1.0 - self.smooth);
                self.count = 0.0;
                self.last_bucket = Some(bucket);
            }
            Some(_) => {}
        }
        let calc = if throttled {
            let r = if self.enabled {
                self.measured.min(self.fill)
            } else {
                self.measured
            };
            self.last_max = r;
            self.window = (self.last_max * (1.0 - self.beta) / self.c).cbrt();
            self.last_throttle = t;
            self.enabled = true;
            r * self.beta
        } else {
            self.window = (self.last_max * (1.0 - self.beta) / self.c).cbrt();
            self.c * (t - self.last_throttle - self.window).powi(3) + self.last_max
        };
        let new = calc.min(2.0 * self.measured);
        self.fill = new.max(self.min_fill);
        let _cap = new.max(self.min_cap);
    }
}

/// (ms since the previous event, throttled?) — responses arriving at a client.
fn events() -> impl Strategy<Value = Vec<(u32, bool)>> {
    prop::collection::vec((0u32..400, prop::bool::weighted(0.15)), 1..400)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    /// With and without a creation time (`start`, as AWS's constructor stamps one).
    #[test]
    fn aws_mode_follows_the_reference(events in events(), start in 0u32..10_000, started in any::<bool>()) {
        let mut l = RateLimiter::new(LimiterConfig::aws_adaptive()).unwrap();
        let mut now = f64::from(start);
        let mut m = if started {
            l.start(now);
            Aws::created(now / 1000.0)
        } else {
            Aws::new()
        };
        for (dt, throttled) in events {
            now += f64::from(dt);
            l.record(now, now, throttled);
            m.update(now / 1000.0, throttled);
            prop_assert_eq!(l.enabled(), m.enabled);
            prop_assert!(close(l.measured_rate_per_sec(), m.measured), "{} vs {}", l.measured_rate_per_sec(), m.measured);
            prop_assert!(close(l.rate_per_sec(), m.fill), "at {}: {} vs {}", now, l.rate_per_sec(), m.fill);
        }
    }

    /// Whatever the outcomes, over any stretch the limiter never grants more sends than its
    /// (current) rate allows plus one bucket, and its rate stays within its bounds.
    #[test]
    fn the_bucket_paces_sends(
        aimd in any::<bool>(),
        once in any::<bool>(),
        events in events(),
    ) {
        let base = if aimd { LimiterConfig::aimd() } else { LimiterConfig::default() };
        let mut l = RateLimiter::new(LimiterConfig { aws_exact: !once, ..base }).unwrap();
        prop_assert_eq!(l.config().mode, if aimd { Mode::Aimd } else { Mode::Cubic });
        let mut now = 0.0;
        // Warm up and switch it on.
        for _ in 0..200 {
            l.record(now, now, false);
            now += 5.0;
        }
        l.record(now, now, true);
        for (dt, throttled) in events {
            now += f64::from(dt);
            l.record(now, now - 50.0, throttled);
            let r = l.rate_per_sec();
            prop_assert!(r >= 0.5 && r.is_finite());
            prop_assert!(r <= (2.0 * l.measured_rate_per_sec()).max(0.5) + 1e-9);
            // Ask for a burst at one instant: free sends ≤ bucket capacity ≤ max(rate, 1); the
            // reserved ones wait 1/rate more each; at most one bucket is ever queued, then the
            // limiter says "ask again" without taking a token.
            let mut free = 0;
            let mut reserved = 0;
            let mut last = 0.0;
            for _ in 0..200 {
                match l.acquire(now) {
                    Acquire::SendAfter(d) => {
                        prop_assert!(d >= 0.0 && d.is_finite());
                                                if d == 0.0 {
                            prop_assert_eq!(reserved, 0);
                            free += 1;
                        } else {
                            if reserved > 0 {
                                prop_assert!(close(d - last, 1000.0 / r), "{} then {} at rate {}", last, d, r);
                            }
                            reserved += 1;
                            last = d;
                        }
                    }
                    Acquire::AskAgainAfter(d) => {
                        prop_assert!(d > 0.0 && d.is_finite());
                        prop_assert!(f64::from(reserved) >= r.max(1.0) - 1.0 - 1e-9, "{} reserved at rate {}", reserved, r);
                    }
                }
            }
            prop_assert!(f64::from(free) <= r.max(1.0) + 1e-9, "{} free at rate {}", free, r);
            prop_assert!(f64::from(reserved) <= r.max(1.0) + 1.0 + 1e-9, "{} reserved at rate {}", reserved, r);
            // Let the queue drain before the next event.
            now += last;
        }
    }

    #[test]
    fn retry_after_is_a_floor_on_every_send(hold_ms in 1u32..100_000, at in 0u32..1000) {
        let mut l = RateLimiter::new(LimiterConfig::default()).unwrap();
        l.hold(f64::from(at), f64::from(hold_ms));
        let until = f64::from(at) + f64::from(hold_ms).min(60_000.0);
        let mut now = f64::from(at);
        while now < until {
            match l.acquire(now) {
                Acquire::AskAgainAfter(d) => prop_assert!(close(d, until - now), "{} vs {}", d, until - now),
                other => prop_assert!(false, "{:?} during the hold", other),
            }
            now += 997.0;
        }
        prop_assert_eq!(l.acquire(until), Acquire::SendAfter(0.0));
    }
}

/// After a burst of 50 throttles for requests already in flight, AWS mode cuts 50 times (to the
/// floor); cut-once-per-window cuts once and then climbs back on the cubic curve.
#[test]
fn cut_once_per_window_keeps_the_rate_near_capacity() {
    let mut aws = RateLimiter::new(LimiterConfig::aws_adaptive()).unwrap();
    let mut ours = RateLimiter::new(LimiterConfig::default()).unwrap();
    let mut now = 0.0;
    for _ in 0..400 {
        aws.record(now, now, false);
        ours.record(now, now, false);
        now += 10.0;
    }
    for _ in 0..50 {
        aws.record(now, now - 20.0, true);
        ours.record(now, now - 20.0, true);
    }
    assert_eq!(aws.rate_per_sec(), 0.5);
    let cut = ours.rate_per_sec();
    assert!((60.0..80.0).contains(&cut), "{cut}");
    // Ten seconds of successes at the old pace: CUBIC is back at (and probing past) lastMax.
    for _ in 0..1000 {
        now += 10.0;
        ours.record(now, now, false);
    }
    assert!(ours.rate_per_sec() > 99.0, "{}", ours.rate_per_sec());
}

/// The figures AWS's own limiter gives for a first 429 half a second and one second after it was
/// made (one token at 0.7 × the measured rate: 1 / 1.12 s and 1 / 0.56 s), and ours without a
/// creation time (a rate measured as 0: the 0.5/s floor, 2 s).
#[test]
fn aws_preset_counts_time_from_creation() {
    for (after_ms, want_ms) in [(500.0, 1000.0 / 1.12), (1000.0, 1000.0 / 0.56)] {
        let created = 10_000.0;
        let mut l = RateLimiter::new(LimiterConfig::aws_adaptive()).unwrap();
        l.start(created);
        l.record(created + after_ms, created, true);
        match l.acquire(created + after_ms) {
            Acquire::SendAfter(ms) => {
                assert!((ms - want_ms).abs() < 1e-6, "{after_ms}: {ms} vs {want_ms}")
            }
            other => panic!("{other:?}"),
        }
        let mut unstarted = RateLimiter::new(LimiterConfig::aws_adaptive()).unwrap();
        unstarted.record(created + after_ms, created, true);
        assert_eq!(
            unstarted.acquire(created + after_ms),
            Acquire::SendAfter(2000.0)
        );
    }
    // Ours (not awsExact) ignores the creation time: idle time is not a rate.
    let mut ours = RateLimiter::new(LimiterConfig::default()).unwrap();
    let mut plain = RateLimiter::new(LimiterConfig::default()).unwrap();
    ours.start(0.0);
    for l in [&mut ours, &mut plain] {
        l.record(500.0, 400.0, false);
        l.record(900.0, 800.0, true);
    }
    assert_eq!(ours.rate_per_sec(), plain.rate_per_sec());
}

/// Before its first throttle AWS's rate is min(0.4 · t³, 2 · measured) from creation, so right
/// after an early first 429 its bucket holds one token where a rate of 2 · measured held three.
#[test]
fn aws_preset_pre_throttle_rate_is_cubic_from_creation() {
    let mut l = RateLimiter::new(LimiterConfig::aws_adaptive()).unwrap();
    l.start(0.0);
    let mut now = 0.0;
    for _ in 0..20 {
        now += 50.0; // 20 answers/s for 1 s
        l.record(now, now - 10.0, false);
    }
    let t: f64 = now / 1000.0;
    assert!(
        (l.rate_per_sec() - (0.4 * t * t * t).max(0.5)).abs() < 1e-9,
        "{}",
        l.rate_per_sec()
    );
}
