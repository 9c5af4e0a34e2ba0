//! The seed's 14 behaviours (seed 000: "14 tests, no network, no flaky timers"), written once
//! against the async API and run twice: natively on `VirtualTime` (tests/web_native.rs) and inside
//! wasm on `WebRuntime` with real `setTimeout` (tests/web_wasm.rs, Node and headless Chromium).
//! Each takes the runtime and its clock; time passes only through `rt.sleep`.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::future::{poll_fn, Future};
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

use steadfast::core::breaker::BreakerConfig;
use steadfast::core::classify::is_transient_status;
use steadfast::core::history::Answer;
use steadfast::web::{
    charge_customer, retry, Charge, ChargeDeps, CircuitBreaker, Classify, Clock, Counts, Error,
    IdempotencyStore, Record, RetryPolicy, Runtime, State,
};

/// Open duration of the breakers here: long enough to observe "open", short for real timers.
pub const OPEN_MS: f64 = 40.0;

#[derive(Debug, Clone, PartialEq)]
pub struct GwError {
    pub status: Option<u16>,
}

impl Classify for GwError {
    fn is_transient(&self) -> bool {
        // No status: the request timed out (the money may have moved).
        self.status
            .is_none_or(|s| is_transient_status(f64::from(s)))
    }

    fn answer(&self) -> Answer {
        self.status.map_or(Answer::NoAnswer, Answer::Status)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fault {
    Status(u16),
    /// Debit, then never answer in time.
    DebitThenTimeout,
    /// Answer after this many ms.
    Slow(f64),
}

/// An in-memory payment gateway: records every attempt's key and debits once per success.
#[derive(Clone, Default)]
pub struct Gateway {
    pub attempts: Rc<RefCell<Vec<String>>>,
    pub debits: Rc<RefCell<HashMap<String, u32>>>,
    faults: Rc<RefCell<VecDeque<Fault>>>,
}

impl Gateway {
    pub fn fail_next(&self, fault: Fault, times: usize) {
        for _ in 0..times {
            self.faults.borrow_mut().push_back(fault);
        }
    }

    pub fn debits_total(&self) -> u32 {
        self.debits.borrow().values().sum()
    }

    pub fn charge(
        &self,
        rt: &Rc<dyn Runtime>,
        charge: &Charge,
    ) -> impl Future<Output = Result<String, GwError>> + 'static {
        let (gw, rt, key) = (self.clone(), Rc::clone(rt), charge.idempotency_key.clone());
        async move {
            gw.attempts.borrow_mut().push(key.clone());
            let fault = gw.faults.borrow_mut().pop_front();
            match fault {
                Some(Fault::Status(s)) => return Err(GwError { status: Some(s) }),
                Some(Fault::DebitThenTimeout) => {
                    *gw.debits.borrow_mut().entry(key).or_default() += 1;
                    return Err(GwError { status: None });
                }
                Some(Fault::Slow(ms)) => rt.sleep(ms).await,
                None => {}
            }
            *gw.debits.borrow_mut().entry(key.clone()).or_default() += 1;
            Ok(format!("ch_{key}"))
        }
    }
}

/// Both futures, concurrently.
pub async fn join<A, B>(a: impl Future<Output = A>, b: impl Future<Output = B>) -> (A, B) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut ra, mut rb) = (None, None);
    poll_fn(move |cx| {
        if ra.is_none() {
            if let Poll::Ready(v) = a.as_mut().poll(cx) {
                ra = Some(v);
            }
        }
        if rb.is_none() {
            if let Poll::Ready(v) = b.as_mut().poll(cx) {
                rb = Some(v);
            }
        }
        if ra.is_some() && rb.is_some() {
            if let (Some(x), Some(y)) = (ra.take(), rb.take()) {
                return Poll::Ready((x, y));
            }
        }
        Poll::Pending
    })
    .await
}

fn rate_breaker(clock: &Clock) -> CircuitBreaker {
    // The seed's breaker: 50% of the last 10 calls, judged on a full window.
    CircuitBreaker::new(BreakerConfig::rate(10.0, 0.5, None, OPEN_MS, None).unwrap())
        .clock(Rc::clone(clock))
}

fn policy(rt: &Rc<dyn Runtime>, attempts: u32) -> RetryPolicy {
    RetryPolicy::builder()
        .max_attempts(attempts)
        .base_delay_ms(2.0)
        .max_delay_ms(5.0)
        .runtime(Rc::clone(rt))
        .build()
        .unwrap()
}

