//! One error type for the core, with stable machine codes.
//!
//! Why codes and not messages: the JS shell, the simulator and native callers all branch on what
//! went wrong, and a code survives translation, two copies of the package and log pipelines.
//! Messages are built by the caller (the JS shell adds the offending value), so the wasm build
//! carries no formatting machinery.

use core::fmt;

/// Every option the core validates, named as the JS API spells it (see [`OPTIONS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
#[allow(missing_docs)]
pub enum Opt {
    MaxAttempts,
    BaseDelayMs,
    MaxDelayMs,
    MaxElapsedMs,
    Jitter,
    WindowSize,
    FailureRateThreshold,
    MinimumCalls,
    FailureThreshold,
    OpenDurationMs,
    ProbesToClose,
    Capacity,
    RefillPerSec,
    Ratio,
    MinRetriesPerSec,
    WindowMs,
    TtlMs,
    Attempt,
    PreviousDelayMs,
    State,
    Strategy,
    Clients,
    Seed,
    BucketMs,
    Samples,
    ThinkTimeMs,
    LatencyMs,
    TimeoutMs,
    CapacityPerTick,
    TickMs,
    OutageStartMs,
    OutageDurationMs,
    DurationMs,
    MaxRecords,
    InFlightLeaseMs,
    UnknownTtlMs,
    MaxOrigins,
    TimeoutCost,
    ThrottledCost,
    ServerErrorCost,
    SuccessRefund,
    Beta,
    ScaleConstant,
    Smooth,
    MinRatePerSec,
    MinCapacity,
    IncreasePerSec,
    MaxHoldMs,
    Limiter,
    LimiterGroups,
    RetryAfterMs,
    BurstMs,
    DelayMs,
    Quantile,
    MinDelayMs,
    MaxHedges,
    MaxInFlight,
    Requests,
    TailProbability,
    TailLatencyMs,
    ArrivalMs,
    Header,
    MaxKeyLength,
    RetentionMs,
    InProgressStatus,
    ReuseStatuses,
    ReplayHeader,
    SlowCallDurationMs,
}

