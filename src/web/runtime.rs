//! What the async engine needs from its platform: a clock, a sleep, randomness, and a scope that
//! ends a call when the caller aborts or the deadline passes.
//!
//! Why a trait: the engine (retry loop, breaker and store handles) is the same on wasm, where
//! [`crate::web::WebRuntime`] sleeps through `setTimeout`, and natively, where
//! [`crate::web::VirtualTime`] runs it on a virtual clock, deterministically and instantly.

use std::rc::Rc;
use std::task::{Context, Poll};

use super::LocalBoxFuture;

/// A clock in milliseconds (`Date.now` on wasm). Handles take one so tests can pass a fake.
pub type Clock = Rc<dyn Fn() -> f64>;

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

/// A secret seed for an idempotency store's key hash ([`crate::core::keyed::KeyedRecords`]).
/// On wasm32 it comes from `crypto.getRandomValues`; without one, `Math.random` (keys still work,
/// the table only loses its resistance to keys crafted to collide). Natively it comes from std's
/// `RandomState`, whose keys the OS randomness seeds once per thread (each `RandomState::new`
/// steps them), hashed with a counter so every call differs.
pub(crate) fn store_seed() -> [u64; 2] {
    #[cfg(target_arch = "wasm32")]
    {
        let mut bytes = [0u8; 16];
        if getrandom::fill(&mut bytes).is_err() {
            for b in &mut bytes {
                *b = (js_sys::Math::random() * 256.0) as u8;
            }
        }
        let (lo, hi) = bytes.split_at(8);
        let word = |b: &[u8]| b.iter().rev().fold(0u64, |w, &x| w << 8 | u64::from(x));
        [word(lo), word(hi)]
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        use std::hash::{BuildHasher, Hasher};
        let draw = |n: u64| {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(n);
            h.finish()
        };
        [draw(0), draw(1)]
    }
}

/// The caller's cancellation signal: [`web_sys::AbortSignal`] on wasm32.
#[cfg(target_arch = "wasm32")]
pub type Signal = web_sys::AbortSignal;

/// The caller's cancellation signal: natively an abort flag for [`crate::web::VirtualTime`]
/// (on wasm32 this is `web_sys::AbortSignal`).
///
/// ```
/// use steadfast::web::Signal;
/// let s = Signal::new();
/// assert!(!s.aborted());
/// s.clone().abort();
/// assert!(s.aborted());
/// ```
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Clone, Default)]
pub struct Signal {
    aborted: Rc<std::cell::Cell<bool>>,
}

#[cfg(not(target_arch = "wasm32"))]
impl Signal {
    /// A signal that has not aborted.
    pub fn new() -> Self {
        Self::default()
    }

    /// Abort: every call using this signal (or a clone) stops with `Error::Aborted`.
    pub fn abort(&self) {
        self.aborted.set(true);
    }

    /// Whether it has aborted.
    pub fn aborted(&self) -> bool {
        self.aborted.get()
    }
}

/// Why a [`Scope`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The caller's signal aborted.
    Aborted,
    /// The deadline passed.
    Deadline,
}

/// One call's lifetime: the caller's signal combined with a deadline. Dropping it releases its
/// timer and listeners.
pub trait Scope {
    /// The signal each attempt receives (aborted when the scope ends), if the call has a signal
    /// or a deadline; `None` otherwise.
    fn signal(&self) -> Option<Signal>;

    /// `Ready` once the caller aborted or the deadline passed.
    fn poll_stopped(&mut self, cx: &mut Context<'_>) -> Poll<Stopped>;
}

/// A scope that never ends (no signal, no deadline).
pub(crate) struct Unbounded;

impl Scope for Unbounded {
    fn signal(&self) -> Option<Signal> {
        None
    }

    fn poll_stopped(&mut self, _cx: &mut Context<'_>) -> Poll<Stopped> {
        Poll::Pending
    }
}

/// The platform: clock, sleep, randomness, call scopes. Implemented by
/// [`crate::web::VirtualTime`] (and, on wasm32, `WebRuntime`); implement it to run the engine
/// on another executor.
pub trait Runtime {
    /// Milliseconds on this runtime's clock.
    fn now_ms(&self) -> f64;

    /// A future that completes after `ms` milliseconds (negative or NaN: at once).
    fn sleep(&self, ms: f64) -> LocalBoxFuture<'static, ()>;

    /// A uniform draw in `[0, 1)` for jitter.
    fn random_unit(&self) -> f64;

    /// The scope of one call: ends on `signal`'s abort or `deadline_ms` from now.
    fn scope(&self, signal: Option<&Signal>, deadline_ms: Option<f64>) -> Box<dyn Scope>;
}
