//! Helpers shared by the boundary suites: the exported structs do not implement `Debug`, so
//! `Result::unwrap`/`unwrap_err` are not available on their constructors.
use wasm_bindgen::JsValue;

/// The value of an `Ok`, or a panic showing the thrown string.
pub fn ok<T>(r: Result<T, JsValue>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("expected Ok, got thrown {:?}", e.as_string()),
    }
}

/// The thrown value of an `Err`, as a string (every boundary error is a JS string).
pub fn thrown<T>(r: Result<T, JsValue>) -> String {
    match r {
        Ok(_) => panic!("expected a thrown error, got Ok"),
        Err(e) => e
            .as_string()
            .unwrap_or_else(|| panic!("thrown value is not a string")),
    }
}

/// An option error as thrown across the boundary: `"<option>\u{1}<rule>"`.
pub fn option_error<T>(r: Result<T, JsValue>) -> (String, String) {
    let s = thrown(r);
    match s.split_once('\u{1}') {
        Some((option, rule)) => (option.to_owned(), rule.to_owned()),
        None => panic!("not an option error: {s:?}"),
    }
}
