//! One error enum for the async API, with the JS package's codes.
//!
//! Why one enum generic over your error: a retry rethrows your error unchanged when it gives up
//! (`Error::Operation`), while the mechanisms add their own refusals (an open circuit, an
//! in-flight duplicate, an unknown outcome). Callers branch on the variant or on [`Error::code`],
//! which is the same string as the JS error's `code`, so logs and dashboards read the same from
//! both shells.

use core::fmt;

use super::num::Num;
use crate::core::history::Answer;

/// Whether an error is worth retrying, and what the server said about when.
///
/// Implement it for your operation's error type. The default `retry_after_ms` is `None`.
///
/// ```
/// use steadfast::web::Classify;
/// struct Declined;
/// impl Classify for Declined {
///     fn is_transient(&self) -> bool { false } // a declined card is declined forever
/// }
/// assert!(!Declined.is_transient());
/// assert_eq!(Declined.retry_after_ms(0.0), None);
/// ```
pub trait Classify {
    /// `true` when repeating the operation may succeed (HTTP 408, 429, 5xx, network errors,
    /// timeouts); `false` for permanent failures (a 400, a declined card).
    fn is_transient(&self) -> bool;

    /// A server-sent Retry-After, in ms from `now_ms`, if any: a floor for the next delay,
    /// capped by the policy's `max_delay_ms`.
    fn retry_after_ms(&self, now_ms: f64) -> Option<f64> {
        let _ = now_ms;
        None
    }

    /// What this failed attempt showed, for the charge's history ([`crate::core::history`]):
    /// a charge is judged by all its attempts, and once one may have been processed no later
    /// refusal frees its key. The default reads [`Classify::is_transient`]: transient →
    /// [`Answer::NoAnswer`] (it may have been processed), else [`Answer::Refused`]. Override it to
    /// report an HTTP status (`Answer::Status(404)`) or a request that provably never left
    /// (`Answer::NotSent`): then a `429` or a refused connection frees the key, while a `404`
    /// after a dropped attempt does not.
    ///
    /// ```
    /// use steadfast::core::history::Answer;
    /// use steadfast::web::Classify;
    /// struct Http(u16);
    /// impl Classify for Http {
    ///     fn is_transient(&self) -> bool { steadfast::core::classify::is_transient_status(f64::from(self.0)) }
    ///     fn answer(&self) -> Answer { Answer::Status(self.0) }
    /// }
    /// assert_eq!(Http(404).answer(), Answer::Status(404));
    /// ```
    fn answer(&self) -> Answer {
        if self.is_transient() {
            Answer::NoAnswer
        } else {
            Answer::Refused
        }
    }

    /// Whether this is a refusal that never ran: nothing was attempted (steadfast's own: an open
    /// circuit, a key reused for another request). A [`crate::web::CircuitBreaker`] around the
    /// call counts it as nothing — or, when a [`crate::web::retry`] inside the call gave up on it
    /// after an attempt that was answered, as that answer. Default `false`.
    ///
    /// ```
    /// use steadfast::web::{Classify, Error};
    /// struct Declined;
    /// impl Classify for Declined { fn is_transient(&self) -> bool { false } }
    /// assert!(!Declined.never_ran());
    /// let open: Error<Declined> = Error::CircuitOpen { retry_after_ms: 10.0 };
    /// assert!(open.never_ran());
    /// assert!(Error::Operation(open).never_ran()); // a breaker's refusal inside a retry
    /// ```
    fn never_ran(&self) -> bool {
        false
    }
}

/// An operation that cannot fail has nothing to retry.
impl Classify for std::convert::Infallible {
    fn is_transient(&self) -> bool {
        match *self {}
    }
}

