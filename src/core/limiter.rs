//! An adaptive client-side rate limiter: a token bucket whose rate follows the server's throttling.
//!
//! Why: jitter spreads one client's retries and a budget caps how many there are, but neither
//! lowers what a fleet *offers* when the server answers 429 at its capacity: every client keeps
//! sending first attempts at its own pace, and each 429 is retried. A limiter in front of every
//! attempt (first attempts included) learns the rate the server accepts from its 429s and sends
//! at that rate, so 429s fall and goodput stays at capacity. This is the AWS SDKs' "adaptive"
//! retry mode (`DefaultRateLimiter` in `@smithy/util-retry`), plus two things of ours: a
//! `Retry-After` holds every send until it passes, and (by default) one burst of 429s cuts the rate
//! once, not once per 429.
//!
//! # The rules (CUBIC, as `@smithy/util-retry` 4.x `DefaultRateLimiter`)
//! - Off until the first throttle: before it, [`acquire`](RateLimiter::acquire) only honours a
//!   `Retry-After` hold.
//! - The send rate is measured in half-second buckets, smoothed: `measured = smooth · rate +
//!   (1 − smooth) · measured` (`smooth = 0.8`).
//! - On a throttle: `lastMax = measured` the first time, `min(measured, fillRate)` after;
//!   `rate = beta · lastMax` (`beta = 0.7`); `K = cbrt(lastMax · (1 − beta) / C)`
//!   (`C = scaleConstant = 0.4`).
//! - On a success: `rate = C · (t − lastThrottle − K)³ + lastMax` (concave back up to `lastMax`
//!   over `K` seconds, then convex beyond it: probing).
//! - Always: `rate = min(rate, 2 · measured)`; `fillRate = max(rate, minRatePerSec = 0.5)`;
//!   bucket capacity `max(rate, minCapacity = 1)`.
//! - A send takes one token; if there is none, it waits `deficit / fillRate`.
//!
//! # AIMD, the alternative
//! Same measurement, bucket and enablement. On a throttle `rate = beta · lastMax` (`beta = 0.5`
//! unless set); on a success the rate grows linearly: `lastMax · beta + increasePerSec · (t −
//! lastThrottle)` (`increasePerSec = 10` tokens/s per second unless set). Cheaper to reason about,
//! slower to find a large capacity again; the simulator measures both side by side.
//!
//! # Ours, on top
//! - Tokens are *reserved*, up to one bucket's worth: a send that must wait takes its token now and
//!   is told how long to wait, so concurrent callers queue in order instead of all waking at once.
//!   When a full bucket's worth is already queued, nothing is reserved and the caller is told when
//!   to ask again — so waits are never committed at a rate that has since gone back up.
//! - A throttle that arrives before the first half-second measurement measures the rate from the
//!   answers seen so far (AWS's limiter would cut to its floor from a measured rate of 0).
//! - `Retry-After` (`hold(now, ms)`): no send is granted before `now + min(ms, maxHoldMs)`.
//! - One cut per burst (off with `awsExact`): a throttle reported for a request
//!   sent *before* the last cut does not cut again — it reports on the old rate. Without it, a
//!   process with 50 requests in flight that all see 429 cuts its rate by 0.7^50 (to the floor).
//!
//! # Default
//! `mode = Cubic`, `beta = 0.7`, `scaleConstant = 0.4`, `smooth = 0.8`, `minRatePerSec = 0.5`,
//! `minCapacity = 1`, `increasePerSec = 10` (AIMD only), `maxHoldMs = 60_000`,
//! `awsExact = false` (the AWS preset sets it: every throttle cuts, and a throttle before the
//! first measurement measures 0).

use super::error::{check, Error, Expect, Opt};

/// How the rate reacts to throttling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// CUBIC, as the AWS SDKs.
    #[default]
    Cubic,
    /// Additive increase, multiplicative decrease.
    Aimd,
}

impl Mode {
    /// Parse an id (0 cubic, 1 aimd).
    pub fn from_id(id: u32) -> Result<Mode, Error> {
        match id {
            0 => Ok(Mode::Cubic),
            1 => Ok(Mode::Aimd),
            _ => Err(Error::option(
                Opt::Limiter,
                Expect::OneOf("'cubic', 'aimd'"),
            )),
        }
    }
}

