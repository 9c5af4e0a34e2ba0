//! Retry budgets: cap the share of traffic that may be retries, across every caller.
//!
//! Why a budget and not just `maxAttempts`: `maxAttempts = 3` lets a fleet triple its load exactly
//! when the dependency is weakest. Backoff spreads one client's retries; a budget bounds what all
//! clients together may add. Only retries withdraw; first attempts never do, so the happy path is
//! never refused.
//!
//! Two shapes:
//! - [`TokenBucket`] (seed 004): `capacity` tokens, refilled at `refill_per_sec`, computed lazily
//!   from `now_ms` (no timers to leak).
//! - [`RatioBudget`] (Finagle style): retries ≤ `ratio` × requests over a sliding window, plus a
//!   reserve of `min_retries_per_sec` so quiet clients can still retry. Arithmetic is in integer
//!   micro-units, so `ratio = 0.1` allows exactly 1 retry per 10 requests (no float drift).
//!
//! # Default
//! Token bucket starts full. Ratio budget: 10 slots per window (the window slides in steps of
//! `window_ms / 10`).

use super::error::{check, Error, Expect, Opt};

/// Largest accepted `ratio` (retries per request).
pub const MAX_RATIO: f64 = 1000.0;
/// Largest accepted `min_retries_per_sec`.
pub const MAX_MIN_RETRIES_PER_SEC: f64 = 1_000_000.0;
const MICRO: u128 = 1_000_000;
const SLOTS: usize = 10;

/// One token in the bucket's fixed-point unit: tokens are counted in 10^-12 so refills are exact
/// integer arithmetic (µs of clock × micro-tokens per second), with no float drift however often
/// the bucket is polled.
const TOKEN: u128 = 1_000_000_000_000;

/// A lazily refilled token bucket. Every retry takes one token.
///
/// Precision: the refill rate is kept in millionths of a token per second and the clock in whole
/// microseconds; within those, every decision is exact (ten 1-second polls of a 0.1/s bucket make
/// exactly one token).
#[derive(Debug, Clone, PartialEq)]
pub struct TokenBucket {
    capacity: u128,
    refill_micro_per_sec: u128,
    tokens: u128,
    last_us: Option<i64>,
}

fn micro(v: f64) -> u128 {
    // Validated finite and >= 0 by the caller; `as` saturates absurd values instead of panicking.
    to_u128((v * 1e6).round())
}

impl TokenBucket {
    /// Validate: `capacity` finite ≥ 0, `refill_per_sec` finite ≥ 0. Starts full.
    pub fn new(capacity: f64, refill_per_sec: f64) -> Result<Self, Error> {
        let capacity = check::non_negative(Opt::Capacity, capacity)?;
        let refill_per_sec = check::non_negative(Opt::RefillPerSec, refill_per_sec)?;
        let capacity = micro(capacity).saturating_mul(TOKEN / 1_000_000);
        Ok(Self {
            capacity,
            refill_micro_per_sec: micro(refill_per_sec),
            tokens: capacity,
            last_us: None,
        })
    }

    fn refill(&mut self, now_ms: f64) {
        if !now_ms.is_finite() {
            return;
        }
        let now_us = (now_ms * 1000.0).floor() as i64;
        match self.last_us {
            // A clock that goes backwards refills nothing (and is not remembered).
            Some(last) if now_us > last => {
                let elapsed = u128::from(now_us.abs_diff(last));
                let added = elapsed.saturating_mul(self.refill_micro_per_sec);
                self.tokens = self.tokens.saturating_add(added).min(self.capacity);
                self.last_us = Some(now_us);
            }
            Some(_) => {}
            None => self.last_us = Some(now_us),
        }
    }

    /// Take one token if there is one.
    pub fn try_withdraw(&mut self, now_ms: f64) -> bool {
        self.refill(now_ms);
        if self.tokens >= TOKEN {
            self.tokens -= TOKEN;
            true
        } else {
            false
        }
    }

