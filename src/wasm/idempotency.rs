//! The idempotency records across the boundary. The key → slot index is the core's
//! ([`crate::core::keyed::KeyedRecords`]: keys hashed with a per-store CSPRNG seed into one
//! open-addressing table in linear memory), so the JS heap holds no key per record; results stay
//! in JS, indexed by slot. Every rule of the record lifecycle is the core's
//! ([`crate::core::idempotency::Records`]), and so are the fingerprints (a SipHash-128 keyed by
//! the store's seed for `begin`; SHA-256/128 in `fingerprintWords`, for Redis) and the key rule,
//! which JS reads from here.

use wasm_bindgen::prelude::*;

use super::throw;
use crate::core::error::{Error, MAX_DURATION_MS};
use crate::core::idempotency::{
    fingerprint, Begin, Completion, Resolution, StoreConfig, DEFAULT_IN_FLIGHT_LEASE_MS,
    DEFAULT_UNKNOWN_TTL_MS, KEY_RULE,
};
use crate::core::keyed::KeyedRecords;

/// Records of one `IdempotencyStore`.
#[wasm_bindgen]
pub struct StoreCore {
    records: KeyedRecords,
}

/// `begin`'s answer kinds, by code (the answer is `slot * BEGIN_SLOT + expired flag + kind`), as
/// the `idempotency` event names them. Published by `wireLayouts` with [`BEGIN_CONSTANTS`].
pub(super) const BEGIN: [&str; 6] = ["run", "replay", "in-flight", "unknown", "mismatch", "full"];
const RUN: f64 = 0.0;
const REPLAY: f64 = 1.0;
const IN_FLIGHT: f64 = 2.0;
const UNKNOWN: f64 = 3.0;
const MISMATCH: f64 = 4.0;
const FULL: f64 = 5.0;
/// Added to `begin`'s answer when expired slots must be drained (`takeExpired`) first.
const EXPIRED_FLAG: f64 = 8.0;
/// What one slot weighs in `begin`'s answer.
const BEGIN_SLOT: f64 = 16.0;
/// `beginInput`'s answer for a key that fails [`KEY_RULE`]: nothing was looked up or stored.
pub(super) const INVALID_KEY: f64 = -1.0;
pub(super) const BEGIN_CONSTANTS: [(&str, i64); 3] = [
    ("expiredFlag", EXPIRED_FLAG as i64),
    ("slot", BEGIN_SLOT as i64),
    ("invalidKey", INVALID_KEY as i64),
];

/// `resolve` and `reopen` answers, by code (`reopen`: `slot * REOPEN_SLOT + answer`).
pub(super) const RESOLVE: [&str; 4] = ["resolved", "not-found", "wrong-state", "key-reused"];
const RESOLVED: f64 = 0.0;
const NOT_FOUND: f64 = 1.0;
const WRONG_STATE: f64 = 2.0;
const KEY_REUSED: f64 = 3.0;
/// What one slot weighs in `reopen`'s answer.
const REOPEN_SLOT: f64 = 4.0;
pub(super) const RESOLVE_CONSTANTS: [(&str, i64); 1] = [("slot", REOPEN_SLOT as i64)];

/// The slots of `peek`'s answer.
pub(super) const PEEK: [&str; 2] = ["status", "startedAtMs"];

/// The slots of [`key_rule`] (the core's `KEY_RULE`), by name: lengths in bytes, bounds as byte
/// values (printable ASCII; no space at either end).
pub(super) const KEY_RULE_NAMES: [&str; KEY_RULE.len()] = [
    "minLength",
    "maxLength",
    "lowestByte",
    "highestByte",
    "lowestEdgeByte",
];

/// The slots of [`store_defaults`].
pub(super) const STORE_DEFAULTS: [&str; 5] = [
    "ttlMs",
    "maxRecords",
    "inFlightLeaseMs",
    "unknownTtlMs",
    "maxDurationMs",
];

/// The seed of a store's key and fingerprint hashes, from the platform CSPRNG (`random::seed`).
/// Without one (not on Node 24 or any browser) `Math.random` seeds it: keys still work, only
/// crafting colliding keys gets easier.
fn key_seed() -> [u64; 2] {
    [super::random::seed(), super::random::seed()]
}