/// What [`RateLimiter::acquire`] allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Acquire {
    /// A token is taken: send after this many ms (0: now).
    SendAfter(f64),
    /// Nothing is taken: ask again after this many ms (> 0).
    AskAgainAfter(f64),
}

impl Acquire {
    /// One number for the wasm boundary: `≥ 0` send after it, `< 0` ask again after `−x`.
    pub fn to_wire(self) -> f64 {
        match self {
            Acquire::SendAfter(ms) => ms,
            Acquire::AskAgainAfter(ms) => -ms,
        }
    }
}

/// Largest accepted rate-like option (tokens per second).
pub const MAX_RATE: f64 = 1e9;

/// Validated parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimiterConfig {
    /// CUBIC or AIMD.
    pub mode: Mode,
    /// Share of the rate kept on a throttle, in (0, 1).
    pub beta: f64,
    /// CUBIC's C (tokens/s per s³).
    pub scale_constant: f64,
    /// Weight of the newest half-second in the measured rate, in (0, 1].
    pub smooth: f64,
    /// The fill rate never goes below this (tokens per second).
    pub min_rate_per_sec: f64,
    /// The bucket never holds less than this when full.
    pub min_capacity: f64,
    /// AIMD's additive increase (tokens per second, per second).
    pub increase_per_sec: f64,
    /// The longest `Retry-After` honoured.
    pub max_hold_ms: f64,
    /// Exactly AWS's rate rules: every throttle cuts, and no start-up measurement (see the module
    /// docs).
    pub aws_exact: bool,
}

impl Default for LimiterConfig {
    fn default() -> Self {
        Self {
            mode: Mode::Cubic,
            beta: 0.7,
            scale_constant: 0.4,
            smooth: 0.8,
            min_rate_per_sec: 0.5,
            min_capacity: 1.0,
            increase_per_sec: 10.0,
            max_hold_ms: 60_000.0,
            aws_exact: false,
        }
    }
}

impl LimiterConfig {
    /// Exactly the AWS SDK's adaptive mode (`DefaultRateLimiter` defaults; every throttle cuts).
    pub fn aws_adaptive() -> Self {
        Self {
            aws_exact: true,
            ..Self::default()
        }
    }

    /// AIMD with `beta = 0.5` and the default additive increase.
    pub fn aimd() -> Self {
        Self {
            mode: Mode::Aimd,
            beta: 0.5,
            ..Self::default()
        }
    }

    /// Check every field; returns the config unchanged when valid.
    pub fn validated(self) -> Result<Self, Error> {
        let open_unit = |o: Opt, v: f64| {
            if v > 0.0 && v < 1.0 {
                Ok(v)
            } else {
                Err(Error::option(o, Expect::OpenUnitInterval))
            }
        };
        open_unit(Opt::Beta, self.beta)?;
        let rate = |o: Opt, v: f64| {
            let v = check::positive(o, v)?;
            if v > MAX_RATE {
                return Err(Error::option(
                    o,
                    Expect::NumberAtMost {
                        max: MAX_RATE as u32,
                    },
                ));
            }
            Ok(v)
        };
        rate(Opt::ScaleConstant, self.scale_constant)?;
        if !(self.smooth > 0.0 && self.smooth <= 1.0) {
            return Err(Error::option(Opt::Smooth, Expect::FractionAboveZero));
        }
        rate(Opt::MinRatePerSec, self.min_rate_per_sec)?;
        rate(Opt::MinCapacity, self.min_capacity)?;
        rate(Opt::IncreasePerSec, self.increase_per_sec)?;
        check::non_negative(Opt::MaxHoldMs, self.max_hold_ms)?;
        Ok(self)
    }
}

/// The limiter's state. Time is `now_ms` from the caller (any monotonic origin).
#[derive(Debug, Clone, PartialEq)]
pub struct RateLimiter {
    c: LimiterConfig,
    enabled: bool,
    tokens: f64,
    max_capacity: f64,
    fill_rate: f64,
    last_refill_ms: Option<f64>,
    last_max_rate: f64,
    last_throttle_s: f64,
    last_cut_ms: f64,
    time_window_s: f64,
    measured_rate: f64,
    request_count: f64,
    last_bucket_s: Option<f64>,
    first_record_s: f64,
    hold_until_ms: f64,
    throttles: u64,
    cuts: u64,
}

