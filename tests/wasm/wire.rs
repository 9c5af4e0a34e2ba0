//! `wireLayouts` across the boundary: every positional layout and every code the JS shell reads,
//! by the name the vocabulary gives it. Each layout's names are as many as its slots, and each
//! name's slot holds what the core says that name is (so a reordered slot, or a name moved without
//! its value, fails here); each code's name is the answer the boundary gives in that situation.
use std::collections::HashMap;

use steadfast::core::backoff::Jitter;
use steadfast::core::breaker::{RateOptions, State, DEFAULT_MAX_ORIGINS};
use steadfast::core::budget::RatioOptions;
use steadfast::core::error::MAX_DURATION_MS;
use steadfast::core::hedge::DEFAULTS as HEDGE_DEFAULTS;
use steadfast::core::idempotency::{
    DEFAULT_IN_FLIGHT_LEASE_MS, DEFAULT_MAX_RECORDS, DEFAULT_TTL_MS, DEFAULT_UNKNOWN_TTL_MS,
    MAX_KEY_LEN,
};
use steadfast::core::limiter::{LimiterConfig, Mode};
use steadfast::core::quota::QuotaConfig;
use steadfast::core::reconcile::{CHECKOUT_ATTEMPT_TIMEOUT_MS, CHECKOUT_MAX_RESPONSE_BYTES};
use steadfast::core::retry::RetryOptions;
use steadfast::wasm::{
    fetch_defaults, hedge_defaults, history_record, history_verdict, key_rule, limiter_preset,
    method_is_keyed, parse_should_retry, quota_error_class, quota_preset, store_defaults,
    wire_layouts, BreakerCore, DialectCore, HedgeCore, LimiterCore, QuotaCore, RetryCore,
    StoreCore,
};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::{begin, ok};

/// The vocabulary: group → (names in order, named constants).
struct Wire(HashMap<String, (Vec<String>, HashMap<String, f64>)>);

impl Wire {
    fn read() -> Wire {
        let mut groups = HashMap::new();
        for g in wire_layouts().split(';') {
            let (name, entries) = g.split_once(':').expect("group:entries");
            let (mut names, mut constants) = (Vec::new(), HashMap::new());
            for e in entries.split(',').filter(|e| !e.is_empty()) {
                match e.split_once('=') {
                    Some((n, v)) => {
                        constants.insert(n.to_owned(), v.parse().expect("an integer"));
                    }
                    None => {
                        assert!(constants.is_empty(), "{name}: names come before constants");
                        names.push(e.to_owned());
                    }
                }
            }
            let mut unique = names.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), names.len(), "{name}: a name given twice");
            assert!(
                groups.insert(name.to_owned(), (names, constants)).is_none(),
                "group {name} given twice"
            );
        }
        Wire(groups)
    }

    fn names(&self, group: &str) -> &[String] {
        &self
            .0
            .get(group)
            .unwrap_or_else(|| panic!("no group {group}"))
            .0
    }

    /// The code (position) of `name` in `group`.
    fn code(&self, group: &str, name: &str) -> f64 {
        let i = self.names(group).iter().position(|n| n == name);
        i.unwrap_or_else(|| panic!("{group} has no {name}")) as f64
    }

    fn constant(&self, group: &str, name: &str) -> f64 {
        let c = &self
            .0
            .get(group)
            .unwrap_or_else(|| panic!("no group {group}"))
            .1;
        *c.get(name)
            .unwrap_or_else(|| panic!("{group} has no constant {name}"))
    }

    /// `values` by the names of layout `group`, which must name every slot.
    fn named(&self, group: &str, values: &[f64]) -> HashMap<String, f64> {
        let names = self.names(group);
        assert_eq!(names.len(), values.len(), "{group}: one name per slot");
        names.iter().cloned().zip(values.iter().copied()).collect()
    }
}

