//! The Rust API as an app writes against it (natively, on `VirtualTime`): `?` across steadfast's
//! error types, `std::error::Error` chains, classification by closure, the breaker builder and its
//! defaults, a breaker that ignores declines, `fetch`/`send` off wasm32, and the store's key index
//! under slot reuse. Run with `cargo test --features web --test web_api`.
#![cfg(all(feature = "web", not(target_arch = "wasm32")))]

use std::error::Error as _;
use std::future::IntoFuture;
use std::rc::Rc;

use steadfast::core::breaker::RateOptions;
use steadfast::web::{
    fetch, retry, retry_with, send, Attempt, Charge, CircuitBreaker, Classify, Counts, Error,
    FetchFailure, FetchOptions, IdempotencyStore, Record, Resolution, RetryPolicy, State,
    VirtualTime,
};

/// An app's own gateway error.
#[derive(Debug, Clone, PartialEq)]
enum Gateway {
    Down,
    Declined,
}

impl std::fmt::Display for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Gateway::Down => "gateway down",
            Gateway::Declined => "card declined",
        })
    }
}

impl std::error::Error for Gateway {}

impl Classify for Gateway {
    fn is_transient(&self) -> bool {
        *self == Gateway::Down
    }
}

/// An app function returning `Error<Gateway>` uses `?` on a charge, a builder and a
/// reconciliation, and on its own error inside a store run: each keeps its code.
#[test]
fn question_mark_converts_every_steadfast_error_into_the_app_s() {
    let time = VirtualTime::new(1);
    let store = IdempotencyStore::<String>::new().clock(time.clock());
    let app = |amount: u64, base_delay_ms: f64, resolve: &str| -> Result<String, Error<Gateway>> {
        let charge = Charge::new("order-1", amount, "usd")?;
        let _policy = RetryPolicy::builder()
            .base_delay_ms(base_delay_ms)
            .build()?;
        let _breaker = CircuitBreaker::builder().build()?;
        store.resolve(resolve, Resolution::Failed)?;
        Ok(charge.idempotency_key)
    };
    assert_eq!(app(0, 1.0, "k").unwrap_err().code(), Some("INVALID_OPTION"));
    let bad_policy = app(1, -1.0, "k").unwrap_err();
    assert_eq!(bad_policy.code(), Some("INVALID_OPTION"));
    assert_eq!(
        bad_policy.to_string(),
        "baseDelayMs must be a finite number >= 0"
    );
    assert_eq!(
        app(1, 1.0, "nope").unwrap_err().code(),
        Some("KEY_NOT_FOUND")
    );

    let run = time.run(store.run("k", || async {
        let e: Result<String, Gateway> = Err(Gateway::Declined);
        Ok(e?)
    }));
    assert_eq!(
        run.unwrap().unwrap_err(),
        Error::Operation(Gateway::Declined)
    );
}

/// `Error<E>` is a `std::error::Error` whose `source()` walks to the cause: an unknown outcome's
/// error, a budget's last error. `FetchFailure` is one too (a `Box<dyn Error>` takes both).
#[test]
fn errors_chain_through_source() {
    let time = VirtualTime::new(1);
    let store = IdempotencyStore::<u32>::new().clock(time.clock());
    let r = time.run(store.run("k", || async { Err(Error::Operation(Gateway::Down)) }));
    let e = r.unwrap().unwrap_err();
    assert_eq!(e.code(), Some("OUTCOME_UNKNOWN"));
    let cause = e.source().expect("the unknown outcome's cause");
    assert_eq!(cause.to_string(), "gateway down");
    let boxed: Box<dyn std::error::Error> = Box::new(e);
    assert!(boxed.to_string().starts_with("Outcome for k is unknown"));
    let budget: Error<Gateway> = Error::RetryBudgetExhausted {
        attempt: 2,
        last_error: Gateway::Down,
    };
    assert_eq!(
        budget.source().map(|s| s.to_string()),
        Some("gateway down".into())
    );
    let f: Box<dyn std::error::Error> = Box::new(FetchFailure::AttemptTimeout { ms: 5.0 });
    assert_eq!(f.to_string(), "attempt timed out after 5 ms");
}