/// The one table of option names: id (the index), variant, and the name users write (camelCase,
/// units in the name). Error messages name options from here.
pub const OPTIONS: [(Opt, &str); 68] = [
    (Opt::MaxAttempts, "maxAttempts"),
    (Opt::BaseDelayMs, "baseDelayMs"),
    (Opt::MaxDelayMs, "maxDelayMs"),
    (Opt::MaxElapsedMs, "maxElapsedMs"),
    (Opt::Jitter, "jitter"),
    (Opt::WindowSize, "windowSize"),
    (Opt::FailureRateThreshold, "failureRateThreshold"),
    (Opt::MinimumCalls, "minimumCalls"),
    (Opt::FailureThreshold, "failureThreshold"),
    (Opt::OpenDurationMs, "openDurationMs"),
    (Opt::ProbesToClose, "probesToClose"),
    (Opt::Capacity, "capacity"),
    (Opt::RefillPerSec, "refillPerSec"),
    (Opt::Ratio, "ratio"),
    (Opt::MinRetriesPerSec, "minRetriesPerSec"),
    (Opt::WindowMs, "windowMs"),
    (Opt::TtlMs, "ttlMs"),
    (Opt::Attempt, "attempt"),
    (Opt::PreviousDelayMs, "previousDelayMs"),
    (Opt::State, "state"),
    (Opt::Strategy, "strategy"),
    (Opt::Clients, "clients"),
    (Opt::Seed, "seed"),
    (Opt::BucketMs, "bucketMs"),
    (Opt::Samples, "samples"),
    (Opt::ThinkTimeMs, "thinkTimeMs"),
    (Opt::LatencyMs, "latencyMs"),
    (Opt::TimeoutMs, "timeoutMs"),
    (Opt::CapacityPerTick, "capacityPerTick"),
    (Opt::TickMs, "tickMs"),
    (Opt::OutageStartMs, "outageStartMs"),
    (Opt::OutageDurationMs, "outageDurationMs"),
    (Opt::DurationMs, "durationMs"),
    (Opt::MaxRecords, "maxRecords"),
    (Opt::InFlightLeaseMs, "inFlightLeaseMs"),
    (Opt::UnknownTtlMs, "unknownTtlMs"),
    (Opt::MaxOrigins, "maxOrigins"),
    (Opt::TimeoutCost, "timeoutCost"),
    (Opt::ThrottledCost, "throttledCost"),
    (Opt::ServerErrorCost, "serverErrorCost"),
    (Opt::SuccessRefund, "successRefund"),
    (Opt::Beta, "beta"),
    (Opt::ScaleConstant, "scaleConstant"),
    (Opt::Smooth, "smooth"),
    (Opt::MinRatePerSec, "minRatePerSec"),
    (Opt::MinCapacity, "minCapacity"),
    (Opt::IncreasePerSec, "increasePerSec"),
    (Opt::MaxHoldMs, "maxHoldMs"),
    (Opt::Limiter, "limiter"),
    (Opt::LimiterGroups, "limiterGroups"),
    (Opt::RetryAfterMs, "retryAfterMs"),
    (Opt::BurstMs, "burstMs"),
    (Opt::DelayMs, "delayMs"),
    (Opt::Quantile, "quantile"),
    (Opt::MinDelayMs, "minDelayMs"),
    (Opt::MaxHedges, "maxHedges"),
    (Opt::MaxInFlight, "maxInFlight"),
    (Opt::Requests, "requests"),
    (Opt::TailProbability, "tailProbability"),
    (Opt::TailLatencyMs, "tailLatencyMs"),
    (Opt::ArrivalMs, "arrivalMs"),
    (Opt::Header, "header"),
    (Opt::MaxKeyLength, "maxKeyLength"),
    (Opt::RetentionMs, "retentionMs"),
    (Opt::InProgressStatus, "inProgressStatus"),
    (Opt::ReuseStatuses, "reuseStatuses"),
    (Opt::ReplayHeader, "replayHeader"),
    (Opt::SlowCallDurationMs, "slowCallDurationMs"),
];

impl Opt {
    /// The option's name as users write it.
    pub fn name(self) -> &'static str {
        // [`OPTIONS`] lists the variants in declaration order (a test checks it), so the
        // discriminant is the index: one load, not a search inlined at every caller (wasm size).
        OPTIONS.get(self as usize).map_or("", |(_, n)| n)
    }

    /// Stable numeric id (index in [`OPTIONS`]).
    pub fn id(self) -> u32 {
        self as u32
    }
}

