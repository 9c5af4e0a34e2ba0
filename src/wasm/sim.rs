//! The retry-storm simulator across the boundary: numbers in, one flat `Float64Array` out.
//!
//! Why flat arrays and not serde: the package's size budget. Each export returns a header of
//! numbers and the series after it; `pkg-template/lib/sim.js` slices that into plain objects.
//! The outage model takes its options as one `Float64Array` whose layout (names, defaults) is
//! defined here once and published by [`sim_outage_layout`] / [`sim_outage_defaults`], so the JS
//! side holds no list of its own to drift.

use wasm_bindgen::prelude::*;

use super::throw;
use super::wire::{names_of, wire_text, Group};
use crate::core::breaker::BreakerConfig;
use crate::core::budget::{RatioBudget, RetryBudget, TokenBucket};
use crate::core::error::Error;
use crate::core::hedge::{Hedge, HedgeOptions};
use crate::core::limiter::LimiterConfig;
use crate::core::quota::QuotaConfig;
use crate::core::sim::{
    jitter_table, simulate_histogram, simulate_outage, simulate_tail, HistogramOptions,
    JitterOptions, OutageOptions, Strategy, TailOptions,
};

/// The strategies' names, by id (the core's `Strategy::ALL`).
#[allow(
    clippy::indexing_slicing,
    reason = "compile-time only: a bad index is a build error"
)]
const STRATEGIES: [&str; 5] = names_of!(Strategy, 5);
/// [`sim_histogram`]'s arguments after the strategy, and [`sim_histogram_defaults`]'s slots.
const HISTOGRAM_DEFAULTS: [&str; 6] = [
    "clients",
    "baseDelayMs",
    "maxDelayMs",
    "attempt",
    "bucketMs",
    "seed",
];
/// The head of [`sim_histogram`]'s result (the counts follow it).
const HISTOGRAM: [&str; 4] = ["bucketMs", "peak", "peakIndex", "total"];
/// [`sim_jitter`]'s arguments, and [`sim_jitter_defaults`]'s slots.
const JITTER_DEFAULTS: [&str; 5] = ["samples", "attempt", "baseDelayMs", "maxDelayMs", "seed"];
/// [`sim_jitter`]'s rows, in order, and each row's slots.
const JITTER_ROWS: [&str; 5] = [
    "full",
    "equal",
    "decorrelated",
    "decorrelatedChained",
    "none",
];
const JITTER_STATS: [&str; 4] = ["min", "median", "max", "mean"];
/// [`sim_tail`]'s tail options, and [`sim_tail_defaults`]'s slots.
const TAIL_DEFAULTS: [&str; 6] = [
    "requests",
    "latencyMs",
    "tailProbability",
    "tailLatencyMs",
    "arrivalMs",
    "seed",
];
/// One run of [`sim_tail`]'s result (without, then with hedging).
const TAIL_RUN: [&str; 5] = ["p50Ms", "p99Ms", "p999Ms", "copiesPerRequest", "refused"];

const SIM_GROUPS: [Group; 11] = [
    ("strategy", &STRATEGIES, &[]),
    ("histogramDefaults", &HISTOGRAM_DEFAULTS, &[]),
    ("histogram", &HISTOGRAM, &[]),
    ("jitterDefaults", &JITTER_DEFAULTS, &[]),
    ("jitterRows", &JITTER_ROWS, &[]),
    ("jitterStats", &JITTER_STATS, &[]),
    ("tailDefaults", &TAIL_DEFAULTS, &[]),
    // sim_tail's hedge options: HedgeCore's arguments.
    ("hedge", &super::hedge::OPTIONS, &[]),
    ("tailRun", &TAIL_RUN, &[]),
    // The outage model's `quota` and `limiter` presets, by mode − 1 (mode 0 = off).
    ("quotaPreset", &super::quota::PRESETS, &[]),
    ("limiterPreset", &super::limiter::PRESETS, &[]),
];
const SIM_WIRE: &str = wire_text!(SIM_GROUPS);