async fn call(b: &CircuitBreaker, ok: bool) -> Result<(), Error<GwError>> {
    b.execute(|| async move {
        if ok {
            Ok(())
        } else {
            Err(Error::Operation(GwError { status: Some(503) }))
        }
    })
    .await
}

async fn trip(b: &CircuitBreaker) {
    for _ in 0..10 {
        let _ = call(b, false).await;
    }
    assert_eq!(b.state(), State::Open);
}

pub async fn stays_closed_below_threshold(_rt: Rc<dyn Runtime>, clock: Clock) {
    let b = rate_breaker(&clock);
    for i in 0..20 {
        // 4 failures in every 10: 40% < 50%.
        let _ = call(&b, i % 10 >= 4).await;
    }
    assert_eq!(b.state(), State::Closed);
}

pub async fn trips_open_when_the_rate_crosses(_rt: Rc<dyn Runtime>, clock: Clock) {
    let b = rate_breaker(&clock);
    for i in 0..10 {
        let _ = call(&b, i % 2 == 0).await;
    }
    assert_eq!(b.state(), State::Open);
}

pub async fn open_circuit_fails_fast(_rt: Rc<dyn Runtime>, clock: Clock) {
    let b = rate_breaker(&clock);
    trip(&b).await;
    let mut called = false;
    let r: Result<(), Error<GwError>> = b
        .execute(|| {
            called = true;
            async { Ok(()) }
        })
        .await;
    assert!(!called, "the network must not be touched");
    match r {
        Err(Error::CircuitOpen { retry_after_ms }) => {
            assert!(retry_after_ms > 0.0 && retry_after_ms <= OPEN_MS)
        }
        other => panic!("expected CircuitOpen, got {other:?}"),
    }
}

pub async fn half_open_probe_success_closes(rt: Rc<dyn Runtime>, clock: Clock) {
    let b = rate_breaker(&clock);
    trip(&b).await;
    rt.sleep(OPEN_MS + 5.0).await;
    assert_eq!(b.state(), State::HalfOpen);
    assert!(call(&b, true).await.is_ok());
    assert_eq!(b.state(), State::Closed);
}

pub async fn failed_probe_reopens(rt: Rc<dyn Runtime>, clock: Clock) {
    let b = rate_breaker(&clock);
    trip(&b).await;
    rt.sleep(OPEN_MS + 5.0).await;
    assert!(call(&b, false).await.is_err());
    assert_eq!(b.state(), State::Open);
    assert_eq!(
        call(&b, true).await.unwrap_err().code(),
        Some("CIRCUIT_OPEN")
    );
}

pub async fn fallback_instead_of_throwing(_rt: Rc<dyn Runtime>, clock: Clock) {
    let b = rate_breaker(&clock);
    trip(&b).await;
    let r: Result<&str, Error<GwError>> = b
        .execute_or(|| async { Ok("primary") }, || async { Ok("secondary") })
        .await;
    assert_eq!(r.unwrap(), "secondary");
}

fn deps(rt: &Rc<dyn Runtime>, clock: &Clock, attempts: u32) -> ChargeDeps<String> {
    ChargeDeps {
        store: IdempotencyStore::new().clock(Rc::clone(clock)),
        breaker: rate_breaker(clock),
        policy: policy(rt, attempts),
    }
}

async fn pay(
    rt: &Rc<dyn Runtime>,
    gw: &Gateway,
    deps: &ChargeDeps<String>,
    charge: &Charge,
) -> Result<String, Error<GwError>> {
    charge_customer(charge, deps, |c, _| gw.charge(rt, c)).await
}

pub async fn same_key_charges_once_and_replays(rt: Rc<dyn Runtime>, clock: Clock) {
    let (gw, d) = (Gateway::default(), deps(&rt, &clock, 3));
    let c = Charge::new("order-1", 4999, "usd").unwrap();
    let first = pay(&rt, &gw, &d, &c).await.unwrap();
    let second = pay(&rt, &gw, &d, &c).await.unwrap();
    assert_eq!(first, second);
    assert_eq!(gw.attempts.borrow().len(), 1);
    assert_eq!(gw.debits_total(), 1);
}

