//! An `IdempotencyStore` handle: `store.run(key, || async { … }).await` runs a charge once per key.
//!
//! Why `unknown`: a timeout is not a failure but an absence of information — the money may have
//! moved. A run that ends in a transient error parks its key as unknown, and every later run with
//! it is refused until [`IdempotencyStore::resolve`] says what happened. The lifecycle is the
//! core's ([`crate::core::idempotency`]); this handle keeps the results and awaits the runs.
//! Rust can also *drop* a run mid-flight (a cancelled task): that too parks the key as unknown,
//! never leaves it in flight forever.

use std::cell::{Cell, RefCell};
use std::fmt::Debug;
use std::future::Future;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::context::{self, Within};
use super::error::{Classify, Error};
use super::runtime::{default_clock, store_seed, Clock};

use crate::core::history::{Answer, History};
use crate::core::idempotency::{
    validate_key, Begin, Completion, Resolution as CoreResolution, Status, StoreConfig,
};
use crate::core::keyed::KeyedRecords;

/// A store run's history, shared by the run and the retries it starts.
pub(crate) type RunHistory = Rc<Cell<History>>;

thread_local! {
    /// The history of the store run being started or polled now (see [`super::context`]).
    static CURRENT_RUN: RefCell<Option<RunHistory>> = const { RefCell::new(None) };
}

/// The store run being started or polled now, if any: a retry takes it as the run it belongs
/// to when it is made (or, made outside every run, when it is first polled) and reports every
/// attempt there, wherever it is polled afterwards (a task of its own, another run, a race that
/// lets it go).
pub(crate) fn current_run() -> Option<RunHistory> {
    context::current(&CURRENT_RUN)
}

/// Fold `answer` (one attempt's) into `run`'s history, if it belongs to one: a retry calls it
/// for every attempt it makes, so `store.run(key, || retry(...))` is judged by all of them (the
/// JS package's rule: a later refusal never frees a key an earlier attempt may have debited).
pub(crate) fn record_in(run: Option<&RunHistory>, answer: Answer) {
    if let Some(h) = run {
        h.set(h.get().record(answer));
    }
}

/// A record as the JS store's `peek()` returns it: `{ status: 'in-flight', startedAt }`,
/// `{ status: 'done', result }` or `{ status: 'unknown', error, startedAt, lastAttemptAt?,
/// attempts?, settleAfterMs? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Record<T> {
    /// A run is in flight.
    InFlight {
        /// When it began (store clock, ms).
        #[serde(rename = "startedAt")]
        started_at_ms: f64,
    },
    /// It succeeded; `result` is replayed.
    Done {
        /// The result.
        result: T,
    },
    /// It ended in a transient failure: the outcome is unknown.
    Unknown {
        /// The error, as text: its code for steadfast's own (`DEADLINE_EXCEEDED`,
        /// `RETRY_BUDGET_EXHAUSTED` …), else what the operation's error showed (`operation failed:
        /// HTTP 503`, `operation failed: no answer`); in JS, the error's own text.
        error: String,
        /// When the run began (ms).
        #[serde(rename = "startedAt")]
        started_at_ms: f64,
        /// When its last attempt started, or when the failure was seen (ms).
        #[serde(
            rename = "lastAttemptAt",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        last_attempt_at_ms: Option<f64>,
        /// Attempts sent, when the caller reported them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attempts: Option<u32>,
        /// The settle window reconciliation should wait before believing "not found" (ms).
        #[serde(
            rename = "settleAfterMs",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        settle_after_ms: Option<f64>,
    },
}

/// The text an unknown record keeps of the error that parked it ([`Record::Unknown`]'s `error`).
///
/// Why not the error's `Debug`: formatting it linked `Debug` of every variant, of the operation's
/// error and of everything inside it (string escaping, the debug builders, a `JsValue`'s) into
/// every app that runs a store, 6.5 KB gzipped of the example page's module. The code and the
/// answer say what reconciliation needs: which refusal, or what the gateway was heard to say.
fn error_text<E: Classify>(e: &Error<E>) -> String {
    if let Some(code) = e.code() {
        return code.into();
    }
    let mut text = String::from("operation failed: ");
    match e.answer() {
        Answer::Status(status) => {
            text.push_str("HTTP ");
            // The shell's number writer (JS `String(n)` on wasm32): no `Display`, no second copy.
            super::num::canonical_number(&mut text, f64::from(status));
        }
        Answer::NotSent => text.push_str("not sent"),
        Answer::NoAnswer => text.push_str("no answer"),
        Answer::Refused => text.push_str("refused"),
        Answer::InProgress => text.push_str("in progress"),
    }
    text
}