/// The simulator's vocabulary, in `wireLayouts`' format: the slot names of the histogram, jitter
/// and tail exports (arguments, defaults, results), the strategies and the outage presets.
#[wasm_bindgen(js_name = simLayouts)]
pub fn sim_layouts() -> String {
    SIM_WIRE.into()
}

/// Retries per bucket for N clients retrying once: [`HISTOGRAM`]'s slots, then the counts from
/// `t = 0`. `strategy` is an index of `'full' | 'equal' | 'decorrelated' | 'none' | 'fixed'`.
#[wasm_bindgen(js_name = simHistogram)]
pub fn sim_histogram(
    strategy: u32,
    clients: f64,
    base_delay_ms: f64,
    max_delay_ms: f64,
    attempt: f64,
    bucket_ms: f64,
    seed: f64,
) -> Result<Vec<f64>, JsValue> {
    let o = HistogramOptions {
        strategy: Strategy::from_id(strategy).map_err(throw)?,
        clients,
        base_delay_ms,
        max_delay_ms,
        attempt,
        bucket_ms,
        seed,
    };
    let h = simulate_histogram(&o).map_err(throw)?;
    let head: [f64; HISTOGRAM.len()] = [
        h.bucket_ms,
        f64::from(h.peak),
        h.peak_index as f64,
        h.total as f64,
    ];
    let mut out = Vec::with_capacity(h.counts.len() + head.len());
    out.extend_from_slice(&head);
    out.extend(h.counts.iter().map(|&c| f64::from(c)));
    Ok(out)
}

/// The jitter table: [`JITTER_STATS`] for each of [`JITTER_ROWS`], in that order.
#[wasm_bindgen(js_name = simJitter)]
pub fn sim_jitter(
    samples: f64,
    attempt: f64,
    base_delay_ms: f64,
    max_delay_ms: f64,
    seed: f64,
) -> Result<Vec<f64>, JsValue> {
    let rows = jitter_table(&JitterOptions {
        samples,
        attempt,
        base_delay_ms,
        max_delay_ms,
        seed,
    })
    .map_err(throw)?;
    Ok(rows
        .iter()
        .flat_map(|r| -> [f64; JITTER_STATS.len()] { [r.min, r.median, r.max, r.mean] })
        .collect())
}

/// Option layout of [`sim_outage`]: index = position. `breaker` is 0 none, 1 rate, 2
/// consecutive; `budget` is 0 none, 1 ratio, 2 token bucket; `quota` is 0 none, 1 ours, 2 AWS
/// standard; `limiter` is 0 none, 1 CUBIC (ours), 2 AWS adaptive, 3 AIMD; `breaker.*` /
/// `budget.*` / `quota.*` / `limiter.*` are read from those nested objects (NaN = the preset's).
const OPTIONS: [&str; 45] = [
    "strategy",
    "clients",
    "thinkTimeMs",
    "latencyMs",
    "timeoutMs",
    "capacityPerTick",
    "tickMs",
    "outageStartMs",
    "outageDurationMs",
    "durationMs",
    "bucketMs",
    "maxAttempts",
    "baseDelayMs",
    "maxDelayMs",
    "seed",
    "breaker",
    "breaker.windowSize",
    "breaker.failureRateThreshold",
    "breaker.failureThreshold",
    "breaker.openDurationMs",
    "breaker.probesToClose",
    "budget",
    "budget.ratio",
    "budget.minRetriesPerSec",
    "budget.windowMs",
    "budget.capacity",
    "budget.refillPerSec",
    "throttle",
    "retryAfterMs",
    "burstMs",
    "limiterGroups",
    "quota",
    "quota.capacity",
    "quota.timeoutCost",
    "quota.throttledCost",
    "quota.serverErrorCost",
    "quota.successRefund",
    "limiter",
    "limiter.beta",
    "limiter.scaleConstant",
    "limiter.smooth",
    "limiter.minRatePerSec",
    "limiter.minCapacity",
    "limiter.increasePerSec",
    "limiter.maxHoldMs",
];

