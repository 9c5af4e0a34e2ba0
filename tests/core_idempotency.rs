//! Model-based idempotency test: random begin / complete / resolve / peek / clock sequences over a
//! few keys, checked step by step against a reference model of the documented lifecycle. The core's
//! `Records` is driven exactly as the JS shell drives it: a key → slot index kept by the caller
//! ([`Index`] here, a `Map` in `lib/idempotency.js`), expired slots drained before a slot is used.
//!
//! Why: the invariant that matters is "no double charge": a key never gets a second `Run` until
//! the first one is known not to have charged (definitive rejection, reconciled as failed) or its
//! success record expired, and never for another request. Slots must also be freed exactly once,
//! or the caller leaks or drops someone else's stored result. The store never holds more than
//! `max_records` records and never evicts a live one to make room.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use proptest::prelude::*;
use steadfast::core::error::Error;
use steadfast::core::idempotency::{
    fingerprint, validate_key, Begin, Completion, Fingerprint, Peek, Records, Resolution, Status,
    StoreConfig,
};
use steadfast::core::keyed::KeyedRecords;

const KEYS: [&str; 4] = ["a", "b", "order 42", "~"];
/// More keys than the small stores hold, for the core's key index.
const MANY: [&str; 24] = [
    "a",
    "b",
    "order 42",
    "~",
    "k0",
    "k1",
    "k2",
    "k3",
    "k4",
    "k5",
    "k6",
    "k7",
    "k8",
    "k9",
    "kA",
    "kB",
    "kC",
    "kD",
    "kE",
    "kF",
    "3f2504e0-4f89-41d3-9a0c-0305e82c3301",
    "x",
    "xx",
    "xxxxxxxxxxxxxxxxx",
];
const FINGERPRINTS: [Option<&str>; 3] = [None, Some("amount=100"), Some("amount=999")];

/// The caller's key → slot index, as `lib/idempotency.js` keeps it.
struct Index {
    records: Records,
    by_key: HashMap<&'static str, u32>,
    key_of: HashMap<u32, &'static str>,
    /// Slots freed by expiry during the last begin (for the model to check).
    swept: Vec<u32>,
}

impl Index {
    fn new(config: StoreConfig) -> Self {
        Self {
            records: Records::new(config),
            by_key: HashMap::new(),
            key_of: HashMap::new(),
            swept: Vec::new(),
        }
    }

    fn forget(&mut self, slot: u32) {
        if let Some(key) = self.key_of.remove(&slot) {
            if self.by_key.get(key) == Some(&slot) {
                self.by_key.remove(key);
            }
        }
    }

    fn begin(&mut self, key: &'static str, fp: Option<Fingerprint>, now: f64) -> Begin {
        let known = self.by_key.get(key).copied();
        let got = self.records.begin(known, fp, now);
        self.swept.clear();
        if self.records.has_expired() {
            for slot in self.records.take_expired() {
                self.forget(slot);
                self.swept.push(slot);
            }
        }
        if let (Begin::Run { slot }, None) = (got, known) {
            self.by_key.insert(key, slot);
            self.key_of.insert(slot, key);
        }
        got
    }

    fn complete(&mut self, slot: u32, c: Completion, now: f64) -> bool {
        let freed = self.records.complete(slot, c, now);
        if freed {
            self.forget(slot);
        }
        freed
    }

    fn resolve(
        &mut self,
        key: &str,
        r: Resolution,
        at: Option<f64>,
        now: f64,
    ) -> Result<u32, Error> {
        let slot = *self.by_key.get(key).ok_or(Error::UnknownKey)?;
        self.records.resolve(slot, r, at, now)?;
        if r == Resolution::Failed {
            self.forget(slot);
        }
        Ok(slot)
    }

    fn peek(&self, key: &str, now: f64) -> Option<Peek> {
        self.records.peek(*self.by_key.get(key)?, now)
    }

    fn reopen(
        &mut self,
        key: &str,
        fp: Option<Fingerprint>,
        at: Option<f64>,
        now: f64,
    ) -> Result<u32, Error> {
        let slot = *self.by_key.get(key).ok_or(Error::UnknownKey)?;
        self.records.reopen(slot, fp, at, now)?;
        Ok(slot)
    }

    fn unknown_keys(&self) -> Vec<&'static str> {
        self.records
            .unknown_slots()
            .into_iter()
            .filter_map(|(s, _)| self.key_of.get(&s).copied())
            .collect()
    }
}

