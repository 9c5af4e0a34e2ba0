//! Retry-quota properties against a reference model: the quota never goes negative or above its
//! capacity, refuses exactly when the cost exceeds what is left, and refunds exactly the last
//! retry's cost (or the success refund) — for any sequence of outcomes.
//!
//! Why a model: the quota is a promise about load across every caller sharing it. An off-by-one in
//! a refund lets a fleet retry forever against a dependency that never recovers.

use proptest::prelude::*;
use steadfast::core::quota::{ErrorClass, QuotaConfig, RetryQuota};

#[derive(Debug, Clone)]
enum Op {
    /// A call that fails `failures` times (classes given) and then succeeds or gives up.
    Call { failures: Vec<u8>, succeeds: bool },
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let call = (prop::collection::vec(0u8..3, 0..5), any::<bool>())
        .prop_map(|(failures, succeeds)| Op::Call { failures, succeeds });
    prop::collection::vec(call, 1..300)
}

/// The reference: AWS's StandardRetryStrategy arithmetic in plain signed integers.
struct Model {
    capacity: i64,
    costs: [i64; 3],
    refund: i64,
    available: i64,
}

proptest! {
    #[test]
    fn quota_matches_the_model(
        capacity in 1u32..200,
        costs in prop::array::uniform3(0u32..40),
        refund in 0u32..5,
        ops in ops(),
    ) {
        let cfg = QuotaConfig::new(
            f64::from(capacity),
            f64::from(costs[0]),
            f64::from(costs[1]),
            f64::from(costs[2]),
            f64::from(refund),
        ).unwrap();
        let mut q = RetryQuota::new(cfg);
        let mut m = Model {
            capacity: i64::from(capacity),
            costs: costs.map(i64::from),
            refund: i64::from(refund),
            available: i64::from(capacity),
        };
        for Op::Call { failures, succeeds } in ops {
            let mut last_cost = None::<i64>;
            let mut gave_up = false;
            for &f in &failures {
                let class = ErrorClass::from_id(u32::from(f));
                let cost = m.costs[usize::from(f)];
                let got = q.try_acquire(class);
                if cost <= m.available {
                    prop_assert_eq!(got, Some(cost as u32));
                    m.available -= cost;
                    last_cost = Some(cost);
                } else {
                    prop_assert_eq!(got, None);
                    gave_up = true;
                    break;
                }
                prop_assert!(m.available >= 0);
            }
            if succeeds && !gave_up {
                let r = last_cost.unwrap_or(m.refund);
                m.available = (m.available + r).min(m.capacity);
                q.record_success(last_cost.map(|c| c as u32));
            }
            prop_assert_eq!(i64::from(q.available()), m.available);
            prop_assert!(q.available() <= capacity);
        }
    }

    /// With every call failing, a full quota allows at most capacity / min cost retries, then
    /// none until something succeeds.
    #[test]
    fn a_sick_dependency_drains_it_and_it_stays_drained(calls in 1usize..2000) {
        let mut q = RetryQuota::new(QuotaConfig::aws_standard());
        let mut granted = 0;
        for _ in 0..calls {
            if q.try_acquire(ErrorClass::ServerError).is_some() {
                granted += 1;
            }
        }
        prop_assert!(granted <= 500 / 10);
        prop_assert_eq!(granted, calls.min(50));
    }
}

#[test]
fn aws_preset_is_the_smithy_constants() {
    // @smithy/util-retry 4.x: INITIAL_RETRY_TOKENS 500, TIMEOUT_RETRY_COST 10 for TRANSIENT
    // (timeouts, connection errors, 500/502/503/504), RETRY_COST 5 for throttling,
    // NO_RETRY_INCREMENT 1.
    let c = QuotaConfig::aws_standard();
    assert_eq!(
        (
            c.capacity,
            c.timeout,
            c.server_error,
            c.throttled,
            c.success_refund
        ),
        (500, 10, 10, 5, 1)
    );
    let d = QuotaConfig::default();
    assert_eq!(
        (
            d.capacity,
            d.timeout,
            d.server_error,
            d.throttled,
            d.success_refund
        ),
        (500, 10, 5, 5, 1)
    );
}
