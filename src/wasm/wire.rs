//! The wire's vocabulary, named once: every positional layout (the defaults arrays, the limiter,
//! quota and hedge presets and arguments, `keyRule`, `BreakerCore.config()` and `snapshot()`,
//! `StoreCore.peek`, `DialectCore.fields()`) and every code (begin and resolve answers, completion
//! kinds, record statuses, breaker states, transitions, kinds, jitters, timed-call verdicts, quota
//! error classes, hedge steps, retry stops, attempt answers, history verdicts,
//! `Stripe-Should-Retry` verdicts, dialect key syntaxes) crosses
//! as numbers, and the JS shell (`pkg-template/lib/wire.js`) reads their names from here once, at
//! load, to build frozen named objects. So JS holds no position or code of its own to drift from
//! the Rust that encodes them.
//!
//! Why one string: one export and one crossing for the whole vocabulary, no serde (size).
//! Format: `group:entry,entry,…;group:…`. An entry is a name, whose code (or slot) is its position
//! in the group, or `name=integer`, a named constant (written after the names). Groups: the layouts
//! `fetchDefaults`, `storeDefaults`, `keyRule`, `breakerConfig`, `breakerSnapshot` (its head; the
//! window follows), `peek`, `limiterPreset`, `quotaPreset`, `hedgeDefaults`, `hedge` (HedgeCore's
//! arguments), `dialectFields`; the codes `begin`, `resolve`, `completion`, `status`, `state`,
//! `transition`, `breakerKind`, `jitter`, `verdict`, `limiterPresetName`, `quotaPresetName`,
//! `errorClass`, `historyVerdict`, `shouldRetry`, `keySyntax`; constants only: `breaker`,
//! `hedgeStep`, `stop`, `answer`, `dialect` (a dialect's status slot that holds none). The text is
//! written at compile time (const fns), so the module carries the bytes and no code to build them.

// Every index below is evaluated at compile time (the consts and the const fns they call): an
// out-of-range one fails the build, it cannot trap at run time. `wire_layouts` indexes nothing.
#![allow(
    clippy::indexing_slicing,
    reason = "compile-time only: a bad index is a build error"
)]

use wasm_bindgen::prelude::*;

use super::{breaker, classify, defaults, dialect, hedge, idempotency, limiter, quota};
use crate::core::backoff::Jitter;
use crate::core::breaker::{State, Trip};
use crate::core::dialect::{KeySyntax, NO_STATUS};
use crate::core::hedge::{AWAIT_ANSWER_CODE, EXHAUSTED_CODE, START_CODE};
use crate::core::history::{
    Verdict, IN_PROGRESS_CODE, NOT_SENT_CODE, NO_ANSWER_CODE, REFUSED_CODE,
};
use crate::core::idempotency::{Completion, Status};
use crate::core::quota::ErrorClass;
use crate::core::retry::Stop;

/// A group: its name, its names by code (or slot), its named constants.
pub(super) type Group = (
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, i64)],
);

/// The `name()` of each of `$ty::ALL`, by id, as a const array (`[T; N]::map` is not const).
macro_rules! names_of {
    ($ty:ty, $n:expr) => {{
        let mut out = [""; $n];
        let mut i = 0;
        while i < out.len() {
            out[i] = <$ty>::ALL[i].name();
            i += 1;
        }
        out
    }};
}
#[cfg(feature = "sim")]
pub(super) use names_of;

const STATES: [&str; 4] = names_of!(State, 4);
/// A transition code's name: none, or the state entered (code = state id + 1).
const TRANSITIONS: [&str; 5] = {
    let mut out = ["none"; 5];
    let mut i = 0;
    while i < STATES.len() {
        out[i + 1] = STATES[i];
        i += 1;
    }
    out
};
const STATUSES: [&str; 3] = names_of!(Status, 3);
const COMPLETIONS: [&str; 4] = names_of!(Completion, 4);
const JITTERS: [&str; 4] = names_of!(Jitter, 4);
const ERROR_CLASSES: [&str; 3] = names_of!(ErrorClass, 3);
const KEY_SYNTAXES: [&str; 2] = names_of!(KeySyntax, 2);
const HISTORY_VERDICTS: [&str; 4] = names_of!(Verdict, 4);
/// RetryCore.afterFailure's stops: a negative answer is `-Stop::id()` (any other is the delay).
const STOPS: [(&str, i64); 3] = {
    let mut out = [("", 0); 3];
    let mut i = 0;
    while i < out.len() {
        let s = Stop::ALL[i];
        out[i] = (s.name(), -(s.id() as i64));
        i += 1;
    }
    out
};
/// historyRecord's answer codes that are not HTTP statuses (`core::history::answer_from_code`).
const ANSWERS: [(&str, i64); 4] = [
    ("notSent", NOT_SENT_CODE as i64),
    ("noAnswer", NO_ANSWER_CODE as i64),
    ("refused", REFUSED_CODE as i64),
    ("inProgress", IN_PROGRESS_CODE as i64),
];
/// HedgeCore.nextStep's codes (any answer > 0 is a wait in ms).
const HEDGE_STEPS: [(&str, i64); 3] = [
    ("start", START_CODE as i64),
    ("awaitAnswer", AWAIT_ANSWER_CODE as i64),
    ("exhausted", EXHAUSTED_CODE as i64),
];
/// parseShouldRetry's answers, by code.
const SHOULD_RETRY: [&str; 3] = {
    let mut out = [""; 3];
    out[classify::SHOULD_RETRY_NONE as usize] = "none";
    out[classify::SHOULD_RETRY_FALSE as usize] = "false";
    out[classify::SHOULD_RETRY_TRUE as usize] = "true";
    out
};

