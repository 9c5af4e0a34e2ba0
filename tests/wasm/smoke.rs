//! Smoke test: the module instantiates and an export answers across the boundary.
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn version_is_the_crate_version() {
    assert_eq!(steadfast::wasm::version(), env!("CARGO_PKG_VERSION"));
}
