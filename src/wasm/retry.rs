//! Retry policy and jitter functions across the boundary.

use wasm_bindgen::prelude::*;

use super::{random, throw};
use crate::core::backoff::{decorrelated, Backoff, Jitter};
use crate::core::error::{check, Error, Opt};
use crate::core::retry::{Decision, Failure, RetryOptions, RetryPolicy};

/// A validated, frozen retry policy. The JS `withRetry` driver asks it what to do after each
/// failed attempt.
#[wasm_bindgen]
pub struct RetryCore {
    policy: RetryPolicy,
}

#[wasm_bindgen]
impl RetryCore {
    /// Validate once; `jitter` is the index of `'full' | 'equal' | 'decorrelated' | 'none'`. A
    /// number left undefined is the core's default ([`RetryOptions::filled`]).
    #[wasm_bindgen(constructor)]
    pub fn new(
        max_attempts: Option<f64>,
        base_delay_ms: Option<f64>,
        max_delay_ms: Option<f64>,
        jitter: u32,
        max_elapsed_ms: Option<f64>,
    ) -> Result<RetryCore, JsValue> {
        let jitter = Jitter::from_id(jitter).map_err(throw)?;
        let (max_attempts, base_delay_ms, max_delay_ms) =
            RetryOptions::filled(max_attempts, base_delay_ms, max_delay_ms);
        RetryPolicy::new(
            max_attempts,
            base_delay_ms,
            max_delay_ms,
            jitter,
            max_elapsed_ms,
        )
        .map(|policy| RetryCore { policy })
        .map_err(throw)
    }

    /// After failed attempt `attempt`: the delay in ms (≥ 0) before the next attempt, or a
    /// negative stop code, `-Stop::id()` (named in the wire's `stop` group).
    /// `retry_after_ms` is NaN when the server sent none; `unit` is a draw in [0, 1) from the
    /// caller's `random()`, or NaN to use the seeded generator.
    #[wasm_bindgen(js_name = afterFailure)]
    pub fn after_failure(
        &self,
        attempt: u32,
        elapsed_ms: f64,
        retryable: bool,
        retry_after_ms: f64,
        previous_delay_ms: f64,
        unit: f64,
    ) -> f64 {
        let failure = Failure {
            attempt,
            elapsed_ms,
            retryable,
            retry_after_ms: (!retry_after_ms.is_nan()).then_some(retry_after_ms),
            previous_delay_ms,
        };
        let unit = if unit.is_nan() { random::unit() } else { unit };
        match self.policy.after_failure(failure, unit) {
            Decision::Retry { delay_ms } => delay_ms,
            Decision::Stop(stop) => -f64::from(stop.id()),
        }
    }

    /// The base delay (first `previousDelayMs` of a decorrelated chain).
    #[wasm_bindgen(getter, js_name = baseDelayMs)]
    pub fn base_delay_ms(&self) -> f64 {
        self.policy.backoff().base_delay_ms()
    }

    /// The attempt limit.
    #[wasm_bindgen(getter, js_name = maxAttempts)]
    pub fn max_attempts(&self) -> u32 {
        self.policy.max_attempts()
    }

    /// The overall deadline, or NaN for none.
    #[wasm_bindgen(getter, js_name = maxElapsedMs)]
    pub fn max_elapsed_ms(&self) -> f64 {
        self.policy.max_elapsed_ms().unwrap_or(f64::NAN)
    }
}

/// One jitter draw: `kind` 0 full, 1 equal, 2 decorrelated (then `attempt_or_previous` is the
/// previous delay), 3 none. `unit` NaN uses the seeded generator.
#[wasm_bindgen(js_name = jitterDelay)]
pub fn jitter_delay(
    kind: u32,
    attempt_or_previous: f64,
    base_delay_ms: f64,
    max_delay_ms: f64,
    unit: f64,
) -> Result<f64, JsValue> {
    // One throw site for the four ways to fail (wasm size).
    jitter_draw(kind, attempt_or_previous, base_delay_ms, max_delay_ms, unit).map_err(throw)
}

fn jitter_draw(
    kind: u32,
    attempt_or_previous: f64,
    base_delay_ms: f64,
    max_delay_ms: f64,
    unit: f64,
) -> Result<f64, Error> {
    let jitter = Jitter::from_id(kind)?;
    let backoff = Backoff::new(base_delay_ms, max_delay_ms, jitter)?;
    let unit = if unit.is_nan() { random::unit() } else { unit };
    if jitter == Jitter::Decorrelated {
        let previous = check::non_negative(Opt::PreviousDelayMs, attempt_or_previous)?;
        return Ok(decorrelated(previous, base_delay_ms, max_delay_ms, unit));
    }
    let attempt = check::count(Opt::Attempt, attempt_or_previous, u32::MAX)?;
    Ok(backoff.delay_from_unit(attempt, 0.0, unit))
}
