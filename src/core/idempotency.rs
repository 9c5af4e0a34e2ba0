//! Idempotency records: one logical charge, however many attempts happen underneath.
//!
//! Why `unknown`: a timeout is not a failure, it is an absence of information — the money may have
//! moved. A key whose attempt ended in a transient failure is parked as `Unknown` and every further
//! run with it is refused until reconciliation says what happened ([`Records::resolve`]).
//! A definitive rejection (a 400, a declined card) frees the key: the charge never happened.
//!
//! Lifecycle: absent → `InFlight` (begin) → `Done` (success) | `Unknown` (transient) | absent
//! (definitive). `Unknown` → `Done` | absent (resolve), or → `InFlight` again ([`Records::reopen`]:
//! reconciliation re-sends the SAME key, on the same record, never delete-then-begin).
//!
//! *May have been processed* is sticky ([`crate::core::history`]): a record that was ever parked
//! unknown keeps it through a reopen, and a later definitive completion cannot free it — it goes
//! back to `Unknown`. Only an answer about the key settles it: success, [`Records::resolve`]
//! (reconciliation's verdict), or [`Completion::Refuted`] (a same-key re-send answered after the
//! settle window by a gateway that honours keys). A duplicate `begin` while in flight is
//! refused, not replayed. A key is bound to its request [`fingerprint`]: a `begin` whose
//! fingerprint differs from the record's (a request without one differs from a request with one)
//! is [`Begin::Mismatch`], whatever the record's status — one key buys only its own order. `Done`
//! records expire `ttl_ms` after completion; `InFlight` and `Unknown` records never expire on their
//! own (an unknown that silently expired would allow exactly the blind retry this module exists to
//! prevent).
//!
//! Bounded: at most `max_records` records are held. A new key that would exceed it is refused
//! ([`Begin::Full`]) after expired `Done` records are dropped; nothing live is ever evicted to make
//! room (evicting an unknown or in-flight record would allow a second charge, evicting a done one
//! a second charge on retry).
//!
//! Results themselves are not stored here: each record owns a numeric `slot`, and the caller keeps
//! the key → slot index and the result (a JS value) under that slot. Contract for callers: complete
//! each `Run` slot exactly once (an in-flight slot is never freed by anything else, so it cannot be
//! reused under a late report), and drain [`Records::take_expired`] right after `begin` returns,
//! before storing anything under a slot (expiry may free a slot that the same `begin` hands out
//! again).
//!
//! # Default
//! `ttl_ms = 86_400_000` (24 h, like Stripe's key retention), `max_records = 1_000_000`; for shared
//! stores `in_flight_lease_ms = 120_000` and `unknown_ttl_ms = 2_592_000_000` (30 days).

use super::error::{check, Error, Opt};
use super::sha256::sha256;

/// 24 hours.
pub const DEFAULT_TTL_MS: f64 = 86_400_000.0;
/// Records one store holds by default.
pub const DEFAULT_MAX_RECORDS: u32 = 1_000_000;
/// Largest accepted `maxRecords`.
pub const MAX_MAX_RECORDS: u32 = 1 << 30;
/// Shared stores: an in-flight record whose owner has not reported for this long reads as unknown.
pub const DEFAULT_IN_FLIGHT_LEASE_MS: f64 = 120_000.0;
/// Shared stores: how long an unknown record is kept for reconciliation (30 days). Redis must bound
/// every key's life; reconciliation has to settle an unknown key within this time.
pub const DEFAULT_UNKNOWN_TTL_MS: f64 = 2_592_000_000.0;
/// Longest accepted key, in bytes.
pub const MAX_KEY_LEN: usize = 255;

/// A store's validated limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoreConfig {
    /// How long a done record replays its result.
    pub ttl_ms: f64,
    /// Records held at most (refuse new keys beyond it).
    pub max_records: u32,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            ttl_ms: DEFAULT_TTL_MS,
            max_records: DEFAULT_MAX_RECORDS,
        }
    }
}

impl StoreConfig {
    /// Validate: `ttl_ms` finite > 0, `max_records` an integer in 1..=2^30; `None` = default.
    pub fn new(ttl_ms: Option<f64>, max_records: Option<f64>) -> Result<Self, Error> {
        let d = Self::default();
        Ok(Self {
            ttl_ms: match ttl_ms {
                None => d.ttl_ms,
                Some(t) => check::duration(Opt::TtlMs, t, false)?,
            },
            max_records: match max_records {
                None => d.max_records,
                Some(m) => check::count(Opt::MaxRecords, m, MAX_MAX_RECORDS)?,
            },
        })
    }
}

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
    /// Every status, by id.
    pub const ALL: [Status; 3] = [Status::InFlight, Status::Done, Status::Unknown];

    /// The status as a store's `peek` answers it: `"in-flight"`, `"done"`, `"unknown"`.
    pub const fn name(self) -> &'static str {
        match self {
            Status::InFlight => "in-flight",
            Status::Done => "done",
            Status::Unknown => "unknown",
        }
    }

    /// Stable id across the boundary.
    pub const fn id(self) -> u32 {
        match self {
            Status::InFlight => 0,
            Status::Done => 1,
            Status::Unknown => 2,
        }
    }
}

