//! A `CircuitBreaker` handle: `breaker.execute(|| async { … }).await`, with an optional fallback.
//!
//! Why a handle over the core state machine: the core decides (admit, reject, trip, close) and
//! never calls; this handle asks for a permit, awaits your call, and reports its outcome with the
//! permit, so a slow call from before a trip cannot close or re-trip the circuit it no longer
//! belongs to. Clones share one breaker.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;

use super::context::{self, Within};
use super::error::{Classify, Error};
use super::runtime::{default_clock, Clock};
use super::shapes::BreakerSnapshot;
use crate::core::breaker::{Acquire, Breaker, BreakerConfig, RateOptions, State};

/// What a retry inside a breaker call tells it: when it gave up on a refusal that never ran
/// after an attempt that was answered, whether that answer was transient (see
/// [`Classify::never_ran`]).
pub(crate) type AnsweredBefore = Rc<Cell<Option<bool>>>;

thread_local! {
    /// The breaker call being started or polled now (see [`super::context`]).
    static CURRENT_CALL: RefCell<Option<AnsweredBefore>> = const { RefCell::new(None) };
}

/// The breaker call being started or polled now, if any: a retry made in it reports there.
pub(crate) fn current_call() -> Option<AnsweredBefore> {
    context::current(&CURRENT_CALL)
}

/// Which errors count against the dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Counts {
    /// Every error counts (the JS `CircuitBreaker` default).
    #[default]
    Every,
    /// Only transient errors ([`Classify::is_transient`]): a declined card says nothing about the
    /// gateway's health, and the caller's own abort counts as nothing at all (a half-open probe
    /// the caller aborted gives its slot back). What `fetch` uses per origin.
    Transient,
}

/// A circuit breaker shared by every clone. See [`crate::core::breaker`] for the rules.
///
/// ```
/// use steadfast::web::{BreakerConfig, CircuitBreaker, Classify, Error, State, VirtualTime};
/// #[derive(Debug)]
/// struct Down;
/// impl Classify for Down {
///     fn is_transient(&self) -> bool { true }
/// }
/// let time = VirtualTime::new(1);
/// let breaker = CircuitBreaker::new(BreakerConfig::consecutive(2.0, 1_000.0, None).unwrap())
///     .clock(time.clock());
/// for _ in 0..2 {
///     let r = time.run(breaker.execute(|| async { Err::<(), _>(Error::Operation(Down)) }));
///     assert!(r.unwrap().is_err());
/// }
/// assert_eq!(breaker.state(), State::Open);
/// let r = time.run(breaker.execute(|| async { Ok::<_, Error<Down>>(()) })).unwrap();
/// assert_eq!(r.unwrap_err().code(), Some("CIRCUIT_OPEN"));
/// ```
#[derive(Clone)]
pub struct CircuitBreaker {
    core: Rc<RefCell<Breaker>>,
    clock: Clock,
    counts: Counts,
    on_state_change: Option<Rc<dyn Fn(State)>>,
}

impl std::fmt::Debug for CircuitBreaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CircuitBreaker")
            .field("state", &self.state())
            .field("counts", &self.counts)
            .finish_non_exhaustive()
    }
}