/// The `E` of an [`Error`] with no operation behind it: what building a [`crate::web::Charge`]
/// or [`crate::web::new_idempotency_key`] can return. It has no values, so `Error<NoOperation>`
/// is always one of steadfast's own refusals, and it converts into any `Error<E>` with `?`.
///
/// Why not [`std::convert::Infallible`]: `Error<Infallible>` is also what an operation that cannot
/// fail returns, and a conversion `Error<Infallible> → Error<E>` would collide with the identity
/// conversion at `E = Infallible`. This type implements no [`Classify`], so the conversion is
/// unambiguous.
///
/// ```
/// use steadfast::web::{Charge, Classify, Error};
/// #[derive(Debug)]
/// struct Gateway;
/// impl Classify for Gateway {
///     fn is_transient(&self) -> bool { true }
/// }
/// fn order(amount_cents: u64) -> Result<Charge, Error<Gateway>> {
///     let charge = Charge::new("order-42", amount_cents, "usd")?; // Error<NoOperation> → Error<Gateway>
///     let _policy = steadfast::web::RetryPolicy::builder().max_attempts(3).build()?; // core::Error too
///     Ok(charge)
/// }
/// assert!(order(4999).is_ok());
/// assert_eq!(order(0).unwrap_err().code(), Some("INVALID_OPTION"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoOperation {}

impl fmt::Display for NoOperation {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {}
    }
}

impl std::error::Error for NoOperation {}

/// What went wrong, as the JS package's errors say it. `E` is your operation's error.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub enum Error<E> {
    /// Your operation's own error: it was permanent, or the attempts ran out. (In JS the error
    /// is rethrown as it is; it has no steadfast code.)
    Operation(E),
    /// `CIRCUIT_OPEN`: the breaker refused the call; nothing was sent.
    CircuitOpen {
        /// Remaining cooldown when refused (0 while a probe is in flight, `+Infinity` when
        /// isolated).
        retry_after_ms: f64,
    },
    /// `DUPLICATE_IN_FLIGHT`: a run with this key is still in flight (refused, not replayed).
    DuplicateInFlight {
        /// The key.
        key: String,
        /// When the running attempt began (store clock, ms).
        started_at_ms: f64,
    },
    /// `OUTCOME_UNKNOWN`: an earlier run with this key ended in a transient failure or a
    /// timeout: the money may have moved. Reconcile (resolve the key) before retrying.
    OutcomeUnknown {
        /// The key.
        key: String,
        /// When the unknown run began (ms).
        started_at_ms: f64,
        /// What made it unknown, when this call saw it (`fetch`: the network error, the timeout
        /// or the deadline of a keyed POST); `None` when a store refuses a key parked earlier.
        cause: Option<Box<Error<E>>>,
    },
    /// `KEY_REUSED`: the key was used for a different request (another amount or currency).
    KeyReused {
        /// The key.
        key: String,
    },
    /// `STORE_FULL`: a new key, and the store already holds `max_records` live records: refused,
    /// nothing run.
    StoreFull {
        /// The refused key.
        key: String,
        /// The store's limit.
        max_records: u32,
    },
    /// `RETRY_BUDGET_EXHAUSTED`: the shared budget refused a retry: failing fast instead of
    /// adding load.
    RetryBudgetExhausted {
        /// The attempt that failed last.
        attempt: u32,
        /// Its error.
        last_error: E,
    },
    /// `DEADLINE_EXCEEDED`: the deadline passed, or the next sleep would end past it.
    DeadlineExceeded {
        /// The deadline.
        max_elapsed_ms: f64,
        /// The attempt that was running (or had just failed).
        attempt: u32,
        /// The last error seen, if an attempt had failed before the deadline.
        last_error: Option<E>,
    },
    /// `ABORTED`: the caller's signal aborted the call (the JS package rejects with the
    /// signal's `reason`; read it from your `AbortSignal`).
    Aborted,
    /// `INVALID_KEY`: an idempotency key that is not 1 to 255 printable ASCII characters.
    InvalidKey {
        /// The rejected key.
        key: String,
    },
    /// `RANDOM_UNAVAILABLE`: the platform has no CSPRNG, so no unguessable key can be made.
    RandomUnavailable,
    /// `INVALID_OPTION`: an argument failed validation (e.g. a charge's `amountCents`).
    InvalidOption {
        /// The option, as the JS API spells it.
        option: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// A refusal of the core, as it came (its [`crate::core::Error::code`] is this error's code):
    /// an invalid policy or breaker option (`INVALID_OPTION`, naming the option), or a
    /// reconciliation the store refused (`KEY_NOT_FOUND`, `KEY_WRONG_STATE`). What `?` makes of a
    /// `core::Error` in a function returning `Error<E>`.
    Core(crate::core::Error),
}

