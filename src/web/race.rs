//! Racing a future against a call's [`Scope`] (abort, deadline), without an executor crate.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;

use super::runtime::{Scope, Stopped};

/// How a race ended.
pub(crate) enum Raced<T> {
    Done(T),
    Stopped(Stopped),
}

/// Await `fut` unless `scope` ends first (the scope is checked first: an aborted call does not
/// start another attempt). The loser is dropped.
pub(crate) async fn race<T>(scope: &mut dyn Scope, fut: impl Future<Output = T>) -> Raced<T> {
    let mut fut = pin!(fut);
    poll_fn(|cx| {
        if let Poll::Ready(s) = scope.poll_stopped(cx) {
            return Poll::Ready(Raced::Stopped(s));
        }
        fut.as_mut().poll(cx).map(Raced::Done)
    })
    .await
}

/// Both futures, concurrently (tests: two clicks on one page).
#[cfg(test)]
pub(crate) async fn join<A, B>(a: impl Future<Output = A>, b: impl Future<Output = B>) -> (A, B) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut ra, mut rb) = (None, None);
    poll_fn(|cx| {
        if ra.is_none() {
            if let Poll::Ready(v) = a.as_mut().poll(cx) {
                ra = Some(v);
            }
        }
        if rb.is_none() {
            if let Poll::Ready(v) = b.as_mut().poll(cx) {
                rb = Some(v);
            }
        }
        match (ra.take(), rb.take()) {
            (Some(x), Some(y)) => Poll::Ready((x, y)),
            (x, y) => {
                ra = x;
                rb = y;
                Poll::Pending
            }
        }
    })
    .await
}
