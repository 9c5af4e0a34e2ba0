//! The outage model: a population of clients, a gateway with a capacity, an outage window, and
//! the client-side retry policy, breaker and budget — played tick by tick.
//!
//! Why this shape: the seed's story needs clients that fail *together*. A payment call takes about
//! a second (`latencyMs`), so at any instant thousands of calls are in flight. When the gateway
//! hiccups it stops answering: calls in flight, and calls sent during the hiccup, hang; when it
//! restarts it drops every connection it was holding, so all of them fail in the same instant
//! (or earlier, at the client's `timeoutMs`). With a fixed or un-jittered delay they all come back
//! in the same tick, far above capacity; the excess is shed, fails at once, and comes back again
//! together one delay later: the "second, worse peak" and the waves after it. Jitter spreads the
//! same retries over the whole delay window, under capacity.
//!
//! # The model
//! - **Clients** (closed loop, `clients` of them): think for uniform `[0, 2 · thinkTimeMs)`, then
//!   issue one logical request and retry it under [`RetryPolicy`] (strategy, `maxAttempts`,
//!   `baseDelayMs`, `maxDelayMs`) until it succeeds or fails for good, then think again. They
//!   start at uniform times in `[0, thinkTimeMs + latencyMs)`, close to the steady state.
//! - **Gateway**: admits at most `capacityPerTick` attempts per tick (`tickMs`); the excess is
//!   shed (fails at the next tick, like a 503). An admitted attempt succeeds `latencyMs` later,
//!   unless the outage starts first. During `[outageStartMs, outageStartMs + outageDurationMs)`
//!   it answers nothing: an attempt fails at `min(sent + timeoutMs, outage end)`.
//! - **Breaker** (optional): ONE breaker for the whole population, as in one process whose
//!   clients share a breaker (the seed's checkout service). Every attempt asks it first; a
//!   rejected attempt never reaches the gateway, and its logical request fails at once (a
//!   `CircuitOpenError` is not retried). Outcomes are recorded when they are known.
//! - **Budget** (optional): ONE [`RetryBudget`] for the population. First attempts are recorded;
//!   every retry must withdraw, or the logical request fails.
//! - Time advances in ticks; delays are rounded to whole ticks (at least one). Events live in a
//!   timing wheel, so a run costs O(events + ticks). Each client has exactly one pending event
//!   (closed loop), so the event *is* the client: its state travels in the wheel (8 bytes), and
//!   there is no client table to reach at random (side tables only for decorrelated jitter, the
//!   breaker and the quota). A tick reads its slot front to back and appends
//!   to the slots it schedules, so a million clients cost per event what ten thousand do (issue
//!   15: 1.6 s → see README "Measured figures"; the old intrusive lists through a client table
//!   missed the cache on every event once the table outgrew it). Slot buffers are recycled, so
//!   memory is about one event per client plus the fullest slots.
//!
//! # Throttling (issue 18)
//! - **`throttle`**: the gateway enforces its capacity as an API rate limit does — a token bucket
//!   refilled with `capacityPerTick` each tick that holds up to `burstMs` of capacity (so a second's
//!   worth of requests may arrive in any pattern within it) — and answers **429** above it (at the
//!   next tick, like the shed 503), with a `Retry-After` of `retryAfterMs` when that is > 0. A 429 is retried like any
//!   transient failure; its Retry-After is a floor on the retry delay (the core [`RetryPolicy`]
//!   rule) and holds the client's limiter.
//! - **Quota** (optional): ONE weighted [`RetryQuota`] for the population. A retry pays the cost
//!   of its failure's class (a hang = timeout, a 429 = throttled, a shed 503 = server error); a
//!   logical request that succeeds refunds its last retry's cost (or the success refund).
//! - **Limiter** (optional): an adaptive [`RateLimiter`] per process: clients are split into
//!   `limiterGroups` processes (client `i` in process `i mod groups`), each with its own limiter, as
//!   the AWS SDK keeps one per client instance. Every attempt, first attempts included, asks its
//!   limiter first and waits the delay it returns (the attempt is *paced*, not failed); every
//!   answer is reported to it (a 429 as a throttle, with its Retry-After as a hold).
//!
//! # Reported, per bucket (`bucketMs`)
//! `offered` (attempts reaching the gateway), `served` and `failed` (their outcome, counted in the
//! bucket where they arrived, so `offered = served + failed`), `retries` (offered attempts after
//! the first), `rejected` (attempts the breaker refused; not offered).
//!
//! Reported for throttling: `throttled` (429s) per bucket; in the summary, the 429 total and share,
//! offered and goodput per second (attempts and successes over the whole run), attempts the
//! limiter delayed (each wait counts, re-asks included), logical requests the quota refused, and
//! `convergedAtMs`: the start of the first bucket from which every window of
//! [`CONVERGE_WINDOW_MS`] (the last full one near the end) has at most [`CONVERGED_THROTTLED_SHARE`]
//! of its attempts throttled (NaN if the run never gets there).
//!
//! # Default
//! `strategy = full`, `clients = 10_000`, `thinkTimeMs = 1_000`, `latencyMs = 1000`,
//! `timeoutMs = 10_000`, `capacityPerTick = 150` (15,000/s, 2.25× the steady load of ~6,700/s),
//! `tickMs = 10`, `outageStartMs = 5000`, `outageDurationMs = 400`, `durationMs = 20_000`,
//! `bucketMs = 100`, `maxAttempts = 4`, `baseDelayMs = 1000`, `maxDelayMs = 30_000`, `seed = 1`,
//! no breaker, no budget, `throttle = false`, `retryAfterMs = 0`, `burstMs = 1000`, no quota, no
//! limiter, `limiterGroups = 100` (100 clients per process by default).

