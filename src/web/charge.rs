//! `charge_customer`: the seed's pipeline, in its order — idempotency outside (one logical
//! charge), breaker in the middle (refuse a known-dead gateway before any retry starts), retry
//! inside (absorb transient noise). The gateway sees the same key on every attempt.

use super::error::NoOperation;
use std::fmt::Debug;
use std::future::Future;

use super::breaker::CircuitBreaker;
use super::error::{Classify, Error};
use super::idempotency::IdempotencyStore;
use super::num::canonical_number;
use super::retry::{retry, Attempt, RetryPolicy};
use crate::core::canonical::{quote, utf16_order, Json};
use crate::core::idempotency::validate_key;
use std::cmp::Ordering;

/// One logical charge. Make the key once (e.g. with `new_idempotency_key()` when the checkout
/// page opens) and reuse it for every click and attempt.
///
/// Its fingerprint ([`Charge::fingerprint`]) is bound to the key: every field but the key, and
/// but those marked volatile, in the canonical text the JS package writes for the same charge
/// (`chargeFingerprint`), so a key reused for another amount, customer, order or cart is
/// [`Error::KeyReused`] in either shell. [`Charge::body`] is the JSON to send: the same data.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Charge {
    /// The idempotency key: 1 to 255 printable ASCII characters.
    pub idempotency_key: String,
    /// The amount, in the currency's minor unit (> 0).
    pub amount_cents: u64,
    /// The ISO currency code (non-empty).
    pub currency: String,
    /// The customer the charge is for (JSON field `customer`), if any.
    pub customer: Option<String>,
    /// The order it pays (JSON field `order`), if any.
    pub order: Option<String>,
    /// Other fields, validated by [`Charge::field`]: `(name, the value's canonical text,
    /// volatile)`, kept in the canonical key order. Held as text, not as [`Json`], so that a
    /// charge without extra fields links no JSON writer: written once, when the field is added.
    fields: Vec<(String, String, bool)>,
}

