//! StoreCore across the boundary, by slot (the key index is the JS side's): the `begin` encoding
//! (slot * 16 + sweepDue * 8 + kind), complete, resolve codes, peek layout, unknown slots, expiry,
//! and the key rule the JS side applies to new keys.
use steadfast::wasm::{key_rule, StoreCore};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{ok, option_error};

const RUN: f64 = 0.0;
const REPLAY: f64 = 1.0;
const IN_FLIGHT: f64 = 2.0;
const UNKNOWN: f64 = 3.0;
const MISMATCH: f64 = 4.0;
const NEW: f64 = -1.0;
const NO_FP: f64 = f64::NAN;

const SUCCESS: u32 = 0;
const TRANSIENT: u32 = 1;
const DEFINITIVE: u32 = 2;

fn decode(code: f64) -> (u32, bool, f64) {
    ((code / 16.0).floor() as u32, code % 16.0 >= 8.0, code % 8.0)
}

/// `begin` with the sweep flag masked off (the first begin of a store is always "sweep due").
fn kind_at(s: &mut StoreCore, slot: f64, fp: f64, now: f64) -> (u32, f64) {
    let (slot, _, kind) = decode(s.begin(slot, fp, now));
    (slot, kind)
}

#[wasm_bindgen_test]
fn begin_encodes_slot_and_kind() {
    let mut s = ok(StoreCore::new(None));
    assert_eq!(kind_at(&mut s, NEW, NO_FP, 0.0), (0, RUN));
    assert_eq!(
        kind_at(&mut s, NEW, NO_FP, 0.0),
        (1, RUN),
        "second key, slot 1"
    );
    assert_eq!(kind_at(&mut s, 0.0, NO_FP, 1.0), (0, IN_FLIGHT));
    assert_eq!(s.size(), 2);
    assert!(
        !s.complete(0, SUCCESS, 2.0),
        "success does not free the slot"
    );
    assert_eq!(kind_at(&mut s, 0.0, NO_FP, 3.0), (0, REPLAY));
    assert!(!s.complete(1, TRANSIENT, 2.0));
    assert_eq!(kind_at(&mut s, 1.0, NO_FP, 3.0), (1, UNKNOWN));
    // A garbage slot from JS is a new key, never a trap.
    for garbage in [f64::NAN, -5.0, 1.5, f64::INFINITY, 1e300] {
        assert_eq!(kind_at(&mut s, garbage, NO_FP, 4.0).1, RUN, "{garbage}");
    }
}

#[wasm_bindgen_test]
fn the_sweep_flag_says_when_to_sweep() {
    let mut s = ok(StoreCore::new(Some(1000.0)));
    let (_, due, _) = decode(s.begin(NEW, NO_FP, 0.0));
    assert!(due, "never swept yet");
    s.sweep(0.0);
    let (_, due, _) = decode(s.begin(NEW, NO_FP, 100.0));
    assert!(!due, "swept 100 ms ago (every ttl/4 = 250 ms at most)");
    let (_, due, _) = decode(s.begin(NEW, NO_FP, 250.0));
    assert!(due);
}

#[wasm_bindgen_test]
fn definitive_failure_frees_the_slot_for_reuse() {
    let mut s = ok(StoreCore::new(None));
    assert_eq!(kind_at(&mut s, NEW, NO_FP, 0.0), (0, RUN));
    assert!(s.complete(0, DEFINITIVE, 1.0), "freed");
    assert_eq!(s.size(), 0);
    assert!(s.peek(0, 1.0).is_empty());
    assert_eq!(kind_at(&mut s, NEW, NO_FP, 2.0), (0, RUN), "slot 0 reused");
    assert!(!s.complete(0, SUCCESS, 3.0));
    assert!(!s.complete(0, SUCCESS, 3.0), "completing twice is ignored");
    assert!(!s.complete(99, SUCCESS, 3.0), "an unknown slot is ignored");
    assert_eq!(kind_at(&mut s, 0.0, NO_FP, 4.0), (0, REPLAY));
}

