//! The wasm-bindgen boundary, tested from inside wasm, in Node AND headless Chromium (`make test` runs both).
//!
//! Cargo discovers integration tests only as `tests/*.rs`, so this file is the one entry point and each
//! suite lives in `tests/wasm/<name>.rs`, pulled in below with `#[path]`. To add a suite: create
//! `tests/wasm/<name>.rs` with `use wasm_bindgen_test::wasm_bindgen_test;` and `#[wasm_bindgen_test]` fns,
//! then add a `#[path]` + `mod` line here. Plain `#[test]`s do not run on wasm: use `#[wasm_bindgen_test]`
//! (async fns are fine). No `wasm_bindgen_test_configure!(run_in_browser)`: the same tests run in Node by
//! default and in the browser when the runner sets `WASM_BINDGEN_USE_BROWSER=1` (scripts/test-wasm.sh).
//!
//! Run one side by hand:  scripts/test-wasm.sh node   |   scripts/test-wasm.sh chrome
#![cfg(target_arch = "wasm32")]

#[path = "wasm/smoke.rs"]
mod smoke;

#[path = "wasm/support.rs"]
mod support;

#[path = "wasm/allocator.rs"]
mod allocator;
#[path = "wasm/breaker.rs"]
mod breaker;
#[path = "wasm/budget.rs"]
mod budget;
#[path = "wasm/classify.rs"]
mod classify;
#[path = "wasm/defaults.rs"]
mod defaults;
#[path = "wasm/hedge.rs"]
mod hedge;
#[path = "wasm/idempotency.rs"]
mod idempotency;
#[path = "wasm/keys.rs"]
mod keys;
#[path = "wasm/retry.rs"]
mod retry;
#[path = "wasm/throttle.rs"]
mod throttle;
#[path = "wasm/wire.rs"]
mod wire;
