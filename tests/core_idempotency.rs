//! Model-based idempotency test: random begin / complete / resolve / peek / clock sequences over a
//! few keys, checked step by step against a reference model of the documented lifecycle.
//!
//! Why: the invariant that matters is "no double charge": a key never gets a second `Run` until
//! the first one is known not to have charged (definitive rejection, reconciled as failed) or its
//! success record expired. Slots must also be freed exactly once, or the caller leaks or drops
//! someone else's stored result.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use steadfast::core::error::Error;
use steadfast::core::idempotency::{Begin, Completion, IdempotencyTable, Peek, Resolution, Status};

const KEYS: [&str; 4] = ["a", "b", "order 42", "~"];
const FINGERPRINTS: [Option<&str>; 3] = [None, Some("amount=100"), Some("amount=999")];

#[derive(Debug, Clone, Copy)]
struct Rec {
    slot: u32,
    status: Status,
    fingerprint: Option<&'static str>,
    started: f64,
    expires: f64, // +inf unless Done
}

#[derive(Debug, Clone)]
enum Op {
    Begin(usize, usize),
    Complete(usize, Completion),
    Resolve(usize, Resolution),
    Peek(usize),
    Advance(f64),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let completion = prop_oneof![
        Just(Completion::Success),
        Just(Completion::Transient),
        Just(Completion::Definitive)
    ];
    let resolution = prop_oneof![Just(Resolution::Done), Just(Resolution::Failed)];
    let op = prop_oneof![
        6 => (0..KEYS.len(), 0..FINGERPRINTS.len()).prop_map(|(k, f)| Op::Begin(k, f)),
        4 => (any::<usize>(), completion).prop_map(|(i, c)| Op::Complete(i, c)),
        2 => (0..KEYS.len(), resolution).prop_map(|(k, r)| Op::Resolve(k, r)),
        2 => (0..KEYS.len()).prop_map(Op::Peek),
        3 => prop_oneof![0u32..20, 0u32..3000].prop_map(|ms| Op::Advance(f64::from(ms))),
    ];
    prop::collection::vec(op, 1..150)
}

