//! The hedging decision across the boundary: one validated policy and its latency window per
//! `hedge` option; the JS driver asks it, before each copy, what to do next.

use wasm_bindgen::prelude::*;

use super::throw;
use crate::core::hedge::{Hedge, HedgeOptions, DEFAULTS};

/// [`hedge_defaults`]'s slots, named as the `hedge` options.
pub(super) const DEFAULT_SLOTS: [&str; 5] = [
    "quantile",
    "windowSize",
    "minDelayMs",
    "maxDelayMs",
    "maxHedges",
];
/// [`HedgeCore::new`]'s arguments, named as the `hedge` options.
pub(super) const OPTIONS: [&str; 7] = [
    "delayMs",
    "quantile",
    "windowSize",
    "minDelayMs",
    "maxDelayMs",
    "maxHedges",
    "maxInFlight",
];

/// The defaults ([`DEFAULT_SLOTS`]) when the caller names none.
#[wasm_bindgen(js_name = hedgeDefaults)]
pub fn hedge_defaults() -> Vec<f64> {
    let d = DEFAULTS;
    vec![
        d.quantile,
        f64::from(d.window_size),
        d.min_delay_ms,
        d.max_delay_ms,
        f64::from(d.max_hedges),
    ]
}

/// A validated hedge policy with its moving latency window.
#[wasm_bindgen]
pub struct HedgeCore {
    hedge: Hedge,
}

fn given(v: f64) -> Option<f64> {
    (!v.is_nan()).then_some(v)
}

#[wasm_bindgen]
impl HedgeCore {
    /// Validate once; NaN = not given (the default).
    #[wasm_bindgen(constructor)]
    pub fn new(
        delay_ms: f64,
        quantile: f64,
        window_size: f64,
        min_delay_ms: f64,
        max_delay_ms: f64,
        max_hedges: f64,
        max_in_flight: f64,
    ) -> Result<HedgeCore, JsValue> {
        Hedge::new(HedgeOptions {
            delay_ms: given(delay_ms),
            quantile: given(quantile),
            window_size: given(window_size),
            min_delay_ms: given(min_delay_ms),
            max_delay_ms: given(max_delay_ms),
            max_hedges: given(max_hedges),
            max_in_flight: given(max_in_flight),
        })
        .map(|hedge| HedgeCore { hedge })
        .map_err(throw)
    }

    /// What to do now: `ms > 0` wait, else a code of the wire's `hedgeStep` group (start a copy,
    /// await an answer, every copy answered without a winner).
    #[wasm_bindgen(js_name = nextStep)]
    pub fn next_step(&self, started: u32, in_flight: u32, since_last_start_ms: f64) -> f64 {
        self.hedge
            .next_step(started, in_flight, since_last_start_ms)
            .to_wire()
    }

    /// An answered copy took `ms` from its own start.
    #[wasm_bindgen(js_name = recordLatency)]
    pub fn record_latency(&mut self, ms: f64) {
        self.hedge.record_latency(ms);
    }

    /// The delay before the next hedge now, ms.
    #[wasm_bindgen(getter, js_name = delayMs)]
    pub fn delay_ms(&self) -> f64 {
        self.hedge.delay_ms()
    }

    /// Copies in all, the first included.
    #[wasm_bindgen(getter, js_name = maxCopies)]
    pub fn max_copies(&self) -> u32 {
        self.hedge.max_copies()
    }
}