/// What reconciliation found out about an unknown key.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution<T> {
    /// The charge happened: replay this result from now on.
    Done(T),
    /// The charge did not happen: the key is free again.
    Failed,
}

enum Stored<T> {
    Result(T),
    /// An unknown record: its key (for the reconciliation worklist: the core keeps only a hash of
    /// it), the error text and when the failure was seen.
    Error {
        key: String,
        text: String,
        at_ms: f64,
    },
}

/// The store's whole state: the core's keyed records (key index and record state machine, the
/// same [`KeyedRecords`] the npm package's in-process store runs on) and, by slot, what only this
/// shell can hold: the results to replay and the unknown records' keys and errors.
struct Inner<T> {
    records: KeyedRecords,
    /// slot -> the result (done) or the key and error (unknown).
    slots: Vec<Option<Stored<T>>>,
}

impl<T> Inner<T> {
    fn put(&mut self, slot: u32, value: Stored<T>) {
        let i = slot as usize;
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        if let Some(cell) = self.slots.get_mut(i) {
            *cell = Some(value);
        }
    }

    /// The core freed `slot` (its key already left the index): drop what was stored under it.
    fn forget(&mut self, slot: u32) {
        if let Some(cell) = self.slots.get_mut(slot as usize) {
            *cell = None;
        }
    }

    fn stored(&self, slot: u32) -> Option<&Stored<T>> {
        self.slots.get(slot as usize).and_then(Option::as_ref)
    }

    fn drain_expired(&mut self) {
        if self.records.has_expired() {
            for slot in self.records.take_expired() {
                self.forget(slot);
            }
        }
    }

    /// Returns whether the key is free now.
    fn complete(&mut self, slot: u32, completion: Completion, stored: Stored<T>, now: f64) -> bool {
        self.put(slot, stored);
        let freed = self.records.complete(slot, completion, now);
        if freed {
            self.forget(slot);
        }
        freed
    }
}

/// One logical operation per key, however many attempts and clicks happen. Clones share one
/// store. `T` is the result replayed to later runs with the same key.
///
/// # Default
/// Done records are kept 24 hours ([`crate::core::idempotency::DEFAULT_TTL_MS`]); unknown and
/// in-flight records never expire on their own.
///
/// ```
/// use std::convert::Infallible;
/// use steadfast::web::{Error, IdempotencyStore, VirtualTime};
/// let time = VirtualTime::new(1);
/// let store = IdempotencyStore::new().clock(time.clock());
/// let first: Result<u32, Error<Infallible>> = time.run(store.run("k", || async { Ok(42) })).unwrap();
/// let again: Result<u32, Error<Infallible>> = time.run(store.run("k", || async { Ok(7) })).unwrap();
/// assert_eq!((first, again), (Ok(42), Ok(42))); // replayed, not run twice
/// ```
pub struct IdempotencyStore<T> {
    inner: Rc<RefCell<Inner<T>>>,
    clock: Clock,
}

impl<T> Clone for IdempotencyStore<T> {
    fn clone(&self) -> Self {
        Self {
            inner: Rc::clone(&self.inner),
            clock: Rc::clone(&self.clock),
        }
    }
}

impl<T> Debug for IdempotencyStore<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdempotencyStore")
            .field("len", &self.inner.borrow().records.records().len())
            .finish_non_exhaustive()
    }
}

impl<T: Clone> Default for IdempotencyStore<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Completes a run as unknown if its future is dropped before it finished.
struct InFlight<'a, T> {
    inner: &'a RefCell<Inner<T>>,
    clock: &'a Clock,
    key: &'a str,
    slot: u32,
    armed: bool,
}

impl<T> Drop for InFlight<'_, T> {
    fn drop(&mut self) {
        if self.armed {
            let now = (self.clock)();
            if let Ok(mut inner) = self.inner.try_borrow_mut() {
                let text = Stored::Error {
                    key: self.key.into(),
                    text: "dropped before it completed".into(),
                    at_ms: now,
                };
                inner.complete(self.slot, Completion::Transient, text, now);
            }
        }
    }
}