#[wasm_bindgen]
impl StoreCore {
    /// `ttl_ms` undefined = 24 h, `max_records` undefined = 1,000,000.
    #[wasm_bindgen(constructor)]
    pub fn new(ttl_ms: Option<f64>, max_records: Option<f64>) -> Result<StoreCore, JsValue> {
        StoreConfig::new(ttl_ms, max_records)
            .map(|c| StoreCore {
                records: KeyedRecords::new(c, key_seed()),
            })
            .map_err(throw)
    }

    /// `kind`: a [`Completion::id`] — 0 success, 1 transient (→ unknown), 2 definitive (→ freed,
    /// unless the record may have been processed: then unknown again), 3 refuted (an answer
    /// about the key: → freed); any other id counts as definitive. Returns whether the slot was
    /// freed.
    pub fn complete(&mut self, slot: u32, kind: u32, now_ms: f64) -> bool {
        let completion = Completion::from_id(kind).unwrap_or(Completion::Definitive);
        self.records.complete(slot, completion, now_ms)
    }

    /// Reconciliation's re-send: the unknown record of `key` goes back to in flight (started at
    /// `now_ms`; only the attempt that began at `expect_started_at`, when given), on the same
    /// record, for the same request (`fingerprint_text` as in `begin`): `slot * 4 + answer` with
    /// answer 0 reopened, 1 no record, 2 not unknown (or another attempt), 3 another request's key.
    pub fn reopen(
        &mut self,
        key: &str,
        fingerprint_text: &str,
        expect_started_at: Option<f64>,
        now_ms: f64,
    ) -> f64 {
        let fp = (!fingerprint_text.is_empty())
            .then(|| self.records.fingerprint_of(fingerprint_text.as_bytes()));
        match self
            .records
            .reopen(key.as_bytes(), fp, expect_started_at, now_ms)
        {
            Ok(slot) => f64::from(slot) * REOPEN_SLOT + RESOLVED,
            Err(Error::UnknownKey) => NOT_FOUND,
            Err(Error::KeyReused) => KEY_REUSED,
            Err(_) => WRONG_STATE,
        }
    }

    /// The slot of `key`'s record, or −1 when it has none.
    #[wasm_bindgen(js_name = slotOf)]
    pub fn slot_of(&self, key: &str) -> f64 {
        self.records.slot_of(key.as_bytes()).map_or(-1.0, f64::from)
    }

    /// Settle the unknown record of `key` (only the attempt that began at `expect_started_at`,
    /// when given): 0 settled, 1 no record, 2 not unknown (or another attempt).
    pub fn resolve(
        &mut self,
        key: &str,
        done: bool,
        expect_started_at: Option<f64>,
        now_ms: f64,
    ) -> f64 {
        let r = if done {
            Resolution::Done
        } else {
            Resolution::Failed
        };
        match self
            .records
            .resolve(key.as_bytes(), r, expect_started_at, now_ms)
        {
            Ok(_) => RESOLVED,
            Err(Error::UnknownKey) => NOT_FOUND,
            Err(_) => WRONG_STATE,
        }
    }

    /// [`PEEK`]'s slots: `[status (a Status id: 0 in flight, 1 done, 2 unknown), startedAtMs
    /// (NaN for done: not kept)]`, or empty when the slot holds no live record.
    pub fn peek(&self, slot: u32, now_ms: f64) -> Vec<f64> {
        match self.records.records().peek(slot, now_ms) {
            Some(p) => {
                let slots: [f64; PEEK.len()] = [
                    f64::from(p.status.id()),
                    p.started_at_ms.unwrap_or(f64::NAN),
                ];
                slots.to_vec()
            }
            None => Vec::new(),
        }
    }

    /// Slots whose outcome is unknown, oldest first.
    #[wasm_bindgen(js_name = unknownSlots)]
    pub fn unknown_slots(&self) -> Vec<u32> {
        self.records
            .records()
            .unknown_slots()
            .into_iter()
            .map(|(s, _)| s)
            .collect()
    }

    /// Drop the records expired at `now_ms` (their slots then come out of `takeExpired`).
    pub fn sweep(&mut self, now_ms: f64) {
        self.records.sweep(now_ms);
    }

