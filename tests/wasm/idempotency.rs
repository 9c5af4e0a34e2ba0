//! StoreCore across the boundary, by key (the key → slot index is the core's): the `begin`
//! encoding (slot * 16 + expired * 8 + kind), the fingerprint as four 32-bit words, complete, the
//! resolve codes (with compare-and-set), slotOf, the peek layout, unknown slots, expiry, the
//! maxRecords refusal, and the key rule, fingerprint and defaults the JS side reads from here.
use steadfast::wasm::{fingerprint_words, input_buffer, key_rule, store_defaults, StoreCore};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{begin, begin_split, ok, option_error, runs};

const RUN: f64 = 0.0;
const REPLAY: f64 = 1.0;
const IN_FLIGHT: f64 = 2.0;
const UNKNOWN: f64 = 3.0;
const MISMATCH: f64 = 4.0;
const FULL: f64 = 5.0;
/// `beginInput`'s answer for a key that fails the key rule.
const INVALID_KEY: f64 = -1.0;
/// No fingerprint (`begin`'s empty text).
const NO_FP: &str = "";

const SUCCESS: u32 = 0;
const TRANSIENT: u32 = 1;
const DEFINITIVE: u32 = 2;

const RESOLVED: f64 = 0.0;
const NOT_FOUND: f64 = 1.0;
const WRONG_STATE: f64 = 2.0;

fn decode(code: f64) -> (u32, bool, f64) {
    ((code / 16.0).floor() as u32, code % 16.0 >= 8.0, code % 8.0)
}

/// `begin` with the expired flag masked off.
fn kind_at(s: &mut StoreCore, key: &str, fp: &str, now: f64) -> (u32, f64) {
    let (slot, _, kind) = decode(begin(s, key, fp, now));
    (slot, kind)
}

#[wasm_bindgen_test]
fn begin_encodes_slot_and_kind() {
    let mut s = ok(StoreCore::new(None, None));
    assert_eq!(kind_at(&mut s, "a", NO_FP, 0.0), (0, RUN));
    assert_eq!(
        kind_at(&mut s, "b", NO_FP, 0.0),
        (1, RUN),
        "second key, slot 1"
    );
    assert_eq!(kind_at(&mut s, "a", NO_FP, 1.0), (0, IN_FLIGHT));
    assert_eq!(s.size(), 2);
    assert!(
        !s.complete(0, SUCCESS, 2.0),
        "success does not free the slot"
    );
    assert_eq!(kind_at(&mut s, "a", NO_FP, 3.0), (0, REPLAY));
    assert!(!s.complete(1, TRANSIENT, 2.0));
    assert_eq!(kind_at(&mut s, "b", NO_FP, 3.0), (1, UNKNOWN));
    assert_eq!(
        (s.slot_of("a"), s.slot_of("b"), s.slot_of("c")),
        (0.0, 1.0, -1.0)
    );
    // The key rule is applied here: a key that fails it answers INVALID_KEY, never a record or a trap.
    let size = s.size();
    for odd in ["", "é", "\0", "k ", " k", &"x".repeat(256)] {
        assert_eq!(begin(&mut s, odd, NO_FP, 4.0), INVALID_KEY, "{odd:?}");
        assert_eq!(begin(&mut s, odd, "f:1", 4.0), INVALID_KEY, "{odd:?}");
    }
    assert_eq!(s.size(), size, "nothing was recorded for them");
    assert_eq!(kind_at(&mut s, &"x".repeat(255), NO_FP, 4.0).1, RUN);
}

#[wasm_bindgen_test]
fn a_key_is_judged_by_its_first_utf16_length_bytes_as_the_js_shell_writes_them() {
    // JS writes key + text as one UTF-8 run and names the key's UTF-16 length: for a key beyond
    // ASCII those bytes are not the key's, and they fail the rule whatever text follows.
    let mut s = ok(StoreCore::new(None, None));
    for (key, text) in [("aé", "b"), ("é", "ab"), ("order-é", "f:{}"), ("😀k", "kk")] {
        let units = key.encode_utf16().count() as u32;
        let bytes = [key.as_bytes(), text.as_bytes()].concat();
        let answer = begin_split(&mut s, &bytes, units, 1.0);
        assert_eq!(answer, INVALID_KEY, "{key:?} + {text:?}");
    }
    assert_eq!(s.size(), 0);
    assert_eq!(
        decode(begin_split(&mut s, b"abf:1", 2, 1.0)),
        (0, false, RUN)
    );
    assert_eq!(s.slot_of("ab"), 0.0);
}

