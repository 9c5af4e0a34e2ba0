//! `retry(&policy, |attempt| async { … }).await`: the core's backoff, budget and classification,
//! driven by a runtime that sleeps and aborts.
//!
//! Why the loop lives here and the rules do not: after each failure the loop asks
//! [`crate::core::retry::RetryPolicy::after_failure`] whether and how long to wait (attempt
//! limit, retryability, Retry-After as a floor capped by `max_delay_ms`, the deadline) and asks the
//! shared [`RetryBudget`] for a token; it only performs the sleep, the abort and the await.

use std::cell::RefCell;
use std::future::{Future, IntoFuture};
use std::rc::Rc;

use super::breaker::{current_call, AnsweredBefore};
use super::error::{Classify, Error};
use super::idempotency::{current_run, record_in, RunHistory};
use super::race::{race, Raced};
use super::runtime::{Runtime, Signal, Stopped};
use super::LocalBoxFuture;
use crate::core::backoff::Jitter;
use crate::core::budget::{RatioBudget, RetryBudget as CoreBudget, TokenBucket};
use crate::core::history::Answer;
use crate::core::retry::{Decision, Failure, RetryOptions, RetryPolicy as CorePolicy, Stop};

/// What each attempt is told.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Attempt {
    /// The attempt number, from 1.
    pub number: u32,
    /// Aborted when the caller's signal aborts or the deadline passes: hand it to the work you
    /// start (a `fetch`) so it stops too. `None` when the call has neither.
    pub signal: Option<Signal>,
}

/// The `on_retry` callback.
type OnRetry = Rc<dyn Fn(&RetryInfo)>;

impl Attempt {
    /// An attempt outside a retry loop (to call [`crate::web::send`] once, or to test a
    /// gateway function): `number` from 1, an optional signal.
    ///
    /// ```
    /// let a = steadfast::web::Attempt::new(1, None);
    /// assert_eq!(a.number, 1);
    /// ```
    pub fn new(number: u32, signal: Option<Signal>) -> Self {
        Self { number, signal }
    }
}

/// What `on_retry` is told before each sleep.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct RetryInfo {
    /// The attempt that failed.
    pub attempt: u32,
    /// The delay before the next attempt.
    pub delay_ms: f64,
}

/// A retry budget shared by every call that holds a clone: retries ≤ a share of requests, so a
/// retry storm cannot multiply load. A handle over [`crate::core::budget::RetryBudget`].
///
/// ```
/// use steadfast::web::RetryBudget;
/// let budget = RetryBudget::token_bucket(2.0, 0.0).unwrap();
/// assert_eq!(budget.available(), 2.0);
/// ```
#[derive(Clone)]
pub struct RetryBudget {
    core: Rc<RefCell<CoreBudget>>,
    clock: super::runtime::Clock,
    /// How the retry loop reaches the budget: through these, set by the constructors, so that an
    /// app that never makes a budget links none of the budgets' arithmetic into its retry loop.
    ops: &'static BudgetOps,
}

/// The budget calls the retry loop makes (see [`RetryBudget`]'s `ops`).
struct BudgetOps {
    record_request: fn(&RetryBudget),
    try_withdraw: fn(&RetryBudget) -> bool,
}

static BUDGET_OPS: BudgetOps = BudgetOps {
    record_request: |b| {
        let now = (b.clock)();
        b.core.borrow_mut().record_request(now);
    },
    try_withdraw: |b| {
        let now = (b.clock)();
        b.core.borrow_mut().try_withdraw(now)
    },
};

impl std::fmt::Debug for RetryBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetryBudget").finish_non_exhaustive()
    }
}

impl RetryBudget {
    /// A token bucket: `capacity` tokens, refilled at `refill_per_sec`; each retry takes one.
    /// Errors name the invalid option (`INVALID_OPTION`).
    pub fn token_bucket(capacity: f64, refill_per_sec: f64) -> Result<Self, crate::core::Error> {
        Ok(Self::wrap(CoreBudget::TokenBucket(TokenBucket::new(
            capacity,
            refill_per_sec,
        )?)))
    }