use super::super::backoff::Jitter;
use super::super::breaker::{Acquire, Breaker, BreakerConfig, Outcome, Permit};
use super::super::budget::RetryBudget;
use super::super::error::{check, Error, Expect, Opt};
use super::super::limiter::{Acquire as LimiterAcquire, LimiterConfig, RateLimiter};
use super::super::quota::{ErrorClass, QuotaConfig, RetryQuota};
use super::super::retry::{Decision, Failure, RetryPolicy};
use super::super::rng::{Rng, SplitMix64};
use super::{effective_bucket_ms, rng_from_seed, Strategy, MAX_BUCKETS};

/// Largest accepted `clients` (8 bytes of state each in its one pending event, plus side tables).
pub const MAX_CLIENTS: u32 = 10_000_000;
/// Largest accepted `durationMs` (one day).
pub const MAX_DURATION_MS: u32 = 86_400_000;
/// Largest accepted `tickMs`.
pub const MAX_TICK_MS: u32 = 60_000;
/// Largest accepted `capacityPerTick`.
pub const MAX_CAPACITY_PER_TICK: u32 = 1_000_000_000;
/// A bucket is healthy when at least this share of its demand (offered + rejected) is served.
pub const HEALTHY_SHARE: f64 = 0.99;
/// A run has converged from the first bucket after which no bucket has more than this share of
/// its attempts throttled.
pub const CONVERGED_THROTTLED_SHARE: f64 = 0.05;
/// The window over which convergence is judged.
pub const CONVERGE_WINDOW_MS: f64 = 10_000.0;
/// Largest accepted `limiterGroups`.
pub const MAX_LIMITER_GROUPS: u32 = 1_000_000;

/// Options, as JS numbers plus already-validated breaker and budget; see the module docs.
#[derive(Debug, Clone, PartialEq)]
pub struct OutageOptions {
    /// The retry strategy.
    pub strategy: Strategy,
    /// Clients (integer, 1 to 10^7).
    pub clients: f64,
    /// Mean think time between logical requests (uniform `[0, 2 · mean)`).
    pub think_time_ms: f64,
    /// Time from admission to the gateway's answer.
    pub latency_ms: f64,
    /// The client's timeout (≥ `latency_ms`).
    pub timeout_ms: f64,
    /// Attempts the gateway admits per tick (integer ≥ 1).
    pub capacity_per_tick: f64,
    /// Tick length (integer ms, 1 to 60,000).
    pub tick_ms: f64,
    /// When the outage starts.
    pub outage_start_ms: f64,
    /// How long it lasts (0: no outage).
    pub outage_duration_ms: f64,
    /// Simulated time (integer ms, 1 to one day).
    pub duration_ms: f64,
    /// Report bucket width (≥ `tick_ms`; widened past [`MAX_BUCKETS`] buckets).
    pub bucket_ms: f64,
    /// Attempts per logical request, the first included.
    pub max_attempts: f64,
    /// Base delay.
    pub base_delay_ms: f64,
    /// Delay cap.
    pub max_delay_ms: f64,
    /// Seed (integer, 1 to 2^32 − 1).
    pub seed: f64,
    /// One breaker shared by every client, or none.
    pub breaker: Option<BreakerConfig>,
    /// One retry budget shared by every client, or none.
    pub budget: Option<RetryBudget>,
    /// Above capacity, answer 429 (instead of shedding like a 503).
    pub throttle: bool,
    /// `Retry-After` on those 429s, ms (0: none).
    pub retry_after_ms: f64,
    /// How much capacity the throttling gateway lets accumulate (ms of capacity, ≥ `tickMs`).
    pub burst_ms: f64,
    /// One weighted retry quota shared by every client, or none.
    pub quota: Option<QuotaConfig>,
    /// An adaptive limiter per process, or none.
    pub limiter: Option<LimiterConfig>,
    /// Processes (each with its own limiter); integer, 1 to 10^6.
    pub limiter_groups: f64,
}