impl RateLimiter {
    /// A limiter, off until the first throttle.
    pub fn new(config: LimiterConfig) -> Result<Self, Error> {
        let c = config.validated()?;
        Ok(Self {
            c,
            enabled: false,
            tokens: 0.0,
            max_capacity: c.min_capacity,
            fill_rate: c.min_rate_per_sec,
            last_refill_ms: None,
            last_max_rate: 0.0,
            last_throttle_s: f64::NEG_INFINITY,
            last_cut_ms: f64::NEG_INFINITY,
            time_window_s: 0.0,
            measured_rate: 0.0,
            request_count: 0.0,
            last_bucket_s: None,
            first_record_s: f64::NAN,
            hold_until_ms: f64::NEG_INFINITY,
            throttles: 0,
            cuts: 0,
        })
    }

    /// The limiter was made at `now_ms`. With `awsExact` (the AWS preset) time counts from here,
    /// as in AWS's `DefaultRateLimiter`: its first rate bucket and its "last throttle" start at
    /// creation, so the rate before any throttle is `min(C · (t − created)³, 2 · measured)` (not
    /// `2 · measured`), and a first throttle 0.5 s after creation measures one answer per half
    /// second. Without `awsExact` (ours) it changes nothing: a limiter made long before its first
    /// request must not read its idle time as a rate. Call it once, before any other call.
    pub fn start(&mut self, now_ms: f64) {
        if self.c.aws_exact && now_ms.is_finite() && self.last_bucket_s.is_none() {
            let t = now_ms / 1000.0;
            self.last_throttle_s = t;
            self.last_bucket_s = Some((t * 2.0).floor() / 2.0);
            self.first_record_s = t;
        }
    }

    /// The parameters.
    pub fn config(&self) -> LimiterConfig {
        self.c
    }

    /// Whether a throttle has switched the bucket on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The current fill rate (tokens per second).
    pub fn rate_per_sec(&self) -> f64 {
        self.fill_rate
    }

    /// The measured send rate (per second, smoothed).
    pub fn measured_rate_per_sec(&self) -> f64 {
        self.measured_rate
    }

    /// Throttles recorded, and of those, how many cut the rate.
    pub fn throttles(&self) -> (u64, u64) {
        (self.throttles, self.cuts)
    }

    fn refill(&mut self, now_ms: f64) {
        if !now_ms.is_finite() {
            return;
        }
        match self.last_refill_ms {
            Some(last) if now_ms > last => {
                let added = (now_ms - last) / 1000.0 * self.fill_rate;
                self.tokens = (self.tokens + added).min(self.max_capacity);
                self.last_refill_ms = Some(now_ms);
            }
            Some(_) => {}
            None => self.last_refill_ms = Some(now_ms),
        }
    }

    /// Ask to send one request at `now_ms` (see [`Acquire`]).
    pub fn acquire(&mut self, now_ms: f64) -> Acquire {
        if !now_ms.is_finite() {
            // A broken clock must not park a caller for ever.
            return Acquire::SendAfter(0.0);
        }
        if self.hold_until_ms > now_ms {
            // Never longer than one hold (a clock that jumped back must not stretch it).
            let ms = (self.hold_until_ms - now_ms).min(self.c.max_hold_ms);
            return Acquire::AskAgainAfter(ms);
        }
        if !self.enabled {
            return Acquire::SendAfter(0.0);
        }
        self.refill(now_ms);
        let after = self.tokens - 1.0;
        let wait = |deficit: f64, rate: f64| {
            let ms = deficit / rate * 1000.0;
            if ms.is_finite() {
                ms.max(0.0)
            } else {
                0.0
            }
        };
        if after >= -self.max_capacity {
            self.tokens = after;
            Acquire::SendAfter(wait(-after, self.fill_rate))
        } else {
            // A full bucket is already queued: come back when there is room.
            let ms = wait(-self.max_capacity - after, self.fill_rate);
            Acquire::AskAgainAfter(ms.max(1.0))
        }
    }

    /// The server asked for `retry_after_ms` of quiet (`Retry-After`): no send before it passes
    /// (capped at `maxHoldMs`).
    pub fn hold(&mut self, now_ms: f64, retry_after_ms: f64) {
        if retry_after_ms.is_nan() || retry_after_ms <= 0.0 || !now_ms.is_finite() {
            return;
        }
        let until = now_ms + retry_after_ms.min(self.c.max_hold_ms);
        if until > self.hold_until_ms {
            self.hold_until_ms = until;
        }
    }