impl<T: Clone> IdempotencyStore<T> {
    /// An empty store with the default limits (24-hour TTL, the core's default `max_records`)
    /// and the platform clock.
    pub fn new() -> Self {
        Self::build(StoreConfig::default())
    }

    /// An empty store whose done records expire `ttl_ms` after completion (finite > 0).
    ///
    /// ```
    /// use steadfast::web::IdempotencyStore;
    /// assert!(IdempotencyStore::<u32>::with_ttl_ms(60_000.0).is_ok());
    /// assert_eq!(IdempotencyStore::<u32>::with_ttl_ms(0.0).unwrap_err().code(), "INVALID_OPTION");
    /// ```
    pub fn with_ttl_ms(ttl_ms: f64) -> Result<Self, crate::core::Error> {
        Self::with_limits(Some(ttl_ms), None)
    }

    /// An empty store with these limits (`None` = the default): done records replay for
    /// `ttl_ms` (finite > 0); at most `max_records` live records, a new key beyond that is
    /// [`Error::StoreFull`] (an integer from 1 to 2^30).
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use steadfast::web::{Error, IdempotencyStore, VirtualTime};
    /// let time = VirtualTime::new(1);
    /// let store = IdempotencyStore::with_limits(None, Some(1.0)).unwrap().clock(time.clock());
    /// let run = |key: &str| time.run(store.run(key, || async { Ok::<_, Error<Infallible>>(1) })).unwrap();
    /// assert!(run("a").is_ok());
    /// assert_eq!(run("b").unwrap_err().code(), Some("STORE_FULL"));
    /// ```
    pub fn with_limits(
        ttl_ms: Option<f64>,
        max_records: Option<f64>,
    ) -> Result<Self, crate::core::Error> {
        Ok(Self::build(StoreConfig::new(ttl_ms, max_records)?))
    }

    fn build(config: StoreConfig) -> Self {
        Self {
            inner: Rc::new(RefCell::new(Inner {
                records: KeyedRecords::new(config, store_seed()),
                slots: Vec::new(),
            })),
            clock: default_clock(),
        }
    }

    /// Use `clock` (ms) instead of the platform clock.
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Run `f` once for `key`: a done key replays its result; an in-flight key is
    /// [`Error::DuplicateInFlight`]; an unknown key is [`Error::OutcomeUnknown`]. A failed run is
    /// judged by its whole history: every attempt of every [`crate::web::retry`] started in `f`
    /// (under a breaker, inside another retry, a [`crate::web::fetch`]'s), wherever it is polled
    /// afterwards, an attempt let go mid-flight as one that may have been processed, and the
    /// error it ends with ([`Classify::answer`]). If any of them may have been processed, the key
    /// is parked as unknown and the run fails with [`Error::OutcomeUnknown`] (its error as
    /// `cause`); otherwise the key is freed and the error returned as it is. A retry first made
    /// in a task spawned from `f` is not this run's: make it in `f`, then spawn it.
    pub async fn run<E, Fut>(&self, key: &str, f: impl FnOnce() -> Fut) -> Result<T, Error<E>>
    where
        Fut: Future<Output = Result<T, Error<E>>>,
        E: Classify + Debug,
    {
        self.run_with_fingerprint(key, None, f).await
    }