pub async fn concurrent_duplicate_is_rejected(rt: Rc<dyn Runtime>, clock: Clock) {
    let (gw, d) = (Gateway::default(), deps(&rt, &clock, 3));
    gw.fail_next(Fault::Slow(20.0), 1);
    let c = Charge::new("order-2", 4999, "usd").unwrap();
    let (a, b) = join(pay(&rt, &gw, &d, &c), pay(&rt, &gw, &d, &c)).await;
    assert_eq!(a.unwrap(), "ch_order-2");
    assert_eq!(b.unwrap_err().code(), Some("DUPLICATE_IN_FLIGHT"));
    assert_eq!(gw.debits_total(), 1);
}

pub async fn timeout_leaves_the_key_unknown(rt: Rc<dyn Runtime>, clock: Clock) {
    let (gw, d) = (Gateway::default(), deps(&rt, &clock, 1));
    gw.fail_next(Fault::DebitThenTimeout, 1);
    let c = Charge::new("order-3", 4999, "usd").unwrap();
    assert!(pay(&rt, &gw, &d, &c).await.is_err());
    assert!(matches!(
        d.store.peek("order-3"),
        Some(Record::Unknown { .. })
    ));
    assert_eq!(d.store.unknown_keys(), vec!["order-3".to_string()]);
}

pub async fn definitive_rejection_frees_the_key(rt: Rc<dyn Runtime>, clock: Clock) {
    let (gw, d) = (Gateway::default(), deps(&rt, &clock, 3));
    gw.fail_next(Fault::Status(402), 1);
    let c = Charge::new("order-4", 4999, "usd").unwrap();
    let e = pay(&rt, &gw, &d, &c).await.unwrap_err();
    assert_eq!(e.operation(), Some(&GwError { status: Some(402) }));
    assert_eq!(gw.attempts.borrow().len(), 1, "a decline is not retried");
    assert!(d.store.peek("order-4").is_none());
    assert_eq!(pay(&rt, &gw, &d, &c).await.unwrap(), "ch_order-4");
    assert_eq!(gw.debits_total(), 1);
}

pub async fn transient_blip_absorbed_same_key(rt: Rc<dyn Runtime>, clock: Clock) {
    let (gw, d) = (Gateway::default(), deps(&rt, &clock, 4));
    gw.fail_next(Fault::Status(503), 2);
    let c = Charge::new("order-5", 4999, "usd").unwrap();
    assert_eq!(pay(&rt, &gw, &d, &c).await.unwrap(), "ch_order-5");
    let attempts = gw.attempts.borrow().clone();
    assert_eq!(attempts, vec!["order-5"; 3]);
    assert_eq!(gw.debits_total(), 1);
}

pub async fn repeated_request_is_replayed(rt: Rc<dyn Runtime>, clock: Clock) {
    let (gw, d) = (Gateway::default(), deps(&rt, &clock, 4));
    gw.fail_next(Fault::Status(503), 1);
    let c = Charge::new("order-6", 4999, "usd").unwrap();
    let first = pay(&rt, &gw, &d, &c).await.unwrap();
    let attempts = gw.attempts.borrow().len();
    assert_eq!(pay(&rt, &gw, &d, &c).await.unwrap(), first);
    assert_eq!(
        gw.attempts.borrow().len(),
        attempts,
        "replayed from the store"
    );
    // The same key for another amount is refused, not replayed.
    let other = Charge::new("order-6", 100, "usd").unwrap();
    assert_eq!(
        pay(&rt, &gw, &d, &other).await.unwrap_err().code(),
        Some("KEY_REUSED")
    );
    assert_eq!(gw.debits_total(), 1);
}

/// The key binds the whole charge, as in JS: another customer, order or cart under the same key is
/// refused; a volatile field (a per-attempt nonce) changes nothing and replays.
pub async fn a_key_binds_customer_order_and_fields(rt: Rc<dyn Runtime>, clock: Clock) {
    let (gw, d) = (Gateway::default(), deps(&rt, &clock, 1));
    let c = Charge::new("order-9", 4999, "usd")
        .unwrap()
        .with_customer("cus_1")
        .with_order("ord_1")
        .volatile_field("sdkNonce", "n-1")
        .unwrap();
    let first = pay(&rt, &gw, &d, &c).await.unwrap();
    let others = [
        c.clone().with_customer("cus_2"),
        c.clone().with_order("ord_2"),
        c.clone().field("cart", "B-2").unwrap(),
    ];
    for other in &others {
        assert_eq!(
            pay(&rt, &gw, &d, other).await.unwrap_err().code(),
            Some("KEY_REUSED")
        );
    }
    let mut retried = Charge::new("order-9", 4999, "usd")
        .unwrap()
        .volatile_field("sdkNonce", "n-2")
        .unwrap();
    retried.customer = Some("cus_1".into());
    retried.order = Some("ord_1".into());
    assert_eq!(pay(&rt, &gw, &d, &retried).await.unwrap(), first);
    assert_eq!(gw.debits_total(), 1);
    assert_eq!(
        c.clone().field("currency", "eur").unwrap_err().code(),
        Some("INVALID_OPTION")
    );
    assert!(c.field("tax", f64::NAN).is_err());
}

