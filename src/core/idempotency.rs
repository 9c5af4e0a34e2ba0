//! Idempotency records: one logical charge, however many attempts happen underneath.
//!
//! Why `unknown`: a timeout is not a failure, it is an absence of information — the money may have
//! moved. A key whose attempt ended in a transient failure is parked as `Unknown` and every further
//! run with it is refused until reconciliation says what happened ([`IdempotencyTable::resolve`]).
//! A definitive rejection (a 400, a declined card) frees the key: the charge never happened.
//!
//! Lifecycle: absent → `InFlight` (begin) → `Done` (success) | `Unknown` (transient) | absent
//! (definitive). `Unknown` → `Done` | absent (resolve). A duplicate `begin` while in flight is
//! refused, not replayed. A key is bound to its request fingerprint: reusing it for a different
//! request is an error. `Done` records expire `ttl_ms` after completion; `InFlight` and `Unknown`
//! records never expire on their own (an unknown that silently expired would allow exactly the
//! blind retry this module exists to prevent).
//!
//! Results themselves are not stored here: each record owns a numeric `slot`, and the caller keeps
//! the result (a JS value) under that slot. Contract for callers: complete each `Run` slot exactly
//! once (an in-flight slot is never freed by anything else, so it cannot be reused under a late
//! report), and drain [`IdempotencyTable::take_expired`] right after `begin` returns, before storing
//! anything under a slot (expiry may free a slot that the same `begin` hands out again).
//!
//! # Default
//! `ttl_ms = 86_400_000` (24 h, like Stripe's key retention).

use std::collections::HashMap;

use super::error::{check, Error, Opt};

/// 24 hours.
pub const DEFAULT_TTL_MS: f64 = 86_400_000.0;
/// Longest accepted key, in bytes.
pub const MAX_KEY_LEN: usize = 255;

/// Where a record stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// An attempt is running.
    InFlight,
    /// It succeeded; the result is replayed.
    Done,
    /// It ended in a transient failure or timeout: the outcome is unknown.
    Unknown,
}

impl Status {
    /// Stable id across the boundary.
    pub const fn id(self) -> u32 {
        match self {
            Status::InFlight => 0,
            Status::Done => 1,
            Status::Unknown => 2,
        }
    }
}

/// Answer of [`IdempotencyTable::begin`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Begin {
    /// New (or expired) key: run the operation, then [`IdempotencyTable::complete`] the slot.
    Run {
        /// The record's slot.
        slot: u32,
    },
    /// Already done: replay the result stored under `slot`; do not run.
    Replay {
        /// The record's slot.
        slot: u32,
    },
    /// A run with this key is in flight: refuse (do not replay, do not run).
    InFlight {
        /// When the running attempt began.
        started_at_ms: f64,
    },
    /// The outcome of an earlier run is unknown: refuse until resolved.
    Unknown {
        /// The record's slot (holds the error description).
        slot: u32,
        /// When the unknown run began.
        started_at_ms: f64,
    },
    /// The key was used for a different request (fingerprint mismatch).
    Mismatch,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// Success: the result is stored and replayed.
    Success,
    /// Transient failure or timeout: park as unknown.
    Transient,
    /// Definitive rejection: the charge never happened; free the key.
    Definitive,
}

/// What reconciliation found out about an unknown key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// The charge happened: store the result (the caller puts it under the slot).
    Done,
    /// The charge did not happen: free the key.
    Failed,
}

/// A view of one record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Peek {
    /// The record's slot.
    pub slot: u32,
    /// Its status.
    pub status: Status,
    /// When its run began.
    pub started_at_ms: f64,
}

#[derive(Debug, Clone)]
struct Record {
    status: Status,
    fingerprint: Option<u64>,
    started_at_ms: f64,
    expires_at_ms: f64,
}

/// The key rule, as data: `[min length, max length, lowest byte, highest byte]`. [`validate_key`]
/// applies it here; the JS shell reads it (through the wasm boundary) and applies the same numbers
/// to keys it has not seen, so that a new key need not cross into wasm as a string.
pub const KEY_RULE: [u32; 4] = [1, MAX_KEY_LEN as u32, 0x20, 0x7e];

/// Validate an idempotency key: 1 to 255 printable ASCII characters (space to `~`).
pub fn validate_key(key: &str) -> Result<(), Error> {
    let [min, max, lo, hi] = KEY_RULE;
    let ok = (min as usize..=max as usize).contains(&key.len())
        && key.bytes().all(|b| (lo..=hi).contains(&u32::from(b)));
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidKey)
    }
}

