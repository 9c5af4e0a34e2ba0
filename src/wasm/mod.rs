//! The wasm-bindgen boundary: thin classes over the pure core, numbers in and numbers out.
//!
//! Why numbers: a synchronous wasm call with numeric arguments costs tens of nanoseconds, while an
//! async export or a serde round trip costs microseconds. The JS shell (`pkg-template/`) owns the
//! event loop, awaits, sleeps and error objects; this layer decides nothing on its own.
//!
//! Errors: option validation failures are thrown as a string `"<option>\u{1}<must be …>"` and
//! turned by the JS shell into a `RangeError` naming the option and the offending value (which
//! only JS can render faithfully). No function here panics (the crate denies unwrap, expect,
//! panic and indexing): a trap would poison the instance for every later call.

use wasm_bindgen::prelude::*;

mod breaker;
mod budget;
mod classify;
mod defaults;
mod dialect;
mod error;
mod hedge;
mod idempotency;
mod input;
mod limiter;
mod quota;
mod random;
mod reconcile;
mod retry;
#[cfg(feature = "sim")]
mod sim;
mod wire;

pub use breaker::BreakerCore;
pub use budget::BudgetCore;
pub use classify::{
    history_record, history_verdict, is_transient_code, is_transient_response, is_transient_type,
    message_proves_not_sent, method_is_keyed, method_is_retryable, parse_retry_after,
    parse_should_retry, proves_not_sent, SHOULD_RETRY_FALSE, SHOULD_RETRY_NONE, SHOULD_RETRY_TRUE,
};
pub use defaults::fetch_defaults;
pub use dialect::{dialect_names, DialectCore};
pub(crate) use error::throw;
pub use hedge::{hedge_defaults, HedgeCore};
pub use idempotency::{fingerprint_words, key_rule, store_defaults, StoreCore};
pub use input::{input_buffer, wasm_memory};
pub use limiter::{limiter_preset, LimiterCore};
pub use quota::{quota_error_class, quota_preset, QuotaCore};
pub use random::{new_idempotency_key, seed_random};
pub use reconcile::{failed_verdict_wait_ms, settle_after_ms};
pub use retry::{jitter_delay, RetryCore};
pub use wire::wire_layouts;

/// The npm module's allocator: talc instead of std's dlmalloc, 5.8 KB raw / 2.3 KB gz smaller for
/// the same speed and bytes per record (measured: benches/README.md, size section). This module
/// exists only with the `exports` feature (the npm build): a Rust app that uses `steadfast::web`
/// keeps its own allocator. Safe to construct: talc grows the wasm memory itself; tested under
/// churn in tests/wasm/allocator.rs.
#[cfg(not(target_feature = "atomics"))]
#[global_allocator]
static TALC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
#[cfg(feature = "sim")]
pub use sim::*;

/// The crate version, for diagnostics.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").into()
}