impl Default for OutageOptions {
    fn default() -> Self {
        Self {
            strategy: Strategy::Full,
            clients: 10_000.0,
            think_time_ms: 1_000.0,
            latency_ms: 1_000.0,
            timeout_ms: 10_000.0,
            capacity_per_tick: 150.0,
            tick_ms: 10.0,
            outage_start_ms: 5_000.0,
            outage_duration_ms: 400.0,
            duration_ms: 20_000.0,
            bucket_ms: 100.0,
            max_attempts: 4.0,
            base_delay_ms: 1_000.0,
            max_delay_ms: 30_000.0,
            seed: 1.0,
            breaker: None,
            budget: None,
            throttle: false,
            retry_after_ms: 0.0,
            burst_ms: 1_000.0,
            quota: None,
            limiter: None,
            limiter_groups: 100.0,
        }
    }
}

impl OutageOptions {
    /// The long outage of the seed's Fix 2 ("a provider that's down for 40 minutes"): 40 minutes
    /// down from t = 5 s, 50 minutes simulated, 10 s buckets.
    pub fn long_outage() -> Self {
        Self {
            outage_duration_ms: 40.0 * 60_000.0,
            duration_ms: 50.0 * 60_000.0,
            bucket_ms: 10_000.0,
            ..Self::default()
        }
    }

    /// A gateway at half the demand that answers 429 above capacity, no outage, one minute
    /// (the throttling experiment of the README): ~5,000 attempts/s of demand against 2,500/s.
    pub fn throttling() -> Self {
        Self {
            capacity_per_tick: 25.0,
            outage_duration_ms: 0.0,
            duration_ms: 60_000.0,
            bucket_ms: 1_000.0,
            throttle: true,
            ..Self::default()
        }
    }
}

/// The summary of a run.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OutageSummary {
    /// Logical requests started.
    pub logical_requests: u64,
    /// Logical requests that succeeded.
    pub succeeded: u64,
    /// Logical requests that failed after `maxAttempts` attempts.
    pub failed_exhausted: u64,
    /// Logical requests that failed because the budget refused a retry.
    pub failed_budget: u64,
    /// Logical requests that failed because the breaker refused an attempt.
    pub failed_rejected: u64,
    /// Logical requests that failed because the quota refused a retry.
    pub failed_quota: u64,
    /// Attempts answered 429.
    pub throttled: u64,
    /// `throttled / attempts`.
    pub throttled_share: f64,
    /// Attempts per second over the run.
    pub offered_per_sec: f64,
    /// Successful attempts per second over the run.
    pub goodput_per_sec: f64,
    /// Attempts the limiter delayed.
    pub paced: u64,
    /// See the module docs (NaN: never converged).
    pub converged_at_ms: f64,
    /// Logical requests still in progress when the simulation ended.
    pub pending: u64,
    /// Attempts that reached the gateway.
    pub attempts: u64,
    /// Of which retries.
    pub retries: u64,
    /// Largest `offered` in one bucket.
    pub peak_offered: u64,
    /// Start of that bucket.
    pub peak_offered_at_ms: f64,
    /// Largest `offered` in one bucket that starts at or after the outage end.
    pub second_peak_offered: u64,
    /// Start of that bucket.
    pub second_peak_at_ms: f64,
    /// Attempts offered while the gateway was down (buckets inside the outage window): wasted.
    pub outage_attempts: u64,
    /// `attempts / logical_requests` (below 1 when the breaker refuses first attempts).
    pub amplification: f64,
    /// Start of the first bucket at or after the outage end from which every bucket to the end
    /// is healthy (≥ 99 % of offered + rejected served); NaN if the run ends unhealthy. A bucket
    /// that is quiet only because the synchronized retries have not landed yet does not count.
    pub recovered_at_ms: f64,
    /// `recovered_at_ms − outage end` (NaN if not recovered).
    pub time_to_recover_ms: f64,
    /// The outage end (`outageStartMs + outageDurationMs`).
    pub outage_end_ms: f64,
}

impl OutageSummary {
    /// Logical requests that finally failed, for any reason.
    pub fn failed(&self) -> u64 {
        self.failed_exhausted + self.failed_budget + self.failed_rejected + self.failed_quota
    }
}