#[wasm_bindgen_test]
fn fingerprints_mismatch_in_every_state() {
    let mut s = ok(StoreCore::new(None));
    let (a, b) = (4999.0, 5999.0);
    assert_eq!(kind_at(&mut s, NEW, a, 0.0), (0, RUN));
    assert_eq!(kind_at(&mut s, 0.0, b, 0.0).1, MISMATCH);
    assert_eq!(kind_at(&mut s, 0.0, a, 0.0).1, IN_FLIGHT);
    assert_eq!(
        kind_at(&mut s, 0.0, NO_FP, 0.0).1,
        IN_FLIGHT,
        "no fingerprint: no check"
    );
    s.complete(0, SUCCESS, 0.0);
    assert_eq!(kind_at(&mut s, 0.0, b, 0.0).1, MISMATCH);
    assert_eq!(kind_at(&mut s, 0.0, a, 0.0).1, REPLAY);
    // Out-of-range hashes are "no fingerprint", not a trap.
    assert_eq!(kind_at(&mut s, 0.0, -1.0, 0.0).1, REPLAY);
    assert_eq!(kind_at(&mut s, 0.0, 2f64.powi(60), 0.0).1, REPLAY);
}

#[wasm_bindgen_test]
fn peek_layout() {
    let mut s = ok(StoreCore::new(None));
    s.begin(NEW, NO_FP, 10.0);
    // [status (0 in flight, 1 done, 2 unknown), startedAtMs]
    assert_eq!(s.peek(0, 11.0), vec![0.0, 10.0]);
    s.complete(0, TRANSIENT, 20.0);
    assert_eq!(s.peek(0, 21.0), vec![2.0, 10.0]);
    s.begin(NEW, NO_FP, 30.0);
    s.complete(1, SUCCESS, 40.0);
    assert_eq!(s.peek(1, 41.0), vec![1.0, 30.0]);
    assert!(s.peek(7, 0.0).is_empty());
}

#[wasm_bindgen_test]
fn resolve_codes_and_unknown_slots() {
    let mut s = ok(StoreCore::new(None));
    for (slot, at) in [5.0, 1.0, 2.0].into_iter().enumerate() {
        assert_eq!(kind_at(&mut s, NEW, NO_FP, at), (slot as u32, RUN));
    }
    s.complete(0, TRANSIENT, 10.0);
    s.complete(1, TRANSIENT, 10.0);
    assert_eq!(s.unknown_slots(), vec![1, 0], "oldest first");
    assert_eq!(s.resolve(9, true, 0.0), -2.0, "no record");
    assert_eq!(s.resolve(2, true, 0.0), -3.0, "in flight is not unknown");
    s.complete(2, SUCCESS, 10.0);
    assert_eq!(s.resolve(2, false, 0.0), -3.0, "done is not unknown");
    assert_eq!(s.resolve(1, true, 20.0), 0.0);
    assert_eq!(kind_at(&mut s, 1.0, NO_FP, 21.0), (1, REPLAY));
    assert_eq!(s.resolve(0, false, 20.0), 0.0);
    assert!(s.peek(0, 21.0).is_empty(), "failed: freed");
    assert!(s.unknown_slots().is_empty());
    assert_eq!(
        kind_at(&mut s, NEW, NO_FP, 22.0),
        (0, RUN),
        "the freed slot is reused"
    );
}

#[wasm_bindgen_test]
fn done_records_expire_after_the_ttl_and_are_swept() {
    let mut s = ok(StoreCore::new(Some(1000.0)));
    s.begin(NEW, NO_FP, 0.0);
    s.complete(0, SUCCESS, 0.0);
    s.begin(NEW, NO_FP, 0.0);
    s.complete(1, TRANSIENT, 0.0);
    assert_eq!(kind_at(&mut s, 0.0, NO_FP, 999.0), (0, REPLAY));
    assert!(s.peek(0, 1000.0).is_empty(), "expired at exactly ttl");
    s.sweep(5000.0);
    assert_eq!(s.take_expired(), vec![0]);
    assert!(s.take_expired().is_empty());
    assert_eq!(s.size(), 1, "the unknown one stays (unknown never expires)");
    assert_eq!(kind_at(&mut s, 1.0, NO_FP, 1e12), (1, UNKNOWN));
    assert_eq!(
        kind_at(&mut s, NEW, NO_FP, 5001.0),
        (0, RUN),
        "the freed slot is reused"
    );
}

#[wasm_bindgen_test]
fn an_expired_done_record_restarts_in_place() {
    let mut s = ok(StoreCore::new(Some(1000.0)));
    s.begin(NEW, 7.0, 0.0);
    s.complete(0, SUCCESS, 0.0);
    // The JS index still maps the key to slot 0: past the TTL it runs again, there, and the
    // old fingerprint no longer binds it.
    assert_eq!(kind_at(&mut s, 0.0, 8.0, 2000.0), (0, RUN));
    assert_eq!(s.size(), 1);
}

#[wasm_bindgen_test]
fn the_key_rule_is_data() {
    assert_eq!(key_rule(), vec![1, 255, 0x20, 0x7e]);
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