/// Defaults of the nested options (positions 15..27), used when a breaker or budget is on.
const NESTED_DEFAULTS: [f64; 12] = [
    0.0, 100.0, 0.5, 5.0, 5_000.0,
    1.0, // breaker: off, window 100 at 50 %, or 5 in a row; 5 s
    0.0, 0.2, 10.0, 10_000.0, 100.0,
    10.0, // budget: off, 20 % + 10/s over 10 s, or 100 @ 10/s
];

/// Summary fields at the head of [`sim_outage`]'s result.
const SUMMARY: [&str; 27] = [
    "bucketMs",
    "buckets",
    "logicalRequests",
    "succeeded",
    "failed",
    "failedExhausted",
    "failedBudget",
    "failedRejected",
    "pending",
    "attempts",
    "retries",
    "outageAttempts",
    "peakOffered",
    "peakOfferedAtMs",
    "secondPeakOffered",
    "secondPeakAtMs",
    "amplification",
    "recoveredAtMs",
    "timeToRecoverMs",
    "outageEndMs",
    "failedQuota",
    "throttled",
    "throttledShare",
    "offeredPerSec",
    "goodputPerSec",
    "paced",
    "convergedAtMs",
];

/// `"<option>,<option>,…;<summary field>,…"`: the layouts of [`sim_outage`]'s input and output.
#[wasm_bindgen(js_name = simOutageLayout)]
pub fn sim_outage_layout() -> String {
    let mut s = OPTIONS.join(",");
    s.push(';');
    s.push_str(&SUMMARY.join(","));
    s
}

/// The histogram's defaults (the core's `HistogramOptions::default()`), in [`HISTOGRAM_DEFAULTS`]
/// order (clients, baseDelayMs, maxDelayMs, attempt, bucketMs, seed).
#[wasm_bindgen(js_name = simHistogramDefaults)]
pub fn sim_histogram_defaults() -> Vec<f64> {
    let d = HistogramOptions::default();
    let slots: [f64; HISTOGRAM_DEFAULTS.len()] = [
        d.clients,
        d.base_delay_ms,
        d.max_delay_ms,
        d.attempt,
        d.bucket_ms,
        d.seed,
    ];
    slots.to_vec()
}

/// The jitter table's defaults (the core's `JitterOptions::default()`), in [`JITTER_DEFAULTS`]
/// order (samples, attempt, baseDelayMs, maxDelayMs, seed).
#[wasm_bindgen(js_name = simJitterDefaults)]
pub fn sim_jitter_defaults() -> Vec<f64> {
    let d = JitterOptions::default();
    let slots: [f64; JITTER_DEFAULTS.len()] = [
        d.samples,
        d.attempt,
        d.base_delay_ms,
        d.max_delay_ms,
        d.seed,
    ];
    slots.to_vec()
}

/// The default option values, in [`sim_outage_layout`] order.
#[wasm_bindgen(js_name = simOutageDefaults)]
pub fn sim_outage_defaults() -> Vec<f64> {
    let d = OutageOptions::default();
    let mut v = vec![
        f64::from(d.strategy.id()),
        d.clients,
        d.think_time_ms,
        d.latency_ms,
        d.timeout_ms,
        d.capacity_per_tick,
        d.tick_ms,
        d.outage_start_ms,
        d.outage_duration_ms,
        d.duration_ms,
        d.bucket_ms,
        d.max_attempts,
        d.base_delay_ms,
        d.max_delay_ms,
        d.seed,
    ];
    v.extend_from_slice(&NESTED_DEFAULTS);
    v.extend_from_slice(&[
        f64::from(u8::from(d.throttle)),
        d.retry_after_ms,
        d.burst_ms,
        d.limiter_groups,
        0.0,
    ]);
    // quota.* and limiter.*: NaN = the chosen preset's value.
    v.extend_from_slice(&[f64::NAN; 5]);
    v.push(0.0);
    v.extend_from_slice(&[f64::NAN; 7]);
    v
}