/// Per-bucket series and the summary.
#[derive(Debug, Clone, PartialEq)]
pub struct OutageResult {
    /// The bucket width used.
    pub bucket_ms: f64,
    /// Attempts arriving at the gateway.
    pub offered: Vec<u32>,
    /// Of which succeeded.
    pub served: Vec<u32>,
    /// Of which failed (outage, shed, or killed in flight).
    pub failed: Vec<u32>,
    /// Offered attempts that were retries.
    pub retries: Vec<u32>,
    /// Attempts the breaker refused (not offered).
    pub rejected: Vec<u32>,
    /// Offered attempts answered 429 (a subset of `failed`).
    pub throttled: Vec<u32>,
    /// The summary.
    pub summary: OutageSummary,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Due: start a new logical request.
    Thinking,
    /// Due: the next attempt arrives at the gateway.
    Backoff,
    /// Due: the attempt the limiter delayed is sent (its token is already taken).
    Paced,
    /// Due: the answer (or the timeout) arrives.
    InFlight,
}

/// A client's state, carried by its one pending event (see the module docs): 8 bytes, so a
/// million clients stream through 8 MB. What only decorrelated jitter, the breaker or the quota
/// needs (the previous delay, the permit, the class the last retry paid for) lives in side tables
/// indexed by `id`, allocated only when that feature is on.
#[derive(Debug, Clone, Copy)]
struct Client {
    /// The client's index (its limiter group is `id mod groups`; its row in the side tables).
    id: u32,
    /// The attempt in progress (≤ `MAX_ATTEMPTS` = 1,000).
    attempt: u16,
    phase: Phase,
    answer: Answer,
}

const _: () = assert!(core::mem::size_of::<Client>() == 8);
const _: () = assert!(super::super::retry::MAX_ATTEMPTS < u16::MAX as u32);

/// What the gateway answered (known when the attempt is sent; learned when it lands).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Ok,
    /// Shed above capacity like a 503.
    Shed,
    /// 429 above capacity.
    Throttled,
    /// No answer: the outage (a timeout at the client).
    Hang,
}

impl Answer {
    fn class(self) -> ErrorClass {
        match self {
            Answer::Throttled => ErrorClass::Throttled,
            Answer::Hang => ErrorClass::Timeout,
            Answer::Ok | Answer::Shed => ErrorClass::ServerError,
        }
    }
}

/// Validated, tick-based parameters.
struct Params {
    capacity: u32,
    tick_ms: f64,
    ticks: u64,
    outage_start: u64,
    outage_end: u64,
    latency: u64,
    timeout: u64,
    think_ms: f64,
    bucket_ms: f64,
    buckets: usize,
    throttle: bool,
    retry_after_ms: f64,
    burst: u64,
    groups: u32,
}

/// A timing wheel whose slots are buffers of events (each carrying its client, see the module
/// docs), plus an overflow list for the rare event further ahead than the wheel spans.
///
/// A slot is processed in REVERSE push order, last pushed first: the order of the intrusive
/// LIFO lists this replaced, kept so that every seed gives the result it always gave (the order
/// decides who gets capacity and who draws which random number). Emptied buffers go to a pool
/// and are reused by the next empty slot pushed to, so memory stays at the peak, not the total.
struct Wheel {
    slots: Vec<Vec<Client>>,
    mask: u64,
    overflow: Vec<(u64, Client)>,
    pool: Vec<Vec<Client>>,
}

impl Wheel {
    fn new(span_ticks: u64) -> Self {
        let size = span_ticks
            .saturating_add(2)
            .next_power_of_two()
            .clamp(64, 1 << 20);
        Self {
            slots: (0..size).map(|_| Vec::new()).collect(),
            mask: size - 1,
            overflow: Vec::new(),
            pool: Vec::new(),
        }
    }

    fn size(&self) -> u64 {
        self.mask + 1
    }

    #[inline]
    fn push(&mut self, now: u64, due: u64, c: Client) {
        if due - now >= self.size() {
            self.overflow.push((due, c));
            return;
        }
        if let Some(slot) = self.slots.get_mut((due & self.mask) as usize) {
            if slot.capacity() == 0 {
                if let Some(spare) = self.pool.pop() {
                    *slot = spare;
                }
            }
            slot.push(c);
        }
    }

    /// Take the events due at `now` (call once per tick, in order); process them in reverse,
    /// then hand the buffer back with [`Wheel::recycle`].
    fn take(&mut self, now: u64) -> Vec<Client> {
        if now & self.mask == 0 && !self.overflow.is_empty() {
            // Entering a new lap: move what is now within reach into the wheel.
            let horizon = now + self.size();
            let mut i = 0;
            while let Some(&(due, c)) = self.overflow.get(i) {
                if due < horizon {
                    self.overflow.swap_remove(i);
                    self.push(now, due, c);
                } else {
                    i += 1;
                }
            }
        }
        self.slots
            .get_mut((now & self.mask) as usize)
            .map_or_else(Vec::new, core::mem::take)
    }