/// Field names a [`Charge`] always holds itself (the key travels in the `Idempotency-Key` header).
const OWN_FIELDS: [&str; 3] = ["idempotencyKey", "amountCents", "currency"];

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
    ) -> Result<Self, Error<NoOperation>> {
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
            customer: None,
            order: None,
            fields: Vec::new(),
        })
    }

    /// The customer the charge is for, an id (part of the fingerprint; replaces a `customer`
    /// given with [`Charge::field`], e.g. an object).
    pub fn with_customer(mut self, customer: &str) -> Self {
        self.fields.retain(|(n, ..)| n != "customer");
        self.customer = Some(customer.into());
        self
    }

    /// The order it pays, an id (part of the fingerprint; replaces an `order` field).
    pub fn with_order(mut self, order: &str) -> Self {
        self.fields.retain(|(n, ..)| n != "order");
        self.order = Some(order.into());
        self
    }

    /// Another field of the charge (a cart, line items, metadata), sent and part of the
    /// fingerprint; `customer` and `order` may be any JSON here (an object, say) when not set as
    /// ids. `INVALID_OPTION` (option `fields`) for a name the charge already holds, or a value
    /// with a non-finite number or nested deeper than 32.
    ///
    /// ```
    /// use steadfast::core::canonical::Json;
    /// use steadfast::web::Charge;
    /// let c = Charge::new("order-42", 4999, "usd").unwrap().with_customer("cus_1");
    /// let c = c.field("cart", Json::parse(r#"{"items":[{"sku":"A-1","qty":2}]}"#).unwrap()).unwrap();
    /// assert_eq!(
    ///     c.fingerprint(),
    ///     r#"{"amountCents":4999,"cart":{"items":[{"qty":2,"sku":"A-1"}]},"currency":"usd","customer":"cus_1"}"#
    /// );
    /// ```
    pub fn field(self, name: &str, value: impl Into<Json>) -> Result<Self, Error<NoOperation>> {
        self.push(name, value.into(), false)
    }

    /// A field that is sent but does not identify the charge (a per-attempt SDK nonce, a client
    /// timestamp): left out of the fingerprint, as the JS `volatileFields` option does.
    pub fn volatile_field(
        self,
        name: &str,
        value: impl Into<Json>,
    ) -> Result<Self, Error<NoOperation>> {
        self.push(name, value.into(), true)
    }

    fn push(mut self, name: &str, value: Json, volatile: bool) -> Result<Self, Error<NoOperation>> {
        let taken = OWN_FIELDS.contains(&name)
            || (name == "customer" && self.customer.is_some())
            || (name == "order" && self.order.is_some())
            || self.fields.iter().any(|(n, ..)| n == name);
        let text = match value.canonical_with(canonical_number) {
            Ok(text) if !taken => text,
            _ => {
                return Err(Error::InvalidOption {
                    option: "fields",
                    expected: "a field name the charge does not hold yet, with finite JSON nested at most 32 deep",
                })
            }
        };
        let at = self
            .fields
            .iter()
            .position(|(n, ..)| utf16_order(n, name) == Ordering::Greater)
            .unwrap_or(self.fields.len());
        self.fields.insert(at, (name.into(), text, volatile));
        Ok(self)
    }

    /// The canonical object of the charge's fields (what `canonical_object` writes for them: keys
    /// in UTF-16 order, no whitespace), written directly: the own fields' names are in that order
    /// already and the others are kept sorted, so the two lists only need merging.
    fn text(&self, with_volatile: bool) -> String {
        let mut out = String::from("{");
        let field = |out: &mut String, name: &str, value: &dyn Fn(&mut String)| {
            if out.len() > 1 {
                out.push(',');
            }
            quote(out, name);
            out.push(':');
            value(out);
        };
        let mut extra = self
            .fields
            .iter()
            .filter(|(.., volatile)| with_volatile || !volatile);
        let mut next = extra.next();
        let own: [(&str, Option<&str>); 4] = [
            ("amountCents", None),
            ("currency", Some(&self.currency)),
            ("customer", self.customer.as_deref()),
            ("order", self.order.as_deref()),
        ];
        for (name, value) in own {
            if name != "amountCents" && value.is_none() {
                continue;
            }
            while let Some((n, text, _)) = next.filter(|(n, ..)| utf16_order(n, name).is_lt()) {
                field(&mut out, n, &|o: &mut String| o.push_str(text));
                next = extra.next();
            }
            match value {
                Some(s) => field(&mut out, name, &|o: &mut String| quote(o, s)),
                None => field(&mut out, name, &|o: &mut String| {
                    canonical_number(o, self.amount_cents as f64)
                }),
            }
        }
        while let Some((n, text, _)) = next {
            field(&mut out, n, &|o: &mut String| o.push_str(text));
            next = extra.next();
        }
        out.push('}');
        out
    }

    /// The canonical text bound to the key: every field but the key and the volatile ones, keys
    /// sorted, JSON values — the text the JS `chargeFingerprint` writes for the same charge.
    pub fn fingerprint(&self) -> String {
        self.text(false)
    }

    /// The charge as JSON to send (volatile fields included, the key left to the
    /// `Idempotency-Key` header): exactly the data the fingerprint is of.
    pub fn body(&self) -> String {
        self.text(true)
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
/// with the charge's [`Charge::fingerprint`] bound to the key (the JS `chargeCustomer`'s record
/// text, `f:` + the canonical text, so its digest is the one the JS stores keep in Redis). See
/// the module docs of [`crate::web`] for a runnable example.
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
    let fingerprint = "f:".to_owned() + &charge.fingerprint();
    let gateway = &mut gateway;
    // Every attempt is folded into the charge's history (core::history) — the retry's here and
    // those of a retry or `fetch` inside the gateway: a key that an earlier attempt may have
    // debited stays parked, whatever a later attempt is answered.
    deps.store
        .run_with_fingerprint(&charge.idempotency_key, Some(&fingerprint), || {
            deps.breaker.execute(|| async move {
                retry(&deps.policy, |attempt| gateway(charge, attempt)).await
            })
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::canonical::canonical_object;

    /// The merged text is what the core's `canonical_object` writes for the same fields, whatever
    /// the names sort against the own ones (before `amountCents`, between, after `order`, non-ASCII
    /// names whose UTF-8 and UTF-16 orders differ) and whichever are volatile.
    #[test]
    fn text_is_the_canonical_object_of_the_fields() {
        let names = [
            "a",
            "b",
            "cz",
            "customer",
            "d",
            "order",
            "p",
            "zz",
            "\u{ff5e}",
            "\u{1f600}",
        ];
        for mask in 0u32..1 << names.len() {
            let mut c = Charge::new("k", 4999, "usd\"\n").unwrap();
            if mask & 1 == 0 {
                c = c.with_customer("cus_1");
            }
            if mask & 2 == 0 {
                c = c.with_order("o-1");
            }
            let mut all: Vec<(String, Json)> = vec![
                ("amountCents".into(), Json::Number(4999.0)),
                ("currency".into(), Json::String("usd\"\n".into())),
            ];
            all.extend(
                c.customer
                    .clone()
                    .map(|s| ("customer".into(), Json::String(s))),
            );
            all.extend(c.order.clone().map(|s| ("order".into(), Json::String(s))));
            let mut stable = all.clone();
            for (i, name) in names.iter().enumerate() {
                if mask >> i & 1 == 1
                    || (*name == "customer" && c.customer.is_some())
                    || (*name == "order" && c.order.is_some())
                {
                    continue;
                }
                let value = Json::Array(vec![Json::Number(i as f64), Json::Bool(true)]);
                let volatile = i % 3 == 0;
                c = if volatile {
                    c.volatile_field(name, value.clone()).unwrap()
                } else {
                    c.field(name, value.clone()).unwrap()
                };
                all.push((name.to_string(), value.clone()));
                if !volatile {
                    stable.push((name.to_string(), value));
                }
            }
            let object = |f: &[(String, Json)]| {
                canonical_object(f.iter().map(|(k, v)| (k.as_str(), v)), |_| false).unwrap()
            };
            assert_eq!(c.body(), object(&all), "mask {mask}");
            assert_eq!(c.fingerprint(), object(&stable), "mask {mask}");
        }
    }
}
