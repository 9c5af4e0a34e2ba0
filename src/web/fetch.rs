//! `fetch` over `web_sys::Request`/`Response` with the JS `resilientFetch` rules: retries only
//! for methods safe to repeat (POST/PATCH only with an Idempotency-Key, the same key on every
//! attempt), only for transient statuses (the server's `Stripe-Should-Retry` wins) or network
//! errors, honouring `Retry-After`, behind one breaker per origin and a shared budget, with
//! per-attempt and overall time limits. A keyed POST whose fate is unknown is reported as
//! [`Error::OutcomeUnknown`], never silently repeated with a new key.
//!
//! Why here and not in JS: a Rust app should need no JS of its own. Every rule is the core's
//! ([`crate::core::classify`]); this module only builds requests, awaits and aborts.

use std::cell::RefCell;

use web_sys::{Request, Response};

use super::breaker::{CircuitBreaker, Counts};
use super::error::{Classify, Error};
use super::num::{opt, Num};
use super::retry::{Attempt, RetryBudget, RetryPolicy};
use super::runtime::Signal;
use crate::core::breaker::{Registry, DEFAULT_MAX_ORIGINS};
use crate::core::classify::message_proves_not_sent;
use crate::core::dialect::Dialect;
use crate::core::history::{proves_not_sent, Answer};

#[cfg(target_arch = "wasm32")]
use platform::{fetch_on_wasm, send_on_wasm};

/// Why an attempt failed (the `E` of [`Error`] for [`fetch`]). `Debug` as derived, numbers as
/// JavaScript writes them on wasm32 (see [`Error`]'s `Debug`).
#[derive(Clone)]
#[non_exhaustive]
pub enum FetchFailure {
    /// `fetch` rejected: a network error (the Fetch standard rejects only for those). `code` is
    /// the first `code` on the error's `cause` chain (Node's undici: `ECONNREFUSED`…), if any.
    Network {
        /// The error's message (engine-specific: "Failed to fetch", "fetch failed"…); in Deno,
        /// whose `fetch` names no code, the message of the cause that names the connect stage
        /// (`error sending request for url (…): client error (Connect): tcp connect error: …`)
        /// when there is one: that stage proves nothing was sent.
        message: String,
        /// A Node-style code from the cause chain.
        code: Option<String>,
    },
    /// The attempt ran past `attempt_timeout_ms`.
    AttemptTimeout {
        /// The limit.
        ms: f64,
    },
    /// A transient HTTP answer that was to be retried. When retries end on one, [`fetch`]
    /// resolves with its `Response` (like `fetch`, for any status), so you only meet this inside
    /// a budget or deadline error.
    Status {
        /// The status.
        status: u16,
        /// The server's Retry-After, in ms.
        retry_after_ms: Option<f64>,
        /// The response.
        response: Response,
    },
    /// The request could not be built (a body already read, a header value fetch rejects).
    Request {
        /// The platform's message.
        message: String,
    },
    /// There is no `fetch` here: [`fetch`] and [`send`] compile off wasm32 (a crate that also
    /// builds for the server needs no `cfg` at each call) and return this without sending.
    Unsupported,
    /// `IDEMPOTENCY_KEY_EXPIRED` in JS: a re-send was refused because the key is past the
    /// dialect's retention window (the gateway may have forgotten it and would charge again) and
    /// an earlier attempt may have been processed. Nothing was sent; settle the charge by lookup.
    KeyExpired {
        /// When the key was first sent (ms since the epoch).
        first_used_at_ms: f64,
        /// The dialect's retention window.
        retention_ms: f64,
    },
}

impl Classify for FetchFailure {
    fn is_transient(&self) -> bool {
        !matches!(
            self,
            FetchFailure::Request { .. }
                | FetchFailure::Unsupported
                | FetchFailure::KeyExpired { .. }
        )
    }