    fn recycle(&mut self, mut buffer: Vec<Client>) {
        if buffer.capacity() > 0 {
            buffer.clear();
            self.pool.push(buffer);
        }
    }

    /// Events still scheduled (for the end-of-run count).
    fn pending(&self) -> impl Iterator<Item = &Client> {
        self.slots
            .iter()
            .flatten()
            .chain(self.overflow.iter().map(|(_, c)| c))
    }
}

fn ticks_of(ms: f64, tick_ms: f64) -> u64 {
    // `as` saturates; NaN → 0.
    (ms / tick_ms).round() as u64
}

fn validate(o: &OutageOptions) -> Result<(Params, RetryPolicy, u32), Error> {
    let clients = check::count(Opt::Clients, o.clients, MAX_CLIENTS)?;
    let think_ms = check::non_negative(Opt::ThinkTimeMs, o.think_time_ms)?;
    let latency_ms = check::non_negative(Opt::LatencyMs, o.latency_ms)?;
    let timeout_ms = check::non_negative(Opt::TimeoutMs, o.timeout_ms)?;
    if timeout_ms < latency_ms {
        return Err(Error::option(
            Opt::TimeoutMs,
            Expect::AtLeast(Opt::LatencyMs),
        ));
    }
    let capacity = check::count(
        Opt::CapacityPerTick,
        o.capacity_per_tick,
        MAX_CAPACITY_PER_TICK,
    )?;
    let tick_ms = f64::from(check::count(Opt::TickMs, o.tick_ms, MAX_TICK_MS)?);
    let start_ms = check::non_negative(Opt::OutageStartMs, o.outage_start_ms)?;
    let outage_ms = check::non_negative(Opt::OutageDurationMs, o.outage_duration_ms)?;
    let duration_ms = f64::from(check::count(
        Opt::DurationMs,
        o.duration_ms,
        MAX_DURATION_MS,
    )?);
    let bucket_ms = check::positive(Opt::BucketMs, o.bucket_ms)?;
    if bucket_ms < tick_ms {
        return Err(Error::option(Opt::BucketMs, Expect::AtLeast(Opt::TickMs)));
    }
    // `Fixed` is a core Backoff too (see `Strategy::backoff`); the policy adds `maxAttempts`.
    let backoff = o.strategy.backoff(o.base_delay_ms, o.max_delay_ms)?;
    let policy = RetryPolicy::new(
        o.max_attempts,
        backoff.base_delay_ms(),
        backoff.max_delay_ms(),
        backoff.jitter(),
        None,
    )?;
    let retry_after_ms = check::non_negative(Opt::RetryAfterMs, o.retry_after_ms)?;
    let groups = check::count(Opt::LimiterGroups, o.limiter_groups, MAX_LIMITER_GROUPS)?;
    let burst_ms = check::non_negative(Opt::BurstMs, o.burst_ms)?;
    if burst_ms < tick_ms {
        return Err(Error::option(Opt::BurstMs, Expect::AtLeast(Opt::TickMs)));
    }
    let burst = u64::from(capacity).saturating_mul((burst_ms / tick_ms).floor() as u64);
    let bucket_ms = effective_bucket_ms(bucket_ms, duration_ms);
    let buckets = ((duration_ms / bucket_ms).ceil() as usize).clamp(1, MAX_BUCKETS);
    let ticks = (duration_ms / tick_ms).ceil() as u64;
    let outage_start = (start_ms / tick_ms).floor() as u64;
    let outage_end = if outage_ms > 0.0 {
        ((start_ms + outage_ms) / tick_ms).ceil() as u64
    } else {
        outage_start
    };
    Ok((
        Params {
            capacity,
            tick_ms,
            ticks,
            outage_start,
            outage_end,
            latency: ticks_of(latency_ms, tick_ms).max(1),
            timeout: ticks_of(timeout_ms, tick_ms).max(1),
            think_ms,
            bucket_ms,
            buckets,
            throttle: o.throttle,
            retry_after_ms,
            burst,
            groups,
        },
        policy,
        clients,
    ))
}