/// As `#[derive(Debug)]` would print it, except [`Error::Core`], printed as its code and message,
/// and, on wasm32, numbers, written as JavaScript writes them (`1`, not `1.0`: no float formatting
/// of core's in the module, see `web::num`):
/// the derived `Debug` of the core's option and expectation enums made the example app's module
/// 0.6 KB gzipped larger (examples/rust-checkout/build.sh: 59.4 → 58.8 KB), for text its
/// `Display` already gives.
impl<E: fmt::Debug> fmt::Debug for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Operation(e) => f.debug_tuple("Operation").field(e).finish(),
            Error::CircuitOpen { retry_after_ms } => f
                .debug_struct("CircuitOpen")
                .field("retry_after_ms", &Num(*retry_after_ms))
                .finish(),
            Error::DuplicateInFlight { key, started_at_ms } => f
                .debug_struct("DuplicateInFlight")
                .field("key", key)
                .field("started_at_ms", &Num(*started_at_ms))
                .finish(),
            Error::OutcomeUnknown {
                key,
                started_at_ms,
                cause,
            } => f
                .debug_struct("OutcomeUnknown")
                .field("key", key)
                .field("started_at_ms", &Num(*started_at_ms))
                .field("cause", cause)
                .finish(),
            Error::KeyReused { key } => f.debug_struct("KeyReused").field("key", key).finish(),
            Error::StoreFull { key, max_records } => f
                .debug_struct("StoreFull")
                .field("key", key)
                .field("max_records", max_records)
                .finish(),
            Error::RetryBudgetExhausted {
                attempt,
                last_error,
            } => f
                .debug_struct("RetryBudgetExhausted")
                .field("attempt", attempt)
                .field("last_error", last_error)
                .finish(),
            Error::DeadlineExceeded {
                max_elapsed_ms,
                attempt,
                last_error,
            } => f
                .debug_struct("DeadlineExceeded")
                .field("max_elapsed_ms", &Num(*max_elapsed_ms))
                .field("attempt", attempt)
                .field("last_error", last_error)
                .finish(),
            Error::Aborted => f.write_str("Aborted"),
            Error::InvalidKey { key } => f.debug_struct("InvalidKey").field("key", key).finish(),
            Error::RandomUnavailable => f.write_str("RandomUnavailable"),
            Error::InvalidOption { option, expected } => f
                .debug_struct("InvalidOption")
                .field("option", option)
                .field("expected", expected)
                .finish(),
            Error::Core(e) => write!(f, "Core({}: {e})", e.code()),
        }
    }
}

