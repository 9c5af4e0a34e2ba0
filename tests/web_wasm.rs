//! The async Rust API inside wasm, in Node 24 and headless Chromium (scripts/test-wasm-web.sh,
//! a step of `make test`): the seed's 14 behaviours on `WebRuntime` with real `setTimeout`
//! (tests/web/behaviours.rs, the same suite tests/web_native.rs runs on a virtual clock), and the
//! `fetch` rules against a real local HTTP server (tests/web/server.mjs), whose origin the script
//! passes at compile time in `STEADFAST_TEST_ORIGIN`.
#![cfg(all(feature = "web", target_arch = "wasm32"))]

#[path = "web/behaviours.rs"]
mod behaviours;

use std::cell::RefCell;
use std::future::IntoFuture;
use std::rc::Rc;

use js_sys::{Array, JSON};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;
use web_sys::{AbortController, Request, RequestInit, Response};

use steadfast::core::breaker::BreakerConfig;
use steadfast::web::{
    fetch, BreakerSnapshot, ChargeOutcome, CircuitBreaker, Clock, Dialect, Error, FetchFailure,
    FetchOptions, IdempotencyKey, Jitter, Record, RetryPolicy, Runtime, WebRuntime,
};

fn rt() -> Rc<dyn Runtime> {
    Rc::new(WebRuntime::new())
}

fn clock() -> Clock {
    Rc::new(js_sys::Date::now)
}

macro_rules! web_tests {
    ($($name:ident),* $(,)?) => {$(
        #[wasm_bindgen_test]
        async fn $name() {
            behaviours::$name(rt(), clock()).await;
        }
    )*};
}

