//! A `CircuitBreaker` handle: `breaker.execute(|| async { … }).await`, with an optional fallback.
//!
//! Why a handle over the core state machine: the core decides (admit, reject, trip, close) and
//! never calls; this handle asks for a permit, awaits your call, and reports its outcome with the
//! permit, so a slow call from before a trip cannot close or re-trip the circuit it no longer
//! belongs to. Clones share one breaker.

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;

use super::error::{Classify, Error};
use super::runtime::Clock;
use super::shapes::BreakerSnapshot;
use crate::core::breaker::{Acquire, Breaker, BreakerConfig, State, Trip};

/// The platform clock: `Date.now()` on wasm32, the system clock natively.
pub(crate) fn default_clock() -> Clock {
    #[cfg(target_arch = "wasm32")]
    {
        Rc::new(js_sys::Date::now)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        Rc::new(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
        })
    }
}

/// Which errors count against the dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Counts {
    /// Every error counts (the JS `CircuitBreaker` default).
    #[default]
    Every,
    /// Only transient errors ([`Classify::is_transient`]), and never the caller's own abort:
    /// a declined card says nothing about the gateway's health (what `fetch` uses per origin).
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

impl CircuitBreaker {
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
    /// without calling `f`.
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
                self.finish(permit, now, f().await)
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
                self.finish(permit, now, f().await)
            }
        }
    }

    fn finish<T, E: Classify>(
        &self,
        permit: crate::core::breaker::Permit,
        started: f64,
        result: Result<T, Error<E>>,
    ) -> Result<T, Error<E>> {
        let failed = match &result {
            Ok(_) => Some(false),
            // An inner breaker's refusal never ran: it says nothing about this dependency.
            Err(Error::CircuitOpen { .. }) => None,
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
        let kind = match core.config().trip() {
            Trip::Rate { .. } => "rate",
            Trip::Consecutive { .. } => "consecutive",
        };
        BreakerSnapshot::from_core(kind, &core.snapshot())
    }

    /// Replace the state with a snapshot (from [`CircuitBreaker::snapshot`] or the JS
    /// `toJSON()`), validated against this breaker's config: a bad one is `INVALID_OPTION`
    /// (option `state`) and changes nothing.
    pub fn restore(&self, snapshot: &BreakerSnapshot) -> Result<(), crate::core::Error> {
        let now = (self.clock)();
        let mut core = self.core.borrow_mut();
        let kind = match core.config().trip() {
            Trip::Rate { .. } => "rate",
            Trip::Consecutive { .. } => "consecutive",
        };
        let s = snapshot.to_core(kind)?;
        core.restore_in_place(&s, now)
    }
}