    /// [`IdempotencyStore::run`], with the request's fingerprint bound to the key: a later run
    /// with the same key and another fingerprint is [`Error::KeyReused`].
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use steadfast::web::{Error, IdempotencyStore, VirtualTime};
    /// let time = VirtualTime::new(1);
    /// let store = IdempotencyStore::new().clock(time.clock());
    /// let pay = |amount: &'static str| {
    ///     time.run(store.run_with_fingerprint("order-1", Some(amount), || async {
    ///         Ok::<_, Error<Infallible>>(format!("charged {amount}"))
    ///     }))
    ///     .unwrap()
    /// };
    /// assert_eq!(pay("4999 usd").unwrap(), "charged 4999 usd");
    /// assert_eq!(pay("4999 usd").unwrap(), "charged 4999 usd"); // replayed
    /// assert_eq!(pay("100 usd").unwrap_err().code(), Some("KEY_REUSED"));
    /// ```
    pub async fn run_with_fingerprint<E, Fut>(
        &self,
        key: &str,
        fingerprint: Option<&str>,
        f: impl FnOnce() -> Fut,
    ) -> Result<T, Error<E>>
    where
        Fut: Future<Output = Result<T, Error<E>>>,
        E: Classify + Debug,
    {
        if validate_key(key).is_err() {
            return Err(Error::InvalidKey { key: key.into() });
        }
        let now = (self.clock)();
        let begin = {
            let mut inner = self.inner.borrow_mut();
            let fingerprint = fingerprint.map(|f| inner.records.fingerprint_of(f.as_bytes()));
            let (begin, _) = inner.records.begin(key.as_bytes(), fingerprint, now);
            // Expiry may free a slot this very begin hands out again: drain it first.
            inner.drain_expired();
            begin
        };
        let slot = match begin {
            Begin::Run { slot } => slot,
            Begin::Full => {
                let max_records = self.inner.borrow().records.records().config().max_records;
                return Err(Error::StoreFull {
                    key: key.into(),
                    max_records,
                });
            }
            Begin::Replay { slot } => {
                let inner = self.inner.borrow();
                return match inner.stored(slot) {
                    Some(Stored::Result(v)) => Ok(v.clone()),
                    // A done record without a result cannot happen; refusing is the safe answer.
                    _ => Err(Error::OutcomeUnknown {
                        key: key.into(),
                        started_at_ms: now,
                        cause: None,
                    }),
                };
            }
            Begin::InFlight { started_at_ms } => {
                return Err(Error::DuplicateInFlight {
                    key: key.into(),
                    started_at_ms,
                })
            }
            Begin::Unknown { started_at_ms, .. } => {
                return Err(Error::OutcomeUnknown {
                    key: key.into(),
                    started_at_ms,
                    cause: None,
                })
            }
            Begin::Mismatch => return Err(Error::KeyReused { key: key.into() }),
        };
        let mut guard = InFlight {
            inner: &self.inner,
            clock: &self.clock,
            key,
            slot,
            armed: true,
        };
        let started_at_ms = now;
        // The run's history: every attempt of every retry `f` starts — directly, under a breaker,
        // inside another retry or a gateway — is folded in, wherever it is polled (current_run).
        // `f` is called, and its future polled, as this run.
        let history: RunHistory = Rc::new(Cell::new(History::default()));
        let result = Within::call(&CURRENT_RUN, &history, f).await;
        guard.armed = false;
        let now = (self.clock)();
        let mut inner = self.inner.borrow_mut();
        let e = match result {
            Ok(v) => {
                inner.complete(slot, Completion::Success, Stored::Result(v.clone()), now);
                return Ok(v);
            }
            Err(e) => e,
        };
        // The whole history decides (the last answer folded in too): the core's verdict, then
        // its sticky rule for a record that may have been processed before.
        let verdict = history.get().record(e.answer()).verdict();
        let text = Stored::Error {
            key: key.into(),
            text: error_text(&e),
            at_ms: now,
        };
        if inner.complete(slot, Completion::of(verdict), text, now) {
            return Err(e);
        }
        Err(Error::OutcomeUnknown {
            key: key.into(),
            started_at_ms,
            cause: Some(Box::new(e)),
        })
    }

    /// The record for `key`, in the JS `peek()` shape; `None` for a key the store does not hold.
    pub fn peek(&self, key: &str) -> Option<Record<T>> {
        let now = (self.clock)();
        let inner = self.inner.borrow();
        let p = inner.records.peek(key.as_bytes(), now)?;
        let stored = inner.stored(p.slot);
        Some(match (p.status, stored) {
            (Status::InFlight, _) => Record::InFlight {
                started_at_ms: p.started_at_ms.unwrap_or(f64::NAN),
            },
            (Status::Done, Some(Stored::Result(v))) => Record::Done { result: v.clone() },
            (Status::Unknown, Some(Stored::Error { text, at_ms, .. })) => Record::Unknown {
                error: text.clone(),
                started_at_ms: p.started_at_ms.unwrap_or(f64::NAN),
                last_attempt_at_ms: Some(*at_ms),
                attempts: None,
                settle_after_ms: None,
            },
            (_, _) => Record::Unknown {
                error: String::new(),
                started_at_ms: p.started_at_ms.unwrap_or(f64::NAN),
                last_attempt_at_ms: None,
                attempts: None,
                settle_after_ms: None,
            },
        })
    }

