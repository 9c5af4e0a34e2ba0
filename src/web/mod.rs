//! The async Rust API: retries, a circuit breaker, an idempotency store, `charge_customer` and
//! `fetch` for Rust→wasm apps (Leptos, Yew, Dioxus, plain web-sys), with no JS of your own.
//!
//! Why a second shell: the npm package drives the core from JS, but an app written in Rust
//! would otherwise have to write its own sleep, fetch wrapper and await loop around the
//! breaker and the store — exactly the code that goes wrong. This shell performs the effects
//! (await, sleep through `setTimeout`, abort through `AbortSignal`, fetch); every decision
//! (backoff, budget, classification, breaker and idempotency state machines, which HTTP methods
//! and statuses may be repeated, Retry-After) is asked of [`crate::core`], the same code the JS
//! package runs.
//!
//! Enable it with the `web` cargo feature (off in the npm build):
//!
//! ```toml
//! [dependencies]
//! steadfast = { git = "…", default-features = false, features = ["web"] }
//! ```
//!
//! `fetch` and `send` compile on every target, so a crate that also builds for the server (SSR)
//! needs no `cfg` around its calls: off wasm32 they send nothing and return
//! [`FetchFailure::Unsupported`].
//!
//! On `wasm32` the default [`Runtime`] is `WebRuntime`: `setTimeout` and `Date.now` of the
//! global object (Window, WorkerGlobalScope or Node), randomness from `crypto.getRandomValues`
//! (seeded once). Natively the same engine runs on [`VirtualTime`], a deterministic virtual
//! clock for tests and examples.
//!
//! The pipeline of the seed, in its order (idempotency outside, breaker in the middle, retry
//! inside, one key on every attempt), is [`charge_customer`]:
//!
//! ```
//! use steadfast::web::{
//!     charge_customer, Charge, ChargeDeps, CircuitBreaker, Classify, IdempotencyStore,
//!     RetryPolicy, VirtualTime,
//! };
//!
//! #[derive(Debug)]
//! struct Http(u16);
//! impl Classify for Http {
//!     fn is_transient(&self) -> bool {
//!         steadfast::core::classify::is_transient_status(f64::from(self.0))
//!     }
//! }
//!
//! let time = VirtualTime::new(1);
//! let deps = ChargeDeps {
//!     store: IdempotencyStore::new().clock(time.clock()),
//!     breaker: CircuitBreaker::builder().window_size(10).clock(time.clock()).build().unwrap(),
//!     policy: RetryPolicy::builder().max_attempts(4).runtime(time.runtime()).build().unwrap(),
//! };
//! let charge = Charge::new("order-42", 4999, "usd").unwrap();
//! let mut failures_left = 2;
//! let outcome = time.run(charge_customer(&charge, &deps, |charge, attempt| {
//!     let fail = failures_left > 0;
//!     failures_left -= 1;
//!     let key = charge.idempotency_key.clone();
//!     async move {
//!         if fail { Err(Http(503)) } else { Ok(format!("ch_{key}_{}", attempt.number)) }
//!     }
//! }));
//! assert_eq!(outcome.unwrap().unwrap(), "ch_order-42_3");
//! ```

mod breaker;
mod charge;
mod context;
mod error;
mod idempotency;
mod num;
mod race;
mod retry;
mod runtime;
mod shapes;
mod virtual_time;

mod fetch;
#[cfg(target_arch = "wasm32")]
mod js;

pub use crate::core::canonical::Json;
pub use breaker::{CircuitBreaker, CircuitBreakerBuilder, Counts};
pub use charge::{charge_customer, Charge, ChargeDeps};
pub use error::{Classify, Error, NoOperation};
pub use idempotency::{IdempotencyStore, Record, Resolution};
pub use retry::{
    retry, retry_with, Attempt, ByClosure, ByTrait, Classifier, RetryBudget, RetryInfo,
    RetryPolicy, RetryPolicyBuilder, Retrying,
};
pub use runtime::{Clock, Runtime, Scope, Signal, Stopped};
pub use shapes::{BreakerSnapshot, ChargeOutcome};
pub use virtual_time::{Stalled, VirtualTime};

pub use crate::core::dialect::Dialect;
pub use fetch::{
    fetch, origin_breaker, pin_origin, send, FetchFailure, FetchOptions, IdempotencyKey,
};
#[cfg(target_arch = "wasm32")]
pub use js::{new_idempotency_key, WebRuntime};

pub use crate::core::backoff::Jitter;
pub use crate::core::breaker::{BreakerConfig, State};

use std::future::Future;
use std::pin::Pin;

/// A boxed, single-threaded future (wasm is single-threaded; nothing here is `Send`).
pub type LocalBoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;
