//! The weighted retry quota across the boundary. Presets come from the core, so the JS shell holds
//! no list of defaults of its own.

use wasm_bindgen::prelude::*;

use super::throw;
use crate::core::quota::{ErrorClass, QuotaConfig, RetryQuota};

/// The presets' names, by id (the `preset` option's values).
pub(super) const PRESETS: [&str; 2] = ["steadfast", "aws"];
/// [`quota_preset`]'s slots, named as the `RetryQuota` options; `QuotaCore::new` takes them in
/// this order.
pub(super) const PRESET: [&str; 5] = [
    "capacity",
    "timeoutCost",
    "throttledCost",
    "serverErrorCost",
    "successRefund",
];

/// The slots ([`PRESET`]) of preset `id` ([`PRESETS`]); ours for an unknown id.
#[wasm_bindgen(js_name = quotaPreset)]
pub fn quota_preset(id: u32) -> Vec<f64> {
    let c = if id == 1 {
        QuotaConfig::aws_standard()
    } else {
        QuotaConfig::default()
    };
    [
        c.capacity,
        c.timeout,
        c.throttled,
        c.server_error,
        c.success_refund,
    ]
    .map(f64::from)
    .to_vec()
}

/// The class id (`ErrorClass::id`, named in the wire's `errorClass` group) of a failure with HTTP `status` (NaN:
/// no response).
#[wasm_bindgen(js_name = quotaErrorClass)]
pub fn quota_error_class(status: f64) -> u32 {
    ErrorClass::of_status(status).id()
}

/// A weighted retry quota.
#[wasm_bindgen]
pub struct QuotaCore {
    quota: RetryQuota,
}

#[wasm_bindgen]
impl QuotaCore {
    /// Validate and start full.
    #[wasm_bindgen(constructor)]
    pub fn new(
        capacity: f64,
        timeout: f64,
        throttled: f64,
        server_error: f64,
        success_refund: f64,
    ) -> Result<QuotaCore, JsValue> {
        QuotaConfig::new(capacity, timeout, throttled, server_error, success_refund)
            .map(|c| QuotaCore {
                quota: RetryQuota::new(c),
            })
            .map_err(throw)
    }

    /// Pay for a retry after a failure of class `class`: the cost paid, or -1 when refused.
    #[wasm_bindgen(js_name = tryAcquire)]
    pub fn try_acquire(&mut self, class: u32) -> f64 {
        self.quota
            .try_acquire(ErrorClass::from_id(class))
            .map_or(-1.0, f64::from)
    }

    /// A call succeeded; `last_cost` is its last retry's cost, or negative / NaN if it never retried.
    #[wasm_bindgen(js_name = recordSuccess)]
    pub fn record_success(&mut self, last_cost: f64) {
        let paid = (last_cost >= 0.0).then(|| last_cost.min(f64::from(u32::MAX)) as u32);
        self.quota.record_success(paid);
    }

    /// Tokens available.
    #[wasm_bindgen(getter)]
    pub fn available(&self) -> f64 {
        f64::from(self.quota.available())
    }

    /// Tokens when full.
    #[wasm_bindgen(getter)]
    pub fn capacity(&self) -> f64 {
        f64::from(self.quota.config().capacity)
    }
}