pub async fn unresolved_timeout_blocks_second_attempt(rt: Rc<dyn Runtime>, clock: Clock) {
    let (gw, d) = (Gateway::default(), deps(&rt, &clock, 1));
    gw.fail_next(Fault::DebitThenTimeout, 1);
    let c = Charge::new("order-7", 4999, "usd").unwrap();
    assert!(pay(&rt, &gw, &d, &c).await.is_err());
    let e = pay(&rt, &gw, &d, &c).await.unwrap_err();
    assert_eq!(e.code(), Some("OUTCOME_UNKNOWN"));
    assert_eq!(gw.attempts.borrow().len(), 1, "no blind retry");
    assert_eq!(gw.debits_total(), 1);
    // Reconciliation settles it; then the result is replayed.
    d.store
        .resolve(
            "order-7",
            steadfast::web::Resolution::Done("ch_order-7".into()),
        )
        .unwrap();
    assert_eq!(pay(&rt, &gw, &d, &c).await.unwrap(), "ch_order-7");
}

pub async fn breaker_stops_new_keys_when_dead(rt: Rc<dyn Runtime>, clock: Clock) {
    let (gw, d) = (Gateway::default(), deps(&rt, &clock, 1));
    gw.fail_next(Fault::Status(503), 10);
    for i in 0..10 {
        let c = Charge::new(&format!("dead-{i}"), 100, "usd").unwrap();
        let _ = pay(&rt, &gw, &d, &c).await;
    }
    assert_eq!(d.breaker.state(), State::Open);
    let before = gw.attempts.borrow().len();
    let c = Charge::new("new-key", 100, "usd").unwrap();
    assert_eq!(
        pay(&rt, &gw, &d, &c).await.unwrap_err().code(),
        Some("CIRCUIT_OPEN")
    );
    assert_eq!(
        gw.attempts.borrow().len(),
        before,
        "the gateway was not called"
    );
    // Nothing was sent: the key is free, not unknown.
    assert!(d.store.peek("new-key").is_none());
}

/// Retry: the deadline counts sleeps, and the attempt that was running is reported.
pub async fn deadline_is_enforced(rt: Rc<dyn Runtime>, _clock: Clock) {
    let p = RetryPolicy::builder()
        .max_attempts(100)
        .base_delay_ms(10.0)
        .max_delay_ms(10.0)
        .jitter(steadfast::web::Jitter::None)
        .max_elapsed_ms(35.0)
        .runtime(Rc::clone(&rt))
        .build()
        .unwrap();
    let r: Result<(), _> =
        steadfast::web::retry(&p, |_| async { Err(GwError { status: Some(503) }) }).await;
    match r {
        Err(Error::DeadlineExceeded {
            max_elapsed_ms,
            attempt,
            last_error,
        }) => {
            assert_eq!(max_elapsed_ms, 35.0);
            assert!((3..=4).contains(&attempt), "attempt {attempt}");
            assert_eq!(last_error, Some(GwError { status: Some(503) }));
        }
        other => panic!("expected DeadlineExceeded, got {other:?}"),
    }
}

/// Retry: the budget refuses retries once spent.
pub async fn budget_refuses_when_spent(rt: Rc<dyn Runtime>, clock: Clock) {
    let budget = steadfast::web::RetryBudget::token_bucket(1.0, 0.0)
        .unwrap()
        .clock(clock);
    let p = RetryPolicy::builder()
        .max_attempts(5)
        .base_delay_ms(1.0)
        .budget(budget)
        .runtime(Rc::clone(&rt))
        .build()
        .unwrap();
    let calls = Rc::new(RefCell::new(0));
    let r: Result<(), _> = steadfast::web::retry(&p, |_| {
        *calls.borrow_mut() += 1;
        async { Err(GwError { status: Some(503) }) }
    })
    .await;
    assert_eq!(r.unwrap_err().code(), Some("RETRY_BUDGET_EXHAUSTED"));
    assert_eq!(*calls.borrow(), 2, "one retry from one token");
}