fn assert_named(group: &str, got: &HashMap<String, f64>, want: &[(&str, f64)]) {
    assert_eq!(got.len(), want.len(), "{group}: every slot checked");
    for (name, value) in want {
        let v = got
            .get(*name)
            .unwrap_or_else(|| panic!("{group} has no {name}"));
        assert!(
            v == value || (v.is_nan() && value.is_nan()),
            "{group}.{name} = {v}, the core says {value}"
        );
    }
}

#[wasm_bindgen_test]
fn fetch_and_store_defaults_by_name() {
    let w = Wire::read();
    let (b, r, k) = (
        RatioOptions::default(),
        RetryOptions::default(),
        RateOptions::default(),
    );
    assert_named(
        "fetchDefaults",
        &w.named("fetchDefaults", &fetch_defaults()),
        &[
            ("budget.ratio", b.ratio),
            ("budget.minRetriesPerSec", b.min_retries_per_sec),
            ("budget.windowMs", b.window_ms),
            ("retry.maxAttempts", f64::from(r.max_attempts)),
            ("retry.baseDelayMs", r.base_delay_ms),
            ("retry.maxDelayMs", r.max_delay_ms),
            ("retry.jitter", w.code("jitter", r.jitter.name())),
            ("breaker.windowSize", f64::from(k.window_size)),
            ("breaker.minimumCalls", f64::from(k.minimum_calls)),
            ("breaker.failureRateThreshold", k.failure_rate_threshold),
            ("breaker.openDurationMs", k.open_duration_ms),
            ("checkoutAttemptTimeoutMs", CHECKOUT_ATTEMPT_TIMEOUT_MS),
            ("maxOrigins", f64::from(DEFAULT_MAX_ORIGINS)),
            ("checkoutMaxResponseBytes", CHECKOUT_MAX_RESPONSE_BYTES),
        ],
    );
    assert_named(
        "storeDefaults",
        &w.named("storeDefaults", &store_defaults()),
        &[
            ("ttlMs", DEFAULT_TTL_MS),
            ("maxRecords", f64::from(DEFAULT_MAX_RECORDS)),
            ("inFlightLeaseMs", DEFAULT_IN_FLIGHT_LEASE_MS),
            ("unknownTtlMs", DEFAULT_UNKNOWN_TTL_MS),
            ("maxDurationMs", MAX_DURATION_MS),
        ],
    );
    let rule: Vec<f64> = key_rule().into_iter().map(f64::from).collect();
    assert_named(
        "keyRule",
        &w.named("keyRule", &rule),
        &[
            ("minLength", 1.0),
            ("maxLength", MAX_KEY_LEN as f64),
            ("lowestByte", f64::from(b' ')),
            ("highestByte", f64::from(b'~')),
            ("lowestEdgeByte", f64::from(b'!')),
        ],
    );
}