/// FNV-1a, 64 bit: fingerprints are compared by hash so a large request body costs 8 bytes.
pub fn fingerprint_hash(fingerprint: &str) -> u64 {
    fingerprint.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The record state machine, by slot: every rule of the module docs, with no keys. Whoever owns
/// the key → slot index ([`IdempotencyTable`] natively, a JS `Map` in the package) passes the slot
/// of a known key, or `None` for a new one, and hashes the fingerprint.
#[derive(Debug, Clone)]
pub struct Records {
    ttl_ms: f64,
    slots: Vec<Option<Record>>,
    free: Vec<u32>,
    expired: Vec<u32>,
    live: usize,
    next_sweep_ms: f64,
}

impl Records {
    /// Validate `ttl_ms` (finite > 0; `None` = 24 h).
    pub fn new(ttl_ms: Option<f64>) -> Result<Self, Error> {
        let ttl_ms = match ttl_ms {
            None => DEFAULT_TTL_MS,
            Some(t) => check::positive(Opt::TtlMs, t)?,
        };
        Ok(Self {
            ttl_ms,
            slots: Vec::new(),
            free: Vec::new(),
            expired: Vec::new(),
            live: 0,
            next_sweep_ms: f64::NEG_INFINITY,
        })
    }

    /// Records held: in flight, unknown, and done until swept after their TTL.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no record is held.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    fn record(&self, slot: u32) -> Option<&Record> {
        self.slots.get(slot as usize).and_then(Option::as_ref)
    }

    /// The record in `slot` unless it is a `Done` one past its TTL.
    fn live_record(&self, slot: u32, now_ms: f64) -> Option<&Record> {
        self.record(slot)
            .filter(|r| r.status != Status::Done || now_ms < r.expires_at_ms)
    }

    /// Start a run at `now_ms`: `slot` is the record of a known key (`None`: a new key). An
    /// expired `Done` record (or an empty slot) is started afresh in place.
    pub fn begin(&mut self, slot: Option<u32>, fingerprint: Option<u64>, now_ms: f64) -> Begin {
        if let Some(slot) = slot {
            if let Some(r) = self.live_record(slot, now_ms) {
                if let (Some(a), Some(b)) = (r.fingerprint, fingerprint) {
                    if a != b {
                        return Begin::Mismatch;
                    }
                }
                return match r.status {
                    Status::Done => Begin::Replay { slot },
                    Status::InFlight => Begin::InFlight {
                        started_at_ms: r.started_at_ms,
                    },
                    Status::Unknown => Begin::Unknown {
                        slot,
                        started_at_ms: r.started_at_ms,
                    },
                };
            }
        }
        let record = Record {
            status: Status::InFlight,
            fingerprint,
            started_at_ms: now_ms,
            expires_at_ms: f64::INFINITY,
        };
        // A known key's slot restarts in place (its Done record expired). A slot the caller names
        // that holds nothing (an index out of step with the records) is taken off the free list
        // first; a new key takes a free slot or a new one.
        let slot = match slot.filter(|&s| (s as usize) < self.slots.len()) {
            Some(s) => {
                if self.record(s).is_none() {
                    if let Some(i) = self.free.iter().rposition(|&f| f == s) {
                        self.free.swap_remove(i);
                    }
                }
                s
            }
            None => match self.free.pop() {
                Some(s) => s,
                None => {
                    self.slots.push(None);
                    (self.slots.len() - 1) as u32
                }
            },
        };
        if let Some(cell) = self.slots.get_mut(slot as usize) {
            if cell.is_none() {
                self.live += 1;
            }
            *cell = Some(record);
        }
        Begin::Run { slot }
    }

    /// Report how the run that began with `Begin::Run { slot }` ended. Returns `true` when the
    /// slot was freed (the caller drops what it stored there). A slot that is not in flight is
    /// left alone (a double report changes nothing).
    pub fn complete(&mut self, slot: u32, completion: Completion, now_ms: f64) -> bool {
        let ttl = self.ttl_ms;
        let Some(Some(r)) = self.slots.get_mut(slot as usize) else {
            return false;
        };
        if r.status != Status::InFlight {
            return false;
        }
        match completion {
            Completion::Success => {
                r.status = Status::Done;
                r.expires_at_ms = now_ms + ttl;
                false
            }
            Completion::Transient => {
                r.status = Status::Unknown;
                false
            }
            Completion::Definitive => {
                self.remove(slot);
                true
            }
        }
    }

    /// Reconciliation: settle the `Unknown` record in `slot`; with `Failed` the slot is freed.
    pub fn resolve(&mut self, slot: u32, resolution: Resolution, now_ms: f64) -> Result<(), Error> {
        let ttl = self.ttl_ms;
        let Some(Some(r)) = self.slots.get_mut(slot as usize) else {
            return Err(Error::UnknownKey);
        };
        if r.status != Status::Unknown {
            return Err(Error::WrongState);
        }
        match resolution {
            Resolution::Done => {
                r.status = Status::Done;
                r.expires_at_ms = now_ms + ttl;
            }
            Resolution::Failed => self.remove(slot),
        }
        Ok(())
    }

    /// The live record in `slot`, if any.
    pub fn peek(&self, slot: u32, now_ms: f64) -> Option<Peek> {
        self.live_record(slot, now_ms).map(|r| Peek {
            slot,
            status: r.status,
            started_at_ms: r.started_at_ms,
        })
    }

    /// Slots whose outcome is unknown, oldest first (ties by slot).
    pub fn unknown_slots(&self) -> Vec<(u32, f64)> {
        let mut v: Vec<(u32, f64)> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match r {
                Some(r) if r.status == Status::Unknown => Some((i as u32, r.started_at_ms)),
                _ => None,
            })
            .collect();
        // Unstable sort with a total order: deterministic, and ~1 KB less wasm than a stable one.
        v.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        v
    }

    /// Slots freed by expiry since the last call: the caller drops what it stored there (and its
    /// index entry).
    pub fn take_expired(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.expired)
    }

    /// Whether a sweep is due at `now_ms` (amortised: at most every `min(ttl/4, 60 s)`).
    pub fn sweep_due(&self, now_ms: f64) -> bool {
        // NaN clocks never sweep.
        now_ms
            .partial_cmp(&self.next_sweep_ms)
            .is_some_and(|o| o.is_ge())
    }

    /// Drop every `Done` record expired at `now_ms`; their slots go to
    /// [`Records::take_expired`].
    pub fn sweep(&mut self, now_ms: f64) {
        if now_ms.is_nan() {
            return;
        }
        self.next_sweep_ms = now_ms + (self.ttl_ms / 4.0).clamp(1.0, 60_000.0);
        let expired: Vec<u32> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match r {
                Some(r) if r.status == Status::Done && now_ms >= r.expires_at_ms => Some(i as u32),
                _ => None,
            })
            .collect();
        for slot in expired {
            self.remove(slot);
            self.expired.push(slot);
        }
    }

    fn remove(&mut self, slot: u32) {
        if let Some(cell) = self.slots.get_mut(slot as usize) {
            if cell.take().is_some() {
                self.live -= 1;
                self.free.push(slot);
            }
        }
    }
}

