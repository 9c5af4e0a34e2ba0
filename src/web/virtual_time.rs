//! `VirtualTime`: a deterministic runtime on a virtual clock, for tests and examples.
//!
//! Why: retry schedules span seconds, and tests that sleep for real are slow and flaky (the
//! seed's "fake-timer testing"). `VirtualTime::run` polls a future; whenever it is stuck waiting,
//! the clock jumps to the next timer. A run that waits on nothing this runtime can fire is
//! reported as [`Stalled`], never a hang.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use super::runtime::{Clock, Runtime, Scope, Signal, Stopped};
use super::LocalBoxFuture;
use crate::core::rng::{Rng, SplitMix64};

/// The future waits on something no timer of this runtime will ever wake.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stalled {
    /// Virtual time when it stalled (ms).
    pub at_ms: f64,
}

impl std::fmt::Display for Stalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stalled at {} ms with no timer pending", self.at_ms)
    }
}

impl std::error::Error for Stalled {}

struct Timer {
    at: f64,
    seq: u64,
    fired: Rc<Cell<bool>>,
    action: Option<Box<dyn FnOnce()>>,
}

struct Inner {
    now: Cell<f64>,
    seq: Cell<u64>,
    rng: Cell<u64>,
    timers: RefCell<Vec<Timer>>,
}

/// A virtual clock and timer queue (clones share it). Starts at 0 ms.
///
/// ```
/// use steadfast::web::{Runtime, VirtualTime};
/// let time = VirtualTime::new(1);
/// let rt = time.runtime();
/// let t = time.run(async move {
///     rt.sleep(1_500.0).await;
///     rt.now_ms()
/// });
/// assert_eq!(t, Ok(1_500.0));
/// ```
#[derive(Clone)]
pub struct VirtualTime {
    inner: Rc<Inner>,
}

impl std::fmt::Debug for VirtualTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VirtualTime")
            .field("now_ms", &self.inner.now.get())
            .finish_non_exhaustive()
    }
}

// `Wake` needs `Arc`; a waker that does nothing is all this executor needs (it re-polls after
// every timer).
struct NoopArc;
impl std::task::Wake for NoopArc {
    fn wake(self: std::sync::Arc<Self>) {}
}

impl VirtualTime {
    /// A clock at 0 ms whose jitter draws come from SplitMix64 seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            inner: Rc::new(Inner {
                now: Cell::new(0.0),
                seq: Cell::new(0),
                rng: Cell::new(seed),
                timers: RefCell::new(Vec::new()),
            }),
        }
    }

    /// This runtime, for [`crate::web::RetryPolicyBuilder::runtime`].
    pub fn runtime(&self) -> Rc<dyn Runtime> {
        Rc::new(self.clone())
    }

    /// This clock, for the handles' `clock(…)`.
    pub fn clock(&self) -> Clock {
        let inner = Rc::clone(&self.inner);
        Rc::new(move || inner.now.get())
    }

    /// The virtual time now (ms).
    pub fn now(&self) -> f64 {
        self.inner.now.get()
    }

    /// Run `action` at `delay_ms` from now (a fault, an abort, a second click).
    ///
    /// ```
    /// use std::{cell::Cell, rc::Rc};
    /// use steadfast::web::{Runtime, VirtualTime};
    /// let time = VirtualTime::new(1);
    /// let fired = Rc::new(Cell::new(0.0));
    /// let (f, t) = (Rc::clone(&fired), time.clone());
    /// time.schedule(250.0, move || f.set(t.now()));
    /// let rt = time.runtime();
    /// time.run(async move { rt.sleep(1_000.0).await }).unwrap();
    /// assert_eq!(fired.get(), 250.0);
    /// ```
    pub fn schedule(&self, delay_ms: f64, action: impl FnOnce() + 'static) {
        self.push(delay_ms, Some(Box::new(action)));
    }

    fn push(&self, delay_ms: f64, action: Option<Box<dyn FnOnce()>>) -> Rc<Cell<bool>> {
        let fired = Rc::new(Cell::new(false));
        let seq = self.inner.seq.get();
        self.inner.seq.set(seq + 1);
        let delay = if delay_ms > 0.0 { delay_ms } else { 0.0 };
        self.inner.timers.borrow_mut().push(Timer {
            at: self.inner.now.get() + delay,
            seq,
            fired: Rc::clone(&fired),
            action,
        });
        fired
    }

    /// Fire the earliest timer (advancing the clock to it); `false` if there is none.
    fn fire_next(&self) -> bool {
        let timer = {
            let mut timers = self.inner.timers.borrow_mut();
            let next = timers
                .iter()
                .enumerate()
                .min_by(|(_, a), (_, b)| a.at.total_cmp(&b.at).then(a.seq.cmp(&b.seq)))
                .map(|(i, _)| i);
            match next {
                Some(i) => timers.swap_remove(i),
                None => return false,
            }
        };
        if timer.at > self.inner.now.get() {
            self.inner.now.set(timer.at);
        }
        timer.fired.set(true);
        if let Some(action) = timer.action {
            action();
        }
        true
    }

    /// Poll `fut` to completion, jumping the clock to the next timer whenever it waits.
    pub fn run<T>(&self, fut: impl Future<Output = T>) -> Result<T, Stalled> {
        let waker = Waker::from(std::sync::Arc::new(NoopArc));
        let mut cx = Context::from_waker(&waker);
        let mut fut = pin!(fut);
        loop {
            if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
                return Ok(v);
            }
            if !self.fire_next() {
                return Err(Stalled {
                    at_ms: self.inner.now.get(),
                });
            }
        }
    }
}

