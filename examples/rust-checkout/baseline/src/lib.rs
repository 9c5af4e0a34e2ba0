//! The checkout page of `../src/lib.rs` without steadfast: the same button, the same request
//! (`POST /v1/charges` with an `Idempotency-Key`), the same outcome shown, but one plain `fetch`
//! per click — no retry, breaker, store or fingerprint. It is not served: `build.sh` builds it with
//! the same profile and flags and prints the difference between the two modules, which is what
//! steadfast's async API adds to an app.

use std::rc::Rc;

#[global_allocator]
static TALC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Document, Request, RequestInit};

struct Checkout {
    document: Document,
    key: String,
}

async fn pay(c: &Checkout) -> Result<String, String> {
    let failed = |_| "request failed".to_string();
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_body(&JsValue::from_str(
        r#"{"amountCents":4999,"currency":"usd"}"#,
    ));
    let request = Request::new_with_str_and_init("/v1/charges", &init).map_err(failed)?;
    request
        .headers()
        .set("Content-Type", "application/json")
        .map_err(failed)?;
    request
        .headers()
        .set("Idempotency-Key", &c.key)
        .map_err(failed)?;
    let window = web_sys::window().ok_or("no window")?;
    let response: web_sys::Response = JsFuture::from(window.fetch_with_request(&request))
        .await
        .map_err(failed)?
        .unchecked_into();
    if !response.ok() {
        return Err(format!("HTTP {}", response.status()));
    }
    let body = JsFuture::from(response.json().map_err(failed)?)
        .await
        .map_err(failed)?;
    js_sys::Reflect::get(&body, &"reference".into())
        .ok()
        .and_then(|r| r.as_string())
        .ok_or_else(|| "no reference".into())
}

impl Checkout {
    fn show(&self, text: &str) {
        if let Some(el) = self.document.get_element_by_id("outcome") {
            el.set_text_content(Some(text));
        }
        let o = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&o, &"status".into(), &"succeeded".into());
        let _ = js_sys::Reflect::set(&o, &"key".into(), &self.key.as_str().into());
        if let (Some(body), Some(json)) = (
            self.document.body(),
            js_sys::JSON::stringify(&o).ok().and_then(|s| s.as_string()),
        ) {
            let _ = body.set_attribute("data-outcome", &json);
        }
    }
}

#[wasm_bindgen(start)]
pub fn start() -> Result<(), JsValue> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let key = format!("{}", (js_sys::Math::random() * 1e15) as u64);
    let checkout = Rc::new(Checkout {
        document: document.clone(),
        key: key.clone(),
    });
    let pay_el = document.get_element_by_id("pay").ok_or("no #pay button")?;
    let on_click = Closure::<dyn FnMut()>::new(move || {
        let checkout = Rc::clone(&checkout);
        wasm_bindgen_futures::spawn_local(async move {
            let text = match pay(&checkout).await {
                Ok(r) => format!("Paid · {r}"),
                Err(e) => format!("Declined · {e}"),
            };
            checkout.show(&text);
        });
    });
    pay_el.add_event_listener_with_callback("click", on_click.as_ref().unchecked_ref())?;
    on_click.forget();
    if let Some(body) = document.body() {
        body.set_attribute("data-key", &key)?;
    }
    Ok(())
}