    fn retry_after_ms(&self, _now_ms: f64) -> Option<f64> {
        match self {
            FetchFailure::Status { retry_after_ms, .. } => *retry_after_ms,
            _ => None,
        }
    }

    /// An answered status is that status; a refused connection (or a request fetch would not
    /// build) was never sent; any other network failure or a timeout may have been processed.
    fn answer(&self) -> Answer {
        match self {
            FetchFailure::Status { status, .. } => Answer::Status(*status),
            FetchFailure::Network { code: Some(c), .. } if proves_not_sent(c) => Answer::NotSent,
            FetchFailure::Network { message, .. } if message_proves_not_sent(message) => {
                Answer::NotSent
            }
            FetchFailure::Request { .. }
            | FetchFailure::Unsupported
            | FetchFailure::KeyExpired { .. } => Answer::NotSent,
            FetchFailure::Network { .. } | FetchFailure::AttemptTimeout { .. } => Answer::NoAnswer,
        }
    }
}

impl std::fmt::Debug for FetchFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchFailure::Network { message, code } => f
                .debug_struct("Network")
                .field("message", message)
                .field("code", code)
                .finish(),
            FetchFailure::AttemptTimeout { ms } => f
                .debug_struct("AttemptTimeout")
                .field("ms", &Num(*ms))
                .finish(),
            FetchFailure::Status {
                status,
                retry_after_ms,
                response,
            } => f
                .debug_struct("Status")
                .field("status", status)
                .field("retry_after_ms", &opt(retry_after_ms))
                .field("response", response)
                .finish(),
            FetchFailure::Request { message } => {
                f.debug_struct("Request").field("message", message).finish()
            }
            FetchFailure::Unsupported => f.write_str("Unsupported"),
            FetchFailure::KeyExpired {
                first_used_at_ms,
                retention_ms,
            } => f
                .debug_struct("KeyExpired")
                .field("first_used_at_ms", &Num(*first_used_at_ms))
                .field("retention_ms", &Num(*retention_ms))
                .finish(),
        }
    }
}

impl std::fmt::Display for FetchFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchFailure::Network { message, .. } => write!(f, "network error: {message}"),
            FetchFailure::AttemptTimeout { ms } => {
                write!(f, "attempt timed out after {} ms", Num(*ms))
            }
            FetchFailure::Status { status, .. } => write!(f, "HTTP {status}"),
            FetchFailure::Request { message } => write!(f, "bad request: {message}"),
            FetchFailure::Unsupported => f.write_str("no fetch on this platform (not wasm32)"),
            FetchFailure::KeyExpired { retention_ms, .. } => write!(
                f,
                "the idempotency key is past the gateway's retention window ({} ms): not re-sent",
                Num(*retention_ms)
            ),
        }
    }
}

impl std::error::Error for FetchFailure {}

/// Which Idempotency-Key to send on every attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdempotencyKey {
    /// A new UUID v4 for this call (one logical request), reused on each of its attempts.
    Auto,
    /// This key (1 to 255 printable ASCII characters).
    Key(String),
}

#[derive(Debug, Clone, Default)]
enum Choice<T> {
    #[default]
    Shared,
    Given(T),
    Off,
}

/// Options of [`fetch`].
///
/// # Default
/// Retry `max_attempts 3, base_delay_ms 100, max_delay_ms 10_000, full jitter`; one breaker per
/// origin, shared by every `fetch` of the page (`rate(20, 0.5, minimum_calls 10)`, open 30 s,
/// counting only transient failures); one shared budget (`ratio(0.2, 10.0, 10_000.0)`); no
/// attempt timeout, no deadline, no key (the request's own `Idempotency-Key` header is used if
/// it has one). The JS `resilientFetch` defaults.
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct FetchOptions {
    policy: Option<RetryPolicy>,
    attempt_timeout_ms: Option<f64>,
    deadline_ms: Option<f64>,
    breaker: Choice<CircuitBreaker>,
    budget: Choice<RetryBudget>,
    key: Option<IdempotencyKey>,
    signal: Option<Signal>,
    dialect: Option<Dialect>,
}