/// `v` unless NaN (absent), else `preset`.
fn or(v: f64, preset: f64) -> f64 {
    if v.is_nan() {
        preset
    } else {
        v
    }
}

fn options(v: &[f64]) -> Result<OutageOptions, Error> {
    let defaults = sim_outage_defaults();
    let at = |i: usize| v.get(i).or(defaults.get(i)).copied().unwrap_or(f64::NAN);
    let breaker = match at(15) as u32 {
        1 => Some(BreakerConfig::rate(
            at(16),
            at(17),
            None,
            at(19),
            Some(at(20)),
        )?),
        2 => Some(BreakerConfig::consecutive(at(18), at(19), Some(at(20)))?),
        _ => None,
    };
    let budget = match at(21) as u32 {
        1 => Some(RetryBudget::Ratio(RatioBudget::new(
            at(22),
            at(23),
            at(24),
        )?)),
        2 => Some(RetryBudget::TokenBucket(TokenBucket::new(at(25), at(26))?)),
        _ => None,
    };
    let quota = match at(31) as u32 {
        0 => None,
        m => {
            let p = if m == 2 {
                QuotaConfig::aws_standard()
            } else {
                QuotaConfig::default()
            };
            Some(QuotaConfig::new(
                or(at(32), f64::from(p.capacity)),
                or(at(33), f64::from(p.timeout)),
                or(at(34), f64::from(p.throttled)),
                or(at(35), f64::from(p.server_error)),
                or(at(36), f64::from(p.success_refund)),
            )?)
        }
    };
    let limiter = match at(37) as u32 {
        0 => None,
        m => {
            let p = match m {
                2 => LimiterConfig::aws_adaptive(),
                3 => LimiterConfig::aimd(),
                _ => LimiterConfig::default(),
            };
            Some(
                LimiterConfig {
                    beta: or(at(38), p.beta),
                    scale_constant: or(at(39), p.scale_constant),
                    smooth: or(at(40), p.smooth),
                    min_rate_per_sec: or(at(41), p.min_rate_per_sec),
                    min_capacity: or(at(42), p.min_capacity),
                    increase_per_sec: or(at(43), p.increase_per_sec),
                    max_hold_ms: or(at(44), p.max_hold_ms),
                    ..p
                }
                .validated()?,
            )
        }
    };
    Ok(OutageOptions {
        strategy: Strategy::from_id(at(0) as u32)?,
        clients: at(1),
        think_time_ms: at(2),
        latency_ms: at(3),
        timeout_ms: at(4),
        capacity_per_tick: at(5),
        tick_ms: at(6),
        outage_start_ms: at(7),
        outage_duration_ms: at(8),
        duration_ms: at(9),
        bucket_ms: at(10),
        max_attempts: at(11),
        base_delay_ms: at(12),
        max_delay_ms: at(13),
        seed: at(14),
        breaker,
        budget,
        throttle: at(27) != 0.0,
        retry_after_ms: at(28),
        burst_ms: at(29),
        limiter_groups: at(30),
        quota,
        limiter,
    })
}

