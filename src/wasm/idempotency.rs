//! The idempotency records across the boundary, by slot. The key → slot index lives in JS (a
//! `Map`: V8's seeded string hash, and a known key never crosses into wasm as a string); results
//! stay in JS too, indexed by slot. Every rule of the record lifecycle is the core's
//! ([`crate::core::idempotency::Records`]).

use wasm_bindgen::prelude::*;

use super::throw;
use crate::core::error::Error;
use crate::core::idempotency::{Begin, Completion, Records, Resolution, KEY_RULE};

/// Records of one `IdempotencyStore`.
#[wasm_bindgen]
pub struct StoreCore {
    records: Records,
}

/// `begin` result kinds (low 3 bits); bit 3 = a sweep is due (call `sweep`, then `takeExpired`).
const RUN: f64 = 0.0;
const REPLAY: f64 = 1.0;
const IN_FLIGHT: f64 = 2.0;
const UNKNOWN: f64 = 3.0;
const MISMATCH: f64 = 4.0;

/// A slot from JS: a non-negative integer below 2^32, else `None` (a new key).
fn slot_of(v: f64) -> Option<u32> {
    (v >= 0.0 && v <= f64::from(u32::MAX) && v.fract() == 0.0).then_some(v as u32)
}

/// A fingerprint hash from JS: an integer in [0, 2^53), else `None` (no fingerprint).
fn fingerprint_of(v: f64) -> Option<u64> {
    ((0.0..9_007_199_254_740_992.0).contains(&v) && v.fract() == 0.0).then_some(v as u64)
}

#[wasm_bindgen]
impl StoreCore {
    /// `ttl_ms` undefined = 24 h.
    #[wasm_bindgen(constructor)]
    pub fn new(ttl_ms: Option<f64>) -> Result<StoreCore, JsValue> {
        Records::new(ttl_ms)
            .map(|records| StoreCore { records })
            .map_err(throw)
    }

    /// Start a run: `slot` of a known key or −1 for a new one; `fingerprint` a 53-bit hash or
    /// NaN. Encoded as `slot * 16 + sweepDue * 8 + kind` (kind: 0 run, 1 replay, 2 in flight,
    /// 3 unknown, 4 mismatch; for "in flight" and "mismatch" the slot part is the given slot).
    pub fn begin(&mut self, slot: f64, fingerprint: f64, now_ms: f64) -> f64 {
        let given = slot_of(slot);
        let begin = self
            .records
            .begin(given, fingerprint_of(fingerprint), now_ms);
        let flag = if self.records.sweep_due(now_ms) {
            8.0
        } else {
            0.0
        };
        let (slot, kind) = match begin {
            Begin::Run { slot } => (slot, RUN),
            Begin::Replay { slot } => (slot, REPLAY),
            Begin::InFlight { .. } => (given.unwrap_or(0), IN_FLIGHT),
            Begin::Unknown { slot, .. } => (slot, UNKNOWN),
            Begin::Mismatch => (given.unwrap_or(0), MISMATCH),
        };
        f64::from(slot) * 16.0 + flag + kind
    }

    /// `kind`: 0 success, 1 transient (→ unknown), 2 definitive (→ freed). Returns whether the
    /// slot was freed.
    pub fn complete(&mut self, slot: u32, kind: u32, now_ms: f64) -> bool {
        let completion = match kind {
            0 => Completion::Success,
            1 => Completion::Transient,
            _ => Completion::Definitive,
        };
        self.records.complete(slot, completion, now_ms)
    }

    /// Settle the unknown record in `slot`: 0, or −2 no record, −3 not unknown.
    pub fn resolve(&mut self, slot: u32, done: bool, now_ms: f64) -> f64 {
        let r = if done {
            Resolution::Done
        } else {
            Resolution::Failed
        };
        match self.records.resolve(slot, r, now_ms) {
            Ok(()) => 0.0,
            Err(Error::UnknownKey) => -2.0,
            Err(_) => -3.0,
        }
    }

    /// `[status (0 in flight, 1 done, 2 unknown), startedAtMs]`, or empty when the slot holds no
    /// live record.
    pub fn peek(&self, slot: u32, now_ms: f64) -> Vec<f64> {
        match self.records.peek(slot, now_ms) {
            Some(p) => vec![f64::from(p.status.id()), p.started_at_ms],
            None => Vec::new(),
        }
    }

    /// Slots whose outcome is unknown, oldest first.
    #[wasm_bindgen(js_name = unknownSlots)]
    pub fn unknown_slots(&self) -> Vec<u32> {
        self.records
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
        self.records.len() as u32
    }
}

/// The key rule `[min length, max length, lowest byte, highest byte]` (see
/// `core::idempotency::KEY_RULE`), for the JS side to apply to keys it has not seen.
#[wasm_bindgen(js_name = keyRule)]
pub fn key_rule() -> Vec<u32> {
    KEY_RULE.to_vec()
}