/// The whole history decides: attempt 1 debits and times out, attempt 2 is answered by something
/// in front of the gateway (409 still processing, 401 an auth proxy, 404 a load balancer, 400 a
/// WAF, 402): the key stays parked, the call says so (OUTCOME_UNKNOWN with the last error as its
/// cause), and the next try with the same key sends nothing. One debit.
pub async fn a_later_refusal_never_frees_a_debited_key(rt: Rc<dyn Runtime>, clock: Clock) {
    for status in [409, 401, 404, 400, 402] {
        let (gw, d) = (Gateway::default(), deps(&rt, &clock, 3));
        gw.fail_next(Fault::DebitThenTimeout, 1);
        gw.fail_next(Fault::Status(status), 1);
        let c = Charge::new("order-h", 4999, "usd").unwrap();
        match pay(&rt, &gw, &d, &c).await {
            Err(Error::OutcomeUnknown { key, cause, .. }) => {
                assert_eq!(key, "order-h");
                assert_eq!(
                    cause.and_then(|e| e.operation().and_then(|g| g.status)),
                    Some(status),
                    "the last answer is the cause"
                );
            }
            other => panic!("{status}: {other:?}"),
        }
        assert!(
            matches!(d.store.peek("order-h"), Some(Record::Unknown { .. })),
            "{status}"
        );
        assert_eq!(
            pay(&rt, &gw, &d, &c).await.unwrap_err().code(),
            Some("OUTCOME_UNKNOWN")
        );
        assert_eq!(
            gw.attempts.borrow().len(),
            2,
            "{status}: nothing sent blind"
        );
        assert_eq!(gw.debits_total(), 1, "{status}");
    }
    // A charge only ever refused (a 402 on its one attempt) frees its key, as before.
    let (gw, d) = (Gateway::default(), deps(&rt, &clock, 3));
    gw.fail_next(Fault::Status(402), 1);
    let c = Charge::new("order-d", 4999, "usd").unwrap();
    assert_eq!(
        pay(&rt, &gw, &d, &c)
            .await
            .unwrap_err()
            .operation()
            .and_then(|g| g.status),
        Some(402)
    );
    assert_eq!(d.store.peek("order-d"), None);
}

/// `store.run(key, || breaker.execute(|| retry(..)))`, the layering of the guide, is judged by
/// every attempt the retry made: attempt 1 debits and its answer is lost, attempt 2 meets a
/// refusal from something in front of the gateway; the key stays unknown and the next run with
/// it sends nothing. (Without the breaker too.)
pub async fn store_run_over_retry_is_judged_by_every_attempt(rt: Rc<dyn Runtime>, clock: Clock) {
    use std::future::IntoFuture;
    for status in [404, 401, 402, 422] {
        for with_breaker in [true, false] {
            let (gw, d) = (Gateway::default(), deps(&rt, &clock, 3));
            gw.fail_next(Fault::DebitThenTimeout, 1);
            gw.fail_next(Fault::Status(status), 1);
            let c = Charge::new("order-r", 4999, "usd").unwrap();
            let run = || {
                d.store.run("order-r", || {
                    let attempts = retry(&d.policy, |_| gw.charge(&rt, &c)).into_future();
                    let breaker = &d.breaker;
                    async move {
                        if with_breaker {
                            breaker.execute(|| attempts).await
                        } else {
                            attempts.await
                        }
                    }
                })
            };
            assert_eq!(
                run().await.unwrap_err().code(),
                Some("OUTCOME_UNKNOWN"),
                "{status}, breaker {with_breaker}"
            );
            assert!(
                matches!(d.store.peek("order-r"), Some(Record::Unknown { .. })),
                "{status}, breaker {with_breaker}: the debited key stays parked"
            );
            assert_eq!(run().await.unwrap_err().code(), Some("OUTCOME_UNKNOWN"));
            assert_eq!(
                gw.attempts.borrow().len(),
                2,
                "{status}: nothing sent blind"
            );
            assert_eq!(gw.debits_total(), 1);
        }
    }
    // Refused on every attempt (a 402 at once): the key is free, as before.
    let (gw, d) = (Gateway::default(), deps(&rt, &clock, 3));
    gw.fail_next(Fault::Status(402), 1);
    let c = Charge::new("order-s", 4999, "usd").unwrap();
    let r = d
        .store
        .run("order-s", || {
            retry(&d.policy, |_| gw.charge(&rt, &c)).into_future()
        })
        .await;
    assert_eq!(r.unwrap_err().operation().and_then(|g| g.status), Some(402));
    assert_eq!(d.store.peek("order-s"), None);
}