/// Run the outage model. `options` follows [`sim_outage_layout`] (missing tail = defaults).
/// Returns the summary (layout order), then `buckets` values each of offered, served, failed,
/// retries, rejected, throttled.
#[wasm_bindgen(js_name = simOutage)]
pub fn sim_outage(options_in: &[f64]) -> Result<Vec<f64>, JsValue> {
    let o = options(options_in).map_err(throw)?;
    let r = simulate_outage(&o).map_err(throw)?;
    let s = r.summary;
    let n = r.offered.len();
    let mut out = Vec::with_capacity(SUMMARY.len() + 6 * n);
    out.extend_from_slice(&[
        r.bucket_ms,
        n as f64,
        s.logical_requests as f64,
        s.succeeded as f64,
        s.failed() as f64,
        s.failed_exhausted as f64,
        s.failed_budget as f64,
        s.failed_rejected as f64,
        s.pending as f64,
        s.attempts as f64,
        s.retries as f64,
        s.outage_attempts as f64,
        s.peak_offered as f64,
        s.peak_offered_at_ms,
        s.second_peak_offered as f64,
        s.second_peak_at_ms,
        s.amplification,
        s.recovered_at_ms,
        s.time_to_recover_ms,
        s.outage_end_ms,
        s.failed_quota as f64,
        s.throttled as f64,
        s.throttled_share,
        s.offered_per_sec,
        s.goodput_per_sec,
        s.paced as f64,
        s.converged_at_ms,
    ]);
    for series in [
        &r.offered,
        &r.served,
        &r.failed,
        &r.retries,
        &r.rejected,
        &r.throttled,
    ] {
        out.extend(series.iter().map(|&c| f64::from(c)));
    }
    Ok(out)
}

/// The tail model's defaults (the core's `TailOptions::default()`), in [`TAIL_DEFAULTS`] order
/// (requests, latencyMs, tailProbability, tailLatencyMs, arrivalMs, seed).
#[wasm_bindgen(js_name = simTailDefaults)]
pub fn sim_tail_defaults() -> Vec<f64> {
    let d = TailOptions::default();
    let slots: [f64; TAIL_DEFAULTS.len()] = [
        d.requests,
        d.latency_ms,
        d.tail_probability,
        d.tail_latency_ms,
        d.arrival_ms,
        d.seed,
    ];
    slots.to_vec()
}

/// Run the tail-latency model with the hedge `h` (NaN = its default, as `HedgeCore`'s
/// arguments: delayMs, quantile, windowSize, minDelayMs, maxDelayMs, maxHedges, maxInFlight)
/// and, when `budget_ratio` is not NaN, a ratio budget (`budget_ratio`, no floor, 10 s window).
/// Returns `[p50, p99, p999, copiesPerRequest, refused]` without, then with hedging.
#[wasm_bindgen(js_name = simTail)]
pub fn sim_tail(tail: &[f64], h: &[f64], budget_ratio: f64) -> Result<Vec<f64>, JsValue> {
    let d = sim_tail_defaults();
    let at = |i: usize| tail.get(i).or(d.get(i)).copied().unwrap_or(f64::NAN);
    let options = TailOptions {
        requests: at(0),
        latency_ms: at(1),
        tail_probability: at(2),
        tail_latency_ms: at(3),
        arrival_ms: at(4),
        seed: at(5),
    };
    let hv = |i: usize| h.get(i).copied().filter(|v| !v.is_nan());
    let hedge = Hedge::new(HedgeOptions {
        delay_ms: hv(0),
        quantile: hv(1),
        window_size: hv(2),
        min_delay_ms: hv(3),
        max_delay_ms: hv(4),
        max_hedges: hv(5),
        max_in_flight: hv(6),
    })
    .map_err(throw)?;
    let budget = if budget_ratio.is_nan() {
        None
    } else {
        Some(RetryBudget::Ratio(
            RatioBudget::new(budget_ratio, 0.0, 10_000.0).map_err(throw)?,
        ))
    };
    let r = simulate_tail(&options, &hedge, budget).map_err(throw)?;
    Ok([r.plain, r.hedged]
        .iter()
        .flat_map(|x| -> [f64; TAIL_RUN.len()] {
            [
                x.p50_ms,
                x.p99_ms,
                x.p999_ms,
                x.copies_per_request,
                x.refused,
            ]
        })
        .collect())
}
