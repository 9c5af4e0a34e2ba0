//! steadfast: retries that do not become a retry storm, a breaker that fails fast, a budget that
//! caps amplification, and one idempotency key per charge.
//!
//! Why a pure core: every decision (how long to back off, whether the breaker admits a call,
//! whether a retry fits the budget, what an idempotency key may do next) lives in [`core`], which
//! takes time as milliseconds and randomness as a seeded generator. It has no clock, no global RNG
//! and no JavaScript in it, so it is tested natively and deterministically, and the simulator runs
//! the very same state machines that production uses. The [`wasm`] module is a thin
//! wasm-bindgen boundary over it; the npm package's JS shell drives it. With the `web` cargo
//! feature, `web` is a second shell: an async Rust API (retry, circuit breaker, idempotency
//! store, `charge_customer`, `fetch`) for Rust→wasm apps, driving the same core.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::unreachable,
        clippy::todo
    )
)]

pub mod core;

#[cfg(all(target_arch = "wasm32", feature = "exports"))]
pub mod wasm;

#[cfg(feature = "web")]
pub mod web;
