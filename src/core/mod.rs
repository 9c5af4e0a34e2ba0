//! The pure resilience core: every rule of steadfast, with time and randomness passed in.
//!
//! Nothing here reads a clock, touches a global RNG or knows about JavaScript: callers (the wasm
//! boundary, the simulator, native tests) pass `now_ms` and a [`rng::Rng`]. State machines return
//! decisions and never act: the caller sleeps, calls, aborts.

pub mod backoff;
pub mod breaker;
pub mod budget;
pub mod canonical;
pub mod classify;
pub mod dialect;
pub mod error;
pub mod hedge;
pub mod history;
pub mod idempotency;
pub mod keyed;
pub mod limiter;
pub mod quota;
pub mod reconcile;
pub mod retry;
pub mod rng;
pub mod sha256;
pub mod sim;
pub mod sort;

pub use error::Error;