/// Run the model. Same options (and seed) ⇒ the same result, bit for bit.
pub fn simulate_outage(o: &OutageOptions) -> Result<OutageResult, Error> {
    let (p, policy, n) = validate(o)?;
    let mut rng = rng_from_seed(o.seed)?;
    let mut breaker = o.breaker.map(Breaker::new);
    let mut budget = o.budget.clone();
    let mut quota = o.quota.map(RetryQuota::new);
    let mut limiters = match o.limiter {
        Some(c) => vec![RateLimiter::new(c)?; p.groups as usize],
        None => Vec::new(),
    };
    let base = policy.backoff().base_delay_ms();

    let warm = 2.0 * p.think_ms + p.latency as f64 * p.tick_ms;
    // The farthest any event is scheduled ahead (further ones go to the overflow list).
    let span_ms = policy
        .backoff()
        .max_delay_ms()
        .min(p.ticks as f64 * p.tick_ms)
        .max(2.0 * p.think_ms)
        .max(warm);
    let mut wheel = Wheel::new(ticks_of(span_ms, p.tick_ms).max(p.timeout) + 1);
    for id in 0..n {
        let due = ticks_of(stationary_first_arrival_ms(&p, &mut rng), p.tick_ms);
        let c = Client {
            id,
            attempt: 0,
            phase: Phase::Thinking,
            answer: Answer::Ok,
        };
        wheel.push(0, due, c);
    }
    // Side tables (see `Client`): the breaker permit of the attempt in flight; 0 when no retry
    // was paid yet, else 1 + the `ErrorClass` id the last retry paid the quota for.
    let mut permits = vec![0u32; if breaker.is_some() { n as usize } else { 0 }];
    let mut paid = vec![0u8; if quota.is_some() { n as usize } else { 0 }];
    // The previous delay, which only decorrelated jitter reads (the others ignore it).
    let chained = policy.backoff().jitter() == Jitter::Decorrelated;
    let mut previous_delay = vec![base; if chained { n as usize } else { 0 }];
    // Clients whose next event falls past the end, mid-request (the rest are thinking).
    let mut pending_past_end = 0u64;

    let mut r = OutageResult {
        bucket_ms: p.bucket_ms,
        offered: vec![0; p.buckets],
        served: vec![0; p.buckets],
        failed: vec![0; p.buckets],
        retries: vec![0; p.buckets],
        rejected: vec![0; p.buckets],
        throttled: vec![0; p.buckets],
        summary: OutageSummary::default(),
    };
    let s = &mut r.summary;
    let mut allowance = 0u64;

    for t in 0..p.ticks {
        let now_ms = t as f64 * p.tick_ms;
        let bucket = ((now_ms / p.bucket_ms) as usize).min(p.buckets - 1);
        // What the gateway admits this tick: its per-tick capacity, plus (when throttling) what
        // its bucket saved from quieter ticks.
        allowance = if p.throttle {
            (allowance + u64::from(p.capacity)).min(p.burst)
        } else {
            u64::from(p.capacity)
        };
        let due_now = wheel.take(t);
        for &event in due_now.iter().rev() {
            let mut client = event;
            let c = &mut client;
            let id = c.id;
            // (No division per event when there is no limiter: this loop is the simulator's hot path.)
            let limiter = if limiters.is_empty() {
                None
            } else {
                limiters.get_mut((id % p.groups) as usize)
            };
            // What happens now, decided with `c` borrowed; scheduling follows.
            let due = match c.phase {
                Phase::Thinking | Phase::Backoff | Phase::Paced => {
                    if c.phase == Phase::Thinking {
                        s.logical_requests += 1;
                        if let Some(b) = budget.as_mut() {
                            b.record_request(now_ms);
                        }
                        c.attempt = 1;
                        if let Some(v) = previous_delay.get_mut(id as usize) {
                            *v = base;
                        }
                        if let Some(v) = paid.get_mut(id as usize) {
                            *v = 0;
                        }
                    }
                    // Every attempt asks its limiter once (a paced attempt already holds its
                    // token) and waits what it says.
                    let wait = match limiter {
                        Some(l) if c.phase != Phase::Paced => match l.acquire(now_ms) {
                            LimiterAcquire::SendAfter(ms) => {
                                Some((Phase::Paced, ticks_of(ms, p.tick_ms)))
                            }
                            LimiterAcquire::AskAgainAfter(ms) => {
                                Some((Phase::Backoff, ticks_of(ms, p.tick_ms).max(1)))
                            }
                        },
                        _ => None,
                    };
                    if let Some((phase, ticks)) = wait.filter(|&(_, ticks)| ticks > 0) {
                        s.paced += 1;
                        c.phase = phase;
                        t + ticks
                    } else {
                        let granted = match breaker.as_mut().map(|b| b.try_acquire(now_ms)) {
                            Some(Acquire::Rejected { .. }) => None,
                            Some(Acquire::Granted { permit, .. }) => Some(permit.to_bits()),
                            None => Some(0),
                        };
                        match granted {
                            None => {
                                bump(&mut r.rejected, bucket);
                                s.failed_rejected += 1;
                                think(c, t, p.think_ms, p.tick_ms, &mut rng)
                            }
                            Some(permit) => {
                                if let Some(v) = permits.get_mut(id as usize) {
                                    *v = permit;
                                }
                                s.attempts += 1;
                                bump(&mut r.offered, bucket);
                                if c.attempt > 1 {
                                    s.retries += 1;
                                    bump(&mut r.retries, bucket);
                                }
                                let (answer, due) = gateway(&p, t, &mut allowance);
                                let ok = answer == Answer::Ok;
                                bump(if ok { &mut r.served } else { &mut r.failed }, bucket);
                                if answer == Answer::Throttled {
                                    s.throttled += 1;
                                    bump(&mut r.throttled, bucket);
                                }
                                c.answer = answer;
                                c.phase = Phase::InFlight;
                                due
                            }
                        }
                    }
                }
                Phase::InFlight => {
                    let ok = c.answer == Answer::Ok;
                    let throttled = c.answer == Answer::Throttled;
                    if let Some(b) = breaker.as_mut() {
                        let outcome = if ok {
                            Outcome::Success
                        } else {
                            Outcome::Failure
                        };
                        let permit = permits.get(id as usize).copied().unwrap_or(0);
                        b.record(Permit::from_bits(permit), outcome, now_ms);
                    }
                    if let Some(l) = limiter {
                        // A 429 was sent one tick ago (the gateway answers it at once).
                        let sent_ms = if throttled {
                            now_ms - p.tick_ms
                        } else {
                            now_ms
                        };
                        l.record(now_ms, sent_ms, throttled);
                        if throttled {
                            l.hold(now_ms, p.retry_after_ms);
                        }
                    }
                    if ok {
                        s.succeeded += 1;
                        if let Some(q) = quota.as_mut() {
                            let cost =
                                paid.get(id as usize)
                                    .and_then(|v| v.checked_sub(1))
                                    .map(|class| {
                                        q.config().cost(ErrorClass::from_id(u32::from(class)))
                                    });
                            q.record_success(cost);
                        }
                        think(c, t, p.think_ms, p.tick_ms, &mut rng)
                    } else {
                        let retry_after_ms =
                            (throttled && p.retry_after_ms > 0.0).then_some(p.retry_after_ms);
                        let failure = Failure {
                            attempt: u32::from(c.attempt),
                            elapsed_ms: 0.0,
                            retryable: true,
                            retry_after_ms,
                            previous_delay_ms: previous_delay
                                .get(id as usize)
                                .copied()
                                .unwrap_or(base),
                        };
                        match policy.after_failure(failure, rng.next_unit()) {
                            Decision::Stop(_) => {
                                s.failed_exhausted += 1;
                                think(c, t, p.think_ms, p.tick_ms, &mut rng)
                            }
                            Decision::Retry { delay_ms } => {
                                let class = c.answer.class();
                                if !budget.as_mut().is_none_or(|b| b.try_withdraw(now_ms)) {
                                    s.failed_budget += 1;
                                    think(c, t, p.think_ms, p.tick_ms, &mut rng)
                                } else if quota
                                    .as_mut()
                                    .is_some_and(|q| q.try_acquire(class).is_none())
                                {
                                    s.failed_quota += 1;
                                    think(c, t, p.think_ms, p.tick_ms, &mut rng)
                                } else {
                                    if quota.is_some() {
                                        if let Some(v) = paid.get_mut(id as usize) {
                                            *v = 1 + class.id() as u8;
                                        }
                                    }
                                    if let Some(v) = previous_delay.get_mut(id as usize) {
                                        *v = delay_ms;
                                    }
                                    c.attempt += 1;
                                    c.phase = Phase::Backoff;
                                    t + ticks_of(delay_ms, p.tick_ms).max(1)
                                }
                            }
                        }
                    }
                }
            };
            if due < p.ticks {
                wheel.push(t, due, client);
            } else if client.phase != Phase::Thinking {
                pending_past_end += 1;
            }
        }
        wheel.recycle(due_now);
    }

    s.pending = pending_past_end
        + wheel
            .pending()
            .filter(|c| c.phase != Phase::Thinking)
            .count() as u64;
    summarize(
        &mut r,
        o.outage_start_ms,
        o.outage_start_ms + o.outage_duration_ms,
        p.ticks as f64 * p.tick_ms,
    );
    Ok(r)
}

