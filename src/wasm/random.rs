//! One process-wide SplitMix64, seeded once from the platform CSPRNG (`crypto.getRandomValues`
//! through getrandom), and UUID v4 idempotency keys straight from the CSPRNG.
//!
//! Why seed once: getrandom costs ~2 µs per call from wasm; a jitter draw from SplitMix64 costs a
//! few instructions. Keys, on the other hand, are made once per logical charge and must be
//! unguessable, so they take their 16 bytes from the CSPRNG every time.

use std::cell::Cell;

use wasm_bindgen::prelude::*;

use crate::core::rng::{uuid_v4, Rng, SplitMix64};

thread_local! {
    static STATE: Cell<Option<u64>> = const { Cell::new(None) };
}

/// 64 bits from the platform CSPRNG, or from `Math.random` when there is none.
pub(super) fn seed() -> u64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_ok() {
        return u64::from_le_bytes(bytes);
    }
    // No CSPRNG (should not happen on Node 24 or any browser): jitter only needs spread, not
    // secrecy, so Math.random is an acceptable seed; a store's hash seed only loses resistance to
    // crafted collisions. Idempotency keys never take this path (newIdempotencyKey refuses).
    (js_sys::Math::random() * 9_007_199_254_740_992.0) as u64
}

/// A uniform draw in `[0, 1)` from the shared generator.
pub(crate) fn unit() -> f64 {
    STATE.with(|cell| {
        let mut rng = SplitMix64::new(cell.get().unwrap_or_else(seed));
        let u = rng.next_unit();
        cell.set(Some(rng.state()));
        u
    })
}

/// Reseed the shared generator (tests and reproducible demos).
#[wasm_bindgen(js_name = seedRandom)]
pub fn seed_random(seed: f64) {
    STATE.with(|cell| cell.set(Some(seed as u64)));
}

/// A new UUID v4 from the CSPRNG, lower-case hex: one per logical charge, made at the API
/// boundary and reused on every attempt. Throws `"RANDOM_UNAVAILABLE"` if the platform has no
/// CSPRNG (never falls back to a guessable key).
#[wasm_bindgen(js_name = newIdempotencyKey)]
pub fn new_idempotency_key() -> Result<String, JsValue> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|_| JsValue::from_str("RANDOM_UNAVAILABLE"))?;
    Ok(uuid_v4(b))
}