web_tests!(
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

// ---- the real platform: setTimeout, AbortSignal ------------------------------------------------

/// The run is where the script says (node, window, worker): `WebRuntime` found `setTimeout`,
/// `AbortController` and `fetch` on that global object, not on `window`.
#[wasm_bindgen_test]
fn runs_on_the_global_object_the_script_asked_for() {
    let has = |name: &str| {
        js_sys::Reflect::get(&js_sys::global(), &name.into()).is_ok_and(|v| !v.is_undefined())
    };
    let Some(expected) = option_env!("STEADFAST_TEST_GLOBAL") else {
        panic!("STEADFAST_TEST_GLOBAL: run through scripts/test-wasm-web.sh");
    };
    let actual = if has("WorkerGlobalScope") && !has("window") {
        "worker"
    } else if has("window") {
        "window"
    } else if has("process") {
        "node"
    } else {
        "unknown"
    };
    assert_eq!(actual, expected);
}

#[wasm_bindgen_test]
async fn sleep_waits_on_the_real_clock() {
    let rt = rt();
    let t0 = js_sys::Date::now();
    rt.sleep(30.0).await;
    assert!(js_sys::Date::now() - t0 >= 29.0);
}

#[wasm_bindgen_test]
async fn an_abort_signal_stops_a_retry_mid_sleep() {
    let controller = AbortController::new().unwrap();
    let policy = RetryPolicy::builder()
        .max_attempts(10)
        .base_delay_ms(60_000.0)
        .max_delay_ms(60_000.0)
        .jitter(Jitter::None)
        .build()
        .unwrap();
    let attempt_signal = Rc::new(RefCell::new(None));
    let seen = Rc::clone(&attempt_signal);
    let c = controller.clone();
    let abort_soon = async move {
        rt().sleep(20.0).await;
        c.abort();
    };
    let (r, ()) = behaviours::join(
        steadfast::web::retry(&policy, |a| {
            *seen.borrow_mut() = a.signal.clone();
            async { Err::<(), _>(behaviours::GwError { status: Some(503) }) }
        })
        .signal(&controller.signal())
        .into_future(),
        abort_soon,
    )
    .await;
    assert_eq!(r.unwrap_err().code(), Some("ABORTED"));
    let s = attempt_signal
        .borrow()
        .clone()
        .expect("the attempt got a signal");
    assert!(s.aborted(), "the attempt's signal aborts with the call");
}

#[wasm_bindgen_test]
async fn idempotency_keys_are_uuid_v4() {
    let a = steadfast::web::new_idempotency_key().unwrap();
    let b = steadfast::web::new_idempotency_key().unwrap();
    assert_ne!(a, b);
    assert_eq!(a.len(), 36);
    assert_eq!(a.as_bytes()[14], b'4');
}

// ---- shapes shared with the JS package -----------------------------------------------------------

fn json(v: &JsValue) -> String {
    JSON::stringify(v).unwrap().as_string().unwrap()
}

/// The JSON the JS package writes for fixed states (checked against the built package by
/// tests/js/web-shapes.test.mjs).
fn shape(name: &str) -> String {
    let all = JSON::parse(include_str!("web/shapes.json")).unwrap();
    js_sys::Reflect::get(&all, &name.into())
        .unwrap()
        .as_string()
        .unwrap()
}

fn fixed_clock() -> Clock {
    Rc::new(|| 5000.0)
}

#[wasm_bindgen_test]
async fn breaker_snapshots_write_and_read_the_js_to_json_shape() {
    let fail =
        || async { Err::<(), _>(Error::Operation(behaviours::GwError { status: Some(503) })) };
    let ok = || async { Ok::<_, Error<behaviours::GwError>>(()) };
    let rate = CircuitBreaker::new(BreakerConfig::rate(4.0, 0.9, None, 1_000.0, None).unwrap())
        .clock(fixed_clock());
    rate.execute(ok).await.unwrap();
    let _ = rate.execute(fail).await;
    rate.execute(ok).await.unwrap();
    assert_eq!(
        json(&rate.snapshot().to_js().unwrap()),
        shape("breakerRate")
    );
    let cons = CircuitBreaker::new(BreakerConfig::consecutive(2.0, 1_000.0, None).unwrap())
        .clock(fixed_clock());
    let _ = cons.execute(fail).await;
    let _ = cons.execute(fail).await;
    assert_eq!(
        json(&cons.snapshot().to_js().unwrap()),
        shape("breakerConsecutiveOpen")
    );
    // What JS wrote restores here; a snapshot of the wrong kind or shape is refused.
    let fresh = CircuitBreaker::new(BreakerConfig::consecutive(2.0, 1_000.0, None).unwrap())
        .clock(fixed_clock());
    let from_js =
        BreakerSnapshot::from_js(JSON::parse(&shape("breakerConsecutiveOpen")).unwrap()).unwrap();
    fresh.restore(&from_js).unwrap();
    assert_eq!(fresh.state(), steadfast::web::State::Open);
    let rate_shape = BreakerSnapshot::from_js(JSON::parse(&shape("breakerRate")).unwrap()).unwrap();
    assert!(fresh.restore(&rate_shape).is_err());
    assert!(BreakerSnapshot::from_js(JsValue::from_str("nope")).is_err());
    assert_eq!(fresh.state(), steadfast::web::State::Open);
}

#[wasm_bindgen_test]
async fn store_records_write_and_read_the_js_peek_shape() {
    let store: steadfast::web::IdempotencyStore<String> =
        steadfast::web::IdempotencyStore::new().clock(fixed_clock());
    let running = store.run("in-flight", || async {
        rt().sleep(10.0).await;
        Ok::<_, Error<behaviours::GwError>>("late".to_string())
    });
    let check = async {
        let r = store.peek("in-flight").unwrap();
        assert_eq!(json(&r.to_js().unwrap()), shape("recordInFlight"));
    };
    let (done, ()) = behaviours::join(running, check).await;
    assert_eq!(done.unwrap(), "late");
    store
        .run("done", || async {
            Ok::<_, Error<behaviours::GwError>>("ch_1".to_string())
        })
        .await
        .unwrap();
    assert_eq!(
        json(&store.peek("done").unwrap().to_js().unwrap()),
        shape("recordDone")
    );
    // The error text is each shell's own rendering; the shape is the same.
    let _ = store
        .run("unknown", || async {
            Err::<String, _>(Error::Operation(behaviours::GwError { status: Some(503) }))
        })
        .await;
    let mine = store.peek("unknown").unwrap().to_js().unwrap();
    let keys =
        |v: &JsValue| json(&js_sys::Object::keys(v.unchecked_ref::<js_sys::Object>()).into());
    let theirs = JSON::parse(&shape("recordUnknown")).unwrap();
    assert_eq!(keys(&mine), keys(&theirs));
    let read: Record<String> = Record::from_js(theirs).unwrap();
    assert_eq!(
        read,
        Record::Unknown {
            error: "Error: HTTP 503".into(),
            started_at_ms: 5000.0,
            last_attempt_at_ms: Some(5000.0),
            attempts: None,
            settle_after_ms: None,
        }
    );
    assert_eq!(json(&read.to_js().unwrap()), shape("recordUnknown"));
}

#[wasm_bindgen_test]
fn charge_outcomes_write_and_read_the_js_checkout_shape() {
    let key = || "k".to_string();
    let cases = [
        (
            ChargeOutcome::Succeeded {
                reference: "ch_1".into(),
                key: key(),
            },
            "outcomeSucceeded",
        ),
        (
            ChargeOutcome::Declined {
                reason: "insufficient_funds".into(),
                key: key(),
            },
            "outcomeDeclined",
        ),
        (ChargeOutcome::Unknown { key: key() }, "outcomeUnknown"),
    ];
    for (outcome, name) in cases {
        assert_eq!(json(&outcome.to_js().unwrap()), shape(name));
        assert_eq!(
            ChargeOutcome::from_js(JSON::parse(&shape(name)).unwrap()).unwrap(),
            outcome
        );
    }
}

// ---- fetch against a real local server ---------------------------------------------------------

const ORIGIN: Option<&str> = option_env!("STEADFAST_TEST_ORIGIN");

fn origin() -> &'static str {
    ORIGIN.expect("STEADFAST_TEST_ORIGIN: run through scripts/test-wasm-web.sh")
}

