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
