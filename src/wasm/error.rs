//! How a core error crosses the boundary: the thrown value the JS shell turns into its own error.
//!
//! Why a string and not an object: a validation failure becomes a `RangeError` naming the option
//! and the offending value, which only JS can render faithfully, so the boundary throws
//! `"<option>\u{1}<must be …>"`; any other core error throws its stable code (`KEY_NOT_FOUND` …),
//! which the JS shell maps to its typed error.

use wasm_bindgen::JsValue;

use crate::core::error::Error;

/// Encode a core error as the thrown value (see above).
pub(crate) fn throw(e: Error) -> JsValue {
    let mut s = String::new();
    match e {
        Error::InvalidOption { option, expected } => {
            s.push_str(option.name());
            s.push('\u{1}');
            expected.describe(&mut s);
        }
        other => {
            s.push_str(other.code());
        }
    }
    JsValue::from_str(&s)
}