/// What a valid value looks like, phrased to complete "`option` must be …".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
#[allow(missing_docs)]
pub enum Expect {
    /// A finite number ≥ 0.
    NonNegative,
    /// A finite number > 0.
    Positive,
    /// An integer in 1..=max.
    IntegerAtLeastOne { max: u32 },
    /// A number in [0, 1].
    UnitInterval,
    /// At most another option's value.
    AtMost(Opt),
    /// At least another option's value.
    AtLeast(Opt),
    /// One of a fixed set of strings.
    OneOf(&'static str),
    /// A value produced by `toJSON()` of a matching breaker.
    Snapshot,
    /// A finite number from 0 to `max`.
    NumberAtMost {
        /// The largest accepted value.
        max: u32,
    },
    /// An integer from 0 to `max`.
    IntegerFromZero {
        /// The largest accepted value.
        max: u32,
    },
    /// A number strictly between 0 and 1.
    OpenUnitInterval,
    /// A number > 0 and ≤ 1.
    FractionAboveZero,
    /// A duration in ms: finite, > 0 (or ≥ 0 when `zero` is allowed) and at most
    /// [`MAX_DURATION_MS`] (10 years).
    Duration {
        /// Whether 0 is accepted.
        zero: bool,
    },
    /// An HTTP header name (an RFC 9110 token).
    Token,
    /// An HTTP error status (400 to 599), or 0 for none.
    ErrorStatus,
    /// A request header name a page may set and the client does not set itself: an RFC 9110
    /// token that is not one of the Fetch standard's forbidden request-header names (`Host`,
    /// `Cookie`, `Content-Length`, `Sec-*`, `Proxy-*`, …) nor `Content-Type`.
    KeyHeader,
}

/// The longest duration (TTL, lease, window, cooldown) any option accepts: 10 years of 365 days.
/// Beyond it a deadline stops being an exact integer where it is stored (Redis scripts print
/// numbers with 14 significant digits: `now + 1e17` is not an integer there), and no retention or
/// window is that long on purpose.
pub const MAX_DURATION_MS: f64 = 315_360_000_000.0;

impl Expect {
    /// Stable numeric id of the expectation kind.
    pub const fn id(self) -> u32 {
        match self {
            Expect::NonNegative => 0,
            Expect::Positive => 1,
            Expect::IntegerAtLeastOne { .. } => 2,
            Expect::UnitInterval => 3,
            Expect::AtMost(_) => 4,
            Expect::AtLeast(_) => 5,
            Expect::OneOf(_) => 6,
            Expect::Snapshot => 7,
            Expect::NumberAtMost { .. } => 8,
            Expect::IntegerFromZero { .. } => 9,
            Expect::OpenUnitInterval => 10,
            Expect::FractionAboveZero => 11,
            Expect::Duration { .. } => 12,
            Expect::Token => 13,
            Expect::ErrorStatus => 14,
            Expect::KeyHeader => 15,
        }
    }
}

/// Why the core refused something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// An option failed validation. Options are validated once, at construction.
    InvalidOption {
        /// Which option.
        option: Opt,
        /// What it must be.
        expected: Expect,
    },
    /// An idempotency key is empty, longer than 255 bytes, not printable ASCII, or starts or ends
    /// with a space.
    InvalidKey,
    /// The idempotency key is unknown to the store (for `resolve`).
    UnknownKey,
    /// The key is not in a state that allows the operation (e.g. resolving an in-flight key).
    WrongState,
    /// The store holds `maxRecords` live records: a new key is refused (nothing is evicted).
    StoreFull,
    /// The key's record was made for a different request (fingerprint mismatch).
    KeyReused,
    /// The key is longer than the gateway's dialect accepts (`maxKeyLength`).
    KeyTooLong,
}

impl Error {
    /// The stable machine-readable code, identical in Rust and JS.
    pub const fn code(&self) -> &'static str {
        match self {
            Error::InvalidOption { .. } => "INVALID_OPTION",
            Error::InvalidKey => "INVALID_KEY",
            Error::UnknownKey => "KEY_NOT_FOUND",
            Error::WrongState => "KEY_WRONG_STATE",
            Error::StoreFull => "STORE_FULL",
            Error::KeyReused => "KEY_REUSED",
            Error::KeyTooLong => "KEY_TOO_LONG",
        }
    }

    /// Shorthand used by every validator.
    pub const fn option(option: Opt, expected: Expect) -> Self {
        Error::InvalidOption { option, expected }
    }
}

impl Expect {
    /// Append the phrase that completes "`option` must be …" to `out`. Built with `push_str`
    /// only, so the wasm build carries no formatting machinery.
    pub fn describe(&self, out: &mut String) {
        let (head, number, tail) = self.parts();
        out.push_str(head);
        if let Some(n) = number {
            push_u32(out, n);
        }
        out.push_str(tail);
    }