    /// Reconciliation: settle an unknown key. Errors (same codes as JS): `KEY_NOT_FOUND`,
    /// `KEY_WRONG_STATE` (the key is not unknown), `INVALID_KEY`.
    ///
    /// ```
    /// use steadfast::web::{Classify, Error, IdempotencyStore, Record, Resolution, VirtualTime};
    /// #[derive(Debug)]
    /// struct TimedOut;
    /// impl Classify for TimedOut {
    ///     fn is_transient(&self) -> bool { true } // the money may have moved
    /// }
    /// let time = VirtualTime::new(1);
    /// let store = IdempotencyStore::new().clock(time.clock());
    /// let r = time.run(store.run("order-7", || async { Err::<String, _>(Error::Operation(TimedOut)) }));
    /// assert!(r.unwrap().is_err());
    /// assert!(matches!(store.peek("order-7"), Some(Record::Unknown { .. })));
    /// assert_eq!(store.unknown_keys(), ["order-7"]);
    /// // The provider's settlement feed says it went through:
    /// store.resolve("order-7", Resolution::Done("ch_7".to_string())).unwrap();
    /// assert_eq!(store.peek("order-7"), Some(Record::Done { result: "ch_7".to_string() }));
    /// assert_eq!(store.resolve("nope", Resolution::Failed).unwrap_err().code(), "KEY_NOT_FOUND");
    /// ```
    pub fn resolve(&self, key: &str, resolution: Resolution<T>) -> Result<(), crate::core::Error> {
        let now = (self.clock)();
        let mut inner = self.inner.borrow_mut();
        let (core, result) = match resolution {
            Resolution::Done(v) => (CoreResolution::Done, Some(v)),
            Resolution::Failed => (CoreResolution::Failed, None),
        };
        validate_key(key)?;
        let slot = inner.records.resolve(key.as_bytes(), core, None, now)?;
        match result {
            Some(v) => inner.put(slot, Stored::Result(v)),
            None => inner.forget(slot),
        }
        Ok(())
    }

    /// Keys whose outcome is unknown, oldest first: the reconciliation worklist.
    pub fn unknown_keys(&self) -> Vec<String> {
        let inner = self.inner.borrow();
        inner
            .records
            .records()
            .unknown_slots()
            .into_iter()
            .filter_map(|(slot, _)| match inner.stored(slot)? {
                Stored::Error { key, .. } => Some(key.clone()),
                Stored::Result(_) => None,
            })
            .collect()
    }

    /// Records held (in flight, unknown, done within the TTL).
    pub fn len(&self) -> usize {
        let now = (self.clock)();
        let mut inner = self.inner.borrow_mut();
        inner.records.sweep(now);
        inner.drain_expired();
        inner.records.records().len()
    }

    /// Whether no record is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::VirtualTime;

    #[derive(Debug)]
    struct Gw(Answer);
    impl Classify for Gw {
        fn is_transient(&self) -> bool {
            true
        }
        fn answer(&self) -> Answer {
            self.0
        }
    }

    /// An unknown record's text: the code of steadfast's own error, else what the operation's
    /// error showed.
    #[test]
    fn an_unknown_record_keeps_the_code_or_the_answer() {
        let time = VirtualTime::new(1);
        let store = IdempotencyStore::<u32>::new().clock(time.clock());
        let deadline = Error::DeadlineExceeded {
            max_elapsed_ms: 1.0,
            attempt: 1,
            last_error: None,
        };
        let cases: [(&str, Error<Gw>, &str); 5] = [
            (
                "a",
                Error::Operation(Gw(Answer::Status(503))),
                "operation failed: HTTP 503",
            ),
            (
                "b",
                Error::Operation(Gw(Answer::InProgress)),
                "operation failed: in progress",
            ),
            ("c", deadline, "DEADLINE_EXCEEDED"),
            (
                "d",
                Error::Operation(Gw(Answer::NoAnswer)),
                "operation failed: no answer",
            ),
            ("e", Error::Aborted, "ABORTED"),
        ];
        for (key, error, want) in cases {
            let r = time.run(store.run(key, || async move { Err::<u32, _>(error) }));
            assert!(r.unwrap().is_err());
            match store.peek(key) {
                Some(Record::Unknown { error, .. }) => assert_eq!(error, want, "{key}"),
                other => panic!("{key}: {other:?}"),
            }
        }
        for (status, want) in [
            (0, "HTTP 0"),
            (7, "HTTP 7"),
            (10_000, "HTTP 10000"),
            (65_535, "HTTP 65535"),
        ] {
            let text = error_text(&Error::Operation(Gw(Answer::Status(status))));
            assert_eq!(text, format!("operation failed: {want}"));
        }
    }
}