/// Builds a [`CircuitBreaker`] by named options, each with a default (instead of
/// [`BreakerConfig::rate`]'s five positional numbers). Start from [`CircuitBreaker::builder`].
///
/// # Default
/// A rate breaker with the per-origin defaults of `fetch` and the JS `resilientFetch`
/// ([`RateOptions`]): `window_size 20`, `minimum_calls 10`, `failure_rate_threshold 0.5`,
/// `open_duration_ms 30_000`; `probes_to_close 1`; [`Counts::Every`]; the platform clock.
/// [`CircuitBreakerBuilder::consecutive`] switches to a consecutive-failures breaker (its
/// `failure_threshold`, same open duration and probes).
///
/// ```
/// use steadfast::web::{CircuitBreaker, Counts, State};
/// let gateway = CircuitBreaker::builder()
///     .window_size(50)
///     .failure_rate_threshold(0.25)
///     .counts(Counts::Transient) // a declined card is not the gateway failing
///     .build()
///     .unwrap();
/// assert_eq!(gateway.state(), State::Closed);
/// let strict = CircuitBreaker::builder().consecutive(3).open_duration_ms(5_000.0).build().unwrap();
/// assert_eq!(strict.snapshot().kind, "consecutive");
/// let bad = CircuitBreaker::builder().failure_rate_threshold(1.5).build().unwrap_err();
/// assert_eq!(bad.to_string(), "failureRateThreshold must be a number from 0 to 1");
/// ```
#[derive(Clone)]
#[must_use]
pub struct CircuitBreakerBuilder {
    window_size: u32,
    failure_rate_threshold: f64,
    minimum_calls: u32,
    failure_threshold: Option<u32>,
    open_duration_ms: f64,
    probes_to_close: u32,
    counts: Counts,
    clock: Option<Clock>,
    on_state_change: Option<Rc<dyn Fn(State)>>,
}

impl std::fmt::Debug for CircuitBreakerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CircuitBreakerBuilder")
            .field("config", &self.config())
            .field("counts", &self.counts)
            .finish_non_exhaustive()
    }
}

impl CircuitBreakerBuilder {
    /// Outcomes in the rolling window (rate breaker; an integer from 1 to 100,000).
    pub fn window_size(mut self, n: u32) -> Self {
        self.window_size = n;
        self
    }

    /// Trip at this failure rate over the window (rate breaker; from 0 to 1).
    pub fn failure_rate_threshold(mut self, rate: f64) -> Self {
        self.failure_rate_threshold = rate;
        self
    }

    /// Outcomes needed before the rate is judged (rate breaker; at most `window_size`).
    pub fn minimum_calls(mut self, n: u32) -> Self {
        self.minimum_calls = n;
        self
    }

    /// A consecutive-failures breaker instead: trip after `failure_threshold` failures in a row.
    pub fn consecutive(mut self, failure_threshold: u32) -> Self {
        self.failure_threshold = Some(failure_threshold);
        self
    }

    /// How long the circuit stays open before a probe (ms, finite, ≥ 0; 0 admits a probe at
    /// once). Also the probe's lease: a probe that has not reported within twice this is
    /// presumed lost, and the next caller becomes the probe.
    pub fn open_duration_ms(mut self, ms: f64) -> Self {
        self.open_duration_ms = ms;
        self
    }

    /// Probe successes that close a half-open circuit (an integer ≥ 1).
    pub fn probes_to_close(mut self, n: u32) -> Self {
        self.probes_to_close = n;
        self
    }

    /// Which errors count as failures ([`CircuitBreaker::counts`]).
    pub fn counts(mut self, counts: Counts) -> Self {
        self.counts = counts;
        self
    }

    /// Use `clock` (ms) instead of the platform clock.
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Called after every state change ([`CircuitBreaker::on_state_change`]).
    pub fn on_state_change(mut self, f: impl Fn(State) + 'static) -> Self {
        self.on_state_change = Some(Rc::new(f));
        self
    }

    /// The validated config alone (the core's checks, the JS option names in the error).
    pub fn config(&self) -> Result<BreakerConfig, crate::core::Error> {
        let probes = Some(f64::from(self.probes_to_close));
        match self.failure_threshold {
            Some(n) => BreakerConfig::consecutive(f64::from(n), self.open_duration_ms, probes),
            None => BreakerConfig::rate(
                f64::from(self.window_size),
                self.failure_rate_threshold,
                Some(f64::from(self.minimum_calls)),
                self.open_duration_ms,
                probes,
            ),
        }
    }

    /// The breaker, closed; an invalid option is `INVALID_OPTION` naming it.
    pub fn build(self) -> Result<CircuitBreaker, crate::core::Error> {
        let mut b = CircuitBreaker::new(self.config()?).counts(self.counts);
        if let Some(clock) = self.clock {
            b = b.clock(clock);
        }
        b.on_state_change = self.on_state_change;
        Ok(b)
    }
}