    /// The phrase as (text, optional number, text): one table, so `describe` is one short code
    /// path instead of an inlined `push_str` per variant (−231 B gz of wasm; issue 15).
    pub(crate) fn parts(&self) -> (&'static str, Option<u32>, &'static str) {
        match self {
            Expect::NonNegative => ("a finite number >= 0", None, ""),
            Expect::Positive => ("a finite number > 0", None, ""),
            Expect::IntegerAtLeastOne { max } => ("an integer from 1 to ", Some(*max), ""),
            Expect::UnitInterval => ("a number from 0 to 1", None, ""),
            Expect::AtMost(o) => ("at most ", None, o.name()),
            Expect::AtLeast(o) => ("at least ", None, o.name()),
            Expect::OneOf(set) => ("one of ", None, set),
            Expect::Snapshot => (
                "a snapshot from toJSON() of a breaker with the same options",
                None,
                "",
            ),
            Expect::NumberAtMost { max } => ("a finite number from 0 to ", Some(*max), ""),
            Expect::IntegerFromZero { max } => ("an integer from 0 to ", Some(*max), ""),
            Expect::OpenUnitInterval => ("a number between 0 and 1, both excluded", None, ""),
            Expect::FractionAboveZero => ("a number > 0 and <= 1", None, ""),
            Expect::Duration { zero: false } => (
                "a number of ms > 0 and at most 315360000000 (10 years)",
                None,
                "",
            ),
            Expect::Duration { zero: true } => {
                ("a number of ms from 0 to 315360000000 (10 years)", None, "")
            }
            Expect::Token => (
                "an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)",
                None,
                "",
            ),
            Expect::ErrorStatus => ("an HTTP status from 400 to 599, or 0 for none", None, ""),
            Expect::KeyHeader => (
                "an HTTP header name (letters, digits and !#$%&'*+-.^_`|~) that a request may carry: not one fetch sets or forbids (Host, Connection, Content-Length, Cookie, Origin, Referer, Transfer-Encoding, Sec-*, Proxy-*, ...) nor Content-Type, which the client sets",
                None,
                "",
            ),
        }
    }
}

/// Decimal digits of `n`, without `core::fmt`.
pub fn push_u32(out: &mut String, mut n: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    loop {
        i -= 1;
        if let Some(b) = buf.get_mut(i) {
            *b = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || i == 0 {
            break;
        }
    }
    buf.iter().skip(i).for_each(|&b| out.push(char::from(b)));
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.describe(&mut s);
        f.write_str(&s)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidOption { option, expected } => {
                write!(f, "{} must be {}", option.name(), expected)
            }
            Error::InvalidKey => {
                f.write_str("idempotency key must be 1 to 255 printable ASCII characters")
            }
            Error::UnknownKey => f.write_str("no record for this idempotency key"),
            Error::WrongState => f.write_str("the record is not in a state that allows this"),
            Error::StoreFull => f.write_str("the store holds maxRecords live records"),
            Error::KeyReused => f.write_str("the idempotency key was used for a different request"),
            Error::KeyTooLong => {
                f.write_str("the idempotency key is longer than the dialect accepts")
            }
        }
    }
}

impl std::error::Error for Error {}

/// Validation helpers shared by every config builder.
pub(crate) mod check {
    use super::{Error, Expect, Opt};