#[inline]
fn bump(series: &mut [u32], bucket: usize) {
    if let Some(v) = series.get_mut(bucket) {
        *v = v.saturating_add(1);
    }
}

/// When a client's first request arrives, as if the run had been going forever: the forward
/// recurrence time of its cycle `X = latency + uniform [0, 2 · think)`, i.e. a uniform point in a
/// length-biased cycle (sampled by rejection, accept with probability `X / max X`). Starting
/// everyone at once, or uniformly over one mean cycle, would add a warm-up wave of its own.
fn stationary_first_arrival_ms(p: &Params, rng: &mut SplitMix64) -> f64 {
    let latency_ms = p.latency as f64 * p.tick_ms;
    let longest = latency_ms + 2.0 * p.think_ms;
    let mut cycle = longest;
    for _ in 0..64 {
        cycle = latency_ms + rng.next_unit() * 2.0 * p.think_ms;
        if rng.next_unit() * longest < cycle {
            break;
        }
    }
    rng.next_unit() * cycle
}

/// Start thinking; returns the tick of the next logical request.
#[inline]
fn think(c: &mut Client, t: u64, think_ms: f64, tick_ms: f64, rng: &mut SplitMix64) -> u64 {
    c.phase = Phase::Thinking;
    t + ticks_of(rng.next_unit() * 2.0 * think_ms, tick_ms).max(1)
}