impl FetchOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Attempts, delays, jitter (its deadline and budget are replaced by this call's).
    pub fn policy(mut self, policy: RetryPolicy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Abort an attempt after `ms` (> 0); a timed-out attempt is transient.
    pub fn attempt_timeout_ms(mut self, ms: f64) -> Self {
        self.attempt_timeout_ms = Some(ms);
        self
    }

    /// Give up after `ms` (> 0) over all attempts and sleeps: [`Error::DeadlineExceeded`].
    pub fn deadline_ms(mut self, ms: f64) -> Self {
        self.deadline_ms = Some(ms);
        self
    }

    /// Use this breaker instead of the shared per-origin one.
    pub fn breaker(mut self, breaker: CircuitBreaker) -> Self {
        self.breaker = Choice::Given(breaker);
        self
    }

    /// No breaker.
    pub fn no_breaker(mut self) -> Self {
        self.breaker = Choice::Off;
        self
    }

    /// Use this budget instead of the shared one.
    pub fn budget(mut self, budget: RetryBudget) -> Self {
        self.budget = Choice::Given(budget);
        self
    }

    /// No budget.
    pub fn no_budget(mut self) -> Self {
        self.budget = Choice::Off;
        self
    }

    /// Send an Idempotency-Key on every attempt (makes POST and PATCH retryable).
    pub fn idempotency_key(mut self, key: IdempotencyKey) -> Self {
        self.key = Some(key);
        self
    }

    /// Speak this gateway dialect (`core::dialect`, e.g. `Dialect::builtin("ietf")`): the key in
    /// its header and syntax (checked against its length limit), its in-progress answer folded
    /// into the history as "may have been processed", a replayed error final (not retried), and
    /// no re-send past its retention window ([`FetchFailure::KeyExpired`]). Default: none (the key
    /// as `Idempotency-Key`, raw).
    pub fn dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = Some(dialect);
        self
    }

    /// Stop when `signal` aborts ([`Error::Aborted`]); the request in flight is aborted too.
    pub fn signal(mut self, signal: &Signal) -> Self {
        self.signal = Some(signal.clone());
        self
    }
}

thread_local! {
    static BREAKERS: RefCell<Registry<CircuitBreaker>> =
        RefCell::new(Registry::new(DEFAULT_MAX_ORIGINS as usize));
    static BUDGET: RefCell<Option<RetryBudget>> = const { RefCell::new(None) };
}

/// The breaker [`fetch`] uses by default for `origin` (e.g. `"https://api.example.com"`), made on
/// first use: read its state, snapshot it to share with JS code, or `isolate()` it. `None` only
/// if the default config were invalid (it is not).
///
/// The registry keeps [`DEFAULT_MAX_ORIGINS`] origins. Past it, the oldest breaker that is neither
/// pinned ([`pin_origin`]) nor holding protection (not closed, or a failure on record) is dropped;
/// when every kept one is pinned or in use, nothing is, and a new origin's breaker guards its own
/// call only (the core's rule, [`crate::core::breaker::Registry`], as in the JS `BreakerRegistry`).
pub fn origin_breaker(origin: &str) -> Option<CircuitBreaker> {
    shared_breaker(origin, false)
}

/// Keep `origin`'s default breaker for the page's lifetime: URLs fetched for other code (built
/// from user input, say) can never evict the breaker of the endpoint an app depends on. Returns
/// that breaker (see [`origin_breaker`]).
pub fn pin_origin(origin: &str) -> Option<CircuitBreaker> {
    shared_breaker(origin, true)
}