    pub fn non_negative(option: Opt, v: f64) -> Result<f64, Error> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(Error::option(option, Expect::NonNegative))
        }
    }

    /// Like [`non_negative`] but `+Infinity` is allowed (means "no limit").
    pub fn non_negative_or_inf(option: Opt, v: f64) -> Result<f64, Error> {
        if v >= 0.0 && !v.is_nan() {
            Ok(v)
        } else {
            Err(Error::option(option, Expect::NonNegative))
        }
    }

    pub fn positive(option: Opt, v: f64) -> Result<f64, Error> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(Error::option(option, Expect::Positive))
        }
    }

    pub fn count(option: Opt, v: f64, max: u32) -> Result<u32, Error> {
        if v.is_finite() && v >= 1.0 && v <= f64::from(max) && v.fract() == 0.0 {
            Ok(v as u32)
        } else {
            Err(Error::option(option, Expect::IntegerAtLeastOne { max }))
        }
    }

    pub fn integer(option: Opt, v: f64, max: u32) -> Result<u32, Error> {
        if v.is_finite() && v >= 0.0 && v <= f64::from(max) && v.fract() == 0.0 {
            Ok(v as u32)
        } else {
            Err(Error::option(option, Expect::IntegerFromZero { max }))
        }
    }

    /// A duration in ms: finite, > 0 (≥ 0 with `zero`), at most [`super::MAX_DURATION_MS`].
    pub fn duration(option: Opt, v: f64, zero: bool) -> Result<f64, Error> {
        let low = if zero { v >= 0.0 } else { v > 0.0 };
        if low && v <= super::MAX_DURATION_MS {
            Ok(v)
        } else {
            Err(Error::option(option, Expect::Duration { zero }))
        }
    }

    pub fn unit(option: Opt, v: f64) -> Result<f64, Error> {
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(Error::option(option, Expect::UnitInterval))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_indices_and_names_unique() {
        for (i, (o, name)) in OPTIONS.iter().enumerate() {
            // `name` and `id` index by discriminant: the table must keep declaration order.
            assert_eq!(*o as usize, i);
            assert_eq!(o.id() as usize, i);
            assert_eq!(o.name(), *name);
        }
        let mut names: Vec<_> = OPTIONS.iter().map(|(_, n)| *n).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), OPTIONS.len());
    }

    #[test]
    fn display_names_the_option() {
        let e = Error::option(Opt::BaseDelayMs, Expect::NonNegative);
        assert_eq!(e.to_string(), "baseDelayMs must be a finite number >= 0");
        assert_eq!(e.code(), "INVALID_OPTION");
        let e = Error::option(Opt::MaxAttempts, Expect::IntegerAtLeastOne { max: 1000 });
        assert_eq!(
            e.to_string(),
            "maxAttempts must be an integer from 1 to 1000"
        );
    }

    #[test]
    fn push_u32_writes_decimal() {
        for n in [0, 7, 10, 1_000_000, u32::MAX] {
            let mut s = String::new();
            push_u32(&mut s, n);
            assert_eq!(s, n.to_string());
        }
    }

    #[test]
    fn checks_reject_nan_and_infinities() {
        assert!(check::non_negative(Opt::BaseDelayMs, f64::NAN).is_err());
        assert!(check::non_negative(Opt::BaseDelayMs, f64::INFINITY).is_err());
        assert!(check::non_negative(Opt::BaseDelayMs, -0.5).is_err());
        assert_eq!(check::non_negative(Opt::BaseDelayMs, 0.0), Ok(0.0));
        assert_eq!(
            check::non_negative_or_inf(Opt::MaxDelayMs, f64::INFINITY),
            Ok(f64::INFINITY)
        );
        assert!(check::count(Opt::MaxAttempts, 2.5, 10).is_err());
        assert!(check::count(Opt::MaxAttempts, 0.0, 10).is_err());
        assert!(check::count(Opt::MaxAttempts, 11.0, 10).is_err());
        assert_eq!(check::count(Opt::MaxAttempts, 10.0, 10), Ok(10));
        assert!(check::unit(Opt::Ratio, 1.000_1).is_err());
        assert!(check::duration(Opt::TtlMs, 1e17, false).is_err());
        assert!(check::duration(Opt::TtlMs, 0.0, false).is_err());
        assert!(check::duration(Opt::TtlMs, f64::NAN, true).is_err());
        assert_eq!(
            check::duration(Opt::TtlMs, MAX_DURATION_MS, false),
            Ok(MAX_DURATION_MS)
        );
        assert_eq!(check::duration(Opt::OpenDurationMs, 0.0, true), Ok(0.0));
        // The message states the bound the constant holds.
        let mut text = String::new();
        Expect::Duration { zero: false }.describe(&mut text);
        assert!(
            text.contains(&format!("{}", MAX_DURATION_MS as u64)),
            "{text}"
        );
        assert!(check::unit(Opt::Ratio, f64::NAN).is_err());
    }
}