#[wasm_bindgen_test]
fn begin_through_the_input_buffer_splits_key_and_text_where_told() {
    let mut a = ok(StoreCore::new(None, None));
    let steps = [
        (("ab", "cd", 0.0), (0, RUN)),
        (("abc", "d", 0.0), (1, RUN)), // another key, not "ab" + "cd" split elsewhere
        (("ab", "cd", 1.0), (0, IN_FLIGHT)),
        (("ab", "cx", 1.0), (0, MISMATCH)),
        (("e", "éf:1", 2.0), (2, RUN)), // lengths in bytes: "é" is two
        (("e", "", 2.0), (2, MISMATCH)), // no fingerprint: not the text it began with
        (("x", "", 3.0), (3, RUN)),
    ];
    for ((key, fp, now), want) in steps {
        assert_eq!(kind_at(&mut a, key, fp, now), want, "{key:?} {fp:?}");
    }
    assert_eq!(
        (
            a.slot_of("ab"),
            a.slot_of("abc"),
            a.slot_of("e"),
            a.slot_of("abcd")
        ),
        (0.0, 1.0, 2.0, -1.0),
        "the index holds each key alone, never key + text"
    );
    // Lengths beyond the buffer are NaN, never a trap or a record of a wrong key.
    let len = input_buffer(0);
    assert!(len > 0, "the buffer has an address");
    assert!(a.begin_input(u32::MAX, 0, 5.0).is_nan());
    assert!(a.begin_input(1, u32::MAX, 5.0).is_nan());
    assert_eq!(a.size(), 4, "nothing was recorded for them");
}

#[wasm_bindgen_test]
fn a_later_attempt_runs_only_while_its_key_is_in_flight_for_the_same_text() {
    let mut a = ok(StoreCore::new(None, None));
    assert_eq!(
        kind_at(&mut a, "k", "f:{\"amountCents\":1000}", 0.0),
        (0, RUN)
    );
    assert!(runs(&a, "k", "f:{\"amountCents\":1000}"));
    assert!(
        !runs(&a, "k", "f:{\"amountCents\":100000}"),
        "the charge changed"
    );
    assert!(!runs(&a, "k", ""), "no fingerprint is another request");
    assert!(
        !runs(&a, "other", "f:{\"amountCents\":1000}"),
        "a key with no record"
    );
    // Lengths beyond the buffer are false, never a trap.
    assert!(!a.runs_input(u32::MAX, 0));
    assert!(!a.runs_input(1, u32::MAX));
    // Ended runs send nothing more: unknown, then (reconciled) done.
    a.complete(0, TRANSIENT, 1.0);
    assert!(!runs(&a, "k", "f:{\"amountCents\":1000}"));
}

#[wasm_bindgen_test]
fn the_expired_flag_says_when_to_drain() {
    let mut s = ok(StoreCore::new(Some(1000.0), None));
    let (_, expired, _) = decode(begin(&mut s, "a", NO_FP, 0.0));
    assert!(!expired);
    s.complete(0, SUCCESS, 0.0);
    // The sweep is due every ttl/4 = 250 ms at most: a begin at 5000 sweeps, and says so.
    let (slot, expired, kind) = decode(begin(&mut s, "b", NO_FP, 5000.0));
    assert!(expired, "slot 0 expired and was swept during this begin");
    assert_eq!(s.take_expired(), vec![0]);
    assert_eq!(
        (slot, kind),
        (1, RUN),
        "the new key did not take slot 0 before it was drained"
    );
    assert_eq!(s.slot_of("a"), -1.0, "the expired key left the index");
}

#[wasm_bindgen_test]
fn definitive_failure_frees_the_slot_for_reuse() {
    let mut s = ok(StoreCore::new(None, None));
    assert_eq!(kind_at(&mut s, "a", NO_FP, 0.0), (0, RUN));
    assert!(s.complete(0, DEFINITIVE, 1.0), "freed");
    assert_eq!(s.size(), 0);
    assert_eq!(s.slot_of("a"), -1.0);
    assert!(s.peek(0, 1.0).is_empty());
    assert_eq!(kind_at(&mut s, "b", NO_FP, 2.0), (0, RUN), "slot 0 reused");
    assert!(!s.complete(0, SUCCESS, 3.0));
    assert!(!s.complete(0, SUCCESS, 3.0), "completing twice is ignored");
    assert!(!s.complete(99, SUCCESS, 3.0), "an unknown slot is ignored");
    assert_eq!(kind_at(&mut s, "b", NO_FP, 4.0), (0, REPLAY));
    assert_eq!(
        kind_at(&mut s, "a", NO_FP, 4.0),
        (1, RUN),
        "a freed key starts afresh"
    );
}