/// A per-origin breaker (`Counts::Transient`) counts the caller's own abort as nothing: an
/// aborted half-open probe gives its slot back (the circuit does not close on a dead origin), and
/// an abort between two failures does not reset their run.
pub async fn an_aborted_call_counts_as_nothing_per_origin(rt: Rc<dyn Runtime>, clock: Clock) {
    let transient = |threshold: f64| {
        CircuitBreaker::new(BreakerConfig::consecutive(threshold, OPEN_MS, None).unwrap())
            .counts(Counts::Transient)
            .clock(Rc::clone(&clock))
    };
    let b = transient(2.0);
    let fail =
        || b.execute(|| async { Err::<(), _>(Error::Operation(GwError { status: Some(503) })) });
    assert!(fail().await.is_err());
    assert!(b
        .execute(|| async { Err::<(), Error<GwError>>(Error::Aborted) })
        .await
        .is_err());
    assert!(fail().await.is_err());
    assert_eq!(
        b.state(),
        State::Open,
        "the abort did not break the run of failures"
    );

    let b = transient(1.0);
    assert!(b
        .execute(|| async { Err::<(), _>(Error::Operation(GwError { status: Some(503) })) })
        .await
        .is_err());
    rt.sleep(OPEN_MS + 1.0).await;
    assert_eq!(b.state(), State::HalfOpen);
    // The probe: a retry whose caller aborted it ends with Error::Aborted.
    let probe = b
        .execute(|| async { Err::<(), Error<GwError>>(Error::Aborted) })
        .await;
    assert!(matches!(probe, Err(Error::Aborted)), "{probe:?}");
    assert_eq!(
        b.state(),
        State::HalfOpen,
        "the aborted probe gave its slot back"
    );
}

/// The first of two futures to finish; the other is dropped, wherever it was.
pub async fn first<T>(a: impl Future<Output = T>, b: impl Future<Output = T>) -> T {
    let (mut a, mut b) = (pin!(a), pin!(b));
    poll_fn(move |cx| {
        if let Poll::Ready(v) = a.as_mut().poll(cx) {
            return Poll::Ready(v);
        }
        b.as_mut().poll(cx)
    })
    .await
}

fn assert_parked<T: std::fmt::Debug, E: std::fmt::Debug>(
    r: Result<T, Error<E>>,
    store: &IdempotencyStore<String>,
    key: &str,
    case: &str,
) {
    assert!(
        matches!(r, Err(Error::OutcomeUnknown { .. })),
        "{case}: {r:?}"
    );
    assert!(
        matches!(store.peek(key), Some(Record::Unknown { .. })),
        "{case}: the key stays parked, not freed by the last answer"
    );
}

/// A retry inside another layer — an outer retry, a breaker between two retries, a gateway of
/// `charge_customer` that retries itself — whose first request debits and loses its answer and
/// whose next is refused (a 402, a 404), or throttled until the budget gives up: the charge is
/// judged by every attempt of every layer, and its key stays parked.
pub async fn nested_retries_are_judged_by_every_attempt(rt: Rc<dyn Runtime>, clock: Clock) {
    use std::future::IntoFuture;
    let layerings = [
        "retry(retry)",
        "retry(breaker(retry))",
        "charge_customer(gateway: retry)",
        "charge_customer(gateway: retry, budget gives up)",
    ];
    for (layering, name) in layerings.iter().enumerate() {
        for last in [402, 404] {
            let budgeted = layering == 3;
            let (gw, d) = (
                Gateway::default(),
                deps(&rt, &clock, if budgeted { 1 } else { 3 }),
            );
            gw.fail_next(Fault::DebitThenTimeout, 1);
            gw.fail_next(Fault::Status(if budgeted { 429 } else { last }), 1);
            let c = Charge::new("order-n", 4999, "usd").unwrap();
            let mut inner = RetryPolicy::builder()
                .max_attempts(if budgeted { 5 } else { 2 })
                .base_delay_ms(2.0)
                .max_delay_ms(5.0)
                .runtime(Rc::clone(&rt));
            if budgeted {
                // One retry paid for: the throttled second attempt ends the inner call.
                inner = inner.budget(
                    steadfast::web::RetryBudget::token_bucket(1.0, 0.0)
                        .unwrap()
                        .clock(Rc::clone(&clock)),
                );
            }
            let inner = inner.build().unwrap();
            let charge = || retry(&inner, |_| gw.charge(&rt, &c)).into_future();
            let r: Result<String, Error<Error<GwError>>> = match layering {
                0 => {
                    d.store
                        .run("order-n", || retry(&d.policy, |_| charge()).into_future())
                        .await
                }
                1 => {
                    d.store
                        .run("order-n", || {
                            retry(&d.policy, |_| d.breaker.execute(charge)).into_future()
                        })
                        .await
                }
                _ => charge_customer(&c, &d, |_, _| charge()).await,
            };
            let case = format!("{name}, then {last}");
            assert_parked(r, &d.store, "order-n", &case);
            assert_eq!(gw.attempts.borrow().len(), 2, "{case}");
            assert_eq!(gw.debits_total(), 1, "{case}");
        }
    }
}

