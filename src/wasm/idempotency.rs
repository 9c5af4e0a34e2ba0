//! The idempotency table across the boundary. Results stay in JS, indexed by slot.

use wasm_bindgen::prelude::*;

use super::throw;
use crate::core::error::Error;
use crate::core::idempotency::{validate_key, Begin, Completion, IdempotencyTable, Resolution};

/// Records of one `IdempotencyStore`.
#[wasm_bindgen]
pub struct StoreCore {
    table: IdempotencyTable,
}

/// `begin` result kinds (low 3 bits); bit 3 = expired slots are waiting in `takeExpired`.
const RUN: f64 = 0.0;
const REPLAY: f64 = 1.0;
const IN_FLIGHT: f64 = 2.0;
const UNKNOWN: f64 = 3.0;
const MISMATCH: f64 = 4.0;
const INVALID_KEY: f64 = 5.0;

fn error_code(e: Error) -> f64 {
    match e {
        Error::InvalidKey => -1.0,
        Error::UnknownKey => -2.0,
        _ => -3.0,
    }
}

#[wasm_bindgen]
impl StoreCore {
    /// `ttl_ms` undefined = 24 h.
    #[wasm_bindgen(constructor)]
    pub fn new(ttl_ms: Option<f64>) -> Result<StoreCore, JsValue> {
        IdempotencyTable::new(ttl_ms)
            .map(|table| StoreCore { table })
            .map_err(throw)
    }

    /// Encoded as `slot * 16 + expiredFlag * 8 + kind` (kind: 0 run, 1 replay, 2 in flight,
    /// 3 unknown, 4 mismatch, 5 invalid key). For "in flight" the slot part is 0; use `peek`.
    pub fn begin(&mut self, key: &str, fingerprint: Option<String>, now_ms: f64) -> f64 {
        let result = self.table.begin(key, fingerprint.as_deref(), now_ms);
        let flag = if self.table.has_expired() { 8.0 } else { 0.0 };
        let (slot, kind) = match result {
            Ok(Begin::Run { slot }) => (slot, RUN),
            Ok(Begin::Replay { slot }) => (slot, REPLAY),
            Ok(Begin::InFlight { .. }) => (0, IN_FLIGHT),
            Ok(Begin::Unknown { slot, .. }) => (slot, UNKNOWN),
            Ok(Begin::Mismatch) => (0, MISMATCH),
            Err(_) => (0, INVALID_KEY),
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
        self.table.complete(slot, completion, now_ms)
    }

    /// Settle an unknown key: the slot (≥ 0), or −1 invalid key, −2 no record, −3 not unknown.
    pub fn resolve(&mut self, key: &str, done: bool, now_ms: f64) -> f64 {
        let r = if done {
            Resolution::Done
        } else {
            Resolution::Failed
        };
        match self.table.resolve(key, r, now_ms) {
            Ok(slot) => f64::from(slot),
            Err(e) => error_code(e),
        }
    }

    /// `[slot, status (0 in flight, 1 done, 2 unknown), startedAtMs]`, or empty when absent.
    pub fn peek(&self, key: &str, now_ms: f64) -> Vec<f64> {
        // An invalid key is `[-1]`: the JS side throws INVALID_KEY, as run() and resolve() do.
        if validate_key(key).is_err() {
            return vec![-1.0];
        }
        match self.table.peek(key, now_ms) {
            Some(p) => vec![f64::from(p.slot), f64::from(p.status.id()), p.started_at_ms],
            None => Vec::new(),
        }
    }

    /// Keys whose outcome is unknown, oldest first.
    #[wasm_bindgen(js_name = unknownKeys)]
    pub fn unknown_keys(&self) -> Vec<String> {
        self.table
            .unknown_keys()
            .into_iter()
            .map(String::from)
            .collect()
    }

    /// Slots freed by expiry since the last call.
    #[wasm_bindgen(js_name = takeExpired)]
    pub fn take_expired(&mut self) -> Vec<u32> {
        self.table.take_expired()
    }

    /// Drop the records expired at `now_ms` (their slots then come out of `takeExpired`).
    pub fn sweep(&mut self, now_ms: f64) {
        self.table.sweep(now_ms);
    }

    /// Records held.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        self.table.len() as u32
    }
}
