//! The async API natively, on `VirtualTime`: the seed's 14 behaviours (tests/web/behaviours.rs,
//! also run inside wasm by tests/web_wasm.rs) plus what only a virtual clock can show exactly.
//! Run with `cargo test --features web`.
#![cfg(all(feature = "web", not(target_arch = "wasm32")))]

#[path = "web/behaviours.rs"]
mod behaviours;

use std::rc::Rc;

use steadfast::web::{retry, Charge, Classify, Error, RetryPolicy, Signal, VirtualTime};

macro_rules! virtual_tests {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            let time = VirtualTime::new(42);
            time.run(behaviours::$name(time.runtime(), time.clock())).unwrap();
        }
    )*};
}

virtual_tests!(
    stays_closed_below_threshold,
    trips_open_when_the_rate_crosses,
    open_circuit_fails_fast,
    half_open_probe_success_closes,
    failed_probe_reopens,
    fallback_instead_of_throwing,
    same_key_charges_once_and_replays,
    concurrent_duplicate_is_rejected,
    timeout_leaves_the_key_unknown,
    definitive_rejection_frees_the_key,
    transient_blip_absorbed_same_key,
    repeated_request_is_replayed,
    a_key_binds_customer_order_and_fields,
    unresolved_timeout_blocks_second_attempt,
    breaker_stops_new_keys_when_dead,
    deadline_is_enforced,
    budget_refuses_when_spent,
    a_later_refusal_never_frees_a_debited_key,
    store_run_over_retry_is_judged_by_every_attempt,
    an_aborted_call_counts_as_nothing_per_origin,
    nested_retries_are_judged_by_every_attempt,
    a_copy_let_go_mid_attempt_keeps_the_key_parked,
    a_retry_reports_to_the_run_that_started_it,
    two_runs_ending_with_one_shared_error_are_judged_each_by_its_own,
    a_breaker_judges_a_refusal_that_never_ran_by_the_answer_before_it,
);

#[derive(Debug, PartialEq)]
struct Busy(Option<f64>);
impl Classify for Busy {
    fn is_transient(&self) -> bool {
        true
    }
    fn retry_after_ms(&self, _now: f64) -> Option<f64> {
        self.0
    }
}

#[test]
fn full_jitter_delays_stay_under_the_exponential_ceiling() {
    let time = VirtualTime::new(3);
    let delays = Rc::new(std::cell::RefCell::new(Vec::new()));
    let d = Rc::clone(&delays);
    let p = RetryPolicy::builder()
        .max_attempts(5)
        .base_delay_ms(100.0)
        .max_delay_ms(250.0)
        .on_retry(move |i| d.borrow_mut().push((i.attempt, i.delay_ms)))
        .runtime(time.runtime())
        .build()
        .unwrap();
    let r = time
        .run(async { retry(&p, |_| async { Err::<(), _>(Busy(None)) }).await })
        .unwrap();
    assert_eq!(r, Err(Error::Operation(Busy(None))));
    let delays = delays.borrow();
    assert_eq!(delays.len(), 4);
    for (attempt, delay) in delays.iter() {
        let ceiling = (100.0 * 2f64.powi(*attempt as i32 - 1)).min(250.0);
        assert!(*delay >= 0.0 && *delay < ceiling, "{attempt}: {delay}");
    }
    // The clock moved by exactly the sum of the sleeps.
    let total: f64 = delays.iter().map(|(_, d)| d).sum();
    assert_eq!(time.now(), total);
}

#[test]
fn retry_after_is_a_floor_capped_by_max_delay() {
    let time = VirtualTime::new(3);
    let p = RetryPolicy::builder()
        .max_attempts(2)
        .base_delay_ms(10.0)
        .max_delay_ms(5_000.0)
        .runtime(time.runtime())
        .build()
        .unwrap();
    let _ = time.run(async { retry(&p, |_| async { Err::<(), _>(Busy(Some(1_200.0))) }).await });
    assert_eq!(time.now(), 1_200.0);
    let time = VirtualTime::new(3);
    let p = RetryPolicy::builder()
        .max_attempts(2)
        .base_delay_ms(10.0)
        .max_delay_ms(500.0)
        .runtime(time.runtime())
        .build()
        .unwrap();
    let _ = time.run(async { retry(&p, |_| async { Err::<(), _>(Busy(Some(60_000.0))) }).await });
    assert_eq!(time.now(), 500.0);
}

#[test]
fn an_abort_stops_the_sleep_and_the_attempt_signal_aborts() {
    let time = VirtualTime::new(3);
    let signal = Signal::new();
    let s = signal.clone();
    time.schedule(150.0, move || s.abort());
    let p = RetryPolicy::builder()
        .max_attempts(10)
        .base_delay_ms(1_000.0)
        .max_delay_ms(1_000.0)
        .jitter(steadfast::web::Jitter::None)
        .runtime(time.runtime())
        .build()
        .unwrap();
    let seen = Rc::new(std::cell::RefCell::new(None));
    let seen2 = Rc::clone(&seen);
    let r = time
        .run(async {
            retry(&p, |a| {
                *seen2.borrow_mut() = a.signal.clone();
                async { Err::<(), _>(Busy(None)) }
            })
            .signal(&signal)
            .await
        })
        .unwrap();
    assert_eq!(r, Err(Error::Aborted));
    assert_eq!(
        time.now(),
        150.0,
        "stopped at the abort, not after the 1 s sleep"
    );
    assert!(seen.borrow().as_ref().is_some_and(Signal::aborted));
}