impl CircuitBreaker {
    /// A builder with every option defaulted (see [`CircuitBreakerBuilder`]'s `# Default`).
    pub fn builder() -> CircuitBreakerBuilder {
        let d = RateOptions::default();
        CircuitBreakerBuilder {
            window_size: d.window_size,
            failure_rate_threshold: d.failure_rate_threshold,
            minimum_calls: d.minimum_calls,
            failure_threshold: None,
            open_duration_ms: d.open_duration_ms,
            probes_to_close: 1,
            counts: Counts::Every,
            clock: None,
            on_state_change: None,
        }
    }

    /// A closed breaker with a validated config ([`BreakerConfig::rate`] or
    /// [`BreakerConfig::consecutive`]) and the platform clock.
    pub fn new(config: BreakerConfig) -> Self {
        Self {
            core: Rc::new(RefCell::new(Breaker::new(config))),
            clock: default_clock(),
            counts: Counts::Every,
            on_state_change: None,
        }
    }

    /// Use `clock` (ms) instead of the platform clock.
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Which errors count as failures (default [`Counts::Every`]).
    pub fn counts(mut self, counts: Counts) -> Self {
        self.counts = counts;
        self
    }

    /// Called after every state change (`Open`, `HalfOpen`, `Closed`, `Isolated`).
    pub fn on_state_change(mut self, f: impl Fn(State) + 'static) -> Self {
        self.on_state_change = Some(Rc::new(f));
        self
    }

    /// The state now: `Closed`, `Open`, `HalfOpen` (an open circuit whose cooldown ended reads
    /// `HalfOpen`) or `Isolated`.
    pub fn state(&self) -> State {
        let now = (self.clock)();
        self.core.borrow().state(now)
    }

    fn emit(&self, t: Option<State>) {
        if let (Some(s), Some(f)) = (t, &self.on_state_change) {
            f(s);
        }
    }

    /// Run `f` if the breaker admits it; otherwise fail fast with [`Error::CircuitOpen`]
    /// without calling `f`. `f` returns `Error<E>`, not `E` as [`crate::web::retry`]'s attempts
    /// do, so that a retry nests inside (`breaker.execute(|| retry(&policy, f).into_future())`);
    /// `?` on your own `E` inside it gives [`Error::Operation`].
    pub async fn execute<T, E, Fut>(&self, f: impl FnOnce() -> Fut) -> Result<T, Error<E>>
    where
        Fut: Future<Output = Result<T, Error<E>>>,
        E: Classify,
    {
        let now = (self.clock)();
        let acquired = self.core.borrow_mut().try_acquire(now);
        match acquired {
            Acquire::Rejected { retry_in_ms } => Err(Error::CircuitOpen {
                retry_after_ms: retry_in_ms,
            }),
            Acquire::Granted { permit, transition } => {
                self.emit(transition);
                let before: AnsweredBefore = Rc::new(Cell::new(None));
                let result = Within::call(&CURRENT_CALL, &before, f).await;
                self.finish(permit, now, result, before.get())
            }
        }
    }

    /// Like [`CircuitBreaker::execute`], but a refused call runs `fallback` instead (a
    /// secondary acquirer, with the same idempotency key).
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use steadfast::web::{BreakerConfig, CircuitBreaker, Error, VirtualTime};
    /// let time = VirtualTime::new(1);
    /// let breaker = CircuitBreaker::new(BreakerConfig::consecutive(1.0, 60_000.0, None).unwrap())
    ///     .clock(time.clock());
    /// breaker.isolate(); // e.g. the primary acquirer is known to be down
    /// let r = time.run(breaker.execute_or(
    ///     || async { Ok::<_, Error<Infallible>>("primary") },
    ///     || async { Ok("secondary") },
    /// ));
    /// assert_eq!(r.unwrap().unwrap(), "secondary");
    /// ```
    pub async fn execute_or<T, E, Fut, G>(
        &self,
        f: impl FnOnce() -> Fut,
        fallback: impl FnOnce() -> G,
    ) -> Result<T, Error<E>>
    where
        Fut: Future<Output = Result<T, Error<E>>>,
        G: Future<Output = Result<T, Error<E>>>,
        E: Classify,
    {
        let now = (self.clock)();
        let acquired = self.core.borrow_mut().try_acquire(now);
        match acquired {
            Acquire::Rejected { .. } => fallback().await,
            Acquire::Granted { permit, transition } => {
                self.emit(transition);
                let before: AnsweredBefore = Rc::new(Cell::new(None));
                let result = Within::call(&CURRENT_CALL, &before, f).await;
                self.finish(permit, now, result, before.get())
            }
        }
    }

