//! The wire's vocabulary, named once: every positional layout (the defaults arrays, `keyRule`,
//! `BreakerCore.config()` and `snapshot()`, `StoreCore.peek`) and every code (begin and resolve
//! answers, completion kinds, record statuses, breaker states, transitions, kinds, jitters,
//! timed-call verdicts) crosses as numbers, and the JS shell (`pkg-template/lib/wire.js`) reads
//! their names from here once, at load, to build frozen named objects. So JS holds no position or
//! code of its own to drift from the Rust that encodes them.
//!
//! Why one string: one export and one crossing for the whole vocabulary, no serde (size).
//! Format: `group:entry,entry,…;group:…`. An entry is a name, whose code (or slot) is its position
//! in the group, or `name=integer`, a named constant (written after the names).

use wasm_bindgen::prelude::*;

use super::{breaker, defaults, idempotency};
use crate::core::backoff::Jitter;
use crate::core::breaker::{State, Trip};
use crate::core::idempotency::{Completion, Status};

/// Appends `group:` and its names.
fn group<'a>(out: &mut String, name: &str, names: impl IntoIterator<Item = &'a str>) {
    if !out.is_empty() {
        out.push(';');
    }
    out.push_str(name);
    out.push(':');
    for (i, n) in names.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(n);
    }
}

/// Appends `,name=value` for each named constant of the group just written.
fn constants(out: &mut String, values: &[(&str, i64)]) {
    for (name, value) in values {
        if !out.ends_with(':') {
            out.push(',');
        }
        out.push_str(name);
        out.push('=');
        push_int(out, *value);
    }
}

/// `value` in decimal, without `core::fmt` (its integer machinery costs more than this).
fn push_int(out: &mut String, value: i64) {
    if value < 0 {
        out.push('-');
    }
    let mut digits = [0u8; 20];
    let mut n = value.unsigned_abs();
    let mut len = 0;
    loop {
        if let Some(d) = digits.get_mut(len) {
            *d = b'0' + (n % 10) as u8;
        }
        len += 1;
        n /= 10;
        if n == 0 || len == digits.len() {
            break;
        }
    }
    for d in digits.iter().take(len).rev() {
        out.push(char::from(*d));
    }
}

/// The vocabulary: `"fetchDefaults:budget.ratio,…;begin:run,…,expiredFlag=8,slot=16;…"`. Groups:
/// the layouts `fetchDefaults`, `storeDefaults`, `keyRule`, `breakerConfig`, `breakerSnapshot`
/// (its head; the window follows), `peek`; the codes `begin`, `resolve`, `completion`, `status`,
/// `state`, `transition`, `breakerKind`, `jitter`, `verdict`, and `breaker` (constants only).
#[wasm_bindgen(js_name = wireLayouts)]
pub fn wire_layouts() -> String {
    let mut s = String::with_capacity(1024);
    group(&mut s, "fetchDefaults", defaults::FETCH_DEFAULTS);
    group(&mut s, "storeDefaults", idempotency::STORE_DEFAULTS);
    group(&mut s, "keyRule", idempotency::KEY_RULE_NAMES);
    group(&mut s, "breakerConfig", breaker::CONFIG);
    group(&mut s, "breakerSnapshot", breaker::SNAPSHOT);
    group(&mut s, "peek", idempotency::PEEK);
    group(&mut s, "begin", idempotency::BEGIN);
    constants(&mut s, &idempotency::BEGIN_CONSTANTS);
    group(&mut s, "resolve", idempotency::RESOLVE);
    constants(&mut s, &idempotency::RESOLVE_CONSTANTS);
    group(&mut s, "completion", Completion::ALL.map(Completion::name));
    group(&mut s, "status", Status::ALL.map(Status::name));
    group(&mut s, "state", State::ALL.map(State::name));
    group(
        &mut s,
        "transition",
        core::iter::once("none").chain(State::ALL.map(State::name)),
    );
    group(&mut s, "breakerKind", Trip::KINDS);
    group(&mut s, "jitter", Jitter::ALL.map(Jitter::name));
    group(&mut s, "verdict", breaker::VERDICT);
    group(&mut s, "breaker", []);
    constants(&mut s, &breaker::CONSTANTS);
    s
}