fn shared_breaker(origin: &str, pin: bool) -> Option<CircuitBreaker> {
    // The builder's defaults are the per-origin ones (core::breaker::RateOptions).
    let config = CircuitBreaker::builder().config().ok()?;
    let make = move || CircuitBreaker::new(config).counts(Counts::Transient);
    let holds = |b: &CircuitBreaker| b.holds_protection();
    BREAKERS.with(|cell| {
        let mut all = cell.borrow_mut();
        Some(if pin {
            all.pin(origin, holds, make)
        } else {
            all.get_or_insert_with(origin, holds, make)
        })
    })
}

#[cfg(target_arch = "wasm32")]
fn shared_budget() -> Option<RetryBudget> {
    use crate::core::budget::RatioOptions;
    BUDGET.with(|cell| {
        let mut b = cell.borrow_mut();
        if b.is_none() {
            let d = RatioOptions::default();
            *b = RetryBudget::ratio(d.ratio, d.min_retries_per_sec, d.window_ms).ok();
        }
        b.clone()
    })
}

/// `fetch(request)` with retries, a per-origin breaker, a shared budget, timeouts and an
/// Idempotency-Key on every attempt. Resolves with the final `Response` for any HTTP status
/// (like `fetch`), untouched. Errors: a network failure ([`FetchFailure::Network`]), an attempt
/// timeout, [`Error::Aborted`], [`Error::CircuitOpen`], [`Error::RetryBudgetExhausted`],
/// [`Error::DeadlineExceeded`], and [`Error::OutcomeUnknown`] when a keyed POST/PATCH may have
/// been processed. The request is cloned for each attempt and never consumed.
///
/// ```no_run
/// # async fn pay() -> Result<(), steadfast::web::Error<steadfast::web::FetchFailure>> {
/// use steadfast::web::{fetch, FetchOptions, IdempotencyKey};
/// let init = web_sys::RequestInit::new();
/// init.set_method("POST");
/// init.set_body(&"{\"amountCents\":4999}".into());
/// let request = web_sys::Request::new_with_str_and_init("/v1/charges", &init).unwrap();
/// let options = FetchOptions::new()
///     .idempotency_key(IdempotencyKey::Key("order-42".into()))
///     .attempt_timeout_ms(5_000.0)
///     .deadline_ms(20_000.0);
/// let response = fetch(&request, &options).await?;
/// assert!(response.ok());
/// # Ok(()) }
/// ```
pub async fn fetch(
    request: &Request,
    options: &FetchOptions,
) -> Result<Response, Error<FetchFailure>> {
    #[cfg(target_arch = "wasm32")]
    {
        fetch_on_wasm(request, options).await
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = (request, options);
        Err(Error::Operation(FetchFailure::Unsupported))
    }
}

/// One attempt of `request`, with the same rules as each attempt of [`fetch`]: a transient answer
/// (408, 429, 5xx, unless `Stripe-Should-Retry` says otherwise) is [`FetchFailure::Status`] with
/// the server's Retry-After, a network error is [`FetchFailure::Network`], anything else resolves
/// with the `Response`. The attempt's signal (deadline, caller's abort) and `timeout_ms` abort it.
/// Use it as the gateway of [`crate::web::charge_customer`] or inside your own
/// [`crate::web::retry`]: `FetchFailure` already implements [`Classify`].
///
/// ```no_run
/// # async fn pay(store: steadfast::web::ChargeDeps<String>) {
/// use steadfast::web::{charge_customer, send, Charge};
/// let charge = Charge::new("order-42", 4999, "usd").unwrap();
/// let result = charge_customer(&charge, &store, |charge, attempt| {
///     let init = web_sys::RequestInit::new();
///     init.set_method("POST");
///     let request = web_sys::Request::new_with_str_and_init("/v1/charges", &init).unwrap();
///     request.headers().set("Idempotency-Key", &charge.idempotency_key).unwrap();
///     async move {
///         let response = send(&request, &attempt, Some(5_000.0)).await?;
///         Ok::<_, steadfast::web::FetchFailure>(response.status().to_string())
///     }
/// })
/// .await;
/// # }
/// ```
pub async fn send(
    request: &Request,
    attempt: &Attempt,
    timeout_ms: Option<f64>,
) -> Result<Response, FetchFailure> {
    #[cfg(target_arch = "wasm32")]
    {
        send_on_wasm(request, attempt, timeout_ms).await
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = (request, attempt, timeout_ms);
        Err(FetchFailure::Unsupported)
    }
}