#[test]
fn an_already_aborted_signal_makes_no_attempt() {
    let time = VirtualTime::new(3);
    let signal = Signal::new();
    signal.abort();
    let p = RetryPolicy::builder()
        .runtime(time.runtime())
        .build()
        .unwrap();
    let mut calls = 0;
    let r = time
        .run(async {
            retry(&p, |_| {
                calls += 1;
                async { Ok::<_, Busy>(()) }
            })
            .signal(&signal)
            .await
        })
        .unwrap();
    assert_eq!((r, calls), (Err(Error::Aborted), 0));
}

#[test]
fn a_dropped_run_parks_the_key_as_unknown() {
    let time = VirtualTime::new(3);
    let store: steadfast::web::IdempotencyStore<u32> =
        steadfast::web::IdempotencyStore::new().clock(time.clock());
    let rt = time.runtime();
    {
        let run = store.run("k", || async {
            rt.sleep(1_000.0).await;
            Ok::<_, Error<Busy>>(1)
        });
        let mut run = Box::pin(run);
        let waker = std::task::Waker::noop();
        let _ = run
            .as_mut()
            .poll(&mut std::task::Context::from_waker(waker));
        assert!(matches!(
            store.peek("k"),
            Some(steadfast::web::Record::InFlight { .. })
        ));
    } // dropped mid-flight (a cancelled task)
    assert!(matches!(
        store.peek("k"),
        Some(steadfast::web::Record::Unknown { .. })
    ));
}

#[test]
fn a_stalled_run_is_reported_not_hung() {
    let time = VirtualTime::new(1);
    let other = VirtualTime::new(1);
    let rt = other.runtime();
    assert!(time.run(async move { rt.sleep(10.0).await }).is_err());
}

use std::future::Future;

/// The Rust guide's (docs/guide/rust.md) code blocks are excerpts of examples/rust-checkout/src/lib.rs,
/// verbatim (the browser test runs that file), so the guide cannot drift from code that works.
#[test]
fn guide_from_rust_blocks_are_the_example_s_code() {
    let root = env!("CARGO_MANIFEST_DIR");
    let section = std::fs::read_to_string(format!("{root}/docs/guide/rust.md")).unwrap();
    let example =
        std::fs::read_to_string(format!("{root}/examples/rust-checkout/src/lib.rs")).unwrap();
    let blocks: Vec<&str> = section
        .split("```rust\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .collect();
    assert_eq!(blocks.len(), 2, "the click handler and the start-up");
    for block in blocks {
        assert!(
            example.contains(block),
            "guide block is not in the example:\n{block}"
        );
    }
}

/// The JS `isTransientError` rule for steadfast's own errors, in Rust: what the store parks as
/// unknown and what a retry around a retry would repeat.
#[test]
fn steadfast_errors_classify_like_the_js_ones() {
    let busy = || Busy(None);
    let transient: [Error<Busy>; 5] = [
        Error::Operation(busy()),
        Error::OutcomeUnknown {
            key: "k".into(),
            started_at_ms: 0.0,
            cause: None,
        },
        Error::DeadlineExceeded {
            max_elapsed_ms: 1.0,
            attempt: 1,
            last_error: None,
        },
        Error::Aborted,
        Error::RetryBudgetExhausted {
            attempt: 1,
            last_error: busy(),
        },
    ];
    for e in &transient {
        assert!(e.is_transient(), "{e:?}");
    }
    let permanent: [Error<Busy>; 6] = [
        Error::CircuitOpen {
            retry_after_ms: 1.0,
        },
        Error::DuplicateInFlight {
            key: "k".into(),
            started_at_ms: 0.0,
        },
        Error::KeyReused { key: "k".into() },
        Error::StoreFull {
            key: "k".into(),
            max_records: 1,
        },
        Error::InvalidKey { key: String::new() },
        Error::RandomUnavailable,
    ];
    for e in &permanent {
        assert!(!e.is_transient(), "{e:?}");
    }
    // Codes are the JS ones, and unique.
    let mut codes: Vec<_> = transient
        .iter()
        .chain(&permanent)
        .filter_map(Error::code)
        .collect();
    assert_eq!(codes.len(), 10);
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), 10);
    assert_eq!(
        Error::<&str>::OutcomeUnknown {
            key: "k".into(),
            started_at_ms: 0.0,
            cause: None,
        }
        .to_string(),
        "Outcome for k is unknown — reconcile before retrying"
    );
}

