//! How a core error crosses the boundary: the thrown value the JS shell turns into its own error.
//!
//! Why a string and not an object: a validation failure becomes a `RangeError` naming the option
//! and the offending value, which only JS can render faithfully, so the boundary throws
//! `"<option>\u{1}<must be …>"`; any other core error throws its stable code (`KEY_NOT_FOUND` …),
//! which the JS shell maps to its typed error.

use wasm_bindgen::JsValue;

use crate::core::error::Error;

/// Encode a core error as the thrown value (see above).
///
/// The text is gathered as a row of pieces, then joined by one loop: a single `push_str` site
/// instead of one inlined per piece and a `char` push per digit (wasm size).
pub(crate) fn throw(e: Error) -> JsValue {
    let mut pieces = [""; 14];
    let [first, separator, head, digits @ .., tail] = &mut pieces;
    match e {
        Error::InvalidOption { option, expected } => {
            let (text, number, rest) = expected.parts();
            (*first, *separator, *head, *tail) = (option.name(), "\u{1}", text, rest);
            if let Some(n) = number {
                decimal(n, digits);
            }
        }
        other => *first = other.code(),
    }
    let mut s = String::new();
    for piece in &pieces {
        s.push_str(piece);
    }
    JsValue::from_str(&s)
}

/// The decimal digits of `n` as one-digit pieces, right-aligned in `out` (a `u32` has at most 10).
fn decimal(mut n: u32, out: &mut [&'static str; 10]) {
    const DIGITS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
    for slot in out.iter_mut().rev() {
        *slot = DIGITS.get((n % 10) as usize).copied().unwrap_or_default();
        n /= 10;
        if n == 0 {
            break;
        }
    }
}