/// A closure classifies an error type the app does not own: transient ones are retried, the
/// first permanent one ends the call, with no `Classify` impl and no newtype.
#[test]
fn retry_with_classifies_by_closure() {
    let time = VirtualTime::new(3);
    let policy = RetryPolicy::builder()
        .max_attempts(5)
        .runtime(time.runtime())
        .build()
        .unwrap();
    let calls = Rc::new(std::cell::Cell::new(0));
    let seen = Rc::clone(&calls);
    let out = time.run(async move {
        retry_with(
            &policy,
            |e: &String| e.starts_with("503"),
            move |attempt: Attempt| {
                seen.set(seen.get() + 1);
                async move {
                    match attempt.number {
                        1 | 2 => Err::<u32, _>("503 busy".to_string()),
                        _ => Err("400 bad".to_string()),
                    }
                }
            },
        )
        .await
    });
    assert_eq!(out.unwrap(), Err(Error::Operation("400 bad".to_string())));
    assert_eq!(calls.get(), 3);
}

/// The same loop with `retry` reads the trait: a closure that says "permanent" for what the
/// trait calls transient stops at once (the two classifications are really the ones used).
#[test]
fn retry_with_overrides_the_trait() {
    let time = VirtualTime::new(3);
    let policy = RetryPolicy::builder()
        .max_attempts(4)
        .runtime(time.runtime())
        .build()
        .unwrap();
    let count = |by_closure: bool| {
        let calls = Rc::new(std::cell::Cell::new(0u32));
        let seen = Rc::clone(&calls);
        let f = move |_: Attempt| {
            seen.set(seen.get() + 1);
            async { Err::<(), _>(Gateway::Down) }
        };
        let _ = if by_closure {
            time.run(retry_with(&policy, |_: &Gateway| false, f).into_future())
        } else {
            time.run(retry(&policy, f).into_future())
        };
        calls.get()
    };
    assert_eq!((count(false), count(true)), (4, 1));
}

/// The builder's defaults are the per-origin ones, and each option reaches the core (a rate
/// breaker trips at its own threshold, a consecutive one after its own count).
#[test]
fn the_breaker_builder_defaults_and_options() {
    let d = RateOptions::default();
    let built = CircuitBreaker::builder().config().unwrap();
    let positional = steadfast::web::BreakerConfig::rate(
        f64::from(d.window_size),
        d.failure_rate_threshold,
        Some(f64::from(d.minimum_calls)),
        d.open_duration_ms,
        None,
    )
    .unwrap();
    assert_eq!(built, positional);

    let time = VirtualTime::new(1);
    let fail = |b: &CircuitBreaker| {
        let r = time.run(b.execute(|| async { Err::<(), _>(Error::Operation(Gateway::Down)) }));
        assert!(r.unwrap().is_err());
    };
    let three = CircuitBreaker::builder()
        .consecutive(3)
        .clock(time.clock())
        .build()
        .unwrap();
    fail(&three);
    fail(&three);
    assert_eq!(three.state(), State::Closed);
    fail(&three);
    assert_eq!(three.state(), State::Open);
    assert_eq!(three.snapshot().kind, "consecutive");

    let rate = CircuitBreaker::builder()
        .window_size(4)
        .minimum_calls(2)
        .failure_rate_threshold(1.0)
        .clock(time.clock())
        .build()
        .unwrap();
    fail(&rate);
    assert_eq!(
        rate.state(),
        State::Closed,
        "one outcome is under minimum_calls"
    );
    fail(&rate);
    assert_eq!(rate.state(), State::Open);

    let e = CircuitBreaker::builder()
        .minimum_calls(30)
        .build()
        .unwrap_err();
    assert_eq!(e.code(), "INVALID_OPTION");
    assert!(e.to_string().starts_with("minimumCalls"), "{e}");
}