    /// Retries ≤ `ratio` × requests in the last `window_ms`, plus `min_retries_per_sec`. The
    /// JS `resilientFetch` default is `ratio(0.2, 10.0, 10_000.0)`.
    ///
    /// ```
    /// use steadfast::web::RetryBudget;
    /// assert!(RetryBudget::ratio(0.2, 10.0, 10_000.0).is_ok());
    /// assert_eq!(RetryBudget::ratio(-1.0, 10.0, 10_000.0).unwrap_err().code(), "INVALID_OPTION");
    /// ```
    pub fn ratio(
        ratio: f64,
        min_retries_per_sec: f64,
        window_ms: f64,
    ) -> Result<Self, crate::core::Error> {
        Ok(Self::wrap(CoreBudget::Ratio(RatioBudget::new(
            ratio,
            min_retries_per_sec,
            window_ms,
        )?)))
    }

    fn wrap(core: CoreBudget) -> Self {
        Self {
            core: Rc::new(RefCell::new(core)),
            clock: super::runtime::default_clock(),
            ops: &BUDGET_OPS,
        }
    }

    /// Use `clock` (ms) instead of the platform clock.
    pub fn clock(mut self, clock: super::runtime::Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Retries available now.
    pub fn available(&self) -> f64 {
        let now = (self.clock)();
        self.core.borrow_mut().available(now)
    }

    fn record_request(&self) {
        (self.ops.record_request)(self);
    }

    fn try_withdraw(&self) -> bool {
        (self.ops.try_withdraw)(self)
    }
}

/// A validated, immutable retry policy (cheap to clone; clones share the budget).
///
/// # Default
/// `max_attempts = 3`, `base_delay_ms = 100`, `max_delay_ms = 10_000`, `jitter = Full`, no
/// deadline, no budget (the JS `resilientFetch` defaults). Runtime: `WebRuntime` on wasm32; natively
/// a fresh [`crate::web::VirtualTime`] — pass your own with [`RetryPolicyBuilder::runtime`].
#[derive(Clone)]
pub struct RetryPolicy {
    core: CorePolicy,
    budget: Option<RetryBudget>,
    on_retry: Option<OnRetry>,
    runtime: Rc<dyn Runtime>,
}

impl std::fmt::Debug for RetryPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("core", &self.core)
            .field("budget", &self.budget.is_some())
            .finish_non_exhaustive()
    }
}

/// Builds a [`RetryPolicy`]; every number is validated once, in [`RetryPolicyBuilder::build`].
#[derive(Clone)]
#[must_use]
pub struct RetryPolicyBuilder {
    /// `None`: the core's default ([`RetryOptions::filled`], at `build`).
    max_attempts: Option<f64>,
    base_delay_ms: Option<f64>,
    max_delay_ms: Option<f64>,
    jitter: Jitter,
    max_elapsed_ms: Option<f64>,
    budget: Option<RetryBudget>,
    on_retry: Option<OnRetry>,
    runtime: Option<Rc<dyn Runtime>>,
}

impl RetryPolicy {
    /// Start from the defaults (see the type's docs).
    ///
    /// ```
    /// use steadfast::web::RetryPolicy;
    /// let p = RetryPolicy::builder().max_attempts(5).max_elapsed_ms(2_000.0).build().unwrap();
    /// assert_eq!(p.max_attempts(), 5);
    /// let bad = RetryPolicy::builder().base_delay_ms(-1.0).build().unwrap_err();
    /// assert_eq!(bad.to_string(), "baseDelayMs must be a finite number >= 0");
    /// // A base above the default cap raises the cap with it (only the base was set).
    /// assert!(RetryPolicy::builder().base_delay_ms(20_000.0).build().is_ok());
    /// ```
    pub fn builder() -> RetryPolicyBuilder {
        let d = RetryOptions::default();
        RetryPolicyBuilder {
            max_attempts: None,
            base_delay_ms: None,
            max_delay_ms: None,
            jitter: d.jitter,
            max_elapsed_ms: None,
            budget: None,
            on_retry: None,
            runtime: None,
        }
    }