/// The effects on wasm32: build each attempt's `Request`, call the global `fetch`, await, abort.
#[cfg(target_arch = "wasm32")]
mod platform {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;

    use js_sys::{Promise, Reflect};
    use wasm_bindgen::prelude::*;
    use wasm_bindgen_futures::JsFuture;
    use web_sys::{AbortSignal, Headers, Request, RequestInit, RequestRedirect, Response, Url};

    use super::super::error::{Classify, Error};
    use super::super::js::new_idempotency_key;
    use super::super::retry::{retry_classified, Attempt, Classifier, RetryPolicy};
    use super::super::runtime::{Scope, Stopped};
    use super::{
        shared_breaker, shared_budget, Choice, FetchFailure, FetchOptions, IdempotencyKey,
    };
    use crate::core::classify::{
        is_transient_response, message_proves_not_sent, method_is_keyed, method_is_retryable,
        parse_retry_after,
    };
    use crate::core::dialect::{is_key_header, Dialect};
    use crate::core::history::{Answer, History, Verdict};
    use crate::core::idempotency::validate_key;

    #[wasm_bindgen]
    extern "C" {
        #[wasm_bindgen(js_name = fetch, catch)]
        fn global_fetch(request: &Request) -> Result<Promise, JsValue>;
    }

    fn message_of(e: &JsValue) -> String {
        Reflect::get(e, &JsValue::from_str("message"))
            .ok()
            .and_then(|m| m.as_string())
            .or_else(|| e.as_string())
            .unwrap_or_default()
    }

    /// The first `pick` answer for `e` or an error on its `cause` chain, four levels down at most
    /// and objects only (the JS `carries`).
    fn on_cause_chain<T>(e: &JsValue, mut pick: impl FnMut(&JsValue) -> Option<T>) -> Option<T> {
        let mut cur = e.clone();
        for _ in 0..4 {
            if !cur.is_object() {
                return None;
            }
            if let Some(found) = pick(&cur) {
                return Some(found);
            }
            cur = Reflect::get(&cur, &JsValue::from_str("cause")).ok()?;
        }
        None
    }

    /// `e`'s message, or the message on its `cause` chain that the core reads as proof that
    /// nothing was sent: Deno rejects with `TypeError("fetch failed")` and names the connect stage
    /// only in its cause.
    fn network_message(e: &JsValue) -> String {
        on_cause_chain(e, |x| {
            Some(message_of(x)).filter(|m| message_proves_not_sent(m))
        })
        .unwrap_or_else(|| message_of(e))
    }

    /// The first string `code` on `e` or its `cause` chain (like the JS `hasCode`).
    fn code_of(e: &JsValue) -> Option<String> {
        on_cause_chain(e, |x| {
            Reflect::get(x, &JsValue::from_str("code"))
                .ok()
                .and_then(|c| c.as_string())
        })
    }

    /// A status as `dialect` reads it: its in-progress answer holds the key.
    fn answer_in(dialect: Option<&Dialect>, status: u16) -> Answer {
        dialect.map_or(Answer::Status(status), |d| d.answer(status))
    }

