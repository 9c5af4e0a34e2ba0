//! What a layer being started or polled now tells the work inside it: the store run whose history
//! a retry reports its attempts to, the breaker call a retry reports the answer it gave up after.
//!
//! Why thread-locals: a retry inside `store.run(key, || …)` or `breaker.execute(|| …)` is the
//! caller's own code, with no parameter through which to reach the layer around it. Each layer
//! sets its slot while it calls its closure and while it polls the future (restored after, so
//! nested layers and other tasks each see their own); a retry takes what is set when it is made.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::thread::LocalKey;

/// A layer's slot: what is set while it runs.
pub(crate) type Slot<S> = LocalKey<RefCell<Option<Rc<S>>>>;

/// What `slot` holds now, if anything.
pub(crate) fn current<S: 'static>(slot: &'static Slot<S>) -> Option<Rc<S>> {
    slot.try_with(|c| c.borrow().clone()).ok().flatten()
}

/// Puts the outer value back when a call or a poll ends, a panicking one included.
struct Restore<S: 'static> {
    slot: &'static Slot<S>,
    outer: Option<Rc<S>>,
}

impl<S: 'static> Drop for Restore<S> {
    fn drop(&mut self) {
        let outer = self.outer.take();
        let _ = self.slot.try_with(|c| *c.borrow_mut() = outer);
    }
}

/// Call `f` with `value` in `slot`.
pub(crate) fn within<S: 'static, R>(
    slot: &'static Slot<S>,
    value: &Rc<S>,
    f: impl FnOnce() -> R,
) -> R {
    let outer = slot
        .try_with(|c| c.replace(Some(Rc::clone(value))))
        .ok()
        .flatten();
    let _restore = Restore { slot, outer };
    f()
}

/// `inner`, polled with `value` in `slot`.
pub(crate) struct Within<F, S: 'static> {
    slot: &'static Slot<S>,
    value: Rc<S>,
    inner: Pin<Box<F>>,
}

impl<F, S: 'static> Within<F, S> {
    /// `f()` called, and its future polled, with `value` in `slot`.
    pub(crate) fn call(slot: &'static Slot<S>, value: &Rc<S>, f: impl FnOnce() -> F) -> Self {
        Self {
            slot,
            value: Rc::clone(value),
            inner: Box::pin(within(slot, value, f)),
        }
    }
}

impl<F: Future, S: 'static> Future for Within<F, S> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        let inner = &mut this.inner;
        within(this.slot, &this.value, || inner.as_mut().poll(cx))
    }
}
