//! `WebRuntime`: `setTimeout`, `Date.now` and `AbortSignal` of the global object, so the same code
//! runs in a Window, a Worker and Node.
//!
//! Why the global functions and not `window`: `web_sys::window()` is `None` in a Worker and in
//! Node; `setTimeout`/`clearTimeout` exist on every global object (Node's return an object,
//! browsers' a number: both are kept as a `JsValue`).

use super::error::NoOperation;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
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

/// A timer that resolves a promise; clearing it on drop releases the event loop (Node stays
/// alive while a timer is pending) and frees its callback.
struct Timer {
    id: JsValue,
    done: JsFuture,
    _callback: Option<Closure<dyn FnMut()>>,
}

impl Timer {
    fn new(ms: f64, then: Option<Rc<dyn Fn()>>) -> Self {
        let mut id = JsValue::UNDEFINED;
        let mut callback = None;
        let promise = Promise::new(&mut |resolve: Function, _reject: Function| match &then {
            None => id = set_timeout(&resolve, clamp_ms(ms)),
            Some(then) => {
                let then = Rc::clone(then);
                let cb = Closure::<dyn FnMut()>::new(move || {
                    then();
                    let _ = resolve.call0(&JsValue::UNDEFINED);
                });
                id = set_timeout(cb.as_ref().unchecked_ref(), clamp_ms(ms));
                callback = Some(cb);
            }
        });
        Self {
            id,
            done: JsFuture::from(promise),
            _callback: callback,
        }
    }
}

impl Future for Timer {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.done).poll(cx).map(|_| ())
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        clear_timeout(&self.id);
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
        Box::pin(Timer::new(ms, None))
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
/// and a promise that resolves when either happens.
pub(crate) struct WebScope {
    controller: Option<AbortController>,
    stopped: Rc<Cell<Option<Stopped>>>,
    done: JsFuture,
    outer: Option<(AbortSignal, Closure<dyn FnMut()>)>,
    deadline: Option<Timer>,
}

impl WebScope {
    fn new(outer: Option<&AbortSignal>, deadline_ms: Option<f64>) -> Self {
        let controller = AbortController::new().ok();
        let stopped: Rc<Cell<Option<Stopped>>> = Rc::new(Cell::new(None));
        let resolve: Rc<RefCell<Option<Function>>> = Rc::new(RefCell::new(None));
        let done = JsFuture::from(Promise::new(&mut |ok: Function, _| {
            *resolve.borrow_mut() = Some(ok);
        }));
        // Stop once: remember why, abort the attempt's signal (with the caller's reason, or a
        // TimeoutError for the deadline), wake the task.
        let stop = {
            let (stopped, resolve, controller) =
                (Rc::clone(&stopped), Rc::clone(&resolve), controller.clone());
            Rc::new(move |why: Stopped, reason: JsValue| {
                if stopped.get().is_some() {
                    return;
                }
                stopped.set(Some(why));
                if let Some(c) = &controller {
                    c.abort_with_reason(&reason);
                }
                if let Some(f) = resolve.borrow_mut().take() {
                    let _ = f.call0(&JsValue::UNDEFINED);
                }
            })
        };
        let outer = outer.map(|signal| {
            let (s, on_stop) = (signal.clone(), Rc::clone(&stop));
            let on_abort =
                Closure::<dyn FnMut()>::new(move || on_stop(Stopped::Aborted, s.reason()));
            if signal.aborted() {
                stop(Stopped::Aborted, signal.reason());
            } else {
                let _ = signal
                    .add_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref());
            }
            (signal.clone(), on_abort)
        });
        let deadline = deadline_ms.map(|ms| {
            let stop = Rc::clone(&stop);
            let fire: Rc<dyn Fn()> = Rc::new(move || {
                let reason = web_sys_timeout_reason(ms);
                stop(Stopped::Deadline, reason);
            });
            Timer::new(ms, Some(fire))
        });
        Self {
            controller,
            stopped,
            done,
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
        self.stopped.get()
    }
}

impl Scope for WebScope {
    fn signal(&self) -> Option<Signal> {
        self.controller.as_ref().map(AbortController::signal)
    }

    fn poll_stopped(&mut self, cx: &mut Context<'_>) -> Poll<Stopped> {
        if let Some(s) = self.stopped.get() {
            return Poll::Ready(s);
        }
        match Pin::new(&mut self.done).poll(cx) {
            Poll::Ready(_) => Poll::Ready(self.stopped.get().unwrap_or(Stopped::Aborted)),
            Poll::Pending => Poll::Pending,
        }
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