    /// How the call's retry reads a failed attempt: by the `Classify` of [`FetchFailure`], its
    /// status as the dialect reads it. Why: the retry reports each attempt to the store run around
    /// the call, which must hear what the call's own history hears — a Checkout.com 429 is "still
    /// processing this key", not "throttled before processing".
    struct ByDialect<'d>(Option<&'d Dialect>);

    impl Classifier<FetchFailure> for ByDialect<'_> {
        fn is_transient(&self, error: &FetchFailure) -> bool {
            error.is_transient()
        }
        fn retry_after_ms(&self, error: &FetchFailure, now_ms: f64) -> Option<f64> {
            error.retry_after_ms(now_ms)
        }
        fn answer(&self, error: &FetchFailure) -> Answer {
            match error.answer() {
                Answer::Status(s) => answer_in(self.0, s),
                other => other,
            }
        }
    }

    fn invalid(option: &'static str, expected: &'static str) -> Error<FetchFailure> {
        Error::InvalidOption { option, expected }
    }

    fn request_error(e: &JsValue) -> Error<FetchFailure> {
        Error::Operation(FetchFailure::Request {
            message: message_of(e),
        })
    }

    /// Free the connection of a response nobody will read.
    fn cancel_body(response: &Response) {
        let cancel = Reflect::get(response, &JsValue::from_str("body"))
            .ok()
            .filter(JsValue::is_object)
            .and_then(|body| {
                let f = Reflect::get(&body, &JsValue::from_str("cancel")).ok()?;
                let f: js_sys::Function = f.dyn_into().ok()?;
                f.call0(&body).ok()
            });
        if let Some(p) = cancel.and_then(|p| p.dyn_into::<Promise>().ok()) {
            wasm_bindgen_futures::spawn_local(async move {
                let _ = JsFuture::from(p).await;
            });
        }
    }

    pub(super) async fn fetch_on_wasm(
        request: &Request,
        options: &FetchOptions,
    ) -> Result<Response, Error<FetchFailure>> {
        let started_at = js_sys::Date::now();
        if let Some(ms) = options.attempt_timeout_ms {
            if ms.is_nan() || ms <= 0.0 {
                return Err(invalid("attemptTimeoutMs", "a number > 0"));
            }
        }
        if let Some(ms) = options.deadline_ms {
            if ms.is_nan() || ms <= 0.0 {
                return Err(invalid("deadlineMs", "a number > 0"));
            }
        }
        if let Some(signal) = &options.signal {
            if signal.aborted() {
                return Err(Error::Aborted);
            }
        }
        let method = request.method().to_ascii_uppercase();
        let headers =
            Headers::new_with_headers(&request.headers()).map_err(|e| request_error(&e))?;
        let key = match &options.key {
            None => None,
            Some(IdempotencyKey::Auto) => Some(new_idempotency_key()?),
            Some(IdempotencyKey::Key(k)) => {
                validate_key(k)
                    .map_err(|_| Error::<FetchFailure>::InvalidKey { key: k.clone() })?;
                Some(k.clone())
            }
        };
        let dialect = options.dialect.as_ref();
        // A Dialect built field by field skips Dialect::custom: its header is checked here, before
        // anything is sent (fetch would drop a forbidden one, and the key with it).
        if dialect.is_some_and(|d| !is_key_header(&d.header)) {
            return Err(invalid(
                "dialect.header",
                "a header a request can carry (not one fetch manages or forbids, nor Content-Type)",
            ));
        }
        let key_header = dialect.map_or("Idempotency-Key", |d| d.header.as_str());
        if let Some(k) = &key {
            let value = match dialect {
                None => k.clone(),
                Some(d) => d
                    .header_value(k)
                    .map_err(|_| Error::<FetchFailure>::InvalidKey { key: k.clone() })?,
            };
            headers
                .set(key_header, &value)
                .map_err(|e| request_error(&e))?;
        }
        let key = key.or_else(|| headers.get(key_header).ok().flatten());
        // A method the core retries only with a key (POST, PATCH): its fate can be unknown.
        let keyed_method = method_is_keyed(&method);
        let retryable = method_is_retryable(&method, key.is_some());

        let base = match &options.policy {
            Some(p) => p.clone(),
            None => RetryPolicy::builder()
                .build()
                .map_err(|_| invalid("retry", "a valid policy"))?,
        };
        let budget = match &options.budget {
            Choice::Shared => shared_budget(),
            Choice::Given(b) => Some(b.clone()),
            Choice::Off => None,
        };
        let discarded: Rc<RefCell<Option<Response>>> = Rc::new(RefCell::new(None));
        let policy = base
            .with_max_attempts(if retryable { u32::MAX } else { 1 })
            .with_deadline(options.deadline_ms)
            .with_budget(budget);
        let breaker = match &options.breaker {
            Choice::Shared => {
                let origin = Url::new(&request.url())
                    .map(|u| u.origin())
                    .map_err(|e| request_error(&e))?;
                shared_breaker(&origin, false)
            }
            Choice::Given(b) => Some(b.clone()),
            Choice::Off => None,
        };

        // The call's history (core::history): every attempt folded in, and one still running when
        // the call stopped (deadline, abort) counted as unanswered.
        let history = Rc::new(Cell::new(History::default()));
        let running = Rc::new(Cell::new(false));
        let first_sent_at: Rc<Cell<Option<f64>>> = Rc::new(Cell::new(None));
        // The dialect's reading of a status: its in-progress answer holds the key.
        let answer_of = move |status: u16| answer_in(dialect, status);
        // A redirect would turn a keyed POST into a GET whose 200 charged nothing: never followed.
        let manual = keyed_method && key.is_some();
        let attempt = |ctx: Attempt| {
            let (method, headers, discarded) =
                (method.clone(), headers.clone(), Rc::clone(&discarded));
            let (history, running) = (Rc::clone(&history), Rc::clone(&running));
            let first_sent_at = Rc::clone(&first_sent_at);
            let timeout = options.attempt_timeout_ms;
            async move {
                if let Some(r) = discarded.borrow_mut().take() {
                    cancel_body(&r);
                }
                // Past the retention window a re-send would be a new charge: refused when an
                // earlier attempt may have been processed (settle by lookup instead).
                let now = js_sys::Date::now();
                if let (Some(d), Some(first)) = (dialect, first_sent_at.get()) {
                    if manual
                        && history.get().verdict() == Verdict::Unknown
                        && d.key_expired(first, now)
                    {
                        return Err(FetchFailure::KeyExpired {
                            first_used_at_ms: first,
                            retention_ms: d.retention_ms,
                        });
                    }
                }
                if first_sent_at.get().is_none() {
                    first_sent_at.set(Some(now));
                }
                running.set(true);
                let result = one_attempt(
                    request,
                    Some((&method, &headers)),
                    ctx,
                    timeout,
                    &discarded,
                    manual,
                    dialect,
                )
                .await;
                running.set(false);
                let answer = match &result {
                    Ok(response) => answer_of(response.status()),
                    Err(e) => match e.answer() {
                        Answer::Status(s) => answer_of(s),
                        other => other,
                    },
                };
                history.set(history.get().record(answer));
                result
            }
        };
        let run = || async {
            let mut call = retry_classified(&policy, ByDialect(dialect), attempt);
            if let Some(s) = &options.signal {
                call = call.signal(s);
            }
            call.await
        };
        let result = match &breaker {
            Some(b) => b.execute(run).await,
            None => run().await,
        };
        if running.get() {
            history.set(history.get().record(Answer::NoAnswer));
        }
        if options.signal.as_ref().is_some_and(AbortSignal::aborted) && result.is_err() {
            return Err(Error::Aborted);
        }
        // A keyed POST/PATCH whose history says an attempt may have been processed ends unknown,
        // whatever its last answer: a 404 or 401 after a dropped attempt proves nothing about it.
        let unknown = keyed_method && key.is_some() && history.get().verdict() == Verdict::Unknown;
        if let Err(e @ Error::Operation(FetchFailure::KeyExpired { .. })) = result {
            return Err(e);
        }
        let error = match (result, &key) {
            (Ok(response), _) if response.ok() || !unknown => return Ok(response),
            (Ok(response), Some(key)) => {
                cancel_body(&response);
                return Err(Error::OutcomeUnknown {
                    key: key.clone(),
                    started_at_ms: started_at,
                    cause: Some(Box::new(Error::Operation(FetchFailure::Status {
                        status: response.status(),
                        retry_after_ms: None,
                        response,
                    }))),
                });
            }
            (Ok(response), None) => return Ok(response),
            (Err(Error::Operation(FetchFailure::Status { response, .. })), _) if !unknown => {
                return Ok(response)
            }
            (Err(e), _) => e,
        };
        match key {
            Some(key) if unknown => Err(Error::OutcomeUnknown {
                key,
                started_at_ms: started_at,
                cause: Some(Box::new(error)),
            }),
            _ => Err(error),
        }
    }

    pub(super) async fn send_on_wasm(
        request: &Request,
        attempt: &Attempt,
        timeout_ms: Option<f64>,
    ) -> Result<Response, FetchFailure> {
        let unused = RefCell::new(None);
        // No method or headers given: `new Request(copy, init)` keeps the request's own, which is
        // what a copy of them would have set (and saves the copy).
        one_attempt(
            request,
            None,
            attempt.clone(),
            timeout_ms,
            &unused,
            false,
            None,
        )
        .await
    }

    /// One attempt: a copy of `request` with this attempt's signal and, when given, the call's
    /// method and headers (the key added); `None` sends the request's own.
    async fn one_attempt(
        request: &Request,
        method_and_headers: Option<(&str, &Headers)>,
        ctx: Attempt,
        timeout_ms: Option<f64>,
        discarded: &RefCell<Option<Response>>,
        manual_redirect: bool,
        dialect: Option<&Dialect>,
    ) -> Result<Response, FetchFailure> {
        let bad = |e: JsValue| FetchFailure::Request {
            message: message_of(&e),
        };
        // This attempt's signal: the call's (caller's abort, deadline) plus the attempt timeout.
        let scope = super::super::js::attempt_scope(ctx.signal.as_ref(), timeout_ms);
        let init = RequestInit::new();
        if let Some((method, headers)) = method_and_headers {
            init.set_method(method);
            init.set_headers(headers);
        }
        init.set_signal(scope.signal().as_ref());
        if manual_redirect {
            init.set_redirect(RequestRedirect::Manual);
        }
        let copy = request.clone().map_err(bad)?;
        let req = Request::new_with_request_and_init(&copy, &init).map_err(bad)?;
        let sent = global_fetch(&req).map_err(bad)?;
        let response: Response = match JsFuture::from(sent).await {
            Ok(r) => r.dyn_into().map_err(bad)?,
            Err(e) => {
                return Err(match (scope.stopped(), timeout_ms) {
                    (Some(Stopped::Deadline), Some(ms)) => FetchFailure::AttemptTimeout { ms },
                    _ => FetchFailure::Network {
                        message: network_message(&e),
                        code: code_of(&e),
                    },
                })
            }
        };
        if response.ok() {
            return Ok(response);
        }
        let h = response.headers();
        // A replayed error is the gateway's stored answer for the key: final, not transient.
        if let Some(d) = dialect.filter(|d| !d.replay_header.is_empty()) {
            if d.is_replay(h.get(&d.replay_header).ok().flatten().as_deref()) {
                return Ok(response);
            }
        }
        let should_retry = h.get("stripe-should-retry").ok().flatten();
        if !is_transient_response(f64::from(response.status()), should_retry.as_deref()) {
            return Ok(response);
        }
        let retry_after_ms = h
            .get("retry-after")
            .ok()
            .flatten()
            .and_then(|v| parse_retry_after(&v, js_sys::Date::now()));
        *discarded.borrow_mut() = Some(Clone::clone(&response));
        Err(FetchFailure::Status {
            status: response.status(),
            retry_after_ms,
            response,
        })
    }
}