/// With `Counts::Transient` (the example's choice) a run of declined cards leaves the circuit
/// closed, while the same number of gateway failures opens it.
#[test]
fn a_breaker_counting_transient_failures_ignores_declines() {
    let time = VirtualTime::new(1);
    let breaker = |counts| {
        CircuitBreaker::builder()
            .counts(counts)
            .clock(time.clock())
            .build()
            .unwrap()
    };
    let run = |b: &CircuitBreaker, e: Gateway| {
        for _ in 0..RateOptions::default().window_size {
            let e = e.clone();
            let _ = time.run(b.execute(|| async move { Err::<(), _>(Error::Operation(e)) }));
        }
        b.state()
    };
    assert_eq!(
        run(&breaker(Counts::Transient), Gateway::Declined),
        State::Closed
    );
    assert_eq!(run(&breaker(Counts::Every), Gateway::Declined), State::Open);
    assert_eq!(run(&breaker(Counts::Transient), Gateway::Down), State::Open);
}

/// `fetch` and `send` compile natively and refuse without sending: a typed error, not a panic.
#[test]
fn fetch_and_send_off_wasm_are_a_typed_refusal() {
    use wasm_bindgen::JsCast;
    // Natively no JS can build a Request; a null handle stands in (nothing reads it).
    let request: web_sys::Request = wasm_bindgen::JsValue::NULL.unchecked_into();
    let time = VirtualTime::new(1);
    let options = FetchOptions::new().deadline_ms(1_000.0);
    let fetched = time.run(fetch(&request, &options)).unwrap();
    assert!(matches!(
        fetched,
        Err(Error::Operation(FetchFailure::Unsupported))
    ));
    let sent = time
        .run(send(&request, &Attempt::new(1, None), Some(5.0)))
        .unwrap();
    let f = sent.unwrap_err();
    assert!(matches!(f, FetchFailure::Unsupported));
    assert!(!f.is_transient(), "nothing to retry");
    assert_eq!(f.answer(), steadfast::core::history::Answer::NotSent);
    assert_eq!(f.to_string(), "no fetch on this platform (not wasm32)");
}

/// A network failure is judged by what it proves: a refusal Node names by code, or Deno names only
/// by its connect stage (`fetch` keeps that cause's message), was never sent; anything else may
/// have been processed. The messages are Deno 2's own (a closed port, and a reset after connecting).
#[test]
fn a_network_failure_is_not_sent_only_when_its_code_or_deno_connect_stage_proves_it() {
    use steadfast::core::history::Answer;
    let network = |message: &str, code: Option<&str>| FetchFailure::Network {
        message: message.into(),
        code: code.map(Into::into),
    };
    let refused = "error sending request for url (http://127.0.0.1:45678/): client error (Connect): tcp connect error: Connection refused (os error 111)";
    let reset = "error sending request for url (http://127.0.0.1:45678/): client error (SendRequest): connection closed before message completed";
    assert_eq!(network(refused, None).answer(), Answer::NotSent);
    assert_eq!(
        network("fetch failed", Some("ECONNREFUSED")).answer(),
        Answer::NotSent
    );
    assert_eq!(network(reset, None).answer(), Answer::NoAnswer);
    assert_eq!(network("fetch failed", None).answer(), Answer::NoAnswer);
    assert_eq!(
        network("fetch failed", Some("ECONNRESET")).answer(),
        Answer::NoAnswer
    );
    assert!(
        network(refused, None).is_transient(),
        "nothing was sent: safe to retry"
    );
}