#[wasm_bindgen_test]
fn breaker_config_and_snapshot_by_name() {
    let w = Wire::read();
    // Every option a distinct number, so a slot read under another name cannot pass.
    let rate = ok(BreakerCore::rate(20.0, 0.25, Some(7.0), 3_000.0, Some(2.0)));
    assert_named(
        "breakerConfig",
        &w.named("breakerConfig", &rate.config()),
        &[
            ("kind", w.code("breakerKind", "rate")),
            ("windowSize", 20.0),
            ("failureRateThreshold", 0.25),
            ("minimumCalls", 7.0),
            ("failureThreshold", 0.0),
            ("openDurationMs", 3_000.0),
            ("probesToClose", 2.0),
        ],
    );
    let mut b = ok(BreakerCore::consecutive(3.0, 1_000.0, None));
    assert_named(
        "breakerConfig",
        &w.named("breakerConfig", &b.config()),
        &[
            ("kind", w.code("breakerKind", "consecutive")),
            ("windowSize", 0.0),
            ("failureRateThreshold", 0.0),
            ("minimumCalls", 0.0),
            ("failureThreshold", 3.0),
            ("openDurationMs", 1_000.0),
            ("probesToClose", 1.0),
        ],
    );
    for now in [1.0, 2.0] {
        let p = b.try_acquire(now);
        b.record_failure(p, now);
    }
    let head = |b: &BreakerCore| {
        let s = b.snapshot();
        let n = w.names("breakerSnapshot").len();
        w.named("breakerSnapshot", s.get(..n).expect("the head"))
    };
    let closed = head(&b);
    assert_eq!(closed["state"], w.code("state", "closed"));
    assert_eq!(closed["consecutiveFailures"], 2.0);
    assert_eq!(closed["probeSuccesses"], 0.0);
    let p = b.try_acquire(5.0);
    let t = b.record_failure(p, 5.0);
    assert_eq!(f64::from(t), w.code("transition", "open"));
    let open = head(&b);
    assert_eq!(open["state"], w.code("state", "open"));
    assert_eq!(open["openUntilMs"], 1_005.0);
    assert_eq!(b.try_acquire_closed(), w.constant("breaker", "notClosed"));
    // After the cooldown the acquire that starts the probe carries the transition flag.
    let probe = b.try_acquire(1_005.0);
    assert!(probe >= w.constant("breaker", "transitionFlag"));
    assert_eq!(f64::from(b.state(1_005.0)), w.code("state", "half-open"));
    assert_eq!(f64::from(b.isolate()), w.code("transition", "isolated"));
    assert_eq!(f64::from(b.state(2_000.0)), w.code("state", "isolated"));
    // recordTimed's verdicts: "excluded" changes nothing, "failure" counts.
    let mut t = ok(BreakerCore::consecutive(1.0, 1_000.0, None));
    let p = t.try_acquire(0.0);
    let excluded = w.code("verdict", "excluded") as u32;
    assert_eq!(t.record_timed(p, excluded, 1.0, 1.0), 0);
    let p = t.try_acquire(2.0);
    let failure = w.code("verdict", "failure") as u32;
    assert_eq!(
        f64::from(t.record_timed(p, failure, 1.0, 3.0)),
        w.code("transition", "open")
    );
    // outcomeOf answers in the same verdict codes, the slow-call threshold applied; any number in.
    let success = w.code("verdict", "success") as u32;
    let mut j = ok(BreakerCore::consecutive(1.0, 1_000.0, None));
    assert_eq!(
        j.outcome_of(success, 1e12),
        success,
        "no threshold: no call is slow"
    );
    ok(j.set_slow_call_duration_ms(200.0));
    assert_eq!(j.outcome_of(success, 199.0), success);
    assert_eq!(j.outcome_of(success, 200.0), failure);
    assert_eq!(j.outcome_of(failure, 0.0), failure);
    assert_eq!(j.outcome_of(excluded, 1e9), excluded);
    assert_eq!(j.outcome_of(success, f64::NAN), success);
    assert_eq!(
        j.outcome_of(99, -1.0),
        excluded,
        "an unknown verdict counts as neither"
    );
}

#[wasm_bindgen_test]
fn state_kind_and_jitter_names_are_the_cores() {
    let w = Wire::read();
    let states: Vec<&str> = State::ALL.iter().map(|s| s.name()).collect();
    assert_eq!(w.names("state"), states);
    assert_eq!(
        w.names("state"),
        ["closed", "open", "half-open", "isolated"]
    );
    assert_eq!(
        w.names("transition").first().map(String::as_str),
        Some("none")
    );
    assert_eq!(w.names("transition").get(1..), Some(w.names("state")));
    for s in State::ALL {
        assert_eq!(w.code("state", s.name()), f64::from(s.id()));
        assert_eq!(State::from_name(s.name()), Some(s));
    }
    let jitters: Vec<&str> = Jitter::ALL.iter().map(|j| j.name()).collect();
    assert_eq!(w.names("jitter"), jitters);
    assert_eq!(w.names("breakerKind"), ["rate", "consecutive"]);
}