    /// The attempt limit.
    pub fn max_attempts(&self) -> u32 {
        self.core.max_attempts()
    }

    /// The deadline over all attempts and sleeps, if any.
    pub fn max_elapsed_ms(&self) -> Option<f64> {
        self.core.max_elapsed_ms()
    }

    /// The runtime that sleeps for this policy.
    pub fn runtime(&self) -> &Rc<dyn Runtime> {
        &self.runtime
    }

    /// A copy with attempts capped at `max_attempts` (1 = no retry), keeping everything else.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn with_max_attempts(&self, max_attempts: u32) -> Self {
        let mut p = self.clone();
        let b = self.core.backoff();
        if let Ok(core) = CorePolicy::new(
            f64::from(max_attempts.min(self.core.max_attempts())),
            b.base_delay_ms(),
            b.max_delay_ms(),
            b.jitter(),
            self.core.max_elapsed_ms(),
        ) {
            p.core = core;
        }
        p
    }

    /// A copy with this deadline (replacing the policy's).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn with_deadline(&self, max_elapsed_ms: Option<f64>) -> Self {
        let mut p = self.clone();
        let b = self.core.backoff();
        if let Ok(core) = CorePolicy::new(
            f64::from(self.core.max_attempts()),
            b.base_delay_ms(),
            b.max_delay_ms(),
            b.jitter(),
            max_elapsed_ms,
        ) {
            p.core = core;
        }
        p
    }

    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn with_budget(&self, budget: Option<RetryBudget>) -> Self {
        Self {
            budget,
            ..self.clone()
        }
    }
}

impl RetryPolicyBuilder {
    /// Attempts in all, 1 to 1,000 (default 3).
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = Some(f64::from(n));
        self
    }

    /// The first retry's delay ceiling, finite ≥ 0 (default 100 ms, or `max_delay_ms` when only
    /// that is set and it is smaller).
    pub fn base_delay_ms(mut self, ms: f64) -> Self {
        self.base_delay_ms = Some(ms);
        self
    }

    /// The cap on every delay, ≥ `base_delay_ms`, `+Infinity` allowed (default 10,000 ms, or
    /// `base_delay_ms` when only that is set and it is larger).
    pub fn max_delay_ms(mut self, ms: f64) -> Self {
        self.max_delay_ms = Some(ms);
        self
    }

    /// The jitter variant (default `Full`).
    pub fn jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
    }

    /// A deadline over all attempts and sleeps, ≥ 0 (default none).
    pub fn max_elapsed_ms(mut self, ms: f64) -> Self {
        self.max_elapsed_ms = Some(ms);
        self
    }

    /// A shared retry budget (default none).
    pub fn budget(mut self, budget: RetryBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Called before each sleep (logging, metrics).
    pub fn on_retry(mut self, f: impl Fn(&RetryInfo) + 'static) -> Self {
        self.on_retry = Some(Rc::new(f));
        self
    }

    /// The runtime that sleeps (default: `WebRuntime` on wasm32, a fresh `VirtualTime`
    /// natively).
    pub fn runtime(mut self, runtime: Rc<dyn Runtime>) -> Self {
        self.runtime = Some(runtime);
        self
    }

    /// Validate. An invalid number is an `INVALID_OPTION` error naming the option.
    pub fn build(self) -> Result<RetryPolicy, crate::core::Error> {
        let (max_attempts, base_delay_ms, max_delay_ms) =
            RetryOptions::filled(self.max_attempts, self.base_delay_ms, self.max_delay_ms);
        let core = CorePolicy::new(
            max_attempts,
            base_delay_ms,
            max_delay_ms,
            self.jitter,
            self.max_elapsed_ms,
        )?;
        Ok(RetryPolicy {
            core,
            budget: self.budget,
            on_retry: self.on_retry,
            runtime: self.runtime.unwrap_or_else(default_runtime),
        })
    }
}

