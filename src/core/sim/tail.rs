//! The tail-latency model: what hedging does to p99, and what it costs the server.
//!
//! Why: "hedge after the p95" is a trade — the slowest requests get a second chance, and every
//! hedge is extra load on the server. This model runs the shipped [`Hedge`] decision (and, when
//! given, the shipped [`RetryBudget`]) over `requests` requests, one every `arrival_ms`, against a
//! server whose answer takes `latency_ms · (0.5 + u)` (u uniform in [0, 1)), except with
//! probability `tail_probability` `tail_latency_ms · (0.5 + u)`: a slow tail (a GC pause, a cold
//! cache, a bad replica). Each copy draws its own latency; the first answer wins and the others
//! are cancelled at that instant. Reported: p50 / p99 / p99.9 of what the caller waited, without
//! and with hedging, and the copies sent per request (the added load).
//!
//! # Default
//! `requests = 100000`, `latency_ms = 20`, `tail_probability = 0.02`, `tail_latency_ms = 1000`,
//! `arrival_ms = 1`, `seed = 1`, the hedge's own defaults, no budget.

use super::rng_from_seed;
use crate::core::budget::RetryBudget;
use crate::core::error::{check, Error, Opt};
use crate::core::hedge::{quantile_of_sorted, Hedge, Step};
use crate::core::rng::Rng;
use crate::core::sort::heap_sort_by;

/// Largest accepted `requests`.
pub const MAX_REQUESTS: u32 = 10_000_000;

/// Options; see the module docs.
#[derive(Debug, Clone, PartialEq)]
pub struct TailOptions {
    /// Requests simulated (integer, 1 to 10^7).
    pub requests: f64,
    /// Typical latency, ms (> 0).
    pub latency_ms: f64,
    /// Probability that one copy lands in the slow tail, in [0, 1].
    pub tail_probability: f64,
    /// Typical latency of the tail, ms (> 0).
    pub tail_latency_ms: f64,
    /// Gap between two requests' arrivals, ms (> 0): the clock of the budget.
    pub arrival_ms: f64,
    /// Seed (integer, 1 to 2^32 − 1).
    pub seed: f64,
}

impl Default for TailOptions {
    fn default() -> Self {
        Self {
            requests: 100_000.0,
            latency_ms: 20.0,
            tail_probability: 0.02,
            tail_latency_ms: 1_000.0,
            arrival_ms: 1.0,
            seed: 1.0,
        }
    }
}

/// Latency quantiles of one run and the load it put on the server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TailRun {
    /// Median wait, ms.
    pub p50_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// 99.9th percentile, ms.
    pub p999_ms: f64,
    /// Copies sent per request (1 = no hedge was sent).
    pub copies_per_request: f64,
    /// Hedges the budget refused.
    pub refused: f64,
}

/// The two runs over the very same latency draws.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TailResult {
    /// Without hedging.
    pub plain: TailRun,
    /// With the hedge (and budget) given.
    pub hedged: TailRun,
}

/// Run the model: the same seed draws the same latencies for both runs (copy `i` of request `r`
/// always gets the same draw), so the difference is the hedge's alone.
pub fn simulate_tail(
    options: &TailOptions,
    hedge: &Hedge,
    budget: Option<RetryBudget>,
) -> Result<TailResult, Error> {
    let requests = check::count(Opt::Requests, options.requests, MAX_REQUESTS)?;
    let latency = check::positive(Opt::LatencyMs, options.latency_ms)?;
    let tail_p = check::unit(Opt::TailProbability, options.tail_probability)?;
    let tail = check::positive(Opt::TailLatencyMs, options.tail_latency_ms)?;
    let arrival = check::positive(Opt::ArrivalMs, options.arrival_ms)?;
    let seed = rng_from_seed(options.seed)?;
    let model = Model {
        latency,
        tail_p,
        tail,
    };
    let plain = run(requests, arrival, &model, seed.clone(), None, None);
    let hedged = run(requests, arrival, &model, seed, Some(hedge.clone()), budget);
    Ok(TailResult { plain, hedged })
}

struct Model {
    latency: f64,
    tail_p: f64,
    tail: f64,
}

impl Model {
    fn draw(&self, rng: &mut impl Rng) -> f64 {
        let slow = rng.next_unit() < self.tail_p;
        let spread = 0.5 + rng.next_unit();
        if slow {
            self.tail * spread
        } else {
            self.latency * spread
        }
    }
}

/// Most copies a request can have (the hedge's bound); the draws of the copies a run does not
/// start are still taken, so both runs stay aligned.
const DRAWS: usize = crate::core::hedge::MAX_HEDGES as usize + 1;

fn run(
    requests: u32,
    arrival: f64,
    model: &Model,
    mut rng: crate::core::rng::SplitMix64,
    mut hedge: Option<Hedge>,
    mut budget: Option<RetryBudget>,
) -> TailRun {
    let mut waits = Vec::with_capacity(requests as usize);
    let mut copies_sent = 0u64;
    let mut refused = 0u64;
    for r in 0..requests {
        let now = f64::from(r) * arrival;
        let mut draws = [0.0f64; DRAWS];
        for d in draws.iter_mut() {
            *d = model.draw(&mut rng);
        }
        if let Some(b) = budget.as_mut() {
            b.record_request(now);
        }
        // Copies: (start, finish) relative to the request's arrival.
        let mut starts = [0.0f64; DRAWS];
        let mut started = 0usize;
        let mut t = 0.0f64;
        let mut budget_dry = false;
        let wait = loop {
            let in_flight = started; // no copy fails in this model: none answered before `t`
            let step = match hedge.as_ref() {
                Some(_) if budget_dry && started > 0 => Step::AwaitAnswer,
                Some(h) => h.next_step(
                    started as u32,
                    in_flight as u32,
                    t - starts
                        .get(started.saturating_sub(1))
                        .copied()
                        .unwrap_or(0.0),
                ),
                None if started == 0 => Step::Start,
                None => Step::AwaitAnswer,
            };
            // The earliest answer among the started copies.
            let first = (0..started)
                .map(|i| {
                    starts.get(i).copied().unwrap_or(0.0) + draws.get(i).copied().unwrap_or(0.0)
                })
                .fold(f64::INFINITY, f64::min);
            match step {
                Step::Start => {
                    if started > 0 {
                        if let Some(b) = budget.as_mut() {
                            if !b.try_withdraw(now + t) {
                                budget_dry = true;
                                refused += 1;
                                continue;
                            }
                        }
                    }
                    if let Some(s) = starts.get_mut(started) {
                        *s = t;
                    }
                    started += 1;
                }
                Step::Wait { ms } if t + ms < first => t += ms,
                Step::Wait { .. } | Step::AwaitAnswer | Step::Exhausted => break first,
            }
        };
        // The winner's own latency teaches the adaptive delay.
        if let Some(h) = hedge.as_mut() {
            let won = (0..started).find(|&i| {
                starts.get(i).copied().unwrap_or(0.0) + draws.get(i).copied().unwrap_or(0.0) == wait
            });
            if let Some(i) = won {
                h.record_latency(draws.get(i).copied().unwrap_or(0.0));
            }
        }
        copies_sent += started as u64;
        waits.push(wait);
    }
    heap_sort_by(&mut waits, |a, b| a < b);
    let q = |p: f64| quantile_of_sorted(&waits, p);
    TailRun {
        p50_ms: q(0.5),
        p99_ms: q(0.99),
        p999_ms: q(0.999),
        copies_per_request: copies_sent as f64 / f64::from(requests.max(1)),
        refused: refused as f64,
    }
}
