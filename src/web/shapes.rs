//! The shapes that cross to JS, as the JS package writes them: a breaker's `toJSON()`, a store's
//! records, a checkout's outcome.
//!
//! Why the same shapes: a Rust component and JS code on one page (or a snapshot persisted by one
//! and restored by the other) must share state without a translation layer. On wasm32 each type
//! converts to and from a `JsValue` with serde-wasm-bindgen (`to_js` / `from_js`); natively they
//! are plain serde types.

use serde::{Deserialize, Serialize};

use crate::core::breaker::{Snapshot, State};
use crate::core::error::{Error as CoreError, Expect, Opt};

/// A breaker's state as the JS `CircuitBreaker#toJSON()` writes it:
/// `{ version: 1, kind, state, openUntil, probeSuccesses, consecutiveFailures, window }`.
///
/// ```
/// use steadfast::web::{BreakerConfig, CircuitBreaker};
/// let b = CircuitBreaker::new(BreakerConfig::consecutive(3.0, 1_000.0, None).unwrap());
/// let s = b.snapshot();
/// assert_eq!((s.version, s.kind.as_str(), s.state.as_str()), (1, "consecutive", "closed"));
/// assert!(b.restore(&s).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BreakerSnapshot {
    /// Always 1.
    pub version: u32,
    /// `"rate"` or `"consecutive"`.
    pub kind: String,
    /// `"closed"`, `"open"`, `"half-open"` or `"isolated"`.
    pub state: String,
    /// When an open circuit admits a probe (ms, the breaker's clock); `null` unless open.
    pub open_until: Option<f64>,
    /// Consecutive probe successes so far (half-open).
    pub probe_successes: u32,
    /// Consecutive failures so far (consecutive breaker).
    pub consecutive_failures: u32,
    /// The rolling window, oldest first, 1 = failure (rate breaker).
    #[serde(default)]
    pub window: Vec<u8>,
}

impl BreakerSnapshot {
    pub(crate) fn from_core(kind: &str, s: &Snapshot) -> Self {
        Self {
            version: 1,
            kind: kind.into(),
            state: s.state.name().into(),
            open_until: (s.state == State::Open).then_some(s.open_until_ms),
            probe_successes: s.probe_successes,
            consecutive_failures: s.consecutive_failures,
            window: s.window_failures.iter().map(|&f| u8::from(f)).collect(),
        }
    }

    /// Validate against a breaker of `kind`; the core checks the rest against the config.
    pub(crate) fn to_core(&self, kind: &str) -> Result<Snapshot, CoreError> {
        let bad = CoreError::option(Opt::State, Expect::Snapshot);
        if self.version != 1 || self.kind != kind || self.window.iter().any(|&b| b > 1) {
            return Err(bad);
        }
        let state = State::from_name(&self.state).ok_or(bad)?;
        let open_until_ms = match state {
            State::Open => self.open_until.ok_or(bad)?,
            _ => 0.0,
        };
        Ok(Snapshot {
            state,
            open_until_ms,
            probe_successes: self.probe_successes,
            consecutive_failures: self.consecutive_failures,
            window_failures: self.window.iter().map(|&b| b == 1).collect(),
        })
    }
}

/// What a checkout shows, as the JS `createCheckoutClient().charge()` resolves:
/// `{ status: 'succeeded', reference, key }`, `{ status: 'declined', reason, key }` or
/// `{ status: 'unknown', key }` (money may have moved: show "we're checking", never "try again").
///
/// ```
/// use steadfast::web::ChargeOutcome;
/// let o = ChargeOutcome::Succeeded { reference: "ch_1".into(), key: "k".into() };
/// assert_eq!(o.key(), "k");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum ChargeOutcome {
    /// The gateway charged the card.
    Succeeded {
        /// The gateway's charge reference.
        reference: String,
        /// The idempotency key.
        key: String,
    },
    /// The card was declined (definitive: the key is free again).
    Declined {
        /// The gateway's reason.
        reason: String,
        /// The idempotency key.
        key: String,
    },
    /// The outcome is unknown until reconciliation.
    Unknown {
        /// The idempotency key.
        key: String,
    },
}

impl ChargeOutcome {
    /// The idempotency key of the charge.
    pub fn key(&self) -> &str {
        match self {
            ChargeOutcome::Succeeded { key, .. }
            | ChargeOutcome::Declined { key, .. }
            | ChargeOutcome::Unknown { key } => key,
        }
    }
}

#[cfg(target_arch = "wasm32")]
mod js {
    use serde::{de::DeserializeOwned, Serialize};
    use wasm_bindgen::JsValue;

    use super::super::idempotency::Record;
    use super::{BreakerSnapshot, ChargeOutcome};

    /// Serialize as a plain JS object (maps as objects, `None` as `null`), the way `toJSON()`
    /// writes it.
    pub(crate) fn to_js<T: Serialize + ?Sized>(v: &T) -> Result<JsValue, JsValue> {
        let s = serde_wasm_bindgen::Serializer::new()
            .serialize_maps_as_objects(true)
            .serialize_missing_as_null(true);
        v.serialize(&s).map_err(JsValue::from)
    }

    pub(crate) fn from_js<T: DeserializeOwned>(v: JsValue) -> Result<T, JsValue> {
        serde_wasm_bindgen::from_value(v).map_err(JsValue::from)
    }

    macro_rules! js_shape {
        ($t:ty $(, $g:ident)?) => {
            impl$(<$g: Serialize + DeserializeOwned>)? $t {
                /// This value as a plain JS object, in the JS package's shape.
                pub fn to_js(&self) -> Result<JsValue, JsValue> {
                    to_js(self)
                }

                /// Read the JS package's shape (from JS code, `JSON.parse`, storage); a value
                /// of the wrong shape is an `Err` with serde-wasm-bindgen's message.
                pub fn from_js(value: JsValue) -> Result<Self, JsValue> {
                    from_js(value)
                }
            }
        };
    }
    js_shape!(BreakerSnapshot);
    js_shape!(ChargeOutcome);
    js_shape!(Record<T>, T);
}