#[derive(Debug, Clone, Copy)]
struct Rec {
    slot: u32,
    status: Status,
    fingerprint: Option<&'static str>,
    started: f64,
    expires: f64, // +inf unless Done
    /// May have been processed: parked unknown at least once (sticky).
    maybe: bool,
}

#[derive(Debug, Clone)]
enum Op {
    Begin(usize, usize),
    Complete(usize, Completion),
    /// Resolve, with a compare-and-set on the attempt's start: none, the right one, a wrong one.
    Resolve(usize, Resolution, u8),
    Peek(usize),
    /// Reconciliation's re-send: reopen with a fingerprint and a compare-and-set (as Resolve).
    Reopen(usize, usize, u8),
    Advance(f64),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let completion = prop_oneof![
        Just(Completion::Success),
        Just(Completion::Transient),
        Just(Completion::Definitive),
        Just(Completion::Refuted)
    ];
    let resolution = prop_oneof![Just(Resolution::Done), Just(Resolution::Failed)];
    let op = prop_oneof![
        6 => (0..KEYS.len(), 0..FINGERPRINTS.len()).prop_map(|(k, f)| Op::Begin(k, f)),
        4 => (any::<usize>(), completion).prop_map(|(i, c)| Op::Complete(i, c)),
        2 => (0..KEYS.len(), resolution, 0u8..3).prop_map(|(k, r, c)| Op::Resolve(k, r, c)),
        2 => (0..KEYS.len()).prop_map(Op::Peek),
        3 => (0..KEYS.len(), 0..FINGERPRINTS.len(), 0u8..3).prop_map(|(k, f, c)| Op::Reopen(k, f, c)),
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
    fn records_match_the_reference_model(
        ttl in prop_oneof![Just(1.0), Just(10.0), Just(1000.0), 1.0f64..5000.0],
        max_records in prop_oneof![1u32..4, Just(1_000_000)],
        start in 0.0f64..1e9,
        ops in ops(),
    ) {
        let mut t = Index::new(StoreConfig::new(Some(ttl), Some(f64::from(max_records))).unwrap());
        let mut model: BTreeMap<&str, Rec> = BTreeMap::new();
        let mut running: Vec<(u32, &str)> = Vec::new(); // Run handed out, not yet completed
        let mut owned: BTreeSet<u32> = BTreeSet::new(); // slots the caller stores a result under
        let mut now = start.floor();
        for (step, op) in ops.iter().enumerate() {
            match *op {
                Op::Begin(k, f) => {
                    let (key, fp_text) = (KEYS[k], FINGERPRINTS[f]);
                    let got = t.begin(key, fp_text.map(fingerprint), now);
                    // Slots freed by a sweep during this begin are reported before its slot is
                    // used: each must be an expired Done record, and is freed exactly once.
                    for &slot in &t.swept {
                        let (&k2, r) = model.iter().find(|(_, r)| r.slot == slot)
                            .ok_or_else(|| TestCaseError::fail(format!("slot {slot} not held")))?;
                        prop_assert!(r.status == Status::Done && now >= r.expires, "{:?} swept", r);
                        model.remove(k2);
                        prop_assert!(owned.remove(&slot), "slot {} freed twice", slot);
                    }
                    let existing = model.get(key).copied().filter(|r| live(r, now));
                    let full = !model.contains_key(key)
                        && model.values().filter(|r| live(r, now)).count() >= max_records as usize;
                    let want = match existing {
                        Some(r) if r.fingerprint != fp_text => Begin::Mismatch,
                        Some(r) => match r.status {
                            Status::Done => Begin::Replay { slot: r.slot },
                            Status::InFlight => Begin::InFlight { started_at_ms: r.started },
                            Status::Unknown => Begin::Unknown { slot: r.slot, started_at_ms: r.started },
                        },
                        None if full => Begin::Full,
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
                                slot, status: Status::InFlight, fingerprint: fp_text, started: now, expires: f64::INFINITY, maybe: false,
                            });
                            got
                        }
                    };
                    prop_assert_eq!(got, want, "step {}", step);
                    prop_assert!(t.records.len() <= max_records as usize, "bound exceeded");
                }
                Op::Complete(i, completion) if !running.is_empty() => {
                    let (slot, key) = running.swap_remove(i % running.len());
                    let freed = t.complete(slot, completion, now);
                    let r = model.get_mut(key).unwrap();
                    // The sticky rule: a record that may have been processed is freed only by an
                    // answer about the key (Refuted), never by a later definitive answer.
                    let frees = completion == Completion::Refuted || (completion == Completion::Definitive && !r.maybe);
                    prop_assert_eq!(freed, frees, "step {}", step);
                    match completion {
                        Completion::Success => { r.status = Status::Done; r.expires = now + ttl; }
                        _ if frees => {
                            model.remove(key);
                            prop_assert!(owned.remove(&slot));
                        }
                        _ => { r.status = Status::Unknown; r.maybe = true; }
                    }
                    // A second report of the same run changes nothing (its slot is not reused yet).
                    prop_assert!(!t.complete(slot, Completion::Definitive, now));
                }
                Op::Complete(..) => {}
                Op::Resolve(k, resolution, cas) => {
                    let key = KEYS[k];
                    let rec = model.get(key).copied();
                    let at = match cas {
                        0 => None,
                        1 => rec.map(|r| r.started),
                        _ => Some(rec.map_or(-1.0, |r| r.started - 1.0)),
                    };
                    let got = t.resolve(key, resolution, at, now);
                    let want = match rec {
                        None => Err(Error::UnknownKey),
                        Some(r) if r.status != Status::Unknown || cas == 2 => Err(Error::WrongState),
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
                Op::Reopen(k, f, cas) => {
                    let (key, fp_text) = (KEYS[k], FINGERPRINTS[f]);
                    let rec = model.get(key).copied().filter(|r| live(r, now));
                    let at = match cas {
                        0 => None,
                        1 => rec.map(|r| r.started),
                        _ => Some(rec.map_or(-1.0, |r| r.started - 1.0)),
                    };
                    let got = t.reopen(key, fp_text.map(fingerprint), at, now);
                    let want = match rec {
                        None => Err(Error::UnknownKey),
                        Some(r) if r.fingerprint != fp_text => Err(Error::KeyReused),
                        Some(r) if r.status != Status::Unknown || cas == 2 => Err(Error::WrongState),
                        Some(r) => {
                            let m = model.get_mut(key).unwrap();
                            m.status = Status::InFlight;
                            m.started = now;
                            running.push((r.slot, key));
                            Ok(r.slot)
                        }
                    };
                    prop_assert_eq!(got, want, "step {}", step);
                }
                Op::Peek(k) => {
                    let want = model.get(KEYS[k]).filter(|r| live(r, now))
                        .map(|r| Peek { slot: r.slot, status: r.status, started_at_ms: (r.status != Status::Done).then_some(r.started) });
                    prop_assert_eq!(t.peek(KEYS[k], now), want);
                }
                Op::Advance(ms) => now += ms,
            }
            // Only a begin sweeps: nothing else may have been reported.
            prop_assert!(!t.records.has_expired());
            // Unknown keys are the reconciliation worklist, and never expire on their own.
            let mut unknown: Vec<_> = t.unknown_keys().into_iter().map(String::from).collect();
            unknown.sort();
            let want: Vec<_> = model.iter().filter(|r| r.1.status == Status::Unknown).map(|r| r.0.to_string()).collect();
            prop_assert_eq!(unknown, want);
            let held: BTreeSet<u32> = model.values().map(|r| r.slot).collect();
            prop_assert_eq!(&held, &owned, "slots held by records vs slots the caller holds");
        }
    }

