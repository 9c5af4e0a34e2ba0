//! `WebRuntime`: `setTimeout`, `Date.now` and `AbortSignal` of the global object, so the same code
//! runs in a Window, a Worker and Node.
//!
//! Why the global functions and not `window`: `web_sys::window()` is `None` in a Worker and in
//! Node; `setTimeout`/`clearTimeout` exist on every global object (Node's return an object,
//! browsers' a number: both are kept as a `JsValue`).

use super::error::NoOperation;
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use js_sys::Function;
use wasm_bindgen::prelude::*;
use web_sys::{AbortController, AbortSignal};

use super::error::Error;
use super::runtime::{Runtime, Scope, Signal, Stopped};
use super::LocalBoxFuture;
use crate::core::rng::{uuid_v4, Rng, SplitMix64};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &Function, ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(id: &JsValue);
}

/// The longest delay `setTimeout` honours (2^31 − 1 ms, about 24.8 days); longer ones would fire
/// at once, so they are capped.
const MAX_TIMEOUT_MS: f64 = 2_147_483_647.0;

fn clamp_ms(ms: f64) -> f64 {
    if ms > 0.0 {
        ms.min(MAX_TIMEOUT_MS)
    } else {
        0.0
    }
}

/// One stop, shared by whatever can end a sleep or a scope (a timer, the caller's signal): why it
/// stopped, the task to wake, and for a scope the controller to abort.
///
/// Why one type and one callback shape for all of them: every `Closure` body is its own
/// monomorphised glue in the module, so the sleep, the deadline and the abort listener all use
/// [`on_stop`]; and polling this state directly needs no promise and no `JsFuture` per timer.
struct Stop {
    stopped: Cell<Option<Stopped>>,
    waker: Cell<Option<Waker>>,
    /// A scope's controller, aborted with the reason when it stops (none for a sleep).
    controller: Option<AbortController>,
    /// A scope's caller signal, whose reason an abort passes on.
    outer: Option<AbortSignal>,
    /// A scope's deadline, for the `TimeoutError` it aborts with.
    deadline_ms: f64,
}

impl Stop {
    fn new(
        controller: Option<AbortController>,
        outer: Option<AbortSignal>,
        deadline_ms: f64,
    ) -> Rc<Self> {
        Rc::new(Self {
            stopped: Cell::new(None),
            waker: Cell::new(None),
            controller,
            outer,
            deadline_ms,
        })
    }

    /// Stop once: remember why, abort the controller (with the caller's reason, or a TimeoutError
    /// for the deadline), wake the task.
    fn stop(&self, why: Stopped) {
        if self.stopped.get().is_some() {
            return;
        }
        self.stopped.set(Some(why));
        if let Some(c) = &self.controller {
            let reason = match why {
                Stopped::Aborted => self
                    .outer
                    .as_ref()
                    .map_or(JsValue::UNDEFINED, |s| s.reason()),
                Stopped::Deadline => web_sys_timeout_reason(self.deadline_ms),
            };
            c.abort_with_reason(&reason);
        }
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }

    fn poll(&self, cx: &Context<'_>) -> Poll<Stopped> {
        match self.stopped.get() {
            Some(s) => Poll::Ready(s),
            None => {
                self.waker.set(Some(cx.waker().clone()));
                Poll::Pending
            }
        }
    }
}

/// The one JS callback: `state.stop(why)`.
fn on_stop(state: &Rc<Stop>, why: Stopped) -> Closure<dyn FnMut()> {
    let state = Rc::clone(state);
    Closure::new(move || state.stop(why))
}

/// A `setTimeout` that stops `state` as [`Stopped::Deadline`]; clearing it on drop releases the
/// event loop (Node stays alive while a timer is pending) and frees its callback.
struct Timer {
    id: JsValue,
    _callback: Closure<dyn FnMut()>,
}

impl Timer {
    fn new(state: &Rc<Stop>, ms: f64) -> Self {
        let callback = on_stop(state, Stopped::Deadline);
        let id = set_timeout(callback.as_ref().unchecked_ref(), clamp_ms(ms));
        Self {
            id,
            _callback: callback,
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        clear_timeout(&self.id);
    }
}

/// [`Runtime::sleep`]: ready once its timer fired.
struct Sleep {
    state: Rc<Stop>,
    _timer: Timer,
}

impl Future for Sleep {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.state.poll(cx).map(|_| ())
    }
}

thread_local! {
    /// The jitter generator's state, seeded on first use.
    static JITTER: Cell<Option<u64>> = const { Cell::new(None) };
}

