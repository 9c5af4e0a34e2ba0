//! Retry budgets across the boundary.

use wasm_bindgen::prelude::*;

use super::throw;
use crate::core::budget::{RatioBudget, RetryBudget, TokenBucket};

/// A retry budget (token bucket or ratio).
#[wasm_bindgen]
pub struct BudgetCore {
    budget: RetryBudget,
}

#[wasm_bindgen]
impl BudgetCore {
    /// `capacity` tokens refilled at `refill_per_sec`; starts full.
    #[wasm_bindgen(js_name = tokenBucket)]
    pub fn token_bucket(capacity: f64, refill_per_sec: f64) -> Result<BudgetCore, JsValue> {
        TokenBucket::new(capacity, refill_per_sec)
            .map(|b| BudgetCore {
                budget: RetryBudget::TokenBucket(b),
            })
            .map_err(throw)
    }

    /// Retries ≤ `ratio` × requests over `window_ms`, plus `min_retries_per_sec`.
    pub fn ratio(
        ratio: f64,
        min_retries_per_sec: f64,
        window_ms: f64,
    ) -> Result<BudgetCore, JsValue> {
        RatioBudget::new(ratio, min_retries_per_sec, window_ms)
            .map(|b| BudgetCore {
                budget: RetryBudget::Ratio(b),
            })
            .map_err(throw)
    }

    /// Whether first attempts must be reported (ratio budgets earn retries from requests).
    #[wasm_bindgen(getter, js_name = countsRequests)]
    pub fn counts_requests(&self) -> bool {
        matches!(self.budget, RetryBudget::Ratio(_))
    }

    /// Count a first attempt.
    #[wasm_bindgen(js_name = recordRequest)]
    pub fn record_request(&mut self, now_ms: f64) {
        self.budget.record_request(now_ms);
    }

    /// Take one retry.
    #[wasm_bindgen(js_name = tryWithdraw)]
    pub fn try_withdraw(&mut self, now_ms: f64) -> bool {
        self.budget.try_withdraw(now_ms)
    }

    /// Retries available at `now_ms`.
    pub fn available(&mut self, now_ms: f64) -> f64 {
        self.budget.available(now_ms)
    }
}