async fn raw(method: &str, url: &str, body: Option<&str>) -> Response {
    let init = RequestInit::new();
    init.set_method(method);
    if let Some(b) = body {
        init.set_body(&JsValue::from_str(b));
    }
    let req = Request::new_with_str_and_init(url, &init).unwrap();
    let global = js_sys::global();
    let f: js_sys::Function = js_sys::Reflect::get(&global, &"fetch".into())
        .unwrap()
        .unchecked_into();
    let p: js_sys::Promise = f.call1(&global, &req).unwrap().unchecked_into();
    JsFuture::from(p).await.unwrap().unchecked_into()
}

async fn text(r: &Response) -> String {
    JsFuture::from(r.text().unwrap())
        .await
        .unwrap()
        .as_string()
        .unwrap()
}

/// A scenario on the server: its URL and a way to read what it received.
struct Scenario {
    id: String,
}

impl Scenario {
    async fn new(steps: &str) -> Self {
        let r = raw("POST", &format!("{}/scenario", origin()), Some(steps)).await;
        assert_eq!(r.status(), 200, "{}", text(&r).await);
        let v = JSON::parse(&text(&r).await).unwrap();
        let id = js_sys::Reflect::get(&v, &"id".into())
            .unwrap()
            .as_string()
            .unwrap();
        Self { id }
    }

    fn url(&self) -> String {
        format!("{}/s/{}", origin(), self.id)
    }

    fn request(&self, method: &str) -> Request {
        let init = RequestInit::new();
        init.set_method(method);
        if method != "GET" && method != "HEAD" {
            init.set_body(&JsValue::from_str("{\"amountCents\":4999}"));
        }
        Request::new_with_str_and_init(&self.url(), &init).unwrap()
    }

    /// (method, Idempotency-Key) of every request received.
    async fn log(&self) -> Vec<(String, Option<String>)> {
        let r = raw("GET", &format!("{}/log/{}", origin(), self.id), None).await;
        let arr: Array = JSON::parse(&text(&r).await).unwrap().unchecked_into();
        arr.iter()
            .map(|e| {
                let m = js_sys::Reflect::get(&e, &"method".into())
                    .unwrap()
                    .as_string()
                    .unwrap();
                let k = js_sys::Reflect::get(&e, &"key".into()).unwrap().as_string();
                (m, k)
            })
            .collect()
    }
}

/// Fast retries, no shared breaker or budget (each test owns its state).
fn options() -> FetchOptions {
    FetchOptions::new()
        .policy(
            RetryPolicy::builder()
                .max_attempts(4)
                .base_delay_ms(1.0)
                .max_delay_ms(5.0)
                .build()
                .unwrap(),
        )
        .no_breaker()
        .no_budget()
}