    /// Tokens available at `now_ms` (fractional while refilling).
    pub fn available(&mut self, now_ms: f64) -> f64 {
        self.refill(now_ms);
        let (whole, fraction) = div_rem(self.tokens, TOKEN as u64);
        to_f64(whole) + fraction as f64 / TOKEN as f64
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Slot {
    epoch: i64,
    requests: u64,
    retries: u64,
}

/// A ratio budget's options when the caller names none: 20 % of requests may be retries, with a
/// reserve of 10 retries per second, over a 10 s window (Finagle's defaults). The one budget that
/// `resilientFetch` and the checkout client share, a `RetryBudget` given only some ratio options,
/// and the Rust `fetch`'s shared budget all start from these.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioOptions {
    /// Retries per request.
    pub ratio: f64,
    /// Retries per second always allowed.
    pub min_retries_per_sec: f64,
    /// The sliding window, in ms.
    pub window_ms: f64,
}

impl Default for RatioOptions {
    fn default() -> Self {
        Self {
            ratio: 0.2,
            min_retries_per_sec: 10.0,
            window_ms: 10_000.0,
        }
    }
}

/// Retries ≤ `ratio` × requests in the last `window_ms`, plus `min_retries_per_sec` × window.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioBudget {
    ratio_micro: u128,
    reserve_micro: u128,
    slot_ms: f64,
    slots: [Slot; SLOTS],
}

impl RatioBudget {
    /// Validate: `ratio` in `[0, 1000]`, `min_retries_per_sec` finite ≥ 0, `window_ms` finite > 0.
    pub fn new(ratio: f64, min_retries_per_sec: f64, window_ms: f64) -> Result<Self, Error> {
        let ratio = check::non_negative(Opt::Ratio, ratio)?;
        if ratio > MAX_RATIO {
            return Err(Error::option(
                Opt::Ratio,
                Expect::NumberAtMost {
                    max: MAX_RATIO as u32,
                },
            ));
        }
        let min = check::non_negative(Opt::MinRetriesPerSec, min_retries_per_sec)?;
        if min > MAX_MIN_RETRIES_PER_SEC {
            let max = MAX_MIN_RETRIES_PER_SEC as u32;
            return Err(Error::option(
                Opt::MinRetriesPerSec,
                Expect::NumberAtMost { max },
            ));
        }
        let window_ms = check::duration(Opt::WindowMs, window_ms, false)?;
        let reserve = (min * window_ms * 1000.0).round();
        Ok(Self {
            ratio_micro: to_u128((ratio * 1e6).round()),
            reserve_micro: to_u128(reserve),
            slot_ms: window_ms / SLOTS as f64,
            slots: [Slot {
                epoch: i64::MIN,
                ..Slot::default()
            }; SLOTS],
        })
    }

    fn epoch(&self, now_ms: f64) -> i64 {
        // `as` saturates for huge or non-finite values; NaN becomes 0. Never panics.
        (now_ms / self.slot_ms).floor() as i64
    }

    /// Apply `f` to the slot of `now_ms`, recycling it if it belonged to an older epoch.
    fn with_current(&mut self, now_ms: f64, f: impl FnOnce(&mut Slot)) {
        let epoch = self.epoch(now_ms);
        if let Some(slot) = self.slots.get_mut(epoch.rem_euclid(SLOTS as i64) as usize) {
            if slot.epoch != epoch {
                *slot = Slot {
                    epoch,
                    requests: 0,
                    retries: 0,
                };
            }
            f(slot);
        }
    }

    fn totals(&self, now_ms: f64) -> (u128, u128) {
        let epoch = self.epoch(now_ms);
        self.slots
            .iter()
            .filter(|s| s.epoch != i64::MIN && epoch.abs_diff(s.epoch) < SLOTS as u64)
            .fold((0, 0), |(q, r), s| {
                (q + u128::from(s.requests), r + u128::from(s.retries))
            })
    }

    /// Retries earned by `requests` plus the reserve, in micro-retries (saturating: a window of
    /// 1e300 ms must not wrap around).
    fn allowed_micro(&self, requests: u128) -> u128 {
        self.ratio_micro
            .saturating_mul(requests)
            .saturating_add(self.reserve_micro)
    }

    /// Count one logical request (a first attempt): it earns `ratio` retries.
    pub fn record_request(&mut self, now_ms: f64) {
        self.with_current(now_ms, |s| s.requests = s.requests.saturating_add(1));
    }

    /// Take one retry if the window allows it.
    pub fn try_withdraw(&mut self, now_ms: f64) -> bool {
        let (requests, retries) = self.totals(now_ms);
        if (retries + 1) * MICRO <= self.allowed_micro(requests) {
            self.with_current(now_ms, |s| s.retries = s.retries.saturating_add(1));
            true
        } else {
            false
        }
    }

    /// Whole retries available now.
    pub fn available(&self, now_ms: f64) -> f64 {
        let (requests, retries) = self.totals(now_ms);
        let allowed = div_rem(self.allowed_micro(requests), MICRO as u64).0;
        to_f64(allowed.saturating_sub(retries))
    }
}

/// Either budget, behind one interface. (The ratio variant is ~200 bytes; budgets are few and
/// long-lived, so boxing would only add an indirection.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum RetryBudget {
    /// See [`TokenBucket`].
    TokenBucket(TokenBucket),
    /// See [`RatioBudget`].
    Ratio(RatioBudget),
}

