//! A checkout page in Rust → wasm, with plain web-sys: the Pay button charges through steadfast's
//! async API (`charge_customer`: idempotency → breaker → retry, one key on every attempt).
//!
//! Why this shape: the key is made once, when the page opens, for the one logical charge the page
//! represents; every click and every attempt reuses it, so a double click or a retry after a 503
//! can never debit twice, and a charge whose outcome is unknown is shown as such (never "try
//! again" with a new key).

use std::rc::Rc;

/// talc rather than std's dlmalloc: the same job in fewer bytes (the module size `build.sh`
/// prints). talc grows the wasm memory itself.
#[global_allocator]
static TALC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

use steadfast::web::{
    charge_customer, new_idempotency_key, send, Charge, ChargeDeps, ChargeOutcome, CircuitBreaker,
    Classify, Counts, Error, FetchFailure, IdempotencyStore, RetryPolicy,
};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Document, Request, RequestInit};

/// Why one attempt at the gateway failed.
#[derive(Debug)]
enum PayError {
    /// The HTTP layer: a network error, a timeout, or a transient status (503, 429 …).
    Http(FetchFailure),
    /// The gateway said no (a declined card, a bad request): definitive, the key is freed.
    Declined(String),
}

impl Classify for PayError {
    fn is_transient(&self) -> bool {
        match self {
            PayError::Http(f) => f.is_transient(),
            PayError::Declined(_) => false,
        }
    }

    fn retry_after_ms(&self, now_ms: f64) -> Option<f64> {
        match self {
            PayError::Http(f) => f.retry_after_ms(now_ms),
            PayError::Declined(_) => None,
        }
    }
}

/// One page, one logical charge.
struct Checkout {
    document: Document,
    charge: Charge,
    deps: ChargeDeps<String>,
}

fn js_err(e: impl std::fmt::Display) -> JsValue {
    JsValue::from_str(&e.to_string())
}

/// `POST /v1/charges` with the charge's key: built per attempt (a request body is read once).
fn charge_request(charge: &Charge) -> Result<Request, JsValue> {
    let init = RequestInit::new();
    init.set_method("POST");
    // The charge's own JSON: exactly the data its key's fingerprint is of.
    init.set_body(&JsValue::from_str(&charge.body()));
    let request = Request::new_with_str_and_init("/v1/charges", &init)?;
    request.headers().set("Content-Type", "application/json")?;
    request
        .headers()
        .set("Idempotency-Key", &charge.idempotency_key)?;
    Ok(request)
}

/// The gateway's charge reference from a successful answer.
async fn reference_of(response: web_sys::Response) -> Result<String, PayError> {
    let declined = |why: &str| PayError::Declined(why.into());
    let json = response.json().map_err(|_| declined("unreadable answer"))?;
    let body = JsFuture::from(json)
        .await
        .map_err(|_| declined("unreadable answer"))?;
    js_sys::Reflect::get(&body, &"reference".into())
        .ok()
        .and_then(|r| r.as_string())
        .ok_or_else(|| declined("answer without a reference"))
}

/// Why the gateway said no, as the JS checkout client reads it: `error.decline_code`, else
/// `error.code`, else "declined".
async fn decline_reason(response: web_sys::Response) -> String {
    let body = match response.json() {
        Ok(p) => JsFuture::from(p).await.unwrap_or(JsValue::UNDEFINED),
        Err(_) => JsValue::UNDEFINED,
    };
    let error = js_sys::Reflect::get(&body, &"error".into()).unwrap_or(JsValue::UNDEFINED);
    ["decline_code", "code"]
        .iter()
        .find_map(|field| {
            js_sys::Reflect::get(&error, &(*field).into())
                .ok()?
                .as_string()
        })
        .unwrap_or_else(|| "declined".into())
}