    /// An answer arrived at `now_ms` for a request sent at `sent_ms`: `throttled` if it was a 429
    /// (or the service's throttling error).
    pub fn record(&mut self, now_ms: f64, sent_ms: f64, throttled: bool) {
        if !now_ms.is_finite() {
            return;
        }
        let t = now_ms / 1000.0;
        self.update_measured(t);
        let measured = self.measured(t);
        let calculated = if throttled {
            self.throttles += 1;
            if !self.c.aws_exact && self.enabled && sent_ms < self.last_cut_ms {
                // Reports on the rate before the last cut: the same burst.
                return;
            }
            self.cuts += 1;
            let rate = if self.enabled {
                measured.min(self.fill_rate)
            } else {
                measured
            };
            self.last_max_rate = rate;
            self.time_window_s = self.window();
            self.last_throttle_s = t;
            self.last_cut_ms = now_ms;
            self.enabled = true;
            rate * self.c.beta
        } else {
            // time_window_s is CUBIC's K for the last cut, set there: its inputs change only then.
            let since = t - self.last_throttle_s;
            match self.c.mode {
                Mode::Cubic => {
                    let d = since - self.time_window_s;
                    self.c.scale_constant * d * d * d + self.last_max_rate
                }
                Mode::Aimd => {
                    self.last_max_rate * self.c.beta + self.c.increase_per_sec * since.max(0.0)
                }
            }
        };
        let rate = calculated.min(2.0 * measured);
        self.refill(now_ms);
        self.fill_rate = rate.max(self.c.min_rate_per_sec).min(MAX_RATE);
        self.max_capacity = rate.max(self.c.min_capacity).min(MAX_RATE);
        self.tokens = self.tokens.min(self.max_capacity);
    }

    /// The measured rate; before the first half-second completes (and not `awsExact`), the answers
    /// so far over the time they took (AWS reads 0 there, which pins the rate to its floor).
    fn measured(&self, t: f64) -> f64 {
        if !self.c.aws_exact && self.measured_rate == 0.0 && t > self.first_record_s {
            self.request_count / (t - self.first_record_s)
        } else {
            self.measured_rate
        }
    }

    /// CUBIC's K: seconds from a cut back to `lastMax`.
    fn window(&self) -> f64 {
        cbrt(self.last_max_rate * (1.0 - self.c.beta) / self.c.scale_constant)
    }

    fn update_measured(&mut self, t: f64) {
        let bucket = (t * 2.0).floor() / 2.0;
        self.request_count += 1.0;
        match self.last_bucket_s {
            None => {
                self.last_bucket_s = Some(bucket);
                self.first_record_s = t;
            }
            Some(last) if bucket > last => {
                let current = self.request_count / (bucket - last);
                self.measured_rate =
                    current * self.c.smooth + self.measured_rate * (1.0 - self.c.smooth);
                self.request_count = 0.0;
                self.last_bucket_s = Some(bucket);
            }
            Some(_) => {}
        }
    }
}