impl RetryBudget {
    /// Count a first attempt (no-op for the token bucket).
    pub fn record_request(&mut self, now_ms: f64) {
        if let RetryBudget::Ratio(r) = self {
            r.record_request(now_ms);
        }
    }

    /// Take one retry.
    pub fn try_withdraw(&mut self, now_ms: f64) -> bool {
        match self {
            RetryBudget::TokenBucket(b) => b.try_withdraw(now_ms),
            RetryBudget::Ratio(r) => r.try_withdraw(now_ms),
        }
    }

    /// Retries available now.
    pub fn available(&mut self, now_ms: f64) -> f64 {
        match self {
            RetryBudget::TokenBucket(b) => b.available(now_ms),
            RetryBudget::Ratio(r) => r.available(now_ms),
        }
    }
}

/// 2^64 as an `f64`.
const TWO_64: f64 = 18_446_744_073_709_551_616.0;

/// `v as u128` (truncating, saturating, NaN → 0) through `u64` conversions. Why not `as`: on
/// wasm32 it links compiler-builtins' `__fixunsdfti` (wasm size). Exact: below 2^64 it is the
/// `u64` cast; from 2^64 on an `f64` is a whole number, and its high and low 64-bit halves are
/// each exact (`v / 2^64` scales by a power of two; the remainder is below 2^64 and a multiple
/// of `v`'s own precision). Out of line, like the builtin it replaces.
#[inline(never)]
fn to_u128(v: f64) -> u128 {
    // Below 2^64, and NaN (which the cast makes 0).
    if v.is_nan() || v < TWO_64 {
        return u128::from(v as u64);
    }
    if v >= TWO_64 * TWO_64 {
        return u128::MAX;
    }
    let high = (v / TWO_64).floor();
    u128::from(high as u64) << 64 | u128::from((v - high * TWO_64) as u64)
}

/// `n as f64` (rounded to nearest, ties to even) through one `u64` conversion. Why not `as`: on
/// wasm32 it links compiler-builtins' `__floatuntidf` (wasm size). From 2^64 on, the top 64 bits
/// are converted with every lower bit folded into the lowest of them (a sticky bit: it lies
/// below the rounding position, so the one rounding is `n`'s), then scaled by a power of two.
/// Out of line, like the builtin it replaces.
#[inline(never)]
fn to_f64(n: u128) -> f64 {
    let (high, low) = ((n >> 64) as u64, n as u64);
    if high == 0 {
        return low as f64;
    }
    let zeros = high.leading_zeros();
    // `low >> (64 - zeros)`, written so that `zeros == 0` shifts by 63 then 1, not by 64.
    let top = high << zeros | (low >> 1) >> (63 - zeros);
    let sticky = u64::from(low << zeros != 0);
    let scale = f64::from_bits(u64::from(1023 + 64 - zeros) << 52);
    (top | sticky) as f64 * scale
}