/// The gateway's answer to an attempt arriving at tick `t`, and the tick the client learns it.
#[inline]
fn gateway(p: &Params, t: u64, allowance: &mut u64) -> (Answer, u64) {
    let hang = |t: u64| (t + p.timeout).min(p.outage_end).max(t + 1);
    if (p.outage_start..p.outage_end).contains(&t) {
        return (Answer::Hang, hang(t));
    }
    if *allowance == 0 {
        // Shed (a 503) or, when throttling, a 429: either way at once.
        let answer = if p.throttle {
            Answer::Throttled
        } else {
            Answer::Shed
        };
        return (answer, t + 1);
    }
    *allowance -= 1;
    if t < p.outage_start && p.outage_start < p.outage_end && p.outage_start < t + p.latency {
        // In flight when the gateway froze: hangs with the rest.
        return (Answer::Hang, hang(t));
    }
    (Answer::Ok, t + p.latency)
}

fn summarize(r: &mut OutageResult, outage_start_ms: f64, outage_end_ms: f64, duration_ms: f64) {
    let b = r.bucket_ms;
    let s = &mut r.summary;
    s.outage_end_ms = outage_end_ms;
    let served: u64 = r.served.iter().map(|&v| u64::from(v)).sum();
    s.offered_per_sec = s.attempts as f64 * 1000.0 / duration_ms;
    s.goodput_per_sec = served as f64 * 1000.0 / duration_ms;
    s.throttled_share = if s.attempts == 0 {
        0.0
    } else {
        s.throttled as f64 / s.attempts as f64
    };
    // Converged: the first bucket from which every window of CONVERGE_WINDOW_MS (or what is left
    // of the run) has at most CONVERGED_THROTTLED_SHARE of its attempts throttled.
    let w = ((CONVERGE_WINDOW_MS / b).round() as usize).max(1);
    let n = r.offered.len();
    let calm = |from: usize| {
        // Near the end, the last full window (a short tail would judge one bucket alone).
        let from = from.min(n.saturating_sub(w));
        let to = (from + w).min(n);
        let sum = |v: &[u32]| {
            v.get(from..to)
                .map_or(0, |x| x.iter().map(|&y| u64::from(y)).sum::<u64>())
        };
        sum(&r.throttled) as f64 <= CONVERGED_THROTTLED_SHARE * sum(&r.offered) as f64
    };
    let calm_tail = (0..n).rev().take_while(|&i| calm(i)).count();
    s.converged_at_ms = if calm_tail == 0 {
        f64::NAN
    } else {
        (n - calm_tail) as f64 * b
    };
    s.amplification = if s.logical_requests == 0 {
        0.0
    } else {
        s.attempts as f64 / s.logical_requests as f64
    };
    let after = (outage_end_ms / b).ceil() as usize;
    let during = (outage_start_ms / b).ceil() as usize..(outage_end_ms / b).floor() as usize;
    for (i, &v) in r.offered.iter().enumerate() {
        let v = u64::from(v);
        if during.contains(&i) {
            s.outage_attempts += v;
        }
        if v > s.peak_offered {
            s.peak_offered = v;
            s.peak_offered_at_ms = i as f64 * b;
        }
        if i >= after && v > s.second_peak_offered {
            s.second_peak_offered = v;
            s.second_peak_at_ms = i as f64 * b;
        }
    }
    // The final run of healthy buckets.
    let healthy = r
        .offered
        .iter()
        .zip(&r.served)
        .zip(&r.rejected)
        .rev()
        .take_while(|((&o, &sv), &rj)| {
            let demand = f64::from(o) + f64::from(rj);
            f64::from(sv) >= HEALTHY_SHARE * demand
        })
        .count();
    let first = r.offered.len() - healthy;
    if healthy == 0 {
        s.recovered_at_ms = f64::NAN;
        s.time_to_recover_ms = f64::NAN;
    } else {
        let at = first.max(after) as f64 * b;
        s.recovered_at_ms = at;
        s.time_to_recover_ms = (at - outage_end_ms).max(0.0);
    }
}