/// All records of one store, by key: [`Records`] plus a key index. See the module docs.
#[derive(Debug, Clone)]
pub struct IdempotencyTable {
    records: Records,
    index: HashMap<Box<str>, u32>,
    keys: Vec<Option<Box<str>>>,
    expired: Vec<u32>,
}

impl IdempotencyTable {
    /// Validate `ttl_ms` (finite > 0; `None` = 24 h).
    pub fn new(ttl_ms: Option<f64>) -> Result<Self, Error> {
        Ok(Self {
            records: Records::new(ttl_ms)?,
            index: HashMap::new(),
            keys: Vec::new(),
            expired: Vec::new(),
        })
    }

    /// Number of records held: in flight, unknown, and done until swept after their TTL (see
    /// [`IdempotencyTable::sweep`]).
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether no record is held.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Start a run with `key` at `now_ms`.
    pub fn begin(
        &mut self,
        key: &str,
        fingerprint: Option<&str>,
        now_ms: f64,
    ) -> Result<Begin, Error> {
        validate_key(key)?;
        if self.records.sweep_due(now_ms) {
            self.sweep(now_ms);
        }
        let known = self.index.get(key).copied();
        let begin = self
            .records
            .begin(known, fingerprint.map(fingerprint_hash), now_ms);
        if let (Begin::Run { slot }, None) = (begin, known) {
            self.index.insert(key.into(), slot);
            if self.keys.len() <= slot as usize {
                self.keys.resize(slot as usize + 1, None);
            }
            if let Some(k) = self.keys.get_mut(slot as usize) {
                *k = Some(key.into());
            }
        }
        Ok(begin)
    }

    /// Report how the run that began with `Begin::Run { slot }` ended. Returns `true` when the
    /// slot was freed (the caller drops what it stored there). A slot that is not in flight is
    /// left alone (a double report changes nothing).
    pub fn complete(&mut self, slot: u32, completion: Completion, now_ms: f64) -> bool {
        let freed = self.records.complete(slot, completion, now_ms);
        if freed {
            self.forget(slot);
        }
        freed
    }