/// Cube root by Newton's method: `f64::cbrt` pulls libm's into the wasm (+1.1 KB gzipped), and
/// this is within an ulp or two of it (tested below). Non-finite and non-positive inputs pass
/// through (the limiter only takes roots of rates ≥ 0).
fn cbrt(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 || x == f64::INFINITY {
        return x.max(0.0);
    }
    // Start from the power of two nearest the root: the exponent divided by three.
    let exponent = ((x.to_bits() >> 52) & 0x7ff) as i64 - 1023;
    let mut y = f64::from_bits(((exponent / 3 + 1023) as u64) << 52);
    for _ in 0..64 {
        let next = y - (y * y * y - x) / (3.0 * y * y);
        if next == y {
            break;
        }
        y = next;
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newton_cbrt_matches_libm() {
        let mut x = 1e-300;
        while x < 1e300 {
            for v in [x, x * 1.7, x * 3.3] {
                let (a, b) = (cbrt(v), v.cbrt());
                assert!((a - b).abs() <= 4.0 * f64::EPSILON * b, "{v}: {a} vs {b}");
            }
            x *= 10.0;
        }
        assert_eq!(cbrt(0.0), 0.0);
        assert_eq!(cbrt(27.0), 3.0);
        assert_eq!(cbrt(-1.0), 0.0);
        assert_eq!(cbrt(f64::INFINITY), f64::INFINITY);
        assert_eq!(cbrt(f64::NAN).to_bits(), f64::NAN.max(0.0).to_bits());
    }

    #[test]
    fn off_until_the_first_throttle() {
        let mut l = RateLimiter::new(LimiterConfig::default()).unwrap();
        for i in 0..100 {
            assert_eq!(l.acquire(f64::from(i)), Acquire::SendAfter(0.0));
            l.record(f64::from(i), f64::from(i), false);
        }
        assert!(!l.enabled());
    }

    #[test]
    fn a_throttle_cuts_by_beta_and_the_bucket_paces() {
        let mut l = RateLimiter::new(LimiterConfig::aws_adaptive()).unwrap();
        // 100 requests/s for 3 s: measured ≈ 100.
        let mut now = 0.0;
        for _ in 0..300 {
            l.record(now, now, false);
            now += 10.0;
        }
        let m = l.measured_rate_per_sec();
        assert!((95.0..=105.0).contains(&m), "{m}");
        l.record(now, now, true);
        assert!(l.enabled());
        let m = l.measured_rate_per_sec();
        let r = l.rate_per_sec();
        assert!((r - 0.7 * m).abs() < 1e-9, "{r} vs {m}");
        // The bucket holds at most one second of the new rate; past it, each send waits 1/rate
        // after the previous.
        let mut free = 0;
        let mut d1 = 0.0;
        while let Acquire::SendAfter(0.0) = l.acquire(now) {
            free += 1;
        }
        assert!(free as f64 <= r, "{free}");
        if let Acquire::SendAfter(d) = l.acquire(now) {
            d1 = d;
        }
        let Acquire::SendAfter(d2) = l.acquire(now) else {
            panic!("reserved")
        };
        assert!((d2 - d1 - 1000.0 / r).abs() < 1e-6, "{d1} {d2}");
    }

    #[test]
    fn once_per_window_ignores_throttles_of_the_old_rate() {
        let mut aws = RateLimiter::new(LimiterConfig::aws_adaptive()).unwrap();
        let mut ours = RateLimiter::new(LimiterConfig::default()).unwrap();
        let mut now = 0.0;
        for _ in 0..300 {
            aws.record(now, now, false);
            ours.record(now, now, false);
            now += 10.0;
        }
        // 50 requests sent before the burst all come back throttled.
        for _ in 0..50 {
            aws.record(now, now - 100.0, true);
            ours.record(now, now - 100.0, true);
        }
        assert_eq!(aws.throttles(), (50, 50));
        assert_eq!(ours.throttles(), (50, 1));
        assert_eq!(aws.rate_per_sec(), 0.5);
        assert!(ours.rate_per_sec() > 60.0);
    }

    #[test]
    fn retry_after_holds_every_send() {
        let mut l = RateLimiter::new(LimiterConfig::default()).unwrap();
        l.hold(1_000.0, 2_000.0);
        assert_eq!(l.acquire(1_500.0), Acquire::AskAgainAfter(1_500.0));
        assert_eq!(l.acquire(3_000.0), Acquire::SendAfter(0.0));
        l.hold(0.0, 1e12);
        assert_eq!(l.acquire(0.0), Acquire::AskAgainAfter(60_000.0));
        l.hold(0.0, f64::NAN);
        l.hold(f64::NAN, 10.0);
    }

    #[test]
    fn validation() {
        let bad = |c: LimiterConfig| RateLimiter::new(c).unwrap_err();
        let d = LimiterConfig::default;
        for beta in [0.0, 1.0, f64::NAN] {
            assert_eq!(
                bad(LimiterConfig { beta, ..d() }),
                Error::option(Opt::Beta, Expect::OpenUnitInterval)
            );
        }
        assert!(RateLimiter::new(LimiterConfig {
            min_rate_per_sec: 0.0,
            ..d()
        })
        .is_err());
        assert!(RateLimiter::new(LimiterConfig {
            max_hold_ms: -1.0,
            ..d()
        })
        .is_err());
        assert!(Mode::from_id(2).is_err());
    }

    #[test]
    fn weird_clocks_do_not_panic_or_poison() {
        let mut l = RateLimiter::new(LimiterConfig::default()).unwrap();
        l.hold(10.0, 500.0);
        for now in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1e300,
            1e300,
            0.0,
        ] {
            l.hold(now, now);
            l.record(now, now, true);
            let d = l.acquire(now).to_wire();
            assert!(d.is_finite());
        }
        assert!(l.rate_per_sec().is_finite());
    }
}