#[wasm_bindgen_test]
fn store_codes_are_the_answers_by_name() {
    let w = Wire::read();
    let slot = w.constant("begin", "slot");
    let flag = w.constant("begin", "expiredFlag");
    let kind = |code: f64| code % slot % flag;
    let mut s = ok(StoreCore::new(Some(1_000.0), Some(2.0)));
    assert_eq!(kind(begin(&mut s, "a", "f:1", 0.0)), w.code("begin", "run"));
    assert_eq!(
        kind(begin(&mut s, "a", "f:1", 1.0)),
        w.code("begin", "in-flight")
    );
    let peek = w.named("peek", &s.peek(s.slot_of("a") as u32, 1.0));
    assert_eq!(peek["status"], w.code("status", "in-flight"));
    assert_eq!(peek["startedAtMs"], 0.0);
    let a = s.slot_of("a") as u32;
    assert!(!s.complete(a, w.code("completion", "done") as u32, 2.0));
    assert_eq!(
        w.named("peek", &s.peek(a, 3.0))["status"],
        w.code("status", "done")
    );
    let replay = begin(&mut s, "a", "f:1", 3.0);
    assert_eq!(kind(replay), w.code("begin", "replay"));
    assert_eq!((replay / slot).floor(), f64::from(a));
    assert_eq!(
        kind(begin(&mut s, "a", "f:2", 3.0)),
        w.code("begin", "mismatch")
    );
    let b = (begin(&mut s, "b", "", 4.0) / slot).floor() as u32;
    assert_eq!(kind(begin(&mut s, "c", "", 4.0)), w.code("begin", "full"));
    assert!(!s.complete(b, w.code("completion", "unknown") as u32, 5.0));
    assert_eq!(
        w.named("peek", &s.peek(b, 5.0))["status"],
        w.code("status", "unknown")
    );
    assert_eq!(
        kind(begin(&mut s, "b", "", 6.0)),
        w.code("begin", "unknown")
    );
    assert_eq!(
        begin(&mut s, " b", "", 6.0),
        w.constant("begin", "invalidKey"),
        "a key that fails the key rule"
    );
    // resolve and reopen
    assert_eq!(
        s.resolve("nope", true, None, 6.0),
        w.code("resolve", "not-found")
    );
    assert_eq!(
        s.resolve("a", true, None, 6.0),
        w.code("resolve", "wrong-state")
    );
    assert_eq!(
        s.reopen("b", "f:other", None, 6.0),
        w.code("resolve", "key-reused")
    );
    let reopened = s.reopen("b", "", None, 6.0);
    let reopen_slot = w.constant("resolve", "slot");
    assert_eq!(reopened % reopen_slot, w.code("resolve", "resolved"));
    assert_eq!((reopened / reopen_slot).floor(), f64::from(b));
    // "refuted" frees even a record that may have been processed; "failed" would not.
    assert!(s.complete(b, w.code("completion", "refuted") as u32, 7.0));
    // Expiry: the expired flag is set on the begin that finds expired slots to drain.
    assert!(begin(&mut s, "d", "", 2_000.0) % slot >= flag);
}

