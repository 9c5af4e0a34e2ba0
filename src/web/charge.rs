//! `charge_customer`: the seed's pipeline, in its order — idempotency outside (one logical
//! charge), breaker in the middle (refuse a known-dead gateway before any retry starts), retry
//! inside (absorb transient noise). The gateway sees the same key on every attempt.

use std::cell::Cell;
use std::convert::Infallible;
use std::fmt::Debug;
use std::future::Future;

use super::breaker::CircuitBreaker;
use super::error::{Classify, Error};
use super::idempotency::IdempotencyStore;
use super::retry::{retry, Attempt, RetryPolicy};
use crate::core::history::History;
use crate::core::idempotency::validate_key;

/// One logical charge. Make the key once (e.g. with `new_idempotency_key()` when the checkout
/// page opens) and reuse it for every click and attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Charge {
    /// The idempotency key: 1 to 255 printable ASCII characters.
    pub idempotency_key: String,
    /// The amount, in the currency's minor unit (> 0).
    pub amount_cents: u64,
    /// The ISO currency code (non-empty).
    pub currency: String,
}

impl Charge {
    /// Validate a charge: the key rule of the core, a positive amount no larger than JS can
    /// hold exactly (2^53 − 1), a non-empty currency.
    ///
    /// ```
    /// use steadfast::web::Charge;
    /// assert!(Charge::new("order-42", 4999, "usd").is_ok());
    /// assert_eq!(Charge::new("order-42", 0, "usd").unwrap_err().code(), Some("INVALID_OPTION"));
    /// assert_eq!(Charge::new("", 1, "usd").unwrap_err().code(), Some("INVALID_KEY"));
    /// ```
    pub fn new(
        idempotency_key: &str,
        amount_cents: u64,
        currency: &str,
    ) -> Result<Self, Error<Infallible>> {
        validate_key(idempotency_key).map_err(|_| Error::InvalidKey {
            key: idempotency_key.into(),
        })?;
        if amount_cents == 0 || amount_cents > (1 << 53) - 1 {
            return Err(Error::InvalidOption {
                option: "amountCents",
                expected: "a positive integer",
            });
        }
        if currency.is_empty() {
            return Err(Error::InvalidOption {
                option: "currency",
                expected: "a non-empty string",
            });
        }
        Ok(Self {
            idempotency_key: idempotency_key.into(),
            amount_cents,
            currency: currency.into(),
        })
    }

    /// The fingerprint bound to the key: amount and currency, as the JS `chargeCustomer` writes
    /// it (reusing a key for another amount is [`Error::KeyReused`], not a replay).
    pub fn fingerprint(&self) -> String {
        format!("{} {}", self.amount_cents, self.currency)
    }
}

/// What [`charge_customer`] runs through. Clones of the handles share state, so one page (or
/// one app) keeps one store and one breaker for its gateway.
#[derive(Debug, Clone)]
pub struct ChargeDeps<T> {
    /// One logical charge per key.
    pub store: IdempotencyStore<T>,
    /// The gateway's breaker.
    pub breaker: CircuitBreaker,
    /// The retry policy (and its runtime and budget).
    pub policy: RetryPolicy,
}

/// `store.run(key, || breaker.execute(|| retry(policy, |attempt| gateway(charge, attempt))))`,
/// with the charge's amount and currency as the key's fingerprint. See the module docs of
/// [`crate::web`] for a runnable example.
pub async fn charge_customer<T, E, G, Fut>(
    charge: &Charge,
    deps: &ChargeDeps<T>,
    mut gateway: G,
) -> Result<T, Error<E>>
where
    T: Clone,
    E: Classify + Debug,
    G: FnMut(&Charge, Attempt) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let fingerprint = charge.fingerprint();
    let gateway = &mut gateway;
    // Every attempt's answer is folded into the charge's history (core::history): a key that an
    // earlier attempt may have debited stays parked, whatever a later attempt is answered.
    let history = Cell::new(History::default());
    let history = &history;
    deps.store
        .run_judged(&charge.idempotency_key, Some(&fingerprint), history, || {
            deps.breaker.execute(|| async move {
                retry(&deps.policy, |attempt| {
                    let call = gateway(charge, attempt);
                    async move {
                        let result = call.await;
                        if let Err(e) = &result {
                            history.set(history.get().record(e.answer()));
                        }
                        result
                    }
                })
                .await
            })
        })
        .await
}