#[wasm_bindgen_test]
async fn get_is_retried_on_503_and_resolves_with_the_response() {
    let s = Scenario::new(r#"[{"status":503},{"status":503},{"status":200,"body":"ok"}]"#).await;
    let r = fetch(&s.request("GET"), &options()).await.unwrap();
    assert_eq!((r.status(), text(&r).await.as_str()), (200, "ok"));
    assert_eq!(s.log().await.len(), 3);
}

#[wasm_bindgen_test]
async fn retries_end_on_the_last_response_untouched() {
    let s = Scenario::new(r#"[{"status":503,"body":"still down"}]"#).await;
    let r = fetch(&s.request("GET"), &options()).await.unwrap();
    assert_eq!((r.status(), text(&r).await.as_str()), (503, "still down"));
    assert_eq!(s.log().await.len(), 4);
}

#[wasm_bindgen_test]
async fn safe_methods_are_retried_without_a_key() {
    for method in ["PUT", "DELETE", "QUERY"] {
        let s = Scenario::new(r#"[{"status":503},{"status":200}]"#).await;
        let r = fetch(&s.request(method), &options()).await.unwrap();
        assert_eq!(r.status(), 200, "{method}");
        assert_eq!(
            s.log().await,
            vec![(method.to_string(), None); 2],
            "{method}"
        );
    }
}

#[wasm_bindgen_test]
async fn the_defaults_work_with_the_shared_breaker_and_budget() {
    let s = Scenario::new(r#"[{"status":502},{"status":200,"body":"ok"}]"#).await;
    let r = fetch(&s.request("GET"), &FetchOptions::new())
        .await
        .unwrap();
    assert_eq!(text(&r).await, "ok");
    assert_eq!(s.log().await.len(), 2);
    // The origin's shared breaker judged the whole call (retries inside it): one success.
    let b = steadfast::web::origin_breaker(origin()).unwrap();
    assert_eq!(b.state(), steadfast::web::State::Closed);
    assert_eq!(b.snapshot().window.last(), Some(&0), "{:?}", b.snapshot());
}

#[wasm_bindgen_test]
async fn post_without_a_key_is_never_retried() {
    let s = Scenario::new(r#"[{"status":503},{"status":200}]"#).await;
    let r = fetch(&s.request("POST"), &options()).await.unwrap();
    assert_eq!(r.status(), 503);
    assert_eq!(s.log().await, vec![("POST".to_string(), None)]);
}

#[wasm_bindgen_test]
async fn keyed_post_is_retried_with_the_same_key_on_every_attempt() {
    let s = Scenario::new(r#"[{"status":503},{"status":502},{"status":201}]"#).await;
    let opts = options().idempotency_key(IdempotencyKey::Key("order-42".into()));
    let r = fetch(&s.request("POST"), &opts).await.unwrap();
    assert_eq!(r.status(), 201);
    let log = s.log().await;
    assert_eq!(log.len(), 3);
    assert!(
        log.iter()
            .all(|(m, k)| m == "POST" && k.as_deref() == Some("order-42")),
        "{log:?}"
    );
}

#[wasm_bindgen_test]
async fn an_auto_key_is_made_once_per_call() {
    let s = Scenario::new(r#"[{"status":500},{"status":200}]"#).await;
    let opts = options().idempotency_key(IdempotencyKey::Auto);
    fetch(&s.request("PATCH"), &opts).await.unwrap();
    let log = s.log().await;
    let k0 = log[0].1.clone().expect("a key");
    assert_eq!(k0.len(), 36);
    assert_eq!(log[1].1.as_deref(), Some(k0.as_str()));
}

#[wasm_bindgen_test]
async fn a_request_s_own_idempotency_key_header_counts() {
    let s = Scenario::new(r#"[{"status":503},{"status":200}]"#).await;
    let req = s.request("POST");
    req.headers().set("Idempotency-Key", "from-header").unwrap();
    assert_eq!(fetch(&req, &options()).await.unwrap().status(), 200);
    assert_eq!(s.log().await.len(), 2);
}

#[wasm_bindgen_test]
async fn permanent_statuses_are_not_retried() {
    for status in [400, 402, 404, 422] {
        let s = Scenario::new(&format!(r#"[{{"status":{status}}},{{"status":200}}]"#)).await;
        let r = fetch(&s.request("GET"), &options()).await.unwrap();
        assert_eq!(r.status(), status);
        assert_eq!(s.log().await.len(), 1, "{status}");
    }
}

#[wasm_bindgen_test]
async fn stripe_should_retry_wins_over_the_status() {
    let s = Scenario::new(
        r#"[{"status":503,"headers":{"stripe-should-retry":"false"}},{"status":200}]"#,
    )
    .await;
    assert_eq!(
        fetch(&s.request("GET"), &options()).await.unwrap().status(),
        503
    );
    assert_eq!(s.log().await.len(), 1);
    let s = Scenario::new(
        r#"[{"status":409,"headers":{"stripe-should-retry":"true"}},{"status":200}]"#,
    )
    .await;
    let opts = options().idempotency_key(IdempotencyKey::Key("k-409".into()));
    assert_eq!(
        fetch(&s.request("POST"), &opts).await.unwrap().status(),
        200
    );
    assert_eq!(s.log().await.len(), 2);
}

#[wasm_bindgen_test]
async fn retry_after_is_the_floor_of_the_delay() {
    let s = Scenario::new(r#"[{"status":429,"headers":{"retry-after":"1"}},{"status":200}]"#).await;
    let delays = Rc::new(RefCell::new(Vec::new()));
    let d = Rc::clone(&delays);
    let policy = RetryPolicy::builder()
        .max_attempts(2)
        .base_delay_ms(1.0)
        .max_delay_ms(5_000.0)
        .on_retry(move |i| d.borrow_mut().push(i.delay_ms))
        .build()
        .unwrap();
    let opts = FetchOptions::new().policy(policy).no_breaker().no_budget();
    assert_eq!(fetch(&s.request("GET"), &opts).await.unwrap().status(), 200);
    assert_eq!(*delays.borrow(), vec![1_000.0]);
}

#[wasm_bindgen_test]
async fn a_keyed_post_whose_connection_drops_is_outcome_unknown() {
    let s = Scenario::new(r#"[{"drop":true}]"#).await;
    let opts = options().idempotency_key(IdempotencyKey::Key("order-drop".into()));
    let e = fetch(&s.request("POST"), &opts).await.unwrap_err();
    match e {
        Error::OutcomeUnknown { key, cause, .. } => {
            assert_eq!(key, "order-drop");
            let cause = cause.expect("the network error that made it unknown");
            assert!(
                matches!(*cause, Error::Operation(FetchFailure::Network { .. })),
                "{cause:?}"
            );
        }
        other => panic!("expected OutcomeUnknown, got {other:?}"),
    }
    let log = s.log().await;
    assert!(log.len() >= 2, "a network error is retried: {log:?}");
    assert!(log.iter().all(|(_, k)| k.as_deref() == Some("order-drop")));
}

/// The whole history decides: a dropped attempt (it may have been processed), then a 404 or a
/// 401 or a 409 from whatever answers next — the keyed POST is still OutcomeUnknown, with that
/// last answer as its cause; never the final Response.
#[wasm_bindgen_test]
async fn a_keyed_post_dropped_then_refused_is_still_outcome_unknown() {
    for status in [404, 401, 409, 400] {
        let s = Scenario::new(&format!(r#"[{{"drop":true}},{{"status":{status}}}]"#)).await;
        let opts = options().idempotency_key(IdempotencyKey::Key("order-h".into()));
        match fetch(&s.request("POST"), &opts).await {
            Err(Error::OutcomeUnknown { cause, .. }) => {
                let cause = cause.expect("the last answer");
                assert!(
                    matches!(*cause, Error::Operation(FetchFailure::Status { status: s, .. }) if s == status),
                    "{status}: {cause:?}"
                );
            }
            other => panic!("{status}: expected OutcomeUnknown, got {other:?}"),
        }
        assert_eq!(
            s.log().await.len(),
            2,
            "{status}: not retried past the refusal"
        );
    }
    // Refused alone (nothing before it may have been processed): the Response, as fetch gives it.
    let s = Scenario::new(r#"[{"status":404}]"#).await;
    let opts = options().idempotency_key(IdempotencyKey::Key("order-r".into()));
    assert_eq!(
        fetch(&s.request("POST"), &opts).await.unwrap().status(),
        404
    );
}

/// Deno's `fetch` names no code for a refused connection: it rejects with `TypeError("fetch
/// failed")` whose cause's message names the connect stage (the words below are Deno 2's, against a
/// closed port). Nothing was sent, so a keyed POST is retried and its key stays free: the refusal
/// itself comes back, not an unknown outcome. `fetch` is replaced for this test only.
#[wasm_bindgen_test]
async fn a_keyed_post_deno_refused_is_not_an_unknown_outcome() {
    let global = js_sys::global();
    let real = js_sys::Reflect::get(&global, &"fetch".into()).unwrap();
    let refused = "error sending request for url (http://127.0.0.1:45678/): client error (Connect): tcp connect error: Connection refused (os error 111)";
    let stub = js_sys::Function::new_with_args(
        "message",
        "globalThis.__steadfastStubCalls = 0; return () => { globalThis.__steadfastStubCalls += 1; \
         return Promise.reject(new TypeError('fetch failed', { cause: new Error(message) })); };",
    )
    .call1(&JsValue::NULL, &refused.into())
    .unwrap();
    js_sys::Reflect::set(&global, &"fetch".into(), &stub).unwrap();
    let opts = options().idempotency_key(IdempotencyKey::Key("order-deno-refused".into()));
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_body(&JsValue::from_str("{\"amountCents\":4999}"));
    let request =
        Request::new_with_str_and_init("http://127.0.0.1:45678/v1/charges", &init).unwrap();
    let e = fetch(&request, &opts).await;
    js_sys::Reflect::set(&global, &"fetch".into(), &real).unwrap();
    let calls = js_sys::Reflect::get(&global, &"__steadfastStubCalls".into()).unwrap();
    match e {
        Err(Error::Operation(FetchFailure::Network { message, code })) => {
            assert_eq!(message, refused);
            assert_eq!(code, None);
        }
        other => panic!("expected the refusal, got {other:?}"),
    }
    assert_eq!(calls.as_f64(), Some(4.0), "retried: nothing was sent");
}

#[wasm_bindgen_test]
async fn a_get_whose_connection_drops_is_a_network_error() {
    let s = Scenario::new(r#"[{"drop":true}]"#).await;
    let e = fetch(&s.request("GET"), &options()).await.unwrap_err();
    assert!(
        matches!(e, Error::Operation(FetchFailure::Network { .. })),
        "{e:?}"
    );
}

#[wasm_bindgen_test]
async fn a_slow_attempt_times_out_and_the_next_one_succeeds() {
    let s = Scenario::new(
        r#"[{"status":200,"delayMs":2000,"body":"late"},{"status":200,"body":"fast"}]"#,
    )
    .await;
    let opts = options().attempt_timeout_ms(100.0);
    let r = fetch(&s.request("GET"), &opts).await.unwrap();
    assert_eq!(text(&r).await, "fast");
}

#[wasm_bindgen_test]
async fn the_deadline_gives_deadline_exceeded() {
    let s = Scenario::new(r#"[{"status":503,"delayMs":30}]"#).await;
    let policy = RetryPolicy::builder()
        .max_attempts(100)
        .base_delay_ms(20.0)
        .max_delay_ms(20.0)
        .jitter(Jitter::None)
        .build()
        .unwrap();
    let opts = FetchOptions::new()
        .policy(policy)
        .no_breaker()
        .no_budget()
        .deadline_ms(150.0);
    let e = fetch(&s.request("GET"), &opts).await.unwrap_err();
    assert_eq!(e.code(), Some("DEADLINE_EXCEEDED"), "{e:?}");
}

#[wasm_bindgen_test]
async fn the_caller_s_abort_stops_the_request_in_flight() {
    let s = Scenario::new(r#"[{"status":200,"delayMs":5000}]"#).await;
    let controller = AbortController::new().unwrap();
    let opts = options().signal(&controller.signal());
    let c = controller.clone();
    let t0 = js_sys::Date::now();
    let (r, ()) = behaviours::join(fetch(&s.request("GET"), &opts), async move {
        rt().sleep(30.0).await;
        c.abort();
    })
    .await;
    assert_eq!(r.unwrap_err().code(), Some("ABORTED"));
    assert!(
        js_sys::Date::now() - t0 < 4_000.0,
        "did not wait for the slow response"
    );
}

#[wasm_bindgen_test]
async fn an_open_breaker_refuses_without_a_request() {
    let s = Scenario::new(r#"[{"status":503}]"#).await;
    let breaker = CircuitBreaker::new(BreakerConfig::consecutive(1.0, 60_000.0, None).unwrap());
    let opts = options().breaker(breaker.clone());
    assert_eq!(fetch(&s.request("GET"), &opts).await.unwrap().status(), 503);
    let sent = s.log().await.len();
    let e = fetch(&s.request("GET"), &opts).await.unwrap_err();
    assert_eq!(e.code(), Some("CIRCUIT_OPEN"));
    assert_eq!(s.log().await.len(), sent);
}

#[wasm_bindgen_test]
async fn bad_options_are_typed_errors_not_panics() {
    let s = Scenario::new(r#"[{"status":200}]"#).await;
    let e = fetch(&s.request("GET"), &options().attempt_timeout_ms(f64::NAN))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("INVALID_OPTION"));
    let e = fetch(
        &s.request("POST"),
        &options().idempotency_key(IdempotencyKey::Key("é".into())),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), Some("INVALID_KEY"));
    assert!(s.log().await.is_empty());
}

/// A gateway dialect: the key in its header and syntax (the IETF draft's sf-string; Checkout.com's
/// own header), as JS's resilientFetch sends it.
#[wasm_bindgen_test]
async fn dialect_puts_the_key_in_its_header_and_syntax() {
    for (name, want) in [("ietf", "\"k 1\""), ("checkout", "k 1"), ("stripe", "k 1")] {
        let s = Scenario::new(r#"[{"status":201}]"#).await;
        let opts = options()
            .idempotency_key(IdempotencyKey::Key("k 1".into()))
            .dialect(Dialect::builtin(name).unwrap());
        assert_eq!(
            fetch(&s.request("POST"), &opts).await.unwrap().status(),
            201
        );
        assert_eq!(
            s.log().await,
            vec![("POST".to_string(), Some(want.to_string()))],
            "{name}"
        );
    }
    let long = options()
        .idempotency_key(IdempotencyKey::Key("k".repeat(65)))
        .dialect(Dialect::builtin("adyen").unwrap());
    let s = Scenario::new(r#"[{"status":201}]"#).await;
    assert!(matches!(
        fetch(&s.request("POST"), &long).await,
        Err(Error::InvalidKey { .. })
    ));
    assert!(s.log().await.is_empty(), "nothing sent");
}

/// A Dialect built field by field skips `Dialect::custom`'s checks: a key header fetch would drop
/// (`Host`) is still refused before anything is sent.
#[wasm_bindgen_test]
async fn a_dialect_built_by_hand_with_a_header_fetch_drops_is_refused() {
    let s = Scenario::new(r#"[{"status":201}]"#).await;
    let host = Dialect {
        header: "Host".into(),
        ..Dialect::builtin("stripe").unwrap()
    };
    let opts = options()
        .idempotency_key(IdempotencyKey::Key("k-host".into()))
        .dialect(host);
    assert!(matches!(
        fetch(&s.request("POST"), &opts).await,
        Err(Error::InvalidOption {
            option: "dialect.header",
            ..
        })
    ));
    assert!(s.log().await.is_empty(), "nothing sent");
}

/// Checkout.com answers 429 for a key in progress: with its dialect that holds the key (unknown,
/// whatever comes next); without, a 429 is "throttled before processing" and the 404 stands.
#[wasm_bindgen_test]
async fn dialect_in_progress_answer_may_have_been_processed() {
    let steps = r#"[{"status":429,"headers":{"retry-after":"0"}},{"status":404}]"#;
    let s = Scenario::new(steps).await;
    let opts = options().idempotency_key(IdempotencyKey::Key("k-busy".into()));
    let cko = opts.clone().dialect(Dialect::builtin("checkout").unwrap());
    assert!(matches!(
        fetch(&s.request("POST"), &cko).await,
        Err(Error::OutcomeUnknown { .. })
    ));
    let s = Scenario::new(steps).await;
    assert_eq!(
        fetch(&s.request("POST"), &opts).await.unwrap().status(),
        404
    );
}

/// A replayed error is the gateway's stored answer for the key: never retried.
#[wasm_bindgen_test]
async fn dialect_replayed_error_is_final() {
    let steps = r#"[{"status":500,"headers":{"idempotent-replayed":"true"}}]"#;
    let s = Scenario::new(steps).await;
    let opts = options().idempotency_key(IdempotencyKey::Key("k-500".into()));
    let stripe = opts.clone().dialect(Dialect::builtin("stripe").unwrap());
    assert!(matches!(
        fetch(&s.request("POST"), &stripe).await,
        Err(Error::OutcomeUnknown { .. })
    ));
    assert_eq!(s.log().await.len(), 1);
    let s = Scenario::new(steps).await;
    let _ = fetch(&s.request("POST"), &opts).await;
    assert_eq!(s.log().await.len(), 4, "without the dialect it is retried");
}

/// Past the dialect's retention window an unknown key is not re-sent: FetchFailure::KeyExpired.
#[wasm_bindgen_test]
async fn dialect_no_re_send_past_the_retention_window() {
    let s = Scenario::new(r#"[{"status":503,"delayMs":60}]"#).await;
    let base = Dialect::builtin("checkout").unwrap();
    let short = Dialect::custom(Dialect {
        retention_ms: 30.0,
        ..base
    })
    .unwrap();
    let opts = options()
        .idempotency_key(IdempotencyKey::Key("k-old".into()))
        .dialect(short);
    match fetch(&s.request("POST"), &opts).await {
        Err(Error::Operation(FetchFailure::KeyExpired { retention_ms, .. })) => {
            assert_eq!(retention_ms, 30.0)
        }
        other => panic!("expected KeyExpired, got {other:?}"),
    }
    assert_eq!(s.log().await.len(), 1, "nothing re-sent");
}

/// On wasm32 the shell writes canonical JSON's numbers with JavaScript's own `String(n)` (so the
/// module carries no float formatting of core's): a charge's fingerprint is still the core's
/// canonical text, number for number, at the edges of the plain and exponent forms too.
#[wasm_bindgen_test]
fn a_fingerprint_s_numbers_are_the_core_s_when_javascript_writes_them() {
    use steadfast::core::canonical::canonical_object;
    use steadfast::web::{Charge, Json};
    let numbers = [
        0.0,
        -0.0,
        1.0,
        4999.0,
        -12.5,
        0.1,
        0.1 + 0.2,
        0.000001,
        1e-7,
        1.5e-7,
        2.5e-5,
        123456789012345680000.0,
        1e21,
        -1.25e300,
        9007199254740991.0,
        5e-324,
        f64::MAX,
    ];
    let list = Json::Array(numbers.iter().map(|&n| Json::Number(n)).collect());
    let charge = Charge::new("k-numbers", 4999, "usd")
        .unwrap()
        .field("n", list.clone())
        .unwrap();
    let amount = Json::Number(4999.0);
    let currency = Json::String("usd".into());
    let want = canonical_object(
        [
            ("amountCents", &amount),
            ("currency", &currency),
            ("n", &list),
        ],
        |_| false,
    )
    .unwrap();
    assert_eq!(charge.fingerprint(), want);
    assert!(want.contains("[0,0,1,4999,-12.5,0.1,0.30000000000000004,0.000001,1e-7,1.5e-7,0.000025,123456789012345680000,1e+21,-1.25e+300,9007199254740991,5e-324,1.7976931348623157e+308]"), "{want}");
}

/// Error text on wasm32 writes milliseconds as JavaScript does: `10000`, `0.5`, never `10000.0`.
#[wasm_bindgen_test]
fn error_text_writes_milliseconds_as_javascript_does() {
    let timeout = FetchFailure::AttemptTimeout { ms: 10_000.0 };
    assert_eq!(timeout.to_string(), "attempt timed out after 10000 ms");
    assert_eq!(format!("{timeout:?}"), "AttemptTimeout { ms: 10000 }");
    let half = FetchFailure::AttemptTimeout { ms: 0.5 };
    assert_eq!(half.to_string(), "attempt timed out after 0.5 ms");
    let e: Error<FetchFailure> = Error::OutcomeUnknown {
        key: "k".into(),
        started_at_ms: 1.0,
        cause: None,
    };
    assert_eq!(
        format!("{e:?}"),
        r#"OutcomeUnknown { key: "k", started_at_ms: 1, cause: None }"#
    );
}

/// The layers around `fetch` — a store run, a `charge_customer` gateway — hear each attempt as
/// the call's dialect reads it: Checkout.com's 429 is "still processing this key", so the re-send
/// refused past the retention window (which itself sent nothing) keeps the key parked.
#[wasm_bindgen_test]
async fn the_layers_around_fetch_hear_each_attempt_as_the_dialect_reads_it() {
    use steadfast::web::{charge_customer, Charge, ChargeDeps, IdempotencyStore};
    let steps = r#"[{"status":429,"headers":{"retry-after":"0"},"delayMs":60}]"#;
    let short = Dialect::custom(Dialect {
        retention_ms: 30.0,
        ..Dialect::builtin("checkout").unwrap()
    })
    .unwrap();
    for layering in ["store.run(fetch)", "charge_customer(gateway: fetch)"] {
        let s = Scenario::new(steps).await;
        let key = format!("k-cko-{}", layering.len());
        let opts = options()
            .idempotency_key(IdempotencyKey::Key(key.clone()))
            .dialect(short.clone());
        let store = IdempotencyStore::<u16>::new();
        let send = || async { fetch(&s.request("POST"), &opts).await.map(|r| r.status()) };
        let expired = |c: &Error<FetchFailure>| {
            matches!(c, Error::Operation(FetchFailure::KeyExpired { .. }))
        };
        // (its code, whether its cause is the refused re-send)
        let (code, cause) = if layering == "store.run(fetch)" {
            match store.run(&key, send).await {
                Err(Error::OutcomeUnknown { cause: Some(c), .. }) => {
                    (Some("OUTCOME_UNKNOWN"), expired(&c))
                }
                other => (other.err().and_then(|e| e.code()), false),
            }
        } else {
            let deps = ChargeDeps {
                store: store.clone(),
                breaker: CircuitBreaker::builder().build().unwrap(),
                policy: RetryPolicy::builder().max_attempts(1).build().unwrap(),
            };
            let charge = Charge::new(&key, 4999, "eur").unwrap();
            match charge_customer(&charge, &deps, |_, _| send()).await {
                Err(Error::OutcomeUnknown { cause: Some(c), .. }) => {
                    (Some("OUTCOME_UNKNOWN"), c.operation().is_some_and(expired))
                }
                other => (other.err().and_then(|e| e.code()), false),
            }
        };
        assert_eq!(code, Some("OUTCOME_UNKNOWN"), "{layering}");
        assert!(cause, "{layering}: the refused re-send is the cause");
        assert!(
            matches!(store.peek(&key), Some(Record::Unknown { .. })),
            "{layering}: the key the gateway holds stays parked"
        );
        assert_eq!(s.log().await.len(), 1, "{layering}: nothing re-sent");
    }
}