impl<E> Error<E> {
    /// The stable code, identical to the JS error's `code`; `None` for [`Error::Operation`]
    /// (your own error, which steadfast passes through untouched).
    ///
    /// ```
    /// use steadfast::web::Error;
    /// let e: Error<()> = Error::CircuitOpen { retry_after_ms: 10.0 };
    /// assert_eq!(e.code(), Some("CIRCUIT_OPEN"));
    /// assert_eq!(Error::Operation(()).code(), None);
    /// ```
    pub fn code(&self) -> Option<&'static str> {
        Some(match self {
            Error::Operation(_) => return None,
            Error::CircuitOpen { .. } => "CIRCUIT_OPEN",
            Error::DuplicateInFlight { .. } => "DUPLICATE_IN_FLIGHT",
            Error::OutcomeUnknown { .. } => "OUTCOME_UNKNOWN",
            Error::KeyReused { .. } => "KEY_REUSED",
            Error::StoreFull { .. } => "STORE_FULL",
            Error::RetryBudgetExhausted { .. } => "RETRY_BUDGET_EXHAUSTED",
            Error::DeadlineExceeded { .. } => "DEADLINE_EXCEEDED",
            Error::Aborted => "ABORTED",
            Error::InvalidKey { .. } => "INVALID_KEY",
            Error::RandomUnavailable => "RANDOM_UNAVAILABLE",
            Error::InvalidOption { .. } => "INVALID_OPTION",
            Error::Core(e) => e.code(),
        })
    }

    /// Your operation's error, if this is [`Error::Operation`].
    ///
    /// ```
    /// use steadfast::web::Error;
    /// assert_eq!(Error::Operation(7).operation(), Some(&7));
    /// assert_eq!(Error::<i32>::Aborted.operation(), None);
    /// ```
    pub fn operation(&self) -> Option<&E> {
        match self {
            Error::Operation(e) => Some(e),
            _ => None,
        }
    }

    /// Convert your error type, keeping the variant.
    ///
    /// ```
    /// use steadfast::web::Error;
    /// let e = Error::Operation(503u16).map(u32::from);
    /// assert_eq!(e, Error::Operation(503u32));
    /// ```
    pub fn map<F>(self, mut f: impl FnMut(E) -> F) -> Error<F> {
        self.map_dyn(&mut f)
    }

    /// `map` through a trait object, so the recursion into `cause` has one instantiation.
    fn map_dyn<F>(self, f: &mut dyn FnMut(E) -> F) -> Error<F> {
        match self {
            Error::Operation(e) => Error::Operation(f(e)),
            Error::CircuitOpen { retry_after_ms } => Error::CircuitOpen { retry_after_ms },
            Error::DuplicateInFlight { key, started_at_ms } => {
                Error::DuplicateInFlight { key, started_at_ms }
            }
            Error::OutcomeUnknown {
                key,
                started_at_ms,
                cause,
            } => Error::OutcomeUnknown {
                key,
                started_at_ms,
                cause: cause.map(|c| Box::new(c.map_dyn(f))),
            },
            Error::KeyReused { key } => Error::KeyReused { key },
            Error::StoreFull { key, max_records } => Error::StoreFull { key, max_records },
            Error::RetryBudgetExhausted {
                attempt,
                last_error,
            } => Error::RetryBudgetExhausted {
                attempt,
                last_error: f(last_error),
            },
            Error::DeadlineExceeded {
                max_elapsed_ms,
                attempt,
                last_error,
            } => Error::DeadlineExceeded {
                max_elapsed_ms,
                attempt,
                last_error: last_error.map(f),
            },
            Error::Aborted => Error::Aborted,
            Error::InvalidKey { key } => Error::InvalidKey { key },
            Error::RandomUnavailable => Error::RandomUnavailable,
            Error::InvalidOption { option, expected } => Error::InvalidOption { option, expected },
            Error::Core(e) => Error::Core(e),
        }
    }
}

/// `?` on your operation's error inside a closure that returns `Error<E>` (a store run, a breaker
/// call): it becomes [`Error::Operation`].
impl<E: Classify> From<E> for Error<E> {
    fn from(e: E) -> Self {
        Error::Operation(e)
    }
}

/// `?` on [`crate::web::Charge::new`] or [`crate::web::new_idempotency_key`] in a function that
/// returns `Error<E>`: the refusal keeps its variant and code.
impl<E: Classify> From<Error<NoOperation>> for Error<E> {
    fn from(e: Error<NoOperation>) -> Self {
        e.map(|n| match n {})
    }
}

/// `?` on a builder or a reconciliation (`RetryPolicy::builder().build()`, `BreakerConfig`,
/// `IdempotencyStore::resolve`) in a function that returns `Error<E>`: [`Error::Core`].
///
/// ```
/// use steadfast::web::{Error, RetryPolicy};
/// fn policy() -> Result<RetryPolicy, Error<std::convert::Infallible>> {
///     Ok(RetryPolicy::builder().base_delay_ms(-1.0).build()?)
/// }
/// let e = policy().unwrap_err();
/// assert_eq!(e.code(), Some("INVALID_OPTION"));
/// assert_eq!(e.to_string(), "baseDelayMs must be a finite number >= 0");
/// ```
impl<E: Classify> From<crate::core::Error> for Error<E> {
    fn from(e: crate::core::Error) -> Self {
        Error::Core(e)
    }
}