struct VirtualSleep {
    fired: Rc<Cell<bool>>,
}

impl Future for VirtualSleep {
    type Output = ();
    fn poll(self: std::pin::Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.fired.get() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

struct VirtualScope {
    outer: Option<Signal>,
    deadline: Option<Rc<Cell<bool>>>,
    signal: Option<Signal>,
}

impl Scope for VirtualScope {
    fn signal(&self) -> Option<Signal> {
        self.signal.clone()
    }

    fn poll_stopped(&mut self, _cx: &mut Context<'_>) -> Poll<Stopped> {
        let stopped = if self.outer.as_ref().is_some_and(Signal::aborted) {
            Some(Stopped::Aborted)
        } else if self.deadline.as_ref().is_some_and(|d| d.get()) {
            Some(Stopped::Deadline)
        } else {
            None
        };
        match stopped {
            Some(s) => {
                if let Some(sig) = &self.signal {
                    abort(sig);
                }
                Poll::Ready(s)
            }
            None => Poll::Pending,
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn abort(s: &Signal) {
    s.abort();
}

#[cfg(target_arch = "wasm32")]
fn abort(_: &Signal) {}

#[cfg(not(target_arch = "wasm32"))]
fn fresh_signal() -> Option<Signal> {
    Some(Signal::new())
}

#[cfg(target_arch = "wasm32")]
fn fresh_signal() -> Option<Signal> {
    None
}

impl Runtime for VirtualTime {
    fn now_ms(&self) -> f64 {
        self.inner.now.get()
    }

    fn sleep(&self, ms: f64) -> LocalBoxFuture<'static, ()> {
        Box::pin(VirtualSleep {
            fired: self.push(ms, None),
        })
    }

    fn random_unit(&self) -> f64 {
        let mut rng = SplitMix64::new(self.inner.rng.get());
        let u = rng.next_unit();
        self.inner.rng.set(rng.state());
        u
    }

    fn scope(&self, signal: Option<&Signal>, deadline_ms: Option<f64>) -> Box<dyn Scope> {
        if signal.is_none() && deadline_ms.is_none() {
            return Box::new(super::runtime::Unbounded);
        }
        Box::new(VirtualScope {
            outer: signal.cloned(),
            deadline: deadline_ms.map(|ms| self.push(ms, None)),
            signal: fresh_signal(),
        })
    }
}
