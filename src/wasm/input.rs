//! The charge path's strings through one shared input buffer in linear memory.
//!
//! Why: wasm-bindgen copies a `&str` argument with a JS loop over its characters, plus an
//! allocation and a free per call. A fingerprint text is the whole canonical request (40 to a few
//! hundred bytes), so on the fresh-key path that copy cost more than hashing it. Here JS writes
//! the key and the text with `TextEncoder.encodeInto` (native) into one buffer that lives as long
//! as the module, and [`StoreCore::begin_input`] reads them from it: no allocation, no loop in JS.
//!
//! The buffer is grown only by [`input_buffer`] (which returns its new address); nothing else
//! moves it. Lengths that do not fit the buffer are answered with NaN, never a trap.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

use super::idempotency::{StoreCore, INVALID_KEY};
use crate::core::idempotency::key_bytes_valid;

thread_local! {
    static INPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Make the input buffer hold at least `len` bytes; returns its address in linear memory (valid
/// until the next call that grows it).
#[wasm_bindgen(js_name = inputBuffer)]
pub fn input_buffer(len: u32) -> u32 {
    INPUT.with_borrow_mut(|b| {
        if b.len() < len as usize {
            b.resize(len as usize, 0);
        }
        b.as_mut_ptr() as u32
    })
}

/// The module's linear memory (a `WebAssembly.Memory`), which JS writes the input buffer through.
#[wasm_bindgen(js_name = wasmMemory)]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
}

#[wasm_bindgen]
impl StoreCore {
    /// `begin` (the answer of [`StoreCore::begin_bytes`]) with the key in the input buffer's first `key_len` bytes and the
    /// fingerprint text in the next `fingerprint_len` (0: none). The key rule is applied here, to
    /// those bytes ([`key_bytes_valid`]), so the shell need not loop over a new key first: a key
    /// that fails it answers `invalidKey` (-1) and nothing is looked up. NaN when they do not fit
    /// the buffer.
    #[wasm_bindgen(js_name = beginInput)]
    pub fn begin_input(&mut self, key_len: u32, fingerprint_len: u32, now_ms: f64) -> f64 {
        INPUT.with_borrow(|b| {
            let (k, f) = (key_len as usize, fingerprint_len as usize);
            match (b.get(..k), b.get(k..k.saturating_add(f))) {
                (Some(key), Some(_)) if !key_bytes_valid(key) => INVALID_KEY,
                (Some(key), Some(text)) => self.begin_bytes(key, text, now_ms),
                _ => f64::NAN,
            }
        })
    }

    /// Whether the key in the input buffer's first `key_len` bytes has a run in flight for the
    /// fingerprint text in the next `fingerprint_len` (0: none), written as for `beginInput`
    /// ([`StoreCore::runs_bytes`]): what a run asks before it sends a later attempt. `false`
    /// when they do not fit the buffer.
    #[wasm_bindgen(js_name = runsInput)]
    pub fn runs_input(&self, key_len: u32, fingerprint_len: u32) -> bool {
        INPUT.with_borrow(|b| {
            let (k, f) = (key_len as usize, fingerprint_len as usize);
            match (b.get(..k), b.get(k..k.saturating_add(f))) {
                (Some(key), Some(text)) => self.runs_bytes(key, text),
                _ => false,
            }
        })
    }
}
