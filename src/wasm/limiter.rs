//! The adaptive rate limiter across the boundary: numbers in, a delay out. The JS shell sleeps.

use wasm_bindgen::prelude::*;

use super::throw;
use crate::core::limiter::{LimiterConfig, Mode, RateLimiter};

/// The presets' names, by id (the `preset` option's values).
pub(super) const PRESETS: [&str; 3] = ["cubic", "aws", "aimd"];
/// [`limiter_preset`]'s slots, named as the `RateLimiter` options (`mode` is a `Mode` id,
/// `awsExact` 0 or 1); `LimiterCore::new` takes them in this order.
pub(super) const PRESET: [&str; 9] = [
    "mode",
    "beta",
    "scaleConstant",
    "smooth",
    "minRatePerSec",
    "minCapacity",
    "increasePerSec",
    "maxHoldMs",
    "awsExact",
];

/// The slots ([`PRESET`]) of preset `id` ([`PRESETS`]); ours for an unknown id.
#[wasm_bindgen(js_name = limiterPreset)]
pub fn limiter_preset(id: u32) -> Vec<f64> {
    let c = match id {
        1 => LimiterConfig::aws_adaptive(),
        2 => LimiterConfig::aimd(),
        _ => LimiterConfig::default(),
    };
    vec![
        f64::from(u8::from(c.mode == Mode::Aimd)),
        c.beta,
        c.scale_constant,
        c.smooth,
        c.min_rate_per_sec,
        c.min_capacity,
        c.increase_per_sec,
        c.max_hold_ms,
        f64::from(u8::from(c.aws_exact)),
    ]
}

/// An adaptive client-side rate limiter.
#[wasm_bindgen]
pub struct LimiterCore {
    limiter: RateLimiter,
}

#[wasm_bindgen]
impl LimiterCore {
    /// Validate (see [`limiter_preset`] for the order).
    #[wasm_bindgen(constructor)]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        mode: u32,
        beta: f64,
        scale_constant: f64,
        smooth: f64,
        min_rate_per_sec: f64,
        min_capacity: f64,
        increase_per_sec: f64,
        max_hold_ms: f64,
        aws_exact: bool,
    ) -> Result<LimiterCore, JsValue> {
        let config = LimiterConfig {
            mode: Mode::from_id(mode).map_err(throw)?,
            beta,
            scale_constant,
            smooth,
            min_rate_per_sec,
            min_capacity,
            increase_per_sec,
            max_hold_ms,
            aws_exact,
        };
        RateLimiter::new(config)
            .map(|limiter| LimiterCore { limiter })
            .map_err(throw)
    }

    /// The limiter was made at `now_ms` (`core::limiter::RateLimiter::start`: the AWS preset counts
    /// time from here). Once, right after construction.
    pub fn start(&mut self, now_ms: f64) {
        self.limiter.start(now_ms);
    }

    /// Ask to send at `now_ms`: `x >= 0` a token is taken, send after `x` ms; `x < 0` nothing is
    /// taken, ask again after `-x` ms.
    pub fn acquire(&mut self, now_ms: f64) -> f64 {
        self.limiter.acquire(now_ms).to_wire()
    }

    /// An answer arrived at `now_ms` for a request sent at `sent_ms`.
    pub fn record(&mut self, now_ms: f64, sent_ms: f64, throttled: bool) {
        self.limiter.record(now_ms, sent_ms, throttled);
    }

    /// A Retry-After of `ms`: no send before `now_ms + ms` (capped).
    pub fn hold(&mut self, now_ms: f64, ms: f64) {
        self.limiter.hold(now_ms, ms);
    }

    /// Current fill rate (per second).
    #[wasm_bindgen(getter, js_name = ratePerSec)]
    pub fn rate_per_sec(&self) -> f64 {
        self.limiter.rate_per_sec()
    }

    /// Measured send rate (per second, smoothed).
    #[wasm_bindgen(getter, js_name = measuredRatePerSec)]
    pub fn measured_rate_per_sec(&self) -> f64 {
        self.limiter.measured_rate_per_sec()
    }

    /// Whether a throttle has switched pacing on.
    #[wasm_bindgen(getter)]
    pub fn enabled(&self) -> bool {
        self.limiter.enabled()
    }
}