/// The store's key index is the core's: keys freed by a decline, by reconciliation and by expiry
/// give their slots to new keys, and every key still reads its own record and result.
#[test]
fn the_store_keeps_keys_apart_through_slot_reuse() {
    let time = VirtualTime::new(1);
    let store = IdempotencyStore::<String>::with_limits(Some(1_000.0), Some(3.0))
        .unwrap()
        .clock(time.clock());
    let ok = |k: &str| {
        let v = format!("ch_{k}");
        time.run(store.run(k, || async move { Ok::<_, Error<Gateway>>(v) }))
            .unwrap()
    };
    let fail = |k: &str, e: Gateway| {
        time.run(store.run(k, || async move { Err::<String, _>(Error::Operation(e)) }))
            .unwrap()
    };
    assert_eq!(ok("a").unwrap(), "ch_a");
    assert_eq!(
        fail("b", Gateway::Down).unwrap_err().code(),
        Some("OUTCOME_UNKNOWN")
    );
    assert_eq!(
        fail("c", Gateway::Declined).unwrap_err(),
        Error::Operation(Gateway::Declined)
    );
    assert_eq!(store.len(), 2, "a decline frees its key");
    assert_eq!(ok("d").unwrap(), "ch_d");
    assert_eq!(
        fail("e", Gateway::Down).unwrap_err().code(),
        Some("STORE_FULL")
    );
    store.resolve("b", Resolution::Failed).unwrap();
    assert_eq!(
        fail("e", Gateway::Down).unwrap_err().code(),
        Some("OUTCOME_UNKNOWN")
    );
    assert_eq!(store.unknown_keys(), ["e"]);
    time.run(time.runtime().sleep(1_000.0)).unwrap();
    // "a" and "d" expired: their slots go to "f" and "g", and nobody reads another's result.
    assert_eq!(ok("f").unwrap(), "ch_f");
    assert_eq!(ok("g").unwrap(), "ch_g");
    assert_eq!(store.peek("a"), None);
    assert_eq!(
        store.peek("f"),
        Some(Record::Done {
            result: "ch_f".into()
        })
    );
    assert!(matches!(store.peek("e"), Some(Record::Unknown { .. })));
    assert_eq!(store.unknown_keys(), ["e"]);
    store.resolve("e", Resolution::Failed).unwrap();
    assert_eq!(ok("a").unwrap(), "ch_a", "an expired key runs again");
    assert_eq!(
        store.peek("g"),
        Some(Record::Done {
            result: "ch_g".into()
        })
    );
}

/// A retry nests inside a breaker call as the docs show it: the breaker records one outcome for
/// the whole retried call (three attempts, one failure on record, still closed with a threshold
/// of two).
#[test]
fn a_retry_nests_inside_execute() {
    let time = VirtualTime::new(5);
    let policy = RetryPolicy::builder()
        .max_attempts(3)
        .runtime(time.runtime())
        .build()
        .unwrap();
    let breaker = CircuitBreaker::builder()
        .consecutive(2)
        .clock(time.clock())
        .build()
        .unwrap();
    let calls = Rc::new(std::cell::Cell::new(0u32));
    let seen = Rc::clone(&calls);
    let f = move |_: Attempt| {
        seen.set(seen.get() + 1);
        async { Err::<(), _>(Gateway::Down) }
    };
    let r = time.run(breaker.execute(|| retry(&policy, f).into_future()));
    assert_eq!(r.unwrap(), Err(Error::Operation(Gateway::Down)));
    assert_eq!((calls.get(), breaker.state()), (3, State::Closed));
    assert!(breaker.holds_protection(), "one failure on record");
}

/// `Debug` reads as derived for every variant, and a core refusal prints its code and message.
#[test]
fn debug_prints_variants_and_core_refusals_readably() {
    let e: Error<Gateway> = Error::OutcomeUnknown {
        key: "k".into(),
        started_at_ms: 1.0,
        cause: Some(Box::new(Error::Operation(Gateway::Down))),
    };
    assert_eq!(
        format!("{e:?}"),
        r#"OutcomeUnknown { key: "k", started_at_ms: 1.0, cause: Some(Operation(Down)) }"#
    );
    let core = RetryPolicy::builder().max_attempts(0).build().unwrap_err();
    let e: Error<Gateway> = core.into();
    assert_eq!(format!("{e:?}"), format!("Core(INVALID_OPTION: {core})"));
    assert!(format!("{e:?}").contains("maxAttempts"), "{e:?}");
}