/// `(n / d, n % d)` for a divisor below 2^48, exactly as u128 `/` and `%` — by long division in
/// 16-bit digits on u64s. Why not `/`: on wasm32 a u128 division links compiler-builtins'
/// `__udivti3` (~1 KB raw, ~570 B gz of the npm module; issue 15), and every divisor here is a
/// small constant. Each step divides `rem·2^16 + digit` < 2^64 (rem < d < 2^48), so nothing
/// overflows.
#[inline(never)]
fn div_rem(n: u128, d: u64) -> (u128, u64) {
    debug_assert!(d > 0 && d < 1 << 48);
    let mut quotient = 0u128;
    let mut rem = 0u64;
    for shift in (0..8).rev() {
        let digit = ((n >> (16 * shift)) & 0xffff) as u64;
        let cur = rem << 16 | digit;
        quotient = quotient << 16 | u128::from(cur / d);
        rem = cur % d;
    }
    (quotient, rem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn to_u128_is_the_cast(bits in any::<u64>(), small in 0.0..1e40f64) {
            for v in [f64::from_bits(bits), small, small.round(), -small] {
                prop_assert_eq!(to_u128(v), v as u128, "{}", v);
            }
        }

        #[test]
        fn to_f64_is_the_cast(n in any::<u128>(), shift in 0u32..128, low in any::<u64>()) {
            // Random values, every magnitude, and halfway cases (a tie, just under, just over).
            for n in [n, n >> shift, u128::from(low), (1 << 64 | 1 << 11) << (shift % 64), ((1 << 64 | 1 << 11) << (shift % 64)) + 1, ((1 << 64 | 1 << 11) << (shift % 64)) - 1, u128::MAX, 1 << 64, (1 << 64) - 1] {
                prop_assert_eq!(to_f64(n).to_bits(), (n as f64).to_bits(), "{}", n);
            }
        }

        #[test]
        fn div_rem_is_u128_division(n in any::<u128>(), small in any::<u64>(), d in 1u64..(1 << 48)) {
            for n in [n, u128::from(small), u128::MAX, 0] {
                for d in [d, 1, MICRO as u64, TOKEN as u64, (1 << 48) - 1] {
                    prop_assert_eq!(div_rem(n, d), (n / u128::from(d), (n % u128::from(d)) as u64));
                }
            }
        }
    }

    #[test]
    fn bucket_starts_full_and_refills_lazily() {
        let mut b = TokenBucket::new(3.0, 2.0).unwrap();
        assert!(b.try_withdraw(0.0));
        assert!(b.try_withdraw(0.0));
        assert!(b.try_withdraw(0.0));
        assert!(!b.try_withdraw(0.0));
        assert!(!b.try_withdraw(499.0));
        assert!(b.try_withdraw(500.0)); // 2/s → one token after 500 ms
        assert!(!b.try_withdraw(500.0));
        // Refill never exceeds capacity.
        assert_eq!(b.available(1e9), 3.0);
    }

    #[test]
    fn bucket_ignores_a_clock_that_goes_backwards() {
        let mut b = TokenBucket::new(1.0, 1.0).unwrap();
        assert!(b.try_withdraw(10_000.0));
        assert!(!b.try_withdraw(0.0));
        assert!(!b.try_withdraw(10_999.0));
        assert!(b.try_withdraw(11_000.0));
    }

    #[test]
    fn ratio_is_exact_for_fractions() {
        let mut r = RatioBudget::new(0.1, 0.0, 10_000.0).unwrap();
        for _ in 0..10 {
            r.record_request(0.0);
        }
        assert!(r.try_withdraw(0.0));
        assert!(!r.try_withdraw(0.0));
        for _ in 0..30 {
            r.record_request(1.0);
        }
        // 40 requests × 0.1 = exactly 4 retries, one already used.
        assert!(r.try_withdraw(1.0));
        assert!(r.try_withdraw(1.0));
        assert!(r.try_withdraw(1.0));
        assert!(!r.try_withdraw(1.0));
        // 0.3 × 10 = 3 exactly (0.1 + 0.2 style drift would give 2.9999…).
        let mut r = RatioBudget::new(0.3, 0.0, 1000.0).unwrap();
        (0..10).for_each(|_| r.record_request(0.0));
        assert_eq!(r.available(0.0), 3.0);
    }

    #[test]
    fn ratio_reserve_lets_quiet_clients_retry() {
        let mut r = RatioBudget::new(0.0, 2.0, 1000.0).unwrap();
        assert!(r.try_withdraw(0.0));
        assert!(r.try_withdraw(0.0));
        assert!(!r.try_withdraw(0.0));
    }

    #[test]
    fn ratio_window_slides() {
        let mut r = RatioBudget::new(1.0, 0.0, 1000.0).unwrap();
        r.record_request(0.0);
        assert!(r.try_withdraw(50.0));
        assert!(!r.try_withdraw(60.0));
        // 1000 ms later both the request and the retry have left the window.
        assert_eq!(r.available(1100.0), 0.0);
        r.record_request(1100.0);
        assert!(r.try_withdraw(1100.0));
    }

    #[test]
    fn validation() {
        assert!(TokenBucket::new(-1.0, 1.0).is_err());
        assert!(TokenBucket::new(1.0, f64::NAN).is_err());
        assert!(RatioBudget::new(f64::INFINITY, 0.0, 1.0).is_err());
        assert!(RatioBudget::new(1001.0, 0.0, 1.0).is_err());
        assert!(RatioBudget::new(0.1, 0.0, 0.0).is_err());
        assert!(RatioBudget::new(0.1, -1.0, 10.0).is_err());
    }

    #[test]
    fn weird_clocks_do_not_panic() {
        let mut r = RatioBudget::new(0.5, 1.0, 10.0).unwrap();
        for now in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1e300,
            1e300,
            0.0,
        ] {
            r.record_request(now);
            let _ = r.try_withdraw(now);
            let _ = r.available(now);
        }
        let mut b = TokenBucket::new(1.0, 1.0).unwrap();
        for now in [f64::NAN, f64::INFINITY, -1e300, 0.0] {
            let _ = b.try_withdraw(now);
        }
    }
}