#[wasm_bindgen_test]
fn limiter_quota_and_hedge_presets_by_name() {
    let w = Wire::read();
    let presets = [
        ("cubic", LimiterConfig::default()),
        ("aws", LimiterConfig::aws_adaptive()),
        ("aimd", LimiterConfig::aimd()),
    ];
    assert_eq!(w.names("limiterPresetName").len(), presets.len());
    for (name, c) in presets {
        let id = w.code("limiterPresetName", name) as u32;
        let flag = |b: bool| f64::from(u8::from(b));
        assert_named(
            "limiterPreset",
            &w.named("limiterPreset", &limiter_preset(id)),
            &[
                ("mode", flag(c.mode == Mode::Aimd)),
                ("beta", c.beta),
                ("scaleConstant", c.scale_constant),
                ("smooth", c.smooth),
                ("minRatePerSec", c.min_rate_per_sec),
                ("minCapacity", c.min_capacity),
                ("increasePerSec", c.increase_per_sec),
                ("maxHoldMs", c.max_hold_ms),
                ("awsExact", flag(c.aws_exact)),
            ],
        );
        // LimiterCore takes the slots in the same order.
        let p = limiter_preset(id);
        let arg = |n: &str| p[w.code("limiterPreset", n) as usize];
        assert!(LimiterCore::new(
            arg("mode") as u32,
            arg("beta"),
            arg("scaleConstant"),
            arg("smooth"),
            arg("minRatePerSec"),
            arg("minCapacity"),
            arg("increasePerSec"),
            arg("maxHoldMs"),
            arg("awsExact") == 1.0,
        )
        .is_ok());
    }
    let quotas = [
        ("steadfast", QuotaConfig::default()),
        ("aws", QuotaConfig::aws_standard()),
    ];
    assert_eq!(w.names("quotaPresetName").len(), quotas.len());
    for (name, c) in quotas {
        let id = w.code("quotaPresetName", name) as u32;
        let p = quota_preset(id);
        assert_named(
            "quotaPreset",
            &w.named("quotaPreset", &p),
            &[
                ("capacity", f64::from(c.capacity)),
                ("timeoutCost", f64::from(c.timeout)),
                ("throttledCost", f64::from(c.throttled)),
                ("serverErrorCost", f64::from(c.server_error)),
                ("successRefund", f64::from(c.success_refund)),
            ],
        );
        // QuotaCore takes the slots in the same order: a retry after a 429 costs throttledCost.
        let arg = |n: &str| p[w.code("quotaPreset", n) as usize];
        let mut q = ok(QuotaCore::new(
            arg("capacity"),
            arg("timeoutCost"),
            arg("throttledCost"),
            arg("serverErrorCost"),
            arg("successRefund"),
        ));
        let throttled = quota_error_class(429.0);
        assert_eq!(q.try_acquire(throttled), f64::from(c.throttled));
    }
    let d = HEDGE_DEFAULTS;
    assert_named(
        "hedgeDefaults",
        &w.named("hedgeDefaults", &hedge_defaults()),
        &[
            ("quantile", d.quantile),
            ("windowSize", f64::from(d.window_size)),
            ("minDelayMs", d.min_delay_ms),
            ("maxDelayMs", d.max_delay_ms),
            ("maxHedges", f64::from(d.max_hedges)),
        ],
    );
    // HedgeCore's arguments by name: a fixed delay and a hedge count, the rest not given.
    let mut args = vec![f64::NAN; w.names("hedge").len()];
    args[w.code("hedge", "delayMs") as usize] = 70.0;
    args[w.code("hedge", "maxHedges") as usize] = 2.0;
    let [a, b, c, e, f, g, h] = args[..] else {
        panic!("seven hedge options")
    };
    let hedge = ok(HedgeCore::new(a, b, c, e, f, g, h));
    assert_eq!(hedge.delay_ms(), 70.0);
    assert_eq!(hedge.max_copies(), 3);
}