#[wasm_bindgen_test]
fn fingerprints_mismatch_in_every_state_strictly() {
    let mut s = ok(StoreCore::new(None, None));
    let (a, b) = ("f:4999 usd", "f:5999 usd");
    assert_eq!(kind_at(&mut s, "k", a, 0.0), (0, RUN));
    assert_eq!(kind_at(&mut s, "k", b, 0.0), (0, MISMATCH));
    assert_eq!(kind_at(&mut s, "k", a, 0.0).1, IN_FLIGHT);
    assert_eq!(
        kind_at(&mut s, "k", NO_FP, 0.0).1,
        MISMATCH,
        "no fingerprint differs from a fingerprint"
    );
    s.complete(0, SUCCESS, 0.0);
    assert_eq!(kind_at(&mut s, "k", b, 0.0).1, MISMATCH);
    assert_eq!(kind_at(&mut s, "k", a, 0.0).1, REPLAY);
    // Texts differing in one byte anywhere differ (the core hashes what crossed, all of it).
    for i in 0..a.len() {
        let mut c = a.as_bytes().to_vec();
        c[i] ^= 1;
        let c = String::from_utf8(c).unwrap_or_default();
        assert_eq!(kind_at(&mut s, "k", &c, 0.0).1, MISMATCH, "byte {i}");
    }
    let long = "f:".to_string() + &"x".repeat(10_000);
    assert_eq!(kind_at(&mut s, "k", &long, 0.0).1, MISMATCH, "a long text");
}

#[wasm_bindgen_test]
fn fingerprint_words_are_sha256_truncated_to_128_bits() {
    assert_eq!(
        fingerprint_words("abc"),
        vec![0xba78_16bf, 0x8f01_cfea, 0x4141_40de, 0x5dae_2223]
    );
    assert_eq!(
        fingerprint_words(""),
        vec![0xe3b0_c442, 0x98fc_1c14, 0x9afb_f4c8, 0x996f_b924]
    );
}

#[wasm_bindgen_test]
fn peek_layout() {
    let mut s = ok(StoreCore::new(None, None));
    begin(&mut s, "a", NO_FP, 10.0);
    // [status (0 in flight, 1 done, 2 unknown), startedAtMs (NaN for done: not kept)]
    assert_eq!(s.peek(0, 11.0), vec![0.0, 10.0]);
    s.complete(0, TRANSIENT, 20.0);
    assert_eq!(s.peek(0, 21.0), vec![2.0, 10.0]);
    begin(&mut s, "b", NO_FP, 30.0);
    s.complete(1, SUCCESS, 40.0);
    let done = s.peek(1, 41.0);
    assert_eq!(done.len(), 2);
    assert_eq!(done[0], 1.0);
    assert!(done[1].is_nan(), "a done record keeps no start: {done:?}");
    assert!(s.peek(7, 0.0).is_empty());
}

#[wasm_bindgen_test]
fn resolve_codes_compare_and_set_and_unknown_slots() {
    let mut s = ok(StoreCore::new(None, None));
    for (slot, (key, at)) in [("k0", 5.0), ("k1", 1.0), ("k2", 2.0)]
        .into_iter()
        .enumerate()
    {
        assert_eq!(kind_at(&mut s, key, NO_FP, at), (slot as u32, RUN));
    }
    s.complete(0, TRANSIENT, 10.0);
    s.complete(1, TRANSIENT, 10.0);
    assert_eq!(s.unknown_slots(), vec![1, 0], "oldest first");
    assert_eq!(s.resolve("k9", true, None, 0.0), NOT_FOUND, "no record");
    assert_eq!(
        s.resolve("k2", true, None, 0.0),
        WRONG_STATE,
        "in flight is not unknown"
    );
    s.complete(2, SUCCESS, 10.0);
    assert_eq!(
        s.resolve("k2", false, None, 0.0),
        WRONG_STATE,
        "done is not unknown"
    );
    assert_eq!(
        s.resolve("k1", true, Some(0.0), 20.0),
        WRONG_STATE,
        "another attempt (began at 1, not 0)"
    );
    assert_eq!(s.resolve("k1", true, Some(1.0), 20.0), RESOLVED);
    assert_eq!(kind_at(&mut s, "k1", NO_FP, 21.0), (1, REPLAY));
    assert_eq!(s.resolve("k0", false, None, 20.0), RESOLVED);
    assert!(s.peek(0, 21.0).is_empty(), "failed: freed");
    assert_eq!(s.slot_of("k0"), -1.0, "and out of the index");
    assert!(s.unknown_slots().is_empty());
    assert_eq!(
        kind_at(&mut s, "k3", NO_FP, 22.0),
        (0, RUN),
        "the freed slot is reused"
    );
}