    /// `KeyedRecords` (the key index inside the core, as the package uses it) answers exactly as
    /// `Records` driven by a caller-side index (checked against the model above), on more keys than
    /// slots so that its table grows, probes and deletes.
    #[test]
    fn keyed_records_match_records_with_a_caller_index(
        ttl in prop_oneof![Just(1.0), Just(1000.0), 1.0f64..5000.0],
        max_records in prop_oneof![1u32..6, Just(1_000_000)],
        seed in any::<[u64; 2]>(),
        ops in prop::collection::vec(prop_oneof![
            6 => (0..MANY.len(), 0..FINGERPRINTS.len()).prop_map(|(k, f)| Op::Begin(k, f)),
            4 => (any::<usize>(), prop_oneof![
                Just(Completion::Success), Just(Completion::Transient), Just(Completion::Definitive),
                Just(Completion::Refuted)
            ]).prop_map(|(i, c)| Op::Complete(i, c)),
            2 => (0..MANY.len(), prop_oneof![Just(Resolution::Done), Just(Resolution::Failed)], 0u8..2)
                .prop_map(|(k, r, c)| Op::Resolve(k, r, c)),
            2 => (0..MANY.len()).prop_map(Op::Peek),
            2 => (0..MANY.len(), 0..FINGERPRINTS.len(), 0u8..2).prop_map(|(k, f, c)| Op::Reopen(k, f, c)),
            3 => prop_oneof![0u32..20, 0u32..3000].prop_map(|ms| Op::Advance(f64::from(ms))),
        ], 1..300),
    ) {
        let config = StoreConfig::new(Some(ttl), Some(f64::from(max_records))).unwrap();
        let mut t = Index::new(config);
        let mut k = KeyedRecords::new(config, seed);
        let mut running: Vec<u32> = Vec::new();
        let mut now = 0.0;
        for (step, op) in ops.iter().enumerate() {
            match *op {
                Op::Begin(i, f) => {
                    let fp = FINGERPRINTS[f].map(fingerprint);
                    let known = t.by_key.get(MANY[i]).copied();
                    let want = t.begin(MANY[i], fp, now);
                    prop_assert_eq!(k.begin(MANY[i].as_bytes(), fp, now), (want, known), "step {}", step);
                    let swept = if k.has_expired() { k.take_expired() } else { Vec::new() };
                    prop_assert_eq!(&swept, &t.swept, "step {}", step);
                    if let Begin::Run { slot } = want {
                        running.push(slot);
                    }
                }
                Op::Complete(i, c) if !running.is_empty() => {
                    let slot = running.swap_remove(i % running.len());
                    prop_assert_eq!(k.complete(slot, c, now), t.complete(slot, c, now));
                }
                Op::Complete(..) => {}
                Op::Resolve(i, r, cas) => {
                    let at = (cas == 1).then(|| t.peek(MANY[i], now).and_then(|p| p.started_at_ms).unwrap_or(0.0));
                    prop_assert_eq!(k.resolve(MANY[i].as_bytes(), r, at, now), t.resolve(MANY[i], r, at, now));
                }
                Op::Peek(i) => prop_assert_eq!(k.peek(MANY[i].as_bytes(), now), t.peek(MANY[i], now)),
                Op::Reopen(i, f, cas) => {
                    let fp = FINGERPRINTS[f].map(fingerprint);
                    let at = (cas == 1).then(|| t.peek(MANY[i], now).and_then(|p| p.started_at_ms).unwrap_or(0.0));
                    let want = t.reopen(MANY[i], fp, at, now);
                    prop_assert_eq!(k.reopen(MANY[i].as_bytes(), fp, at, now), want);
                    if let Ok(slot) = want {
                        running.push(slot);
                    }
                }
                Op::Advance(ms) => now += ms,
            }
            prop_assert_eq!(k.records().unknown_slots(), t.records.unknown_slots());
            prop_assert_eq!(k.records().len(), t.records.len());
            prop_assert_eq!(k.indexed(), t.by_key.len());
            for key in MANY {
                prop_assert_eq!(k.slot_of(key.as_bytes()), t.by_key.get(key).copied(), "{} at step {}", key, step);
            }
        }
    }

    #[test]
    fn keys_are_validated(key in prop_oneof![
        "[ -~]{0,300}",
        " [ -~]{0,5}",
        "[ -~]{0,5} ",
        "\\PC{0,40}",
        prop::collection::vec(any::<u8>(), 0..300).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]) {
        let valid = !key.is_empty() && key.len() <= 255 && key.bytes().all(|b| (0x20..=0x7e).contains(&b))
            && !key.starts_with(' ') && !key.ends_with(' ');
        prop_assert_eq!(validate_key(&key).is_ok(), valid, "{:?}", key);
        if !valid {
            prop_assert_eq!(validate_key(&key), Err(Error::InvalidKey));
        }
    }
}

#[test]
fn boundary_keys() {
    assert!(validate_key(&"k".repeat(255)).is_ok());
    assert!(validate_key("a b").is_ok());
    for bad in [
        String::new(),
        "k".repeat(256),
        "a\u{7f}".into(),
        "né".into(),
        "a\nb".into(),
        "k ".into(),
        " k".into(),
    ] {
        assert_eq!(validate_key(&bad), Err(Error::InvalidKey), "{bad:?}");
    }
}