#[cfg(target_arch = "wasm32")]
fn default_runtime() -> Rc<dyn Runtime> {
    Rc::new(super::js::WebRuntime::new())
}

#[cfg(not(target_arch = "wasm32"))]
fn default_runtime() -> Rc<dyn Runtime> {
    super::VirtualTime::new(0).runtime()
}

/// A retry call, not yet started: add a signal, then `.await` it. `C` is how its errors are
/// classified: [`ByTrait`] for [`retry`], [`ByClosure`] for [`retry_with`].
#[must_use = "a retry does nothing until awaited"]
pub struct Retrying<'a, F, C = ByTrait> {
    policy: &'a RetryPolicy,
    f: F,
    signal: Option<Signal>,
    classify: C,
}

/// Classification by the error's [`Classify`] impl (what [`retry`] uses).
#[derive(Debug, Clone, Copy, Default)]
pub struct ByTrait;

/// Classification by a closure `Fn(&E) -> bool` (`true`: transient, retry it), what
/// [`retry_with`] uses.
#[derive(Debug, Clone, Copy)]
pub struct ByClosure<C>(C);

/// How the retry loop asks whether an error is transient, and its Retry-After.
pub trait Classifier<E> {
    /// Whether `error` is worth another attempt.
    fn is_transient(&self, error: &E) -> bool;
    /// The server's Retry-After in ms from `now_ms` (a closure says none).
    fn retry_after_ms(&self, error: &E, now_ms: f64) -> Option<f64>;
    /// What the failed attempt showed, for the history of a store run around the retry
    /// ([`crate::core::history`]). Default: a failure worth another attempt may have been
    /// processed; any other was refused.
    fn answer(&self, error: &E) -> Answer {
        if self.is_transient(error) {
            Answer::NoAnswer
        } else {
            Answer::Refused
        }
    }
    /// Whether `error` is a refusal that never ran ([`Classify::never_ran`]): a breaker around
    /// a retry that gives up on one after an answered attempt judges the call by that answer.
    /// Default: none is.
    fn never_ran(&self, error: &E) -> bool {
        let _ = error;
        false
    }
}

impl<E: Classify> Classifier<E> for ByTrait {
    fn is_transient(&self, error: &E) -> bool {
        error.is_transient()
    }
    fn retry_after_ms(&self, error: &E, now_ms: f64) -> Option<f64> {
        error.retry_after_ms(now_ms)
    }
    fn answer(&self, error: &E) -> Answer {
        error.answer()
    }
    fn never_ran(&self, error: &E) -> bool {
        error.never_ran()
    }
}

impl<E, C: Fn(&E) -> bool> Classifier<E> for ByClosure<C> {
    fn is_transient(&self, error: &E) -> bool {
        (self.0)(error)
    }
    fn retry_after_ms(&self, _: &E, _: f64) -> Option<f64> {
        None
    }
}

impl<F, C> Retrying<'_, F, C> {
    /// Stop when `signal` aborts (`Error::Aborted`); each attempt gets a signal that aborts too.
    pub fn signal(mut self, signal: &Signal) -> Self {
        self.signal = Some(signal.clone());
        self
    }
}

/// Call `f` until it succeeds, at most `policy.max_attempts()` times, sleeping a jittered delay
/// between attempts. A permanent error ([`Classify::is_transient`] false) or the last attempt's
/// error is returned as [`Error::Operation`]; the deadline gives [`Error::DeadlineExceeded`], the
/// budget [`Error::RetryBudgetExhausted`], the signal [`Error::Aborted`].
///
/// ```
/// use steadfast::web::{retry, Classify, RetryPolicy, VirtualTime};
/// struct Busy;
/// impl Classify for Busy { fn is_transient(&self) -> bool { true } }
///
/// let time = VirtualTime::new(7);
/// let policy = RetryPolicy::builder().max_attempts(3).runtime(time.runtime()).build().unwrap();
/// let out = time.run(async {
///     retry(&policy, |attempt| async move {
///         if attempt.number < 3 { Err(Busy) } else { Ok(attempt.number) }
///     })
///     .await
/// });
/// assert!(matches!(out, Ok(Ok(3))));
/// ```
pub fn retry<'a, F, Fut, T, E>(policy: &'a RetryPolicy, f: F) -> Retrying<'a, F>
where
    F: FnMut(Attempt) -> Fut + 'a,
    Fut: Future<Output = Result<T, E>> + 'a,
    E: Classify + 'a,
    T: 'a,
{
    Retrying {
        policy,
        f,
        signal: None,
        classify: ByTrait,
    }
}