/// The JS package's `isTransientError` for its own errors: an unknown outcome, a deadline and an
/// abort are transient (the request may have reached the server); a budget refusal is as
/// transient as its cause; an open circuit, a duplicate, a reused or invalid key are not.
impl<E: Classify> Classify for Error<E> {
    fn is_transient(&self) -> bool {
        match self {
            Error::Operation(e) => e.is_transient(),
            Error::OutcomeUnknown { .. } | Error::DeadlineExceeded { .. } | Error::Aborted => true,
            Error::RetryBudgetExhausted { last_error, .. } => last_error.is_transient(),
            _ => false,
        }
    }

    fn retry_after_ms(&self, now_ms: f64) -> Option<f64> {
        match self {
            Error::Operation(e) => e.retry_after_ms(now_ms),
            _ => None,
        }
    }

    /// The JS package's `answerOf` for its own errors: an open circuit sent nothing; an unknown
    /// outcome, a deadline, an abort or a duplicate in flight may have been processed; a budget
    /// refusal is its last error's answer; a reused or invalid key was refused.
    fn answer(&self) -> Answer {
        match self {
            Error::Operation(e) => e.answer(),
            Error::CircuitOpen { .. } => Answer::NotSent,
            Error::OutcomeUnknown { .. }
            | Error::DeadlineExceeded { .. }
            | Error::Aborted
            | Error::DuplicateInFlight { .. } => Answer::NoAnswer,
            Error::RetryBudgetExhausted { last_error, .. } => last_error.answer(),
            _ => Answer::Refused,
        }
    }

    /// The JS package's `neverRan`: an open circuit and a reused key never ran, nor a budget
    /// refusal after one, nor a retry's error that is one (seen through `Operation`).
    fn never_ran(&self) -> bool {
        match self {
            Error::Operation(e) => e.never_ran(),
            Error::CircuitOpen { .. } | Error::KeyReused { .. } => true,
            Error::RetryBudgetExhausted { last_error, .. } => last_error.never_ran(),
            _ => false,
        }
    }
}

impl<E: fmt::Display> fmt::Display for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Operation(e) => e.fmt(f),
            Error::CircuitOpen { .. } => f.write_str("Circuit is open: downstream is failing fast"),
            Error::DuplicateInFlight { key, .. } => {
                write!(f, "Duplicate request for {key} is already in flight")
            }
            Error::OutcomeUnknown { key, .. } => {
                write!(
                    f,
                    "Outcome for {key} is unknown — reconcile before retrying"
                )
            }
            Error::KeyReused { key } => write!(
                f,
                "Idempotency key {key} was already used for a different request"
            ),
            Error::StoreFull { key, max_records } => write!(
                f,
                "Idempotency store is full ({max_records} records): refused new key {key}"
            ),
            Error::RetryBudgetExhausted { .. } => {
                f.write_str("Retry budget exhausted: failing fast instead of adding load")
            }
            Error::DeadlineExceeded { max_elapsed_ms, .. } => write!(
                f,
                "Gave up: retrying would exceed maxElapsedMs ({} ms)",
                Num(*max_elapsed_ms)
            ),
            Error::Aborted => f.write_str("The operation was aborted"),
            Error::InvalidKey { .. } => {
                f.write_str("idempotency key must be 1 to 255 printable ASCII characters")
            }
            Error::RandomUnavailable => {
                f.write_str("no crypto.getRandomValues: cannot make an unguessable key")
            }
            Error::InvalidOption { option, expected } => write!(f, "{option} must be {expected}"),
            Error::Core(e) => e.fmt(f),
        }
    }
}

/// `source()` follows the chain: an unknown outcome's cause, a budget's or a deadline's last
/// error; your own error's source for [`Error::Operation`] (whose message is already yours).
impl<E: std::error::Error + 'static> std::error::Error for Error<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Operation(e) => e.source(),
            Error::OutcomeUnknown { cause: Some(c), .. } => Some(&**c),
            Error::RetryBudgetExhausted { last_error, .. }
            | Error::DeadlineExceeded {
                last_error: Some(last_error),
                ..
            } => Some(last_error),
            Error::Core(e) => e.source(),
            _ => None,
        }
    }
}