#[wasm_bindgen_test]
fn done_records_expire_after_the_ttl_and_are_swept() {
    let mut s = ok(StoreCore::new(Some(1000.0), None));
    begin(&mut s, "a", NO_FP, 0.0);
    s.complete(0, SUCCESS, 0.0);
    begin(&mut s, "b", NO_FP, 0.0);
    s.complete(1, TRANSIENT, 0.0);
    assert_eq!(kind_at(&mut s, "a", NO_FP, 999.0), (0, REPLAY));
    assert!(s.peek(0, 1000.0).is_empty(), "expired at exactly ttl");
    s.sweep(5000.0);
    assert_eq!(s.take_expired(), vec![0]);
    assert!(s.take_expired().is_empty());
    assert_eq!(s.size(), 1, "the unknown one stays (unknown never expires)");
    assert_eq!(kind_at(&mut s, "b", NO_FP, 1e12), (1, UNKNOWN));
    assert_eq!(
        kind_at(&mut s, "c", NO_FP, 5001.0),
        (0, RUN),
        "the freed slot is reused"
    );
}

#[wasm_bindgen_test]
fn an_expired_done_record_restarts_in_place() {
    let mut s = ok(StoreCore::new(Some(1000.0), None));
    begin(&mut s, "a", "f:a", 0.0);
    s.complete(0, SUCCESS, 0.0);
    // Not swept yet, the key still maps to slot 0: past the TTL it runs again, there, and the
    // old fingerprint no longer binds it.
    assert_eq!(kind_at(&mut s, "a", "f:b", 2000.0), (0, RUN));
    assert_eq!(s.size(), 1);
}

#[wasm_bindgen_test]
fn a_full_store_refuses_new_keys_only() {
    let mut s = ok(StoreCore::new(None, Some(2.0)));
    assert_eq!(s.max_records(), 2);
    assert_eq!(kind_at(&mut s, "a", NO_FP, 0.0).1, RUN);
    assert_eq!(kind_at(&mut s, "b", NO_FP, 0.0).1, RUN);
    assert_eq!(kind_at(&mut s, "c", NO_FP, 0.0).1, FULL);
    assert_eq!(s.slot_of("c"), -1.0, "a refused key is not indexed");
    assert_eq!(
        kind_at(&mut s, "a", NO_FP, 0.0),
        (0, IN_FLIGHT),
        "known keys still answer"
    );
    assert_eq!(s.size(), 2);
}

#[wasm_bindgen_test]
fn the_key_rule_and_the_defaults_are_data() {
    assert_eq!(key_rule(), vec![1, 255, 0x20, 0x7e, 0x21]);
    assert_eq!(
        store_defaults(),
        vec![
            86_400_000.0,
            1_000_000.0,
            120_000.0,
            2_592_000_000.0,
            315_360_000_000.0
        ]
    );
}

#[wasm_bindgen_test]
fn limits_are_validated() {
    // Every duration is bounded (10 years): 1e17 ms was accepted and then broke every completion.
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 315_360_000_001.0, 1e17] {
        let (o, r) = option_error(StoreCore::new(Some(bad), None));
        assert_eq!(
            (o.as_str(), r.as_str()),
            (
                "ttlMs",
                "a number of ms > 0 and at most 315360000000 (10 years)"
            ),
            "{bad}"
        );
    }
    assert!(StoreCore::new(Some(315_360_000_000.0), None).is_ok());
    for bad in [0.0, 1.5, f64::NAN, 2f64.powi(31)] {
        let (o, _) = option_error(StoreCore::new(None, Some(bad)));
        assert_eq!(o, "maxRecords", "{bad}");
    }
}