/// A seed from the platform CSPRNG; without one (no `crypto.getRandomValues`), `Math.random`:
/// jitter needs spread, not secrecy (keys never take this path).
fn seed() -> u64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_ok() {
        return u64::from_le_bytes(bytes);
    }
    (js_sys::Math::random() * 9_007_199_254_740_992.0) as u64
}

/// The platform runtime on wasm32: `setTimeout` of the global object, `Date.now()`, jitter from
/// a SplitMix64 seeded once from `crypto.getRandomValues` (one draw costs a few instructions; a
/// `getRandomValues` call costs microseconds).
#[derive(Debug, Clone, Copy, Default)]
pub struct WebRuntime {
    _private: (),
}

impl WebRuntime {
    /// The runtime (it has no state of its own).
    pub fn new() -> Self {
        Self::default()
    }
}

impl Runtime for WebRuntime {
    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }

    fn sleep(&self, ms: f64) -> LocalBoxFuture<'static, ()> {
        let state = Stop::new(None, None, ms);
        let timer = Timer::new(&state, ms);
        Box::pin(Sleep {
            state,
            _timer: timer,
        })
    }

    fn random_unit(&self) -> f64 {
        JITTER.with(|cell| {
            let mut rng = SplitMix64::new(cell.get().unwrap_or_else(seed));
            let u = rng.next_unit();
            cell.set(Some(rng.state()));
            u
        })
    }

    fn scope(&self, signal: Option<&Signal>, deadline_ms: Option<f64>) -> Box<dyn Scope> {
        if signal.is_none() && deadline_ms.is_none() {
            return Box::new(super::runtime::Unbounded);
        }
        Box::new(WebScope::new(signal, deadline_ms))
    }
}

/// One call's scope: an AbortController aborted by the caller's signal or by the deadline timer,
/// and the task woken when either happens.
pub(crate) struct WebScope {
    state: Rc<Stop>,
    outer: Option<(AbortSignal, Closure<dyn FnMut()>)>,
    deadline: Option<Timer>,
}

impl WebScope {
    fn new(outer: Option<&AbortSignal>, deadline_ms: Option<f64>) -> Self {
        let controller = AbortController::new().ok();
        let state = Stop::new(controller, outer.cloned(), deadline_ms.unwrap_or(0.0));
        let outer = outer.map(|signal| {
            let on_abort = on_stop(&state, Stopped::Aborted);
            if signal.aborted() {
                state.stop(Stopped::Aborted);
            } else {
                let _ = signal
                    .add_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref());
            }
            (signal.clone(), on_abort)
        });
        let deadline = deadline_ms.map(|ms| Timer::new(&state, ms));
        Self {
            state,
            outer,
            deadline,
        }
    }
}

/// `new DOMException(message, 'TimeoutError')` — what `AbortSignal.timeout` aborts with.
fn web_sys_timeout_reason(ms: f64) -> JsValue {
    let message = format!("deadline of {} ms exceeded", super::num::Num(ms));
    let ctor = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("DOMException"))
        .ok()
        .and_then(|c| c.dyn_into::<Function>().ok());
    let args = js_sys::Array::of2(
        &JsValue::from_str(&message),
        &JsValue::from_str("TimeoutError"),
    );
    ctor.and_then(|c| js_sys::Reflect::construct(&c, &args).ok())
        .unwrap_or_else(|| JsValue::from_str(&message))
}

/// A scope for one fetch attempt: aborted by the call's signal or after `timeout_ms`.
pub(crate) fn attempt_scope(outer: Option<&AbortSignal>, timeout_ms: Option<f64>) -> WebScope {
    WebScope::new(outer, timeout_ms)
}

impl WebScope {
    /// Why it stopped, if it has.
    pub(crate) fn stopped(&self) -> Option<Stopped> {
        self.state.stopped.get()
    }
}

impl Scope for WebScope {
    fn signal(&self) -> Option<Signal> {
        self.state.controller.as_ref().map(AbortController::signal)
    }

    fn poll_stopped(&mut self, cx: &mut Context<'_>) -> Poll<Stopped> {
        self.state.poll(cx)
    }
}

impl Drop for WebScope {
    fn drop(&mut self) {
        if let Some((signal, on_abort)) = &self.outer {
            let _ = signal
                .remove_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref());
        }
        self.deadline = None; // clears the timer
    }
}

/// A new UUID v4 from the platform CSPRNG (`crypto.getRandomValues`): make it once per logical
/// charge and reuse it on every attempt and click. [`Error::RandomUnavailable`] when the platform
/// has no CSPRNG (never a guessable fallback).
pub fn new_idempotency_key() -> Result<String, Error<NoOperation>> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|_| Error::RandomUnavailable)?;
    Ok(uuid_v4(bytes))
}