impl Checkout {
    async fn pay(&self) {
        self.show("Processing…", None);
        let result = charge_customer(&self.charge, &self.deps, |charge, attempt| {
            let request = charge_request(charge);
            async move {
                let request = request
                    .map_err(|_| PayError::Declined("the request could not be built".into()))?;
                let response = send(&request, &attempt, Some(10_000.0))
                    .await
                    .map_err(PayError::Http)?;
                if response.ok() {
                    reference_of(response).await
                } else {
                    Err(PayError::Declined(decline_reason(response).await))
                }
            }
        })
        .await;
        let key = self.charge.idempotency_key.clone();
        let outcome = match result {
            Ok(reference) => ChargeOutcome::Succeeded { reference, key },
            // A second click while the first is still charging: the first one will answer.
            Err(Error::DuplicateInFlight { .. }) => return,
            Err(Error::CircuitOpen { .. }) => {
                return self.show(
                    "Payments are unavailable right now: try again shortly",
                    None,
                )
            }
            Err(Error::Operation(PayError::Declined(reason))) => {
                ChargeOutcome::Declined { reason, key }
            }
            // A timeout, a dropped connection, retries that ran out: the money may have moved.
            Err(e) if e.is_transient() => ChargeOutcome::Unknown { key },
            Err(e) => {
                let why = e.code().unwrap_or("the gateway refused it");
                return self.show(&format!("Payment failed: {why}"), None);
            }
        };
        let text = match &outcome {
            ChargeOutcome::Succeeded { reference, .. } => format!("Paid · {reference}"),
            ChargeOutcome::Declined { reason, .. } => format!("Declined · {reason}"),
            ChargeOutcome::Unknown { .. } => {
                "We're checking with the bank: you will not be charged twice".into()
            }
        };
        self.show(&text, Some(&outcome));
    }

    fn show(&self, text: &str, outcome: Option<&ChargeOutcome>) {
        if let Some(el) = self.document.get_element_by_id("outcome") {
            el.set_text_content(Some(text));
        }
        let json = outcome
            .map(outcome_object)
            .and_then(|v| js_sys::JSON::stringify(&v).ok())
            .and_then(|s| s.as_string());
        if let (Some(body), Some(json)) = (self.document.body(), json) {
            let _ = body.set_attribute("data-outcome", &json);
        }
    }
}

/// The outcome in the JS package's shape (`{ status, reference | reason, key }`), built field by
/// field: `ChargeOutcome::to_js` would link serde-wasm-bindgen for one object.
fn outcome_object(outcome: &ChargeOutcome) -> JsValue {
    let o = js_sys::Object::new();
    let set = |k: &str, v: &str| {
        let _ = js_sys::Reflect::set(&o, &k.into(), &v.into());
    };
    match outcome {
        ChargeOutcome::Succeeded { reference, .. } => {
            set("status", "succeeded");
            set("reference", reference);
        }
        ChargeOutcome::Declined { reason, .. } => {
            set("status", "declined");
            set("reason", reason);
        }
        ChargeOutcome::Unknown { .. } => set("status", "unknown"),
    }
    set("key", outcome.key());
    o.into()
}

/// Runs when the module loads: one key for this page's charge, the Pay button wired to it.
#[wasm_bindgen(start)]
pub fn start() -> Result<(), JsValue> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let key = new_idempotency_key().map_err(js_err)?;
    let checkout = Rc::new(Checkout {
        charge: Charge::new(&key, 4999, "usd").map_err(js_err)?,
        deps: ChargeDeps {
            store: IdempotencyStore::new(),
            // The per-origin defaults (20 outcomes, 50 %, open 30 s); a declined card says
            // nothing about the gateway's health, so only transient failures count against it.
            breaker: CircuitBreaker::builder()
                .counts(Counts::Transient)
                .build()
                .map_err(js_err)?,
            policy: RetryPolicy::builder()
                .max_attempts(4)
                .base_delay_ms(200.0)
                .max_delay_ms(2_000.0)
                .build()
                .map_err(js_err)?,
        },
        document: document.clone(),
    });
    let pay = document.get_element_by_id("pay").ok_or("no #pay button")?;
    let on_click = Closure::<dyn FnMut()>::new(move || {
        let checkout = Rc::clone(&checkout);
        wasm_bindgen_futures::spawn_local(async move { checkout.pay().await });
    });
    pay.add_event_listener_with_callback("click", on_click.as_ref().unchecked_ref())?;
    on_click.forget(); // the button lives as long as the page
    if let Some(body) = document.body() {
        body.set_attribute("data-key", &key)?;
        body.set_attribute("data-ready", "true")?;
    }
    Ok(())
}