    fn finish<T, E: Classify>(
        &self,
        permit: crate::core::breaker::Permit,
        started: f64,
        result: Result<T, Error<E>>,
        answered_before: Option<bool>,
    ) -> Result<T, Error<E>> {
        let failed = match &result {
            Ok(_) => Some(false),
            // A refusal that never ran (an inner breaker's open circuit, a reused key) says
            // nothing about this dependency — unless a retry gave up on it after an attempt that
            // was answered: then the call is judged by that answer (the JS `answerBefore`).
            Err(e) if e.never_ran() => answered_before.map(|transient| match self.counts {
                Counts::Every => true,
                Counts::Transient => transient,
            }),
            // Nor does the caller's own abort, for a breaker that counts transient errors only
            // (per origin): a half-open probe the caller dropped gives its slot back.
            Err(Error::Aborted) if matches!(self.counts, Counts::Transient) => None,
            Err(e) => Some(self.counts_as_failure(e)),
        };
        let now = (self.clock)();
        // The core's rule: excluded counts as neither; a success past the slow-call threshold fails.
        let outcome = self.core.borrow().config().outcome(failed, now - started);
        let t = self.core.borrow_mut().record(permit, outcome, now);
        self.emit(t);
        result
    }

    fn counts_as_failure<E: Classify>(&self, e: &Error<E>) -> bool {
        match self.counts {
            Counts::Every => true,
            Counts::Transient => !matches!(e, Error::Aborted) && e.is_transient(),
        }
    }

    /// Whether forgetting this breaker would lose protection: it is not closed, or it is closed
    /// with a failure on record (a per-origin registry never evicts it).
    pub fn holds_protection(&self) -> bool {
        self.core.borrow().holds_protection()
    }

    /// Hold the circuit open until [`CircuitBreaker::reset`].
    pub fn isolate(&self) {
        let t = self.core.borrow_mut().isolate();
        self.emit(t);
    }

    /// Close the circuit and forget every outcome.
    pub fn reset(&self) {
        let t = self.core.borrow_mut().reset();
        self.emit(t);
    }

    /// Open until `until_ms` (this breaker's clock) because a peer saw it trip. The core clamps
    /// it to one open duration from now; non-finite or past times are ignored (use
    /// [`CircuitBreaker::isolate`] to hold it open).
    pub fn open_until(&self, until_ms: f64) {
        let now = (self.clock)();
        let t = self.core.borrow_mut().open_until(until_ms, now);
        self.emit(t);
    }

    /// The JS `toJSON()` shape: persist it, or hand it to JS code on the same page.
    pub fn snapshot(&self) -> BreakerSnapshot {
        let core = self.core.borrow();
        BreakerSnapshot::from_core(core.config().trip().name(), &core.snapshot())
    }

    /// Replace the state with a snapshot (from [`CircuitBreaker::snapshot`] or the JS
    /// `toJSON()`), validated against this breaker's config: a bad one is `INVALID_OPTION`
    /// (option `state`) and changes nothing.
    pub fn restore(&self, snapshot: &BreakerSnapshot) -> Result<(), crate::core::Error> {
        let now = (self.clock)();
        let mut core = self.core.borrow_mut();
        let s = snapshot.to_core(core.config().trip().name())?;
        core.restore_in_place(&s, now)
    }
}