#[wasm_bindgen_test]
fn remaining_codes_are_the_answers_by_name() {
    let w = Wire::read();
    // Quota error classes.
    for (status, class) in [
        (f64::NAN, "timeout"),
        (408.0, "timeout"),
        (429.0, "throttled"),
        (503.0, "serverError"),
    ] {
        assert_eq!(
            f64::from(quota_error_class(status)),
            w.code("errorClass", class),
            "{status}"
        );
    }
    // Hedge steps: start the first copy, await once both copies run, exhausted when none runs.
    let two = ok(HedgeCore::new(
        50.0,
        f64::NAN,
        f64::NAN,
        f64::NAN,
        f64::NAN,
        1.0,
        f64::NAN,
    ));
    let step = |name: &str| w.constant("hedgeStep", name);
    assert_eq!(two.next_step(0, 0, 0.0), step("start"));
    assert_eq!(two.next_step(1, 1, 0.0), 50.0, "a wait is its delay");
    assert_eq!(two.next_step(1, 1, 50.0), step("start"));
    assert_eq!(two.next_step(2, 1, 0.0), step("awaitAnswer"));
    assert_eq!(two.next_step(2, 0, 0.0), step("exhausted"));
    // Retry stops.
    let r = ok(RetryCore::new(
        Some(2.0),
        Some(100.0),
        Some(1_000.0),
        0,
        Some(150.0),
    ));
    let stop = |name: &str| w.constant("stop", name);
    assert_eq!(
        r.after_failure(1, 0.0, false, f64::NAN, 0.0, 0.5),
        stop("not-retryable")
    );
    assert_eq!(
        r.after_failure(2, 0.0, true, f64::NAN, 0.0, 0.5),
        stop("attempts-exhausted")
    );
    assert_eq!(
        r.after_failure(1, 140.0, true, 100.0, 0.0, 0.5),
        stop("deadline-exceeded")
    );
    assert!(r.after_failure(1, 0.0, true, f64::NAN, 0.0, 0.5) >= 0.0);
    // Attempt answers fold into the history verdict each name means.
    let verdict = |answers: &[f64]| {
        let h = answers.iter().fold(0, |h, a| history_record(h, *a));
        f64::from(history_verdict(h))
    };
    let answer = |name: &str| w.constant("answer", name);
    let hv = |name: &str| w.code("historyVerdict", name);
    assert_eq!(verdict(&[answer("notSent")]), hv("not-processed"));
    assert_eq!(verdict(&[answer("noAnswer")]), hv("unknown"));
    assert_eq!(verdict(&[answer("refused")]), hv("refused"));
    assert_eq!(verdict(&[answer("inProgress")]), hv("unknown"));
    assert_eq!(verdict(&[answer("notSent"), 200.0]), hv("done"));
    // Stripe-Should-Retry.
    for v in ["true", "false"] {
        assert_eq!(f64::from(parse_should_retry(v)), w.code("shouldRetry", v));
    }
    assert_eq!(
        f64::from(parse_should_retry("maybe")),
        w.code("shouldRetry", "none")
    );
    // The keyed-method rule is exported.
    assert!(method_is_keyed("POST") && method_is_keyed("patch") && !method_is_keyed("PUT"));
}

#[wasm_bindgen_test]
fn dialect_syntax_and_no_status_by_name() {
    let w = Wire::read();
    let custom = |syntax: &str, in_progress: f64, reuse: f64| {
        DialectCore::custom(
            "mine".into(),
            "Idempotency-Key".into(),
            w.code("keySyntax", syntax) as u32,
            255.0,
            f64::INFINITY,
            in_progress,
            reuse,
            w.constant("dialect", "noStatus"),
            String::new(),
            String::new(),
        )
    };
    assert_eq!(w.names("keySyntax"), ["raw", "sf-string"]);
    let none = w.constant("dialect", "noStatus");
    let raw = ok(custom("raw", none, none));
    let fields = |d: &DialectCore| w.named("dialectFields", &d.fields());
    assert_eq!(fields(&raw)["syntax"], w.code("keySyntax", "raw"));
    assert_eq!(ok(raw.header_value("k")), "k");
    let sf = ok(custom("sf-string", 409.0, 422.0));
    assert_eq!(fields(&sf)["syntax"], w.code("keySyntax", "sf-string"));
    assert_eq!(ok(sf.header_value("k")), "\"k\"");
    // "No status" is accepted in a status slot and reads back as itself; any other non-error
    // status is refused.
    assert_named(
        "dialectFields",
        &fields(&raw),
        &[
            ("syntax", w.code("keySyntax", "raw")),
            ("maxKeyLength", 255.0),
            ("retentionMs", f64::INFINITY),
            ("inProgressStatus", none),
            ("reuseStatus0", none),
            ("reuseStatus1", none),
        ],
    );
    assert_eq!(fields(&sf)["inProgressStatus"], 409.0);
    assert_eq!(fields(&sf)["reuseStatus0"], 422.0);
    assert!(custom("raw", none + 1.0, none).is_err());
}