#[test]
fn map_converts_the_error_inside_a_cause_too() {
    let e: Error<u16> = Error::OutcomeUnknown {
        key: "k".into(),
        started_at_ms: 1.0,
        cause: Some(Box::new(Error::Operation(503))),
    };
    let mapped = e.map(|status| format!("HTTP {status}"));
    match mapped {
        Error::OutcomeUnknown {
            cause: Some(cause), ..
        } => assert_eq!(*cause, Error::Operation("HTTP 503".to_string())),
        other => panic!("{other:?}"),
    }
}

/// The shared fingerprint fixture (tests/fixtures/fingerprints.json) through `web::Charge`: its
/// fingerprint is the text the JS `chargeFingerprint` writes, and the digest `charge_customer`
/// binds is the one JS keeps in Redis.
#[test]
fn charge_fingerprints_are_the_fixture_s() {
    use steadfast::web::Json;
    let get = |v: &Json, name: &str| match v {
        Json::Object(f) => f.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
        _ => None,
    };
    let text = |v: Option<Json>| match v {
        Some(Json::String(s)) => s,
        other => panic!("expected a string, got {other:?}"),
    };
    let doc = Json::parse(include_str!("fixtures/fingerprints.json")).unwrap();
    let Some(Json::Array(cases)) = get(&doc, "cases") else {
        panic!("no cases")
    };
    for case in &cases {
        let name = text(get(case, "name"));
        let volatile: Vec<String> = match get(case, "volatileFields") {
            Some(Json::Array(v)) => v.into_iter().map(|n| text(Some(n))).collect(),
            _ => Vec::new(),
        };
        let Some(Json::Object(fields)) = get(case, "charge") else {
            panic!("{name}: no charge")
        };
        let find = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let amount = match find("amountCents") {
            Some(Json::Number(n)) => n as u64,
            other => panic!("{name}: amountCents {other:?}"),
        };
        let mut c = Charge::new(
            &text(find("idempotencyKey")),
            amount,
            &text(find("currency")),
        )
        .unwrap();
        for (k, v) in &fields {
            match (k.as_str(), v) {
                ("idempotencyKey" | "amountCents" | "currency", _) => {}
                ("customer", Json::String(s)) => c = c.with_customer(s),
                ("order", Json::String(s)) => c = c.with_order(s),
                _ if volatile.contains(k) => c = c.volatile_field(k, v.clone()).unwrap(),
                _ => c = c.field(k, v.clone()).unwrap(),
            }
        }
        assert_eq!(c.fingerprint(), text(get(case, "canonical")), "{name}");
        let digest = steadfast::core::idempotency::fingerprint(&format!("f:{}", c.fingerprint()));
        assert_eq!(
            format!("{digest:032x}"),
            text(get(case, "digest")),
            "{name}"
        );
        // The body is the same data, volatile fields included.
        let body = Json::parse(&c.body()).unwrap();
        for k in &volatile {
            assert!(get(&body, k).is_some(), "{name}: {k} is sent");
        }
    }
}

/// A run of one store inside a run of another: each is judged by its own attempts, and the outer
/// run is the current one again after every poll of the inner: the outer, whose first request's
/// answer was lost, is parked by it; the inner, only ever refused, is free.
#[test]
fn nested_runs_of_two_stores_are_judged_each_by_its_own() {
    use std::future::IntoFuture;
    use steadfast::web::{IdempotencyStore, Record};
    #[derive(Debug)]
    struct Gw(Option<u16>);
    impl Classify for Gw {
        fn is_transient(&self) -> bool {
            self.0.is_none()
        }
        fn answer(&self) -> steadfast::core::history::Answer {
            use steadfast::core::history::Answer;
            self.0.map_or(Answer::NoAnswer, Answer::Status)
        }
    }
    let time = VirtualTime::new(5);
    let (outer, inner) = (
        IdempotencyStore::<u32>::new().clock(time.clock()),
        IdempotencyStore::<u32>::new().clock(time.clock()),
    );
    let once = RetryPolicy::builder()
        .max_attempts(1)
        .runtime(time.runtime())
        .build()
        .unwrap();
    let rt = time.runtime();
    let r = time
        .run(outer.run("outer", || async {
            let lost = retry(&once, |_| async {
                rt.sleep(5.0).await;
                Err::<u32, _>(Gw(None))
            })
            .await;
            assert!(lost.is_err());
            let refused = inner
                .run("inner", || {
                    retry(&once, |_| async {
                        rt.sleep(5.0).await;
                        Err::<u32, _>(Gw(Some(402)))
                    })
                    .into_future()
                })
                .await;
            // Polled again as the outer run after the inner one's polls: a 402 of its own.
            let declined = retry(&once, |_| async { Err::<u32, _>(Gw(Some(402))) }).await;
            assert!(declined.is_err());
            refused
        }))
        .unwrap();
    assert_eq!(r.unwrap_err().code(), Some("OUTCOME_UNKNOWN"));
    assert!(matches!(outer.peek("outer"), Some(Record::Unknown { .. })));
    assert_eq!(inner.peek("inner"), None, "the inner run was only refused");
}
