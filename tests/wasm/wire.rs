//! `wireLayouts` across the boundary: every positional layout and every code the JS shell reads,
//! by the name the vocabulary gives it. Each layout's names are as many as its slots, and each
//! name's slot holds what the core says that name is (so a reordered slot, or a name moved without
//! its value, fails here); each code's name is the answer the boundary gives in that situation.
use std::collections::HashMap;

use steadfast::core::backoff::Jitter;
use steadfast::core::breaker::{RateOptions, State, DEFAULT_MAX_ORIGINS};
use steadfast::core::budget::RatioOptions;
use steadfast::core::error::MAX_DURATION_MS;
use steadfast::core::idempotency::{
    DEFAULT_IN_FLIGHT_LEASE_MS, DEFAULT_MAX_RECORDS, DEFAULT_TTL_MS, DEFAULT_UNKNOWN_TTL_MS,
    MAX_KEY_LEN,
};
use steadfast::core::reconcile::CHECKOUT_ATTEMPT_TIMEOUT_MS;
use steadfast::core::retry::RetryOptions;
use steadfast::wasm::{
    fetch_defaults, key_rule, store_defaults, wire_layouts, BreakerCore, StoreCore,
};
use wasm_bindgen_test::wasm_bindgen_test;

use crate::support::ok;

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
    assert_eq!(kind(s.begin("a", "f:1", 0.0)), w.code("begin", "run"));
    assert_eq!(kind(s.begin("a", "f:1", 1.0)), w.code("begin", "in-flight"));
    let peek = w.named("peek", &s.peek(s.slot_of("a") as u32, 1.0));
    assert_eq!(peek["status"], w.code("status", "in-flight"));
    assert_eq!(peek["startedAtMs"], 0.0);
    let a = s.slot_of("a") as u32;
    assert!(!s.complete(a, w.code("completion", "done") as u32, 2.0));
    assert_eq!(
        w.named("peek", &s.peek(a, 3.0))["status"],
        w.code("status", "done")
    );
    let replay = s.begin("a", "f:1", 3.0);
    assert_eq!(kind(replay), w.code("begin", "replay"));
    assert_eq!((replay / slot).floor(), f64::from(a));
    assert_eq!(kind(s.begin("a", "f:2", 3.0)), w.code("begin", "mismatch"));
    let b = (s.begin("b", "", 4.0) / slot).floor() as u32;
    assert_eq!(kind(s.begin("c", "", 4.0)), w.code("begin", "full"));
    assert!(!s.complete(b, w.code("completion", "unknown") as u32, 5.0));
    assert_eq!(
        w.named("peek", &s.peek(b, 5.0))["status"],
        w.code("status", "unknown")
    );
    assert_eq!(kind(s.begin("b", "", 6.0)), w.code("begin", "unknown"));
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
    assert!(s.begin("d", "", 2_000.0) % slot >= flag);
}
