//! Helpers shared by the boundary suites: the exported structs do not implement `Debug`, so
//! `Result::unwrap`/`unwrap_err` are not available on their constructors.
use steadfast::wasm::{input_buffer, StoreCore};
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

/// `StoreCore` begin as the package calls it: `key` and then `fp` written into the core's input
/// buffer, then `beginInput` with their byte lengths.
pub fn begin(s: &mut StoreCore, key: &str, fp: &str, now: f64) -> f64 {
    let bytes = [key.as_bytes(), fp.as_bytes()].concat();
    begin_split(s, &bytes, key.len() as u32, now)
}

/// `runsInput` as the package calls it: `key` and then `fp` written into the input buffer.
pub fn runs(s: &StoreCore, key: &str, fp: &str) -> bool {
    let bytes = [key.as_bytes(), fp.as_bytes()].concat();
    let ptr = input_buffer(bytes.len() as u32) as *mut u8;
    // SAFETY: input_buffer made the buffer at least this long, and nothing else holds it.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len()) };
    s.runs_input(key.len() as u32, fp.len() as u32)
}

/// `beginInput` over `bytes` written into the input buffer, the key being its first `key_len`.
pub fn begin_split(s: &mut StoreCore, bytes: &[u8], key_len: u32, now: f64) -> f64 {
    let ptr = input_buffer(bytes.len() as u32) as *mut u8;
    // SAFETY: input_buffer made the buffer at least this long, and nothing else holds it.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len()) };
    s.begin_input(key_len, bytes.len() as u32 - key_len, now)
}