/// Answer of [`Records::begin`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Begin {
    /// New (or expired) key: run the operation, then [`Records::complete`] the slot.
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
    /// A new key, and the store already holds `max_records` live records: refused, nothing run.
    Full,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// Success: the result is stored and replayed.
    Success,
    /// Transient failure or timeout: park as unknown.
    Transient,
    /// Definitive rejection of this run's attempts: free the key — unless the record may have been
    /// processed by an earlier run (it was parked unknown and reopened): then it is unknown again.
    Definitive,
    /// An answer about the key proves the charge did not happen: free the key even if it may have
    /// been processed before (reconciliation's verdict on a re-send).
    Refuted,
}

impl Completion {
    /// Every completion, by id.
    pub const ALL: [Completion; 4] = [
        Completion::Success,
        Completion::Transient,
        Completion::Definitive,
        Completion::Refuted,
    ];

    /// Stable id across the boundary (the index in [`Completion::ALL`]).
    pub const fn id(self) -> u32 {
        match self {
            Completion::Success => 0,
            Completion::Transient => 1,
            Completion::Definitive => 2,
            Completion::Refuted => 3,
        }
    }

    /// The completion as the state-store interface names the outcome it reports: `"done"`,
    /// `"unknown"` (parked), `"failed"` (freed unless it may have been processed), `"refuted"`.
    pub const fn name(self) -> &'static str {
        match self {
            Completion::Success => "done",
            Completion::Transient => "unknown",
            Completion::Definitive => "failed",
            Completion::Refuted => "refuted",
        }
    }

    /// Inverse of [`Completion::id`].
    pub fn from_id(id: u32) -> Option<Self> {
        Self::ALL.get(id as usize).copied()
    }

    /// The completion of a run whose attempts folded into `verdict` ([`crate::core::history`]).
    pub const fn of(verdict: crate::core::history::Verdict) -> Completion {
        use crate::core::history::Verdict;
        match verdict {
            Verdict::Done => Completion::Success,
            Verdict::Unknown => Completion::Transient,
            Verdict::Refused | Verdict::NotProcessed => Completion::Definitive,
        }
    }
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
    /// When its run began (in flight, unknown); `None` for a done record, whose start is not kept.
    pub started_at_ms: Option<f64>,
}

/// A request fingerprint: 128 bits of a digest of the request's canonical text ([`fingerprint`],
/// or an in-process store's keyed hash, [`crate::core::keyed::KeyedRecords::fingerprint_of`]).
pub type Fingerprint = u128;