    /// Reconciliation: settle an `Unknown` key. Returns the slot; with `Failed` the slot is freed.
    pub fn resolve(
        &mut self,
        key: &str,
        resolution: Resolution,
        now_ms: f64,
    ) -> Result<u32, Error> {
        validate_key(key)?;
        let slot = *self.index.get(key).ok_or(Error::UnknownKey)?;
        self.records.resolve(slot, resolution, now_ms)?;
        if resolution == Resolution::Failed {
            self.forget(slot);
        }
        Ok(slot)
    }

    /// The live record for `key`, if any.
    pub fn peek(&self, key: &str, now_ms: f64) -> Option<Peek> {
        self.records.peek(*self.index.get(key)?, now_ms)
    }

    /// Keys whose outcome is unknown, oldest first (ties by key): the reconciliation worklist.
    pub fn unknown_keys(&self) -> Vec<&str> {
        let mut v: Vec<(&str, f64)> = self
            .records
            .unknown_slots()
            .into_iter()
            .filter_map(|(slot, at)| Some((self.keys.get(slot as usize)?.as_deref()?, at)))
            .collect();
        v.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(b.0)));
        v.into_iter().map(|(k, _)| k).collect()
    }

    /// Slots freed by expiry since the last call: the caller drops what it stored there.
    pub fn take_expired(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.expired)
    }

    /// Whether [`IdempotencyTable::take_expired`] has anything.
    pub fn has_expired(&self) -> bool {
        !self.expired.is_empty()
    }

    /// Drop every `Done` record expired at `now_ms` (their slots go to
    /// [`IdempotencyTable::take_expired`]), so that [`IdempotencyTable::len`] counts live records.
    pub fn sweep(&mut self, now_ms: f64) {
        self.records.sweep(now_ms);
        for slot in self.records.take_expired() {
            self.forget(slot);
            self.expired.push(slot);
        }
    }

    fn forget(&mut self, slot: u32) {
        if let Some(key) = self.keys.get_mut(slot as usize).and_then(Option::take) {
            self.index.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> IdempotencyTable {
        IdempotencyTable::new(Some(1000.0)).unwrap()
    }

    #[test]
    fn same_key_runs_once_then_replays() {
        let mut t = table();
        let Begin::Run { slot } = t.begin("k1", None, 0.0).unwrap() else {
            panic!()
        };
        assert!(!t.complete(slot, Completion::Success, 5.0));
        assert_eq!(t.begin("k1", None, 6.0).unwrap(), Begin::Replay { slot });
        assert_eq!(t.peek("k1", 6.0).unwrap().status, Status::Done);
    }

    #[test]
    fn a_concurrent_duplicate_is_refused_not_replayed() {
        let mut t = table();
        t.begin("k", None, 3.0).unwrap();
        assert_eq!(
            t.begin("k", None, 4.0).unwrap(),
            Begin::InFlight { started_at_ms: 3.0 }
        );
    }

    #[test]
    fn a_transient_failure_parks_the_key_as_unknown_until_resolved() {
        let mut t = table();
        let Begin::Run { slot } = t.begin("k", None, 1.0).unwrap() else {
            panic!()
        };
        t.complete(slot, Completion::Transient, 2.0);
        assert_eq!(
            t.begin("k", None, 3.0).unwrap(),
            Begin::Unknown {
                slot,
                started_at_ms: 1.0
            }
        );
        // Unknown never expires on its own.
        assert!(matches!(
            t.begin("k", None, 1e12).unwrap(),
            Begin::Unknown { .. }
        ));
        assert_eq!(t.unknown_keys(), vec!["k"]);
        assert_eq!(t.resolve("k", Resolution::Done, 10.0), Ok(slot));
        assert_eq!(t.begin("k", None, 11.0).unwrap(), Begin::Replay { slot });
        assert!(t.unknown_keys().is_empty());
    }

    #[test]
    fn a_definitive_rejection_frees_the_key() {
        let mut t = table();
        let Begin::Run { slot } = t.begin("k", None, 0.0).unwrap() else {
            panic!()
        };
        assert!(t.complete(slot, Completion::Definitive, 1.0));
        assert!(t.peek("k", 1.0).is_none());
        assert!(matches!(
            t.begin("k", None, 2.0).unwrap(),
            Begin::Run { .. }
        ));
    }

    #[test]
    fn resolving_failed_frees_and_wrong_states_are_errors() {
        let mut t = table();
        assert_eq!(
            t.resolve("nope", Resolution::Done, 0.0),
            Err(Error::UnknownKey)
        );
        let Begin::Run { slot } = t.begin("k", None, 0.0).unwrap() else {
            panic!()
        };
        assert_eq!(
            t.resolve("k", Resolution::Done, 0.0),
            Err(Error::WrongState)
        );
        t.complete(slot, Completion::Transient, 1.0);
        assert_eq!(t.resolve("k", Resolution::Failed, 2.0), Ok(slot));
        assert!(t.peek("k", 2.0).is_none());
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn fingerprint_mismatch_is_detected() {
        let mut t = table();
        let Begin::Run { slot } = t.begin("k", Some("amount=100"), 0.0).unwrap() else {
            panic!()
        };
        assert_eq!(
            t.begin("k", Some("amount=999"), 1.0).unwrap(),
            Begin::Mismatch
        );
        t.complete(slot, Completion::Success, 1.0);
        assert_eq!(
            t.begin("k", Some("amount=999"), 2.0).unwrap(),
            Begin::Mismatch
        );
        assert_eq!(
            t.begin("k", Some("amount=100"), 2.0).unwrap(),
            Begin::Replay { slot }
        );
        assert_eq!(t.begin("k", None, 2.0).unwrap(), Begin::Replay { slot });
    }

    #[test]
    fn done_records_expire_after_the_ttl() {
        let mut t = table();
        let Begin::Run { slot } = t.begin("k", None, 0.0).unwrap() else {
            panic!()
        };
        t.complete(slot, Completion::Success, 100.0);
        assert!(t.peek("k", 1099.0).is_some());
        assert!(t.peek("k", 1100.0).is_none());
        // Reuse after expiry runs again (in the same slot).
        assert_eq!(t.begin("k", None, 1100.0).unwrap(), Begin::Run { slot });
    }

    #[test]
    fn the_sweep_frees_expired_slots_for_the_caller() {
        let mut t = table();
        for i in 0..10 {
            let Begin::Run { slot } = t.begin(&format!("k{i}"), None, 0.0).unwrap() else {
                panic!()
            };
            t.complete(slot, Completion::Success, 0.0);
        }
        assert_eq!(t.len(), 10);
        t.begin("other", None, 5000.0).unwrap();
        assert_eq!(t.len(), 1);
        let mut freed = t.take_expired();
        freed.sort_unstable();
        assert_eq!(freed.len(), 10);
        assert!(!t.has_expired());
    }

    #[test]
    fn keys_are_validated() {
        let mut t = table();
        for bad in ["", "tab\there", "é", &"x".repeat(256)] {
            assert_eq!(t.begin(bad, None, 0.0), Err(Error::InvalidKey), "{bad:?}");
        }
        assert!(t.begin(&"x".repeat(255), None, 0.0).is_ok());
        assert!(t.begin("order 42 / charge ~1", None, 0.0).is_ok());
    }

    #[test]
    fn completing_twice_or_a_bogus_slot_changes_nothing() {
        let mut t = table();
        let Begin::Run { slot } = t.begin("k", None, 0.0).unwrap() else {
            panic!()
        };
        t.complete(slot, Completion::Success, 0.0);
        assert!(!t.complete(slot, Completion::Definitive, 0.0));
        assert!(!t.complete(999, Completion::Definitive, 0.0));
        assert_eq!(t.begin("k", None, 1.0).unwrap(), Begin::Replay { slot });
    }

    #[test]
    fn records_reuse_freed_slots_without_scanning_and_heal_a_stale_slot() {
        let mut r = Records::new(Some(10.0)).unwrap();
        for _ in 0..3 {
            let Begin::Run { slot } = r.begin(None, None, 0.0) else {
                panic!()
            };
            r.complete(slot, Completion::Definitive, 0.0);
        }
        assert_eq!(r.len(), 0);
        // A caller naming a freed slot gets it, and it leaves the free list: no double use.
        assert_eq!(r.begin(Some(0), None, 1.0), Begin::Run { slot: 0 });
        let a = r.begin(None, None, 1.0);
        let b = r.begin(None, None, 1.0);
        assert!(a != Begin::Run { slot: 0 } && b != Begin::Run { slot: 0 } && a != b);
        assert_eq!(r.len(), 3);
    }

    #[test]
    fn ttl_validation() {
        assert!(IdempotencyTable::new(Some(0.0)).is_err());
        assert!(IdempotencyTable::new(Some(f64::NAN)).is_err());
        assert!(IdempotencyTable::new(Some(f64::INFINITY)).is_err());
    }
}