/// [`retry`], with the errors classified by `is_transient` (`true`: retry it) instead of a
/// [`Classify`] impl: an error type you do not own (a `JsValue`, a `reqwest::Error`, an `io::Error`)
/// needs no newtype. A closure cannot report a Retry-After; implement [`Classify`] for that.
///
/// ```
/// use steadfast::web::{retry_with, Error, RetryPolicy, VirtualTime};
/// let time = VirtualTime::new(7);
/// let policy = RetryPolicy::builder().max_attempts(5).runtime(time.runtime()).build().unwrap();
/// let transient = |e: &std::io::Error| e.kind() == std::io::ErrorKind::TimedOut;
/// let out = time.run(async {
///     retry_with(&policy, transient, |attempt| async move {
///         match attempt.number {
///             1 => Err::<u32, _>(std::io::Error::from(std::io::ErrorKind::TimedOut)), // retried
///             _ => Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied)), // not
///         }
///     })
///     .await
/// });
/// let Ok(Err(Error::Operation(e))) = out else { panic!() };
/// assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
/// ```
pub fn retry_with<'a, F, Fut, T, E, C>(
    policy: &'a RetryPolicy,
    is_transient: C,
    f: F,
) -> Retrying<'a, F, ByClosure<C>>
where
    F: FnMut(Attempt) -> Fut + 'a,
    Fut: Future<Output = Result<T, E>> + 'a,
    C: Fn(&E) -> bool + 'a,
    E: 'a,
    T: 'a,
{
    Retrying {
        policy,
        f,
        signal: None,
        classify: ByClosure(is_transient),
    }
}

/// [`retry`], classified by `classify` (crate-internal: `fetch` reads an attempt by its dialect).
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn retry_classified<'a, F, Fut, T, E, C>(
    policy: &'a RetryPolicy,
    classify: C,
    f: F,
) -> Retrying<'a, F, C>
where
    F: FnMut(Attempt) -> Fut + 'a,
    Fut: Future<Output = Result<T, E>> + 'a,
    C: Classifier<E> + 'a,
{
    Retrying {
        policy,
        f,
        signal: None,
        classify,
    }
}

impl<'a, F, Fut, T, E, C> IntoFuture for Retrying<'a, F, C>
where
    F: FnMut(Attempt) -> Fut + 'a,
    Fut: Future<Output = Result<T, E>> + 'a,
    C: Classifier<E> + 'a,
    E: 'a,
    T: 'a,
{
    type Output = Result<T, Error<E>>;
    type IntoFuture = LocalBoxFuture<'a, Result<T, Error<E>>>;

    fn into_future(self) -> Self::IntoFuture {
        // The store run this call belongs to: the one starting it now (its attempts are reported
        // there wherever the call is polled), else the one that first polls it (see `run`).
        // Likewise the breaker call it is made in, told the answer it gave up after.
        let owner = current_run();
        let call = current_call();
        let made_in = (owner, call);
        Box::pin(run(
            self.policy,
            self.signal,
            self.classify,
            self.f,
            made_in,
        ))
    }
}

/// An attempt in flight, for the run the call belongs to: let go before it ended (the call
/// dropped — a race lost, a task cancelled), it may still have been processed, and the run is
/// told so, as the JS hedge reports the copies it lets go.
struct InFlight {
    owner: Option<RunHistory>,
    armed: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.armed {
            record_in(self.owner.as_ref(), Answer::NoAnswer);
        }
    }
}