    /// Slots freed by expiry since the last call.
    #[wasm_bindgen(js_name = takeExpired)]
    pub fn take_expired(&mut self) -> Vec<u32> {
        self.records.take_expired()
    }

    /// Records held.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        self.records.records().len() as u32
    }

    /// The limit on records held.
    #[wasm_bindgen(getter, js_name = maxRecords)]
    pub fn max_records(&self) -> u32 {
        self.records.records().config().max_records
    }
}

/// The key rule in [`KEY_RULE_NAMES`] order (the core's `KEY_RULE`), for the JS side to apply to
/// keys it has not seen.
#[wasm_bindgen(js_name = keyRule)]
pub fn key_rule() -> Vec<u32> {
    KEY_RULE.to_vec()
}

/// The fingerprint of a request's canonical text as four 32-bit words, most significant first:
/// what JS renders as the 32 hex digits the Redis store keeps (the in-process store hashes the
/// text itself, with its keyed SipHash). Words, not a hex string: a `Uint32Array` comes back
/// without a `TextDecoder` pass.
#[wasm_bindgen(js_name = fingerprintWords)]
pub fn fingerprint_words(text: &str) -> Vec<u32> {
    let fp = fingerprint(text);
    [96, 64, 32, 0].iter().map(|&s| (fp >> s) as u32).collect()
}

/// The core's idempotency defaults, in [`STORE_DEFAULTS`] order: `[ttlMs, maxRecords,
/// inFlightLeaseMs, unknownTtlMs, maxDurationMs]` (the last: the bound of every duration option,
/// [`MAX_DURATION_MS`]).
#[wasm_bindgen(js_name = storeDefaults)]
pub fn store_defaults() -> Vec<f64> {
    let d = StoreConfig::default();
    let slots: [f64; STORE_DEFAULTS.len()] = [
        d.ttl_ms,
        f64::from(d.max_records),
        DEFAULT_IN_FLIGHT_LEASE_MS,
        DEFAULT_UNKNOWN_TTL_MS,
        MAX_DURATION_MS,
    ];
    slots.to_vec()
}

impl StoreCore {
    /// Start a run for `key` (its one caller, `beginInput`, has applied the key rule; any bytes are safe here) with
    /// the request's fingerprint text (empty: none), hashed here with the store's keyed
    /// fingerprint ([`KeyedRecords::fingerprint_of`]; a shared store keeps SHA-256/128 instead,
    /// see `fingerprintWords`): the key and the text arrive together, in one call (JS writes both
    /// into the input buffer: [`StoreCore::begin_input`]), and no digest goes back to JS. Encoded
    /// as `slot * 16 + expired * 8 + kind` (kind: an index of [`BEGIN`] — 0 run, 1 replay, 2 in
    /// flight, 3 unknown, 4 mismatch, 5 full; for "in flight" and "mismatch" the slot part is the
    /// key's slot, for "full" 0). With the expired bit set, drop the slots `takeExpired` returns
    /// BEFORE storing anything under this slot.
    pub(super) fn begin_bytes(&mut self, key: &[u8], fingerprint_text: &[u8], now_ms: f64) -> f64 {
        let fp =
            (!fingerprint_text.is_empty()).then(|| self.records.fingerprint_of(fingerprint_text));
        let (begin, known) = self.records.begin(key, fp, now_ms);
        let flag = if self.records.has_expired() {
            EXPIRED_FLAG
        } else {
            0.0
        };
        let (slot, kind) = match begin {
            Begin::Run { slot } => (slot, RUN),
            Begin::Replay { slot } => (slot, REPLAY),
            Begin::InFlight { .. } => (known.unwrap_or(0), IN_FLIGHT),
            Begin::Unknown { slot, .. } => (slot, UNKNOWN),
            Begin::Mismatch => (known.unwrap_or(0), MISMATCH),
            Begin::Full => (0, FULL),
        };
        f64::from(slot) * BEGIN_SLOT + flag + kind
    }

    /// Whether `key` has a run in flight for the request whose fingerprint text is
    /// `fingerprint_text` (empty: none), hashed as [`StoreCore::begin_bytes`] hashes it.
    pub(super) fn runs_bytes(&self, key: &[u8], fingerprint_text: &[u8]) -> bool {
        self.records.runs_request(key, fingerprint_text)
    }
}