fn live(r: &Rec, now: f64) -> bool {
    r.status != Status::Done || now < r.expires
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn idempotency_table_matches_the_reference_model(
        ttl in prop_oneof![Just(1.0), Just(10.0), Just(1000.0), 1.0f64..5000.0],
        start in 0.0f64..1e9,
        ops in ops(),
    ) {
        let mut t = IdempotencyTable::new(Some(ttl)).unwrap();
        let mut model: BTreeMap<&str, Rec> = BTreeMap::new();
        let mut running: Vec<(u32, &str)> = Vec::new(); // Run handed out, not yet completed
        let mut owned: BTreeSet<u32> = BTreeSet::new(); // slots the caller stores a result under
        let mut now = start.floor();
        for (step, op) in ops.iter().enumerate() {
            match *op {
                Op::Begin(k, f) => {
                    let (key, fingerprint) = (KEYS[k], FINGERPRINTS[f]);
                    let got = t.begin(key, fingerprint, now).unwrap();
                    // Slots freed by a sweep during this begin are reported before its slot is
                    // used: each must be an expired Done record, and is freed exactly once.
                    for slot in t.take_expired() {
                        let (&k2, r) = model.iter().find(|(_, r)| r.slot == slot)
                            .ok_or_else(|| TestCaseError::fail(format!("slot {slot} not held")))?;
                        prop_assert!(r.status == Status::Done && now >= r.expires, "{:?} swept", r);
                        model.remove(k2);
                        prop_assert!(owned.remove(&slot), "slot {} freed twice", slot);
                    }
                    let existing = model.get(key).copied().filter(|r| live(r, now));
                    let want = match existing {
                        Some(r) if matches!((r.fingerprint, fingerprint), (Some(a), Some(b)) if a != b) => {
                            Begin::Mismatch
                        }
                        Some(r) => match r.status {
                            Status::Done => Begin::Replay { slot: r.slot },
                            Status::InFlight => Begin::InFlight { started_at_ms: r.started },
                            Status::Unknown => Begin::Unknown { slot: r.slot, started_at_ms: r.started },
                        },
                        None => {
                            // No double charge: a Run only for an absent key or an expired success.
                            let Begin::Run { slot } = got else {
                                return Err(TestCaseError::fail(format!("step {step}: {got:?} for a free key")));
                            };
                            // An expired, unswept Done record is replaced in place (same slot);
                            // otherwise the slot must be one the caller does not hold.
                            let in_place = model.get(key).is_some_and(|r| r.slot == slot);
                            prop_assert!(in_place || owned.insert(slot), "slot {} handed out twice", slot);
                            running.push((slot, key));
                            model.insert(key, Rec {
                                slot, status: Status::InFlight, fingerprint, started: now, expires: f64::INFINITY,
                            });
                            got
                        }
                    };
                    prop_assert_eq!(got, want, "step {}", step);
                }
                Op::Complete(i, completion) if !running.is_empty() => {
                    let (slot, key) = running.swap_remove(i % running.len());
                    let freed = t.complete(slot, completion, now);
                    prop_assert_eq!(freed, completion == Completion::Definitive);
                    let r = model.get_mut(key).unwrap();
                    match completion {
                        Completion::Success => { r.status = Status::Done; r.expires = now + ttl; }
                        Completion::Transient => r.status = Status::Unknown,
                        Completion::Definitive => {
                            model.remove(key);
                            prop_assert!(owned.remove(&slot));
                        }
                    }
                    // A second report of the same run changes nothing (its slot is not reused yet).
                    prop_assert!(!t.complete(slot, Completion::Definitive, now));
                }
                Op::Complete(..) => {}
                Op::Resolve(k, resolution) => {
                    let key = KEYS[k];
                    let got = t.resolve(key, resolution, now);
                    let want = match model.get(key).copied() {
                        None => Err(Error::UnknownKey),
                        Some(r) if r.status != Status::Unknown => Err(Error::WrongState),
                        Some(r) => {
                            if resolution == Resolution::Failed {
                                model.remove(key);
                                prop_assert!(owned.remove(&r.slot));
                            } else if let Some(m) = model.get_mut(key) {
                                m.status = Status::Done;
                                m.expires = now + ttl;
                            }
                            Ok(r.slot)
                        }
                    };
                    prop_assert_eq!(got, want, "step {}", step);
                }
                Op::Peek(k) => {
                    let want = model.get(KEYS[k]).filter(|r| live(r, now))
                        .map(|r| Peek { slot: r.slot, status: r.status, started_at_ms: r.started });
                    prop_assert_eq!(t.peek(KEYS[k], now), want);
                }
                Op::Advance(ms) => now += ms,
            }
            // Only a begin sweeps: nothing else may have been reported.
            prop_assert!(t.take_expired().is_empty());
            // Unknown keys are the reconciliation worklist, and never expire on their own.
            let mut unknown: Vec<_> = t.unknown_keys().into_iter().map(String::from).collect();
            unknown.sort();
            let want: Vec<_> = model.iter().filter(|r| r.1.status == Status::Unknown).map(|r| r.0.to_string()).collect();
            prop_assert_eq!(unknown, want);
            let held: BTreeSet<u32> = model.values().map(|r| r.slot).collect();
            prop_assert_eq!(&held, &owned, "slots held by records vs slots the caller holds");
        }
    }

    #[test]
    fn keys_are_validated(key in prop_oneof![
        "[ -~]{0,300}",
        "\\PC{0,40}",
        prop::collection::vec(any::<u8>(), 0..300).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]) {
        let valid = !key.is_empty() && key.len() <= 255 && key.bytes().all(|b| (0x20..=0x7e).contains(&b));
        let mut t = IdempotencyTable::new(None).unwrap();
        let begun = t.begin(&key, None, 0.0);
        prop_assert_eq!(begun.is_ok(), valid, "{:?}", key);
        if !valid {
            prop_assert_eq!(begun, Err(Error::InvalidKey));
            prop_assert_eq!(t.resolve(&key, Resolution::Done, 0.0), Err(Error::InvalidKey));
            prop_assert!(t.is_empty());
        } else {
            prop_assert_eq!(t.len(), 1);
        }
    }
}

#[test]
fn boundary_keys() {
    let mut t = IdempotencyTable::new(None).unwrap();
    assert!(t.begin(&"k".repeat(255), None, 0.0).is_ok());
    for bad in [
        String::new(),
        "k".repeat(256),
        "a\u{7f}".into(),
        "né".into(),
        "a\nb".into(),
    ] {
        assert_eq!(t.begin(&bad, None, 0.0), Err(Error::InvalidKey), "{bad:?}");
    }
}
