//! The per-origin breaker registry's eviction rule (src/core/breaker/registry.rs), natively: what
//! a server that fetches many user-supplied URLs between two payment calls can and cannot evict.

use std::cell::RefCell;
use std::rc::Rc;

use steadfast::core::breaker::{
    evictable, Acquire, Breaker, BreakerConfig, Outcome, Registry, State,
};

type Shared = Rc<RefCell<Breaker>>;

fn breaker() -> Shared {
    // The fetch defaults' shape: a rate window of 20, judged from 10 outcomes, open 30 s.
    Rc::new(RefCell::new(Breaker::new(
        BreakerConfig::rate(20.0, 0.5, Some(10.0), 30_000.0, None).unwrap(),
    )))
}

fn holds(b: &Shared) -> bool {
    b.borrow().holds_protection()
}

fn call(b: &Shared, outcome: Outcome, now: f64) -> bool {
    let mut core = b.borrow_mut();
    match core.try_acquire(now) {
        Acquire::Granted { permit, .. } => {
            core.record(permit, outcome, now);
            true
        }
        Acquire::Rejected { .. } => false,
    }
}

#[test]
fn a_breaker_holds_protection_once_it_has_a_failure_on_record_or_is_not_closed() {
    let b = breaker();
    assert!(!holds(&b), "a fresh closed breaker holds nothing");
    assert!(evictable(false, &b.borrow()));
    call(&b, Outcome::Success, 0.0);
    assert!(!holds(&b), "successes only: nothing to lose");
    call(&b, Outcome::Failure, 0.0);
    assert!(
        holds(&b),
        "one failure on record: forgetting it would restart the count"
    );
    assert!(!evictable(false, &b.borrow()));
    let pinned = breaker();
    assert!(
        !evictable(true, &pinned.borrow()),
        "a pinned breaker is never evictable"
    );
    b.borrow_mut().isolate();
    assert!(holds(&b));
    b.borrow_mut().reset();
    assert!(!holds(&b), "a reset breaker is closed and empty again");
}

/// The scenario of a server that fetches 150 user-supplied URLs (all answering) between calls to a
/// payment gateway that is down, with the registry already full: the gateway's breaker keeps its
/// failures and trips, so later calls fail fast instead of reaching the dead gateway.
#[test]
fn fetching_many_other_origins_never_evicts_a_breaker_with_failures_on_record() {
    let mut registry: Registry<Shared> = Registry::new(1000);
    for i in 0..1000 {
        registry.get_or_insert_with(&format!("https://filler-{i}.example"), holds, breaker);
    }
    let gateway = "https://pay.example";
    let mut reached_dead_gateway = 0;
    let mut failed_fast = 0;
    let mut user = 0;
    for round in 0..60 {
        let now = f64::from(round);
        let b = registry.get_or_insert_with(gateway, holds, breaker);
        if call(&b, Outcome::Failure, now) {
            reached_dead_gateway += 1;
        } else {
            failed_fast += 1;
        }
        for _ in 0..150 {
            user += 1;
            let other = registry.get_or_insert_with(
                &format!("https://user-{user}.example"),
                holds,
                breaker,
            );
            call(&other, Outcome::Success, now);
        }
    }
    assert!(registry.contains(gateway));
    assert_eq!(registry.len(), 1000, "still bounded");
    assert_eq!(
        (reached_dead_gateway, failed_fast),
        (10, 50),
        "the breaker trips after minimumCalls failures and then fails fast"
    );
    assert_eq!(
        registry
            .get_or_insert_with(gateway, holds, breaker)
            .borrow()
            .state(60.0),
        State::Open
    );
}

#[test]
fn a_pinned_origin_is_kept_and_a_full_registry_of_breakers_in_use_keeps_them_all() {
    let mut registry: Registry<Shared> = Registry::new(3);
    let pinned = registry.pin("https://pay.example", holds, breaker);
    for i in 0..10 {
        registry.get_or_insert_with(&format!("https://o{i}.example"), holds, breaker);
    }
    assert!(
        registry.contains("https://pay.example"),
        "a pinned entry, untouched and closed, is never the victim"
    );
    assert_eq!(registry.len(), 3);
    // Both unpinned slots hold breakers with failures: a newcomer gets a breaker that is not kept.
    let a = registry.get_or_insert_with("https://a.example", holds, breaker);
    let b = registry.get_or_insert_with("https://b.example", holds, breaker);
    call(&a, Outcome::Failure, 0.0);
    call(&b, Outcome::Failure, 0.0);
    let newcomer = registry.get_or_insert_with("https://c.example", holds, breaker);
    assert!(!registry.contains("https://c.example"));
    assert!(registry.contains("https://a.example") && registry.contains("https://b.example"));
    call(&newcomer, Outcome::Failure, 0.0);
    assert!(!Rc::ptr_eq(
        &newcomer,
        &registry.get_or_insert_with("https://c.example", holds, breaker)
    ));
    assert!(Rc::ptr_eq(
        &pinned,
        &registry.get_or_insert_with("https://pay.example", holds, breaker)
    ));
}