/// Two copies of a charge raced in one run (a hand-made hedge): the first is let go mid-attempt
/// when the second is refused first. The dropped attempt may have been processed: parked.
pub async fn a_copy_let_go_mid_attempt_keeps_the_key_parked(rt: Rc<dyn Runtime>, clock: Clock) {
    use std::future::IntoFuture;
    let (gw, d) = (Gateway::default(), deps(&rt, &clock, 1));
    gw.fail_next(Fault::Slow(60.0), 1);
    gw.fail_next(Fault::Status(402), 1);
    let c = Charge::new("order-c", 4999, "usd").unwrap();
    let r = d
        .store
        .run("order-c", || async {
            let primary = retry(&d.policy, |_| gw.charge(&rt, &c)).into_future();
            let backup = async {
                rt.sleep(5.0).await;
                retry(&d.policy, |_| gw.charge(&rt, &c)).await
            };
            first(primary, backup).await
        })
        .await;
    assert_parked(r, &d.store, "order-c", "the slow copy let go");
    assert_eq!(gw.attempts.borrow().len(), 2);
}

/// A retry started in one run and polled from elsewhere (handed to a task outside any run, or
/// awaited inside another run) reports its attempts to the run that started it: run A is parked by
/// its own lost debit, run B — which only polled A's retry for it, and was refused itself — is not.
pub async fn a_retry_reports_to_the_run_that_started_it(rt: Rc<dyn Runtime>, clock: Clock) {
    use std::future::IntoFuture;
    type Charging<'a> = steadfast::web::LocalBoxFuture<'a, Result<String, Error<GwError>>>;
    for elsewhere in ["a task outside any run", "another run"] {
        let (gw, d) = (Gateway::default(), deps(&rt, &clock, 3));
        gw.fail_next(Fault::DebitThenTimeout, 1);
        gw.fail_next(Fault::Status(402), 2);
        let a = Charge::new("order-a", 4999, "usd").unwrap();
        let b = Charge::new("order-b", 4999, "usd").unwrap();
        let handed: RefCell<Option<Charging<'_>>> = RefCell::new(None);
        let answer: RefCell<Option<Result<String, Error<GwError>>>> = RefCell::new(None);
        let run_a = d.store.run("order-a", || {
            // Made here, synchronously, in run A; polled by someone else.
            *handed.borrow_mut() = Some(retry(&d.policy, |_| gw.charge(&rt, &a)).into_future());
            async {
                loop {
                    if let Some(r) = answer.borrow_mut().take() {
                        return r;
                    }
                    rt.sleep(1.0).await;
                }
            }
        });
        let poll_for_a = async {
            let f = loop {
                if let Some(f) = handed.borrow_mut().take() {
                    break f;
                }
                rt.sleep(1.0).await;
            };
            *answer.borrow_mut() = Some(f.await);
        };
        let run_b = async {
            if elsewhere == "another run" {
                let r = d
                    .store
                    .run("order-b", || async {
                        poll_for_a.await;
                        retry(&d.policy, |_| gw.charge(&rt, &b)).await
                    })
                    .await;
                assert_eq!(
                    r.unwrap_err().operation().and_then(|e| e.status),
                    Some(402),
                    "{elsewhere}: B was refused and sent nothing else of its own"
                );
                assert_eq!(
                    d.store.peek("order-b"),
                    None,
                    "{elsewhere}: B's key is free"
                );
            } else {
                poll_for_a.await;
            }
        };
        let (r, ()) = join(run_a, run_b).await;
        assert_parked(r, &d.store, "order-a", elsewhere);
    }
}

