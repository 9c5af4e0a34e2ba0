//! Numbers in the async shell's text (error messages, `Debug`, canonical JSON) without core's
//! float formatting on wasm32.
//!
//! Why: any `{}` or `{:?}` of an `f64` links `core::num`'s flt2dec (shortest and exact digit
//! generation, ~6 KB gzipped of a Rust app's module). On wasm32 JavaScript is at hand and its
//! `String(n)` is the rule canonical JSON follows anyway, so the shell asks it; natively the text
//! is Rust's, unchanged.

use std::fmt;

/// An `f64` written as `String(n)` writes it on wasm32 (`1`, `0.5`, `1e+21`), as Rust writes it
/// natively (`Display`: `1`, `Debug`: `1.0`).
#[derive(Clone, Copy)]
pub(crate) struct Num(pub(crate) f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        #[cfg(target_arch = "wasm32")]
        return f.write_str(&js_string(self.0));
        #[cfg(not(target_arch = "wasm32"))]
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        #[cfg(target_arch = "wasm32")]
        return f.write_str(&js_string(self.0));
        #[cfg(not(target_arch = "wasm32"))]
        fmt::Debug::fmt(&self.0, f)
    }
}

/// `Some(Num)` for `Debug` of an `Option<f64>` field.
pub(crate) fn opt(n: &Option<f64>) -> Option<Num> {
    n.map(Num)
}

/// JavaScript's `String(n)`.
#[cfg(target_arch = "wasm32")]
fn js_string(n: f64) -> String {
    js_sys::Number::from(n)
        .to_string_with_radix(10)
        .map(String::from)
        .unwrap_or_default()
}

/// Canonical JSON's number writer for this target (`core::canonical::NumberWriter`): JS's own
/// `String(n)` on wasm32, the core's natively.
pub(crate) fn canonical_number(out: &mut String, n: f64) {
    #[cfg(target_arch = "wasm32")]
    out.push_str(&js_string(n));
    #[cfg(not(target_arch = "wasm32"))]
    crate::core::canonical::write_finite(out, n);
}