async fn run<F, Fut, T, E, C>(
    policy: &RetryPolicy,
    signal: Option<Signal>,
    classify: C,
    mut f: F,
    (owner, call): (Option<RunHistory>, Option<AnsweredBefore>),
) -> Result<T, Error<E>>
where
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<T, E>>,
    C: Classifier<E>,
{
    let mut in_flight = InFlight {
        owner: owner.or_else(current_run),
        armed: false,
    };
    let call = call.or_else(current_call);
    // Whether the last attempt that ran (was no refusal that never ran) failed transiently.
    let mut answered: Option<bool> = None;
    // Giving up on `error`: when it never ran, the breaker call hears the answer before it.
    let giving_up = |error: &E, answered: Option<bool>| {
        if let (Some(call), Some(_)) = (&call, answered) {
            if classify.never_ran(error) {
                call.set(answered);
            }
        }
    };
    let rt = &policy.runtime;
    if let Some(b) = &policy.budget {
        b.record_request();
    }
    let deadline = policy.core.max_elapsed_ms().filter(|d| d.is_finite());
    let mut scope = rt.scope(signal.as_ref(), deadline);
    let start = rt.now_ms();
    let mut previous = policy.core.backoff().base_delay_ms();
    let mut last: Option<E> = None;
    let mut attempt = 1u32;
    let stopped = |s: Stopped, attempt: u32, last: Option<E>| match s {
        Stopped::Aborted => Error::Aborted,
        Stopped::Deadline => Error::DeadlineExceeded {
            max_elapsed_ms: policy.core.max_elapsed_ms().unwrap_or(f64::INFINITY),
            attempt,
            last_error: last,
        },
    };
    loop {
        // An aborted call (or a passed deadline) starts no further attempt.
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        if let std::task::Poll::Ready(s) = scope.poll_stopped(&mut cx) {
            return Err(stopped(s, attempt, last));
        }
        let ctx = Attempt {
            number: attempt,
            signal: scope.signal(),
        };
        in_flight.armed = true;
        let raced = race(scope.as_mut(), f(ctx)).await;
        in_flight.armed = false;
        let owner = in_flight.owner.as_ref();
        let error = match raced {
            Raced::Stopped(s) => {
                // Cut off mid-attempt (deadline or caller): that attempt may have been processed.
                record_in(owner, Answer::NoAnswer);
                return Err(stopped(s, attempt, last));
            }
            Raced::Done(Ok(value)) => return Ok(value),
            Raced::Done(Err(e)) => e,
        };
        record_in(owner, classify.answer(&error));
        let now = rt.now_ms();
        if !classify.never_ran(&error) {
            answered = Some(classify.is_transient(&error));
        }
        let failure = Failure {
            attempt,
            elapsed_ms: now - start,
            retryable: classify.is_transient(&error),
            retry_after_ms: classify.retry_after_ms(&error, now),
            previous_delay_ms: previous,
        };
        let delay_ms = match policy.core.after_failure(failure, rt.random_unit()) {
            Decision::Retry { delay_ms } => delay_ms,
            Decision::Stop(Stop::DeadlineExceeded) => {
                return Err(stopped(Stopped::Deadline, attempt, Some(error)))
            }
            Decision::Stop(_) => {
                giving_up(&error, answered);
                return Err(Error::Operation(error));
            }
        };
        if let Some(b) = &policy.budget {
            if !b.try_withdraw() {
                giving_up(&error, answered);
                return Err(Error::RetryBudgetExhausted {
                    attempt,
                    last_error: error,
                });
            }
        }
        if let Some(on_retry) = &policy.on_retry {
            on_retry(&RetryInfo { attempt, delay_ms });
        }
        last = Some(error);
        if let Raced::Stopped(s) = race(scope.as_mut(), rt.sleep(delay_ms)).await {
            return Err(stopped(s, attempt, last));
        }
        previous = delay_ms;
        attempt += 1;
    }
}