#[derive(Debug, Clone)]
pub struct SharedError(pub Rc<GwError>);
impl Classify for SharedError {
    fn is_transient(&self) -> bool {
        self.0.is_transient()
    }
    fn answer(&self) -> Answer {
        self.0.answer()
    }
}

/// Two concurrent runs whose charges end with one shared error value (an `Rc` a gateway client
/// hands out to every caller): each is judged by its own attempts.
pub async fn two_runs_ending_with_one_shared_error_are_judged_each_by_its_own(
    rt: Rc<dyn Runtime>,
    clock: Clock,
) {
    use std::future::IntoFuture;
    let d = &deps(&rt, &clock, 3);
    let declined = &Rc::new(GwError { status: Some(402) });
    let lost = &Rc::new(std::cell::Cell::new(true));
    let rt = &rt;
    let run = |key: &'static str, lose_first: bool| {
        d.store.run(key, move || {
            retry(&d.policy, move |attempt| {
                let (declined, rt, lost) = (Rc::clone(declined), Rc::clone(rt), Rc::clone(lost));
                async move {
                    rt.sleep(3.0).await;
                    if lose_first && attempt.number == 1 && lost.replace(false) {
                        return Err(SharedError(Rc::new(GwError { status: None })));
                    }
                    Err::<String, _>(SharedError(declined))
                }
            })
            .into_future()
        })
    };
    let (x, y) = join(run("order-x", true), run("order-y", false)).await;
    assert_parked(
        x,
        &d.store,
        "order-x",
        "the run whose first answer was lost",
    );
    assert_eq!(
        y.unwrap_err().operation().map(|e| e.0.status),
        Some(Some(402))
    );
    assert_eq!(d.store.peek("order-y"), None, "the run only ever declined");
}

/// A breaker around a retry judges a refusal that never ran (an inner breaker's open circuit, a
/// reused key) by the answer before it: a 503 and then the inner breaker's refusal is a failure;
/// a call refused before anything ran is nothing at all (a half-open probe gives its slot back).
/// For both ways of counting.
pub async fn a_breaker_judges_a_refusal_that_never_ran_by_the_answer_before_it(
    rt: Rc<dyn Runtime>,
    clock: Clock,
) {
    use std::future::IntoFuture;
    let consecutive = |counts| {
        CircuitBreaker::new(BreakerConfig::consecutive(1.0, OPEN_MS, None).unwrap())
            .counts(counts)
            .clock(Rc::clone(&clock))
    };
    let p = policy(&rt, 3);
    let down = || async { Err::<(), _>(Error::Operation(GwError { status: Some(503) })) };
    for counts in [Counts::Every, Counts::Transient] {
        // The gateway answered 503 (the inner breaker trips on it), then the inner breaker refused.
        let (outer, inner) = (consecutive(counts), consecutive(Counts::Every));
        let r = outer
            .execute(|| retry(&p, |_| inner.execute(down)).into_future())
            .await;
        assert!(
            matches!(r, Err(Error::Operation(Error::CircuitOpen { .. }))),
            "{r:?}"
        );
        assert_eq!(
            outer.state(),
            State::Open,
            "{counts:?}: a 503 then a refusal is a failure"
        );

        // A half-open probe refused before anything ran: nothing, the probe's slot given back.
        rt.sleep(OPEN_MS + 5.0).await;
        assert_eq!(outer.state(), State::HalfOpen);
        inner.isolate();
        let r = outer
            .execute(|| retry(&p, |_| inner.execute(down)).into_future())
            .await;
        assert!(
            matches!(r, Err(Error::Operation(Error::CircuitOpen { .. }))),
            "{r:?}"
        );
        assert_eq!(
            outer.state(),
            State::HalfOpen,
            "{counts:?}: an inner breaker's refusal, nothing ran"
        );

        // A store's refusal of a reused key never ran either.
        let store = IdempotencyStore::<String>::new().clock(Rc::clone(&clock));
        let ok = || async { Ok::<_, Error<GwError>>("ch_1".to_string()) };
        assert!(store.run_with_fingerprint("k", Some("a"), ok).await.is_ok());
        let r = outer
            .execute(|| store.run_with_fingerprint("k", Some("b"), ok))
            .await;
        assert_eq!(r.unwrap_err().code(), Some("KEY_REUSED"));
        assert_eq!(
            outer.state(),
            State::HalfOpen,
            "{counts:?}: a reused key, nothing ran"
        );
    }
}