const GROUPS: [Group; 31] = [
    ("fetchDefaults", &defaults::FETCH_DEFAULTS, &[]),
    ("storeDefaults", &idempotency::STORE_DEFAULTS, &[]),
    ("keyRule", &idempotency::KEY_RULE_NAMES, &[]),
    ("breakerConfig", &breaker::CONFIG, &[]),
    ("breakerSnapshot", &breaker::SNAPSHOT, &[]),
    ("peek", &idempotency::PEEK, &[]),
    ("begin", &idempotency::BEGIN, &idempotency::BEGIN_CONSTANTS),
    (
        "resolve",
        &idempotency::RESOLVE,
        &idempotency::RESOLVE_CONSTANTS,
    ),
    ("completion", &COMPLETIONS, &[]),
    ("status", &STATUSES, &[]),
    ("state", &STATES, &[]),
    ("transition", &TRANSITIONS, &[]),
    ("breakerKind", &Trip::KINDS, &[]),
    ("jitter", &JITTERS, &[]),
    ("verdict", &breaker::VERDICT, &[]),
    ("breaker", &[], &breaker::CONSTANTS),
    ("limiterPreset", &limiter::PRESET, &[]),
    ("limiterPresetName", &limiter::PRESETS, &[]),
    ("quotaPreset", &quota::PRESET, &[]),
    ("quotaPresetName", &quota::PRESETS, &[]),
    ("errorClass", &ERROR_CLASSES, &[]),
    ("hedgeDefaults", &hedge::DEFAULT_SLOTS, &[]),
    ("hedge", &hedge::OPTIONS, &[]),
    ("hedgeStep", &[], &HEDGE_STEPS),
    ("stop", &[], &STOPS),
    ("answer", &[], &ANSWERS),
    ("historyVerdict", &HISTORY_VERDICTS, &[]),
    ("shouldRetry", &SHOULD_RETRY, &[]),
    ("keySyntax", &KEY_SYNTAXES, &[]),
    ("dialect", &[], &[("noStatus", NO_STATUS as i64)]),
    ("dialectFields", &dialect::FIELDS, &[]),
];

/// Decimal digits of `v` (sign included).
const fn int_len(v: i64) -> usize {
    let mut n = v.unsigned_abs();
    let mut len = if v < 0 { 2 } else { 1 };
    while n >= 10 {
        n /= 10;
        len += 1;
    }
    len
}

/// The length of the vocabulary's text.
pub(super) const fn text_len(groups: &[Group]) -> usize {
    let mut len = 0;
    let mut g = 0;
    while g < groups.len() {
        let (name, names, constants) = groups[g];
        len += name.len() + 1 + (g > 0) as usize; // "name:" and the ";" before it
        let mut i = 0;
        while i < names.len() {
            len += names[i].len() + (i > 0) as usize;
            i += 1;
        }
        let mut c = 0;
        while c < constants.len() {
            let (n, v) = constants[c];
            len += (names.len() + c > 0) as usize + n.len() + 1 + int_len(v);
            c += 1;
        }
        g += 1;
    }
    len
}

/// Copy `s` into `out` at `at`; the new end.
const fn put<const N: usize>(out: &mut [u8; N], at: usize, s: &[u8]) -> usize {
    let mut i = 0;
    while i < s.len() {
        out[at + i] = s[i];
        i += 1;
    }
    at + s.len()
}

/// The vocabulary's text, written at compile time: no formatting code in the module.
pub(super) const fn text<const N: usize>(groups: &[Group]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut at = 0;
    let mut g = 0;
    while g < groups.len() {
        let (name, names, constants) = groups[g];
        if g > 0 {
            at = put(&mut out, at, b";");
        }
        at = put(&mut out, at, name.as_bytes());
        at = put(&mut out, at, b":");
        let mut i = 0;
        while i < names.len() {
            if i > 0 {
                at = put(&mut out, at, b",");
            }
            at = put(&mut out, at, names[i].as_bytes());
            i += 1;
        }
        let mut c = 0;
        while c < constants.len() {
            let (n, v) = constants[c];
            if names.len() + c > 0 {
                at = put(&mut out, at, b",");
            }
            at = put(&mut out, at, n.as_bytes());
            at = put(&mut out, at, b"=");
            if v < 0 {
                at = put(&mut out, at, b"-");
            }
            let digits = int_len(v) - (v < 0) as usize;
            let mut m = v.unsigned_abs();
            let mut d = digits;
            while d > 0 {
                out[at + d - 1] = b'0' + (m % 10) as u8;
                m /= 10;
                d -= 1;
            }
            at += digits;
            c += 1;
        }
        g += 1;
    }
    out
}

/// The text of a `[Group; N]` const as a `&'static str`, written and checked at compile time (every
/// byte comes from a `&str` or is an ASCII digit or separator, so it is never empty: a test reads
/// every group), so no formatting or UTF-8 validation code is linked.
macro_rules! wire_text {
    ($groups:expr) => {{
        const TEXT: [u8; $crate::wasm::wire::text_len(&$groups)] =
            $crate::wasm::wire::text(&$groups);
        match ::core::str::from_utf8(&TEXT) {
            Ok(s) => s,
            Err(_) => "",
        }
    }};
}
#[cfg(feature = "sim")]
pub(super) use wire_text;

const WIRE: &str = wire_text!(GROUPS);

/// The names of every slot and code that crosses as a number (the format: this module's doc).
#[wasm_bindgen(js_name = wireLayouts)]
pub fn wire_layouts() -> String {
    WIRE.into()
}