/// The shared fingerprint of `text`: the first 128 bits of SHA-256, the same value in every
/// process (Redis keeps it as hex, which JS renders from `fingerprintWords`) and in the Rust `web`
/// store.
pub fn fingerprint(text: &str) -> Fingerprint {
    let d = sha256(text.as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(d.get(..16).unwrap_or(&[0; 16]));
    u128::from_be_bytes(b)
}

/// One record, 24 bytes: two `u64` hold the fingerprint's low 120 bits and, in the top byte of
/// the first, `state` (the status, and the fingerprint's presence and the sticky flag as bits);
/// one time, since no status needs two (in flight and unknown: when the run began; done: when it
/// expires — a done record's start is never read). Why 120 bits and not 128: a byte of state
/// beside a 128-bit digest padded the record to 32 bytes; two requests share 120 bits of a
/// 128-bit digest with probability about 2^-120, which is as out of reach as 2^-128.
#[derive(Debug, Clone, Copy, Default)]
struct Record {
    words: [u64; 2],
    /// In flight / unknown: when the run began. Done: when the record expires.
    at_ms: f64,
}

/// `Record::state` of a slot that holds no record.
const EMPTY: u8 = 0;
/// `Record::state` bit: the record has a fingerprint.
const HAS_FP: u8 = 0x10;
/// `Record::state` bit: the charge may have been processed (it was parked unknown): sticky.
const MAYBE: u8 = 0x20;
/// The flag bits of `Record::state` (the rest is the status).
const FLAGS: u8 = HAS_FP | MAYBE;
/// The bits of a fingerprint a record keeps (its top byte's place holds the state).
const KEPT: Fingerprint = u128::MAX >> 8;

/// The part of `fingerprint` a record keeps and compares.
fn kept(fingerprint: Option<Fingerprint>) -> Option<Fingerprint> {
    fingerprint.map(|f| f & KEPT)
}

impl Record {
    fn new(fingerprint: Option<Fingerprint>, now_ms: f64) -> Self {
        let fp = fingerprint.unwrap_or(0) & KEPT;
        let state =
            Self::state_of(Status::InFlight) | if fingerprint.is_some() { HAS_FP } else { 0 };
        Self {
            words: [(fp >> 64) as u64 | u64::from(state) << 56, fp as u64],
            at_ms: now_ms,
        }
    }

    const fn state_of(status: Status) -> u8 {
        status.id() as u8 + 1
    }

    fn state(&self) -> u8 {
        (self.words[0] >> 56) as u8
    }

    fn set_state(&mut self, state: u8) {
        self.words[0] = (self.words[0] & (u64::MAX >> 8)) | u64::from(state) << 56;
    }

    fn is_empty(&self) -> bool {
        self.state() == EMPTY
    }

    fn status(&self) -> Status {
        match self.state() & !FLAGS {
            1 => Status::InFlight,
            2 => Status::Done,
            _ => Status::Unknown,
        }
    }

    /// Whether the slot holds a record with `status`.
    fn is(&self, status: Status) -> bool {
        self.state() & !FLAGS == Self::state_of(status)
    }

    fn set_status(&mut self, status: Status) {
        self.set_state((self.state() & FLAGS) | Self::state_of(status));
    }

    fn may_have_been_processed(&self) -> bool {
        self.state() & MAYBE != 0
    }

    /// Whether `fingerprint` is this record's request (the kept bits, or both absent).
    fn same_request(&self, fingerprint: Option<Fingerprint>) -> bool {
        let [hi, lo] = self.words;
        let mine =
            (self.state() & HAS_FP != 0).then_some((u128::from(hi) << 64 | u128::from(lo)) & KEPT);
        mine == kept(fingerprint)
    }
}

/// Records per chunk of slot storage (24 KiB of records, 16 KiB of key ids): past the first,
/// chunks are allocated whole and never moved, so a growing store copies little and leaves no
/// large abandoned buffer in memory (wasm linear memory never shrinks: one doubling `Vec` for a
/// million records would keep its outgrown copies' pages).
pub(crate) const CHUNK: usize = 1024;

/// Per-slot storage in chunks: slot `s` at `chunks[s / CHUNK][s % CHUNK]`. The first chunk grows
/// as a `Vec` does, from a few slots up to [`CHUNK`]; every later one is made whole. So a store
/// that holds a handful of records costs a few hundred bytes, not a whole chunk: a process that
/// makes a store per request or per test must not pay 40 KiB of linear memory for each until the
/// garbage collector runs (it does not see wasm memory, so a small JS heap may let thousands of
/// dropped stores pile up). The first chunk's outgrown copies, together smaller than one chunk, go
/// back to the allocator, which reuses them.
/// Every chunk but the last is full, so the slot count is derived, not kept.
#[derive(Debug, Clone)]
pub(crate) struct Chunks<T> {
    chunks: Vec<Vec<T>>,
}

impl<T> Default for Chunks<T> {
    fn default() -> Self {
        Self { chunks: Vec::new() }
    }
}

impl<T: Copy + Default> Chunks<T> {
    pub(crate) fn len(&self) -> usize {
        match self.chunks.as_slice() {
            [] => 0,
            [full @ .., last] => full.len() * CHUNK + last.len(),
        }
    }

    pub(crate) fn get(&self, slot: usize) -> Option<&T> {
        self.chunks.get(slot / CHUNK)?.get(slot % CHUNK)
    }

    pub(crate) fn get_mut(&mut self, slot: usize) -> Option<&mut T> {
        self.chunks.get_mut(slot / CHUNK)?.get_mut(slot % CHUNK)
    }

    /// A new default slot at the end.
    pub(crate) fn push(&mut self) -> usize {
        if self.chunks.last().is_none_or(|c| c.len() >= CHUNK) {
            let chunk = if self.chunks.is_empty() {
                Vec::new()
            } else {
                Vec::with_capacity(CHUNK)
            };
            self.chunks.push(chunk);
        }
        let slot = self.len();
        if let Some(chunk) = self.chunks.last_mut() {
            chunk.push(T::default());
        }
        slot
    }

    /// Slot `slot`, made (with every slot before it) when missing.
    pub(crate) fn at_mut(&mut self, slot: usize) -> Option<&mut T> {
        while self.len() <= slot {
            self.push();
        }
        self.get_mut(slot)
    }

    /// Every slot made so far, with its index (plain loops: smaller wasm than an iterator chain).
    pub(crate) fn each(&self, mut f: impl FnMut(u32, &T)) {
        let mut slot = 0u32;
        for chunk in &self.chunks {
            for t in chunk.iter() {
                f(slot, t);
                slot += 1;
            }
        }
    }
}

/// The key rule, as data: `[min length, max length, lowest byte, highest byte, lowest edge
/// byte]`: 1 to 255 printable ASCII characters (space to `~`), neither starting nor ending with a
/// space (HTTP trims header values, so `'k'` and `'k '` would be two records here and one key at
/// the gateway). [`validate_key`] applies it, and [`key_bytes_valid`] to the bytes the in-process
/// store's begin receives; the JS shell reads it through the wasm boundary for the paths whose keys
/// never cross (the Redis store, the HTTP client), and applies the same numbers there.
pub const KEY_RULE: [u32; 5] = [1, MAX_KEY_LEN as u32, 0x20, 0x7e, 0x21];

/// Validate an idempotency key against [`KEY_RULE`].
pub fn validate_key(key: &str) -> Result<(), Error> {
    if key_bytes_valid(key.as_bytes()) {
        Ok(())
    } else {
        Err(Error::InvalidKey)
    }
}

/// Whether a key's bytes pass [`KEY_RULE`]. Bytes, not a `&str`: the in-process store's shell writes
/// a key as UTF-8 next to its fingerprint text and hands over the first `key.length` bytes (its
/// UTF-16 length). A key of printable ASCII is one byte per unit, so those are exactly its bytes;
/// any other unit encodes to bytes of 0x80 and above that start at or before its own index, so
/// such a key is refused here too, whatever follows it in the buffer.
pub fn key_bytes_valid(b: &[u8]) -> bool {
    let [min, max, lo, hi, edge] = KEY_RULE;
    let edge_ok = |c: Option<&u8>| c.is_some_and(|&c| u32::from(c) >= edge);
    (min as usize..=max as usize).contains(&b.len())
        && b.iter().all(|&c| (lo..=hi).contains(&u32::from(c)))
        && edge_ok(b.first())
        && edge_ok(b.last())
}

/// The record state machine, by slot: every rule of the module docs, with no keys. Whoever owns
/// the key → slot index ([`crate::core::keyed::KeyedRecords`] in the package, a `HashMap` in the
/// Rust `web` store and the model tests) passes the slot of a known key, or `None` for a new one.
#[derive(Debug, Clone)]
pub struct Records {
    config: StoreConfig,
    slots: Chunks<Record>,
    free: Vec<u32>,
    expired: Vec<u32>,
    live: usize,
    next_sweep_ms: f64,
    /// No done record expires before this (a full store sweeps only when something can go).
    earliest_expiry_ms: f64,
}

impl Records {
    /// An empty record set with `config`'s limits.
    pub fn new(config: StoreConfig) -> Self {
        Self {
            config,
            slots: Chunks::default(),
            free: Vec::new(),
            expired: Vec::new(),
            live: 0,
            next_sweep_ms: f64::NEG_INFINITY,
            earliest_expiry_ms: f64::INFINITY,
        }
    }

    /// The limits.
    pub fn config(&self) -> StoreConfig {
        self.config
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
        self.slots.get(slot as usize).filter(|r| !r.is_empty())
    }

    /// Whether `slot` holds a run in flight for the request `fingerprint` (its kept bits, or both
    /// absent): what a run asks before it sends again, so that every attempt of a key sends the
    /// request the key was bound to. Any other record, or none, is `false`: nothing is sent.
    pub fn runs_request(&self, slot: u32, fingerprint: Option<Fingerprint>) -> bool {
        self.record(slot)
            .is_some_and(|r| r.is(Status::InFlight) && r.same_request(fingerprint))
    }

    /// The record in `slot` unless it is a `Done` one past its TTL.
    fn live_record(&self, slot: u32, now_ms: f64) -> Option<&Record> {
        self.record(slot)
            .filter(|r| !r.is(Status::Done) || now_ms < r.at_ms)
    }

    /// Start a run at `now_ms`: `slot` is the record of a known key (`None`: a new key). An
    /// expired `Done` record (or an empty slot) is started afresh in place. A new key beyond
    /// `max_records` is refused with [`Begin::Full`] once expired records are swept. Expired
    /// records are swept here when due (at most every `min(ttl/4, 60 s)`) or when the store is
    /// full: drain [`Records::take_expired`] (when [`Records::has_expired`]) before storing
    /// anything under the returned slot.
    pub fn begin(
        &mut self,
        slot: Option<u32>,
        fingerprint: Option<Fingerprint>,
        now_ms: f64,
    ) -> Begin {
        if let Some(slot) = slot {
            if let Some(r) = self.live_record(slot, now_ms) {
                if !r.same_request(fingerprint) {
                    return Begin::Mismatch;
                }
                return match r.status() {
                    Status::Done => Begin::Replay { slot },
                    Status::InFlight => Begin::InFlight {
                        started_at_ms: r.at_ms,
                    },
                    Status::Unknown => Begin::Unknown {
                        slot,
                        started_at_ms: r.at_ms,
                    },
                };
            }
        }
        let known = slot.filter(|&s| (s as usize) < self.slots.len());
        let occupied = known.is_some_and(|s| self.record(s).is_some());
        if !occupied && self.live >= self.config.max_records as usize {
            // Only expired done records may go, and only when one can have expired: a refusal
            // costs O(1) while the store is full of live records.
            if now_ms >= self.earliest_expiry_ms {
                self.sweep(now_ms);
            }
            if self.live >= self.config.max_records as usize {
                return Begin::Full;
            }
        }
        let record = Record::new(fingerprint, now_ms);
        // A known key's slot restarts in place (its Done record expired). A slot the caller names
        // that holds nothing (an index out of step with the records) is taken off the free list
        // first; a new key takes a free slot or a new one.
        let slot = match known {
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
                None => self.slots.push() as u32,
            },
        };
        if let Some(cell) = self.slots.get_mut(slot as usize) {
            if cell.is_empty() {
                self.live += 1;
            }
            *cell = record;
        }
        // Amortised expiry: the slot just begun is in flight, so the sweep cannot free it.
        if self.sweep_due(now_ms) {
            self.sweep(now_ms);
        }
        Begin::Run { slot }
    }

    fn mark_done(&mut self, slot: u32, now_ms: f64) {
        let expires = now_ms + self.config.ttl_ms;
        if let Some(r) = self.slots.get_mut(slot as usize).filter(|r| !r.is_empty()) {
            r.set_status(Status::Done);
            r.at_ms = expires;
            // A NaN clock never expires (and never lowers the bound).
            if expires < self.earliest_expiry_ms {
                self.earliest_expiry_ms = expires;
            }
        }
    }

    /// Report how the run that began with `Begin::Run { slot }` ended. Returns `true` when the
    /// slot was freed (the caller drops what it stored there). A slot that is not in flight is
    /// left alone (a double report changes nothing).
    pub fn complete(&mut self, slot: u32, completion: Completion, now_ms: f64) -> bool {
        match self.record(slot) {
            Some(r) if r.status() == Status::InFlight => {}
            _ => return false,
        }
        match completion {
            Completion::Success => {
                self.mark_done(slot, now_ms);
                false
            }
            Completion::Definitive
                if !self
                    .record(slot)
                    .is_some_and(Record::may_have_been_processed) =>
            {
                self.remove(slot);
                true
            }
            // Transient, or a definitive answer to a record that may have been processed before:
            // the later answer proves nothing about the earlier attempt. Unknown (again).
            Completion::Transient | Completion::Definitive => {
                if let Some(r) = self.slots.get_mut(slot as usize) {
                    r.set_status(Status::Unknown);
                    r.set_state(r.state() | MAYBE);
                }
                false
            }
            Completion::Refuted => {
                self.remove(slot);
                true
            }
        }
    }

    /// Reconciliation re-sends the key: the `Unknown` record in `slot` goes back to `InFlight`
    /// (started at `now_ms`), keeping its fingerprint and its *may have been processed* mark — one
    /// compare-and-set on the record, so nothing is freed in between and a crash after it leaves
    /// a record that still blocks blind retries. `expect_started_at_ms`, when given, must match the
    /// record's start ([`Error::WrongState`] otherwise, as for any record not unknown). The
    /// re-send must be the same request: another `fingerprint` is [`Error::KeyReused`], checked
    /// first, whatever the status.
    pub fn reopen(
        &mut self,
        slot: u32,
        fingerprint: Option<Fingerprint>,
        expect_started_at_ms: Option<f64>,
        now_ms: f64,
    ) -> Result<(), Error> {
        let Some(r) = self.live_record(slot, now_ms) else {
            return Err(Error::UnknownKey);
        };
        if !r.same_request(fingerprint) {
            return Err(Error::KeyReused);
        }
        let stale = expect_started_at_ms.is_some_and(|at| at != r.at_ms);
        if r.status() != Status::Unknown || stale {
            return Err(Error::WrongState);
        }
        if let Some(r) = self.slots.get_mut(slot as usize) {
            r.set_status(Status::InFlight);
            r.at_ms = now_ms;
        }
        Ok(())
    }

    /// Whether the record in `slot` may have been processed (it was parked unknown at least once).
    pub fn may_have_been_processed(&self, slot: u32) -> bool {
        self.record(slot)
            .is_some_and(Record::may_have_been_processed)
    }

    /// Reconciliation: settle the `Unknown` record in `slot`; with `Failed` the slot is freed.
    /// `expect_started_at_ms` makes it a compare-and-set: when given, only the attempt that began
    /// then is settled (an answer about an earlier attempt must not free a newer one) and any
    /// other is [`Error::WrongState`].
    pub fn resolve(
        &mut self,
        slot: u32,
        resolution: Resolution,
        expect_started_at_ms: Option<f64>,
        now_ms: f64,
    ) -> Result<(), Error> {
        let Some(r) = self.record(slot) else {
            return Err(Error::UnknownKey);
        };
        let stale = expect_started_at_ms.is_some_and(|at| at != r.at_ms);
        if r.status() != Status::Unknown || stale {
            return Err(Error::WrongState);
        }
        match resolution {
            Resolution::Done => self.mark_done(slot, now_ms),
            Resolution::Failed => self.remove(slot),
        }
        Ok(())
    }

    /// The live record in `slot`, if any.
    pub fn peek(&self, slot: u32, now_ms: f64) -> Option<Peek> {
        self.live_record(slot, now_ms).map(|r| Peek {
            slot,
            status: r.status(),
            started_at_ms: (!r.is(Status::Done)).then_some(r.at_ms),
        })
    }

    /// Slots whose outcome is unknown, oldest first (ties by slot).
    pub fn unknown_slots(&self) -> Vec<(u32, f64)> {
        let mut v: Vec<(u32, f64)> = Vec::new();
        self.slots.each(|i, r| {
            if r.is(Status::Unknown) {
                v.push((i, r.at_ms));
            }
        });
        // A total order, so any sort gives the same list; the small heapsort is 1.1 KB gz less wasm
        // than the standard library's (unknown lists are short and rare: speed does not matter).
        crate::core::sort::heap_sort_by(&mut v, |a, b| {
            a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)).is_lt()
        });
        v
    }

    /// The slots [`Records::take_expired`] will return, without taking them.
    pub fn expired(&self) -> &[u32] {
        &self.expired
    }

    /// Whether [`Records::take_expired`] has anything.
    pub fn has_expired(&self) -> bool {
        !self.expired.is_empty()
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
        self.next_sweep_ms = now_ms + (self.config.ttl_ms / 4.0).clamp(1.0, 60_000.0);
        let mut earliest = f64::INFINITY;
        let mut expired = Vec::new();
        self.slots.each(|i, r| {
            if r.is(Status::Done) {
                if now_ms >= r.at_ms {
                    expired.push(i);
                } else if r.at_ms < earliest {
                    earliest = r.at_ms;
                }
            }
        });
        self.earliest_expiry_ms = earliest;
        for slot in expired {
            self.remove(slot);
            self.expired.push(slot);
        }
    }

    fn remove(&mut self, slot: u32) {
        if let Some(cell) = self.slots.get_mut(slot as usize) {
            if !cell.is_empty() {
                *cell = Record::default();
                self.live -= 1;
                self.free.push(slot);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(max: u32) -> Records {
        Records::new(StoreConfig {
            ttl_ms: 1000.0,
            max_records: max,
        })
    }

    fn run(r: &mut Records, fp: Option<Fingerprint>, now: f64) -> u32 {
        match r.begin(None, fp, now) {
            Begin::Run { slot } => slot,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn fingerprints_are_sha256_prefixes() {
        assert_eq!(
            fingerprint("abc"),
            0xba78_16bf_8f01_cfea_4141_40de_5dae_2223,
            "the first 128 bits of SHA-256(\"abc\")"
        );
        assert_ne!(fingerprint("1 usd"), fingerprint("100000 usd"));
    }

    #[test]
    fn a_different_fingerprint_is_refused_in_every_status() {
        let (a, b) = (Some(fingerprint("1 usd")), Some(fingerprint("1000 usd")));
        let mut r = records(10);
        let slot = run(&mut r, a, 0.0);
        // In flight: the $1,000 order must not be told "in flight" (and later replay) — mismatch.
        assert_eq!(r.begin(Some(slot), b, 1.0), Begin::Mismatch);
        assert_eq!(r.begin(Some(slot), None, 1.0), Begin::Mismatch);
        r.complete(slot, Completion::Success, 2.0);
        assert_eq!(r.begin(Some(slot), b, 3.0), Begin::Mismatch);
        assert_eq!(r.begin(Some(slot), a, 3.0), Begin::Replay { slot });
    }

    #[test]
    fn a_full_store_refuses_new_keys_and_never_evicts_live_records() {
        let mut r = records(2);
        let a = run(&mut r, None, 0.0);
        let b = run(&mut r, None, 0.0);
        r.complete(b, Completion::Transient, 0.0);
        assert_eq!(r.begin(None, None, 5000.0), Begin::Full);
        // The in-flight and unknown records are intact.
        assert_eq!(r.peek(a, 5000.0).map(|p| p.status), Some(Status::InFlight));
        assert_eq!(r.peek(b, 5000.0).map(|p| p.status), Some(Status::Unknown));
        // A done record frees its place once expired, not before.
        r.complete(a, Completion::Success, 5000.0);
        assert_eq!(r.begin(None, None, 5999.0), Begin::Full);
        assert!(matches!(r.begin(None, None, 6000.0), Begin::Run { .. }));
        assert_eq!(r.take_expired(), vec![a]);
    }

    #[test]
    fn resolve_compare_and_set_on_the_attempt() {
        let mut r = records(10);
        let slot = run(&mut r, None, 7.0);
        r.complete(slot, Completion::Transient, 8.0);
        assert_eq!(
            r.resolve(slot, Resolution::Failed, Some(6.0), 9.0),
            Err(Error::WrongState)
        );
        assert_eq!(r.resolve(slot, Resolution::Failed, Some(7.0), 9.0), Ok(()));
        assert_eq!(
            r.resolve(slot, Resolution::Failed, None, 9.0),
            Err(Error::UnknownKey)
        );
    }

    #[test]
    fn may_have_been_processed_is_sticky_through_a_reopen() {
        let mut r = records(10);
        let slot = run(&mut r, Some(7), 0.0);
        assert!(!r.may_have_been_processed(slot));
        r.complete(slot, Completion::Transient, 1.0);
        assert!(r.may_have_been_processed(slot));
        // Reconciliation re-sends the same key on the same record: a compare-and-set.
        assert_eq!(
            r.reopen(slot, Some(7), Some(5.0), 2.0),
            Err(Error::WrongState)
        );
        assert_eq!(
            r.reopen(slot, Some(8), Some(0.0), 2.0),
            Err(Error::KeyReused)
        );
        assert_eq!(r.reopen(slot, None, Some(0.0), 2.0), Err(Error::KeyReused));
        assert_eq!(r.reopen(slot, Some(7), Some(0.0), 2.0), Ok(()));
        assert_eq!(
            r.reopen(slot, Some(7), None, 2.0),
            Err(Error::WrongState),
            "in flight"
        );
        assert_eq!(
            r.peek(slot, 2.0).map(|p| (p.status, p.started_at_ms)),
            Some((Status::InFlight, Some(2.0)))
        );
        // Same fingerprint still required, and a duplicate is refused, not run.
        assert_eq!(r.begin(Some(slot), Some(8), 3.0), Begin::Mismatch);
        assert!(matches!(
            r.begin(Some(slot), Some(7), 3.0),
            Begin::InFlight { .. }
        ));
        // The re-send is answered 404 (a load balancer): that frees nothing.
        assert!(!r.complete(slot, Completion::Definitive, 4.0));
        assert_eq!(r.peek(slot, 4.0).map(|p| p.status), Some(Status::Unknown));
        assert!(matches!(
            r.begin(Some(slot), Some(7), 5.0),
            Begin::Unknown { .. }
        ));
        // An answer about the key settles it.
        r.reopen(slot, Some(7), None, 6.0).unwrap();
        assert!(r.complete(slot, Completion::Refuted, 7.0));
        assert_eq!(r.peek(slot, 7.0), None);
        // A fresh record of a definitive first run is freed as before.
        let fresh = run(&mut r, None, 8.0);
        assert!(r.complete(fresh, Completion::Definitive, 9.0));
        assert_eq!(r.reopen(fresh, None, None, 9.0), Err(Error::UnknownKey));
    }

    #[test]
    fn a_reopened_record_can_succeed_and_its_next_record_starts_clean() {
        let mut r = records(10);
        let slot = run(&mut r, None, 0.0);
        r.complete(slot, Completion::Transient, 1.0);
        r.reopen(slot, None, None, 2.0).unwrap();
        r.complete(slot, Completion::Success, 3.0);
        assert_eq!(r.begin(Some(slot), None, 4.0), Begin::Replay { slot });
        // Expired, the same slot restarts afresh: no mark carried into a new charge.
        assert!(matches!(
            r.begin(Some(slot), None, 2000.0),
            Begin::Run { .. }
        ));
        assert!(!r.may_have_been_processed(slot));
        assert!(r.complete(slot, Completion::Definitive, 2001.0));
    }

    #[test]
    fn completions_of_verdicts() {
        use crate::core::history::Verdict;
        assert_eq!(Completion::of(Verdict::Done), Completion::Success);
        assert_eq!(Completion::of(Verdict::Unknown), Completion::Transient);
        assert_eq!(Completion::of(Verdict::Refused), Completion::Definitive);
        assert_eq!(
            Completion::of(Verdict::NotProcessed),
            Completion::Definitive
        );
    }

    #[test]
    fn keys_are_validated() {
        for bad in ["", "tab\there", "é", " k", "k ", " ", &"x".repeat(256)] {
            assert_eq!(validate_key(bad), Err(Error::InvalidKey), "{bad:?}");
        }
        assert!(validate_key(&"x".repeat(255)).is_ok());
        assert!(validate_key("order 42 / charge ~1").is_ok());
        assert!(validate_key("k").is_ok());
    }

    proptest::proptest! {
        /// What the in-process store's shell relies on: the first (UTF-16 length) bytes of the
        /// key's UTF-8 followed by any text pass the rule exactly when the key does.
        #[test]
        fn a_keys_utf16_length_of_its_utf8_bytes_passes_exactly_when_the_key_does(
            key in "[ -~]{0,6}(\\PC|[\u{80}-\u{10FFFF}]){0,2}[ -~]{0,6}",
            text in "\\PC{0,8}",
            long in proptest::bool::ANY,
        ) {
            let key = if long { key.repeat(40) } else { key };
            let units = key.encode_utf16().count();
            let bytes = format!("{key}{text}").into_bytes();
            let head = bytes.get(..units).unwrap_or(&bytes);
            // The rule by characters, written out here apart from KEY_RULE's byte bounds.
            let printable = key.chars().all(|c| (' '..='~').contains(&c));
            let expected = printable && (1..=255).contains(&key.len()) && !key.starts_with(' ') && !key.ends_with(' ');
            proptest::prop_assert_eq!(key_bytes_valid(head), expected, "{:?} + {:?}", key, text);
            proptest::prop_assert_eq!(validate_key(&key).is_ok(), expected);
        }
    }

    #[test]
    fn records_reuse_freed_slots_without_scanning_and_heal_a_stale_slot() {
        let mut r = records(100);
        for _ in 0..3 {
            let slot = run(&mut r, None, 0.0);
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
    fn a_record_is_24_bytes_and_a_zero_fingerprint_is_not_none() {
        assert_eq!(std::mem::size_of::<Record>(), 24);
        let mut r = records(10);
        let zero = run(&mut r, Some(0), 0.0);
        let none = run(&mut r, None, 0.0);
        let high = run(&mut r, Some(u128::MAX), 0.0);
        assert_eq!(r.begin(Some(zero), None, 1.0), Begin::Mismatch);
        assert_eq!(r.begin(Some(none), Some(0), 1.0), Begin::Mismatch);
        // Every one of the 120 kept bits counts; the state's byte does not leak into the compare.
        for bit in 0..120 {
            assert_eq!(
                r.begin(Some(high), Some(u128::MAX ^ (1 << bit)), 1.0),
                Begin::Mismatch,
                "bit {bit}"
            );
            assert_eq!(
                r.begin(Some(zero), Some(1 << bit), 1.0),
                Begin::Mismatch,
                "bit {bit}"
            );
        }
        // The top byte is not kept: a digest that differs only there is the same request.
        assert!(matches!(
            r.begin(Some(high), Some(u128::MAX >> 8), 1.0),
            Begin::InFlight { .. }
        ));
        // The status change keeps the fingerprint, and the fingerprint the status.
        r.complete(zero, Completion::Transient, 2.0);
        assert_eq!(r.begin(Some(zero), None, 3.0), Begin::Mismatch);
        assert!(matches!(
            r.begin(Some(zero), Some(0), 3.0),
            Begin::Unknown { .. }
        ));
        // The sticky flag (set when an unknown record is reopened) changes neither.
        assert_eq!(r.reopen(zero, Some(1), None, 4.0), Err(Error::KeyReused));
        assert_eq!(r.reopen(zero, Some(0), None, 4.0), Ok(()));
        r.complete(zero, Completion::Definitive, 5.0);
        assert!(matches!(
            r.begin(Some(zero), Some(0), 6.0),
            Begin::Unknown { .. }
        ));
        assert_eq!(r.begin(Some(zero), Some(1), 6.0), Begin::Mismatch);
    }

    #[test]
    fn the_first_chunk_starts_small_and_every_slot_keeps_its_value_as_it_grows() {
        let mut c: Chunks<u64> = Chunks::default();
        let first_capacity = |c: &Chunks<u64>| c.chunks.first().map_or(0, Vec::capacity);
        let n = CHUNK * 2 + 5;
        for i in 0..n {
            assert_eq!(c.push(), i);
            if let Some(v) = c.get_mut(i) {
                *v = i as u64 * 7 + 1;
            }
            // A small store holds a small first chunk; it never outgrows one chunk's slots.
            if i < CHUNK {
                assert_eq!(c.chunks.len(), 1);
                assert!(
                    first_capacity(&c) <= (2 * (i + 1)).max(8),
                    "after {} slots",
                    i + 1
                );
            } else {
                assert_eq!(c.chunks.len(), i / CHUNK + 1);
                assert!(c.chunks.iter().skip(1).all(|k| k.capacity() == CHUNK));
            }
            // Nothing written before a growth is lost by it.
            if i.is_power_of_two() || i % CHUNK == 0 {
                for j in 0..=i {
                    assert_eq!(c.get(j), Some(&(j as u64 * 7 + 1)), "slot {j} after {i}");
                }
            }
        }
        assert_eq!(c.len(), n);
        assert_eq!(c.get(n), None);
        let mut seen = 0;
        c.each(|slot, v| {
            assert_eq!(*v, u64::from(slot) * 7 + 1);
            seen += 1;
        });
        assert_eq!(seen, n);
        // at_mut makes every slot up to the one asked for, across the chunks.
        let mut d: Chunks<u64> = Chunks::default();
        assert!(d.at_mut(CHUNK + 1).is_some());
        assert_eq!(d.len(), CHUNK + 2);
        assert_eq!(d.chunks.len(), 2);
    }

    #[test]
    fn slots_span_chunks_and_freed_ones_are_reused() {
        let n = CHUNK as u32 * 2 + 3;
        let mut r = records(n);
        let slots: Vec<u32> = (0..n)
            .map(|i| run(&mut r, Some(u128::from(i)), 0.0))
            .collect();
        assert_eq!(slots, (0..n).collect::<Vec<_>>());
        assert_eq!(r.begin(None, None, 0.0), Begin::Full);
        // One in the second chunk is rejected definitively: its slot is the next new key's.
        let gone = slots[1500];
        for &s in &slots {
            let how = if s == gone {
                Completion::Definitive
            } else {
                Completion::Success
            };
            r.complete(s, how, 1.0);
        }
        for &s in slots.iter().filter(|&&s| s != gone) {
            assert_eq!(
                r.begin(Some(s), Some(u128::from(s)), 2.0),
                Begin::Replay { slot: s }
            );
            assert_eq!(
                r.peek(s, 2.0).map(|p| (p.status, p.started_at_ms)),
                Some((Status::Done, None)),
                "a done record keeps no start"
            );
        }
        assert_eq!(r.peek(gone, 2.0), None);
        assert_eq!(r.begin(None, None, 3.0), Begin::Run { slot: gone });
        assert_eq!(r.len(), n as usize);
        assert_eq!(r.begin(None, None, 3.0), Begin::Full);
    }

    #[test]
    fn config_validation_and_defaults() {
        assert_eq!(StoreConfig::new(None, None), Ok(StoreConfig::default()));
        assert!(StoreConfig::new(Some(0.0), None).is_err());
        assert!(StoreConfig::new(Some(f64::NAN), None).is_err());
        assert!(StoreConfig::new(Some(f64::INFINITY), None).is_err());
        assert!(StoreConfig::new(None, Some(0.0)).is_err());
        assert!(StoreConfig::new(None, Some(1.5)).is_err());
        assert!(StoreConfig::new(None, Some(f64::from(MAX_MAX_RECORDS) + 1.0)).is_err());
    }
}
