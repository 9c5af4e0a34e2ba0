//! StoreCore across the boundary: the `begin` encoding (slot * 16 + expired * 8 + kind), complete,
//! resolve codes, peek layout, unknown keys and expiry.
use steadfast::wasm::StoreCore;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{ok, option_error};

const RUN: f64 = 0.0;
const REPLAY: f64 = 1.0;
const IN_FLIGHT: f64 = 2.0;
const UNKNOWN: f64 = 3.0;
const MISMATCH: f64 = 4.0;
const INVALID_KEY: f64 = 5.0;
const EXPIRED: f64 = 8.0;

const SUCCESS: u32 = 0;
const TRANSIENT: u32 = 1;
const DEFINITIVE: u32 = 2;

fn decode(code: f64) -> (u32, bool, f64) {
    ((code / 16.0).floor() as u32, code % 16.0 >= 8.0, code % 8.0)
}

#[wasm_bindgen_test]
fn begin_encodes_slot_and_kind() {
    let mut s = ok(StoreCore::new(None));
    assert_eq!(s.begin("a", None, 0.0), RUN);
    assert_eq!(s.begin("b", None, 0.0), 16.0 + RUN, "second key, slot 1");
    assert_eq!(
        s.begin("a", None, 1.0),
        IN_FLIGHT,
        "in flight: slot part is 0"
    );
    assert_eq!(s.size(), 2);
    assert!(
        !s.complete(0, SUCCESS, 2.0),
        "success does not free the slot"
    );
    assert_eq!(s.begin("a", None, 3.0), REPLAY);
    assert!(!s.complete(1, TRANSIENT, 2.0));
    assert_eq!(s.begin("b", None, 3.0), 16.0 + UNKNOWN);
    assert_eq!(decode(s.begin("b", None, 3.0)), (1, false, UNKNOWN));
    for bad in ["", "ключ", "tab\t", &"x".repeat(256)] {
        assert_eq!(s.begin(bad, None, 0.0), INVALID_KEY, "{bad:?}");
    }
    assert_eq!(s.begin(&"x".repeat(255), None, 0.0), 32.0 + RUN);
}

#[wasm_bindgen_test]
fn definitive_failure_frees_the_slot_for_reuse() {
    let mut s = ok(StoreCore::new(None));
    assert_eq!(s.begin("a", None, 0.0), RUN);
    assert!(s.complete(0, DEFINITIVE, 1.0), "freed");
    assert_eq!(s.size(), 0);
    assert!(s.peek("a", 1.0).is_empty());
    assert_eq!(s.begin("c", None, 2.0), RUN, "slot 0 reused");
    assert!(!s.complete(0, SUCCESS, 3.0));
    assert!(!s.complete(0, SUCCESS, 3.0), "completing twice is ignored");
    assert!(!s.complete(99, SUCCESS, 3.0), "an unknown slot is ignored");
    assert_eq!(s.begin("c", None, 4.0), REPLAY);
}

#[wasm_bindgen_test]
fn fingerprints_mismatch_in_every_state() {
    let mut s = ok(StoreCore::new(None));
    assert_eq!(s.begin("a", Some("4999 usd".into()), 0.0), RUN);
    assert_eq!(s.begin("a", Some("5999 usd".into()), 0.0), MISMATCH);
    assert_eq!(s.begin("a", Some("4999 usd".into()), 0.0), IN_FLIGHT);
    assert_eq!(
        s.begin("a", None, 0.0),
        IN_FLIGHT,
        "no fingerprint: no check"
    );
    s.complete(0, SUCCESS, 0.0);
    assert_eq!(s.begin("a", Some("5999 usd".into()), 0.0), MISMATCH);
    assert_eq!(s.begin("a", Some("4999 usd".into()), 0.0), REPLAY);
}

#[wasm_bindgen_test]
fn peek_layout() {
    let mut s = ok(StoreCore::new(None));
    s.begin("a", None, 10.0);
    // [slot, status (0 in flight, 1 done, 2 unknown), startedAtMs]
    assert_eq!(s.peek("a", 11.0), vec![0.0, 0.0, 10.0]);
    s.complete(0, TRANSIENT, 20.0);
    assert_eq!(s.peek("a", 21.0), vec![0.0, 2.0, 10.0]);
    s.begin("b", None, 30.0);
    s.complete(1, SUCCESS, 40.0);
    assert_eq!(s.peek("b", 41.0), vec![1.0, 1.0, 30.0]);
    assert!(s.peek("nope", 0.0).is_empty());
    assert_eq!(
        s.peek("", 0.0),
        vec![-1.0],
        "an invalid key is [-1]: JS throws INVALID_KEY"
    );
}

#[wasm_bindgen_test]
fn resolve_codes_and_unknown_keys() {
    let mut s = ok(StoreCore::new(None));
    for (slot, (key, at)) in [("late", 5.0), ("early", 1.0), ("done", 2.0)]
        .into_iter()
        .enumerate()
    {
        assert_eq!(s.begin(key, None, at), 16.0 * slot as f64);
    }
    s.complete(0, TRANSIENT, 10.0);
    s.complete(1, TRANSIENT, 10.0);
    assert_eq!(
        s.unknown_keys(),
        vec!["early".to_owned(), "late".to_owned()],
        "oldest first"
    );
    assert_eq!(s.resolve("", true, 0.0), -1.0, "invalid key");
    assert_eq!(s.resolve("nope", true, 0.0), -2.0, "no record");
    assert_eq!(
        s.resolve("done", true, 0.0),
        -3.0,
        "in flight is not unknown"
    );
    s.complete(2, SUCCESS, 10.0);
    assert_eq!(s.resolve("done", false, 0.0), -3.0, "done is not unknown");
    assert_eq!(s.resolve("early", true, 20.0), 1.0, "its slot");
    assert_eq!(s.begin("early", None, 21.0), 16.0 + REPLAY);
    assert_eq!(s.resolve("late", false, 20.0), 0.0);
    assert!(s.peek("late", 21.0).is_empty(), "failed: freed");
    assert!(s.unknown_keys().is_empty());
    assert_eq!(s.begin("late", None, 22.0), RUN);
}

#[wasm_bindgen_test]
fn done_keys_expire_after_the_ttl_and_are_swept() {
    let mut s = ok(StoreCore::new(Some(1000.0)));
    s.begin("a", None, 0.0);
    s.complete(0, SUCCESS, 0.0);
    s.begin("u", None, 0.0);
    s.complete(1, TRANSIENT, 0.0);
    assert_eq!(s.begin("a", None, 999.0), REPLAY);
    assert!(s.peek("a", 1000.0).is_empty(), "expired at exactly ttl");
    let code = s.begin("b", None, 5000.0);
    let (slot, expired, kind) = decode(code);
    assert!(expired, "the sweep freed a slot: {code}");
    assert_eq!(kind, RUN);
    assert_eq!(s.take_expired(), vec![0]);
    assert!(s.take_expired().is_empty());
    assert_eq!(slot, 0, "and the freed slot is reused");
    assert_eq!(s.size(), 2, "b and the unknown u (unknown never expires)");
    assert_eq!(s.begin("u", None, 1e12), 16.0 + UNKNOWN);
    assert_eq!(EXPIRED, 8.0);
}

#[wasm_bindgen_test]
fn ttl_must_be_positive() {
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let (o, r) = option_error(StoreCore::new(Some(bad)));
        assert_eq!(
            (o.as_str(), r.as_str()),
            ("ttlMs", "a finite number > 0"),
            "{bad}"
        );
    }
}
