//! How each payment gateway speaks idempotency, as data: one table, read by every shell.
//!
//! Why: gateways agree on the idea (one key per logical charge, the same key on every attempt) and
//! disagree on the wire. The IETF draft sends the key as a quoted Structured Field string, Stripe
//! and Adyen raw, PayPal and Checkout.com under their own header names; limits on the key differ
//! (Stripe 255 characters, Adyen 64); a key is kept 24 hours by one and 31 days by another, and a
//! re-send after that window is a NEW charge; "still processing this key" is a `409` at most
//! gateways and a `429` at Checkout.com (which therefore must not read as "throttled before any
//! processing"). So a dialect decides: the header and its syntax, the key rule, the retention
//! window, which answer means *in progress* (folded into [`crate::core::history`] as
//! [`Answer::InProgress`]: the key is held, the charge may have been processed), which answer
//! means *key reused for another request*, and which response header marks a replay.
//!
//! What the public documentation of each gateway does not say is left out of its row (no marker,
//! no status) rather than guessed; the docs list those gaps. A caller whose gateway differs passes
//! a custom dialect ([`Dialect::custom`]), validated here.

use crate::core::error::{Error, Expect, Opt};
use crate::core::history::Answer;
use crate::core::idempotency::validate_key;

/// How the key is written into its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySyntax {
    /// The key as is (`Idempotency-Key: 3b0c…`).
    Raw,
    /// An RFC 9651 Structured Field string: in double quotes, `\` and `"` escaped
    /// (`Idempotency-Key: "3b0c…"`), as the IETF httpapi draft requires.
    SfString,
}

impl KeySyntax {
    /// Every syntax, by id (the wasm boundary's code).
    pub const ALL: [KeySyntax; 2] = [KeySyntax::Raw, KeySyntax::SfString];

    /// Its id: its position in [`Self::ALL`] (the wasm boundary's code).
    pub const fn id(self) -> u8 {
        match self {
            KeySyntax::Raw => 0,
            KeySyntax::SfString => 1,
        }
    }

    /// The name users write (`'raw'`, `'sf-string'`).
    pub const fn name(self) -> &'static str {
        match self {
            KeySyntax::Raw => "raw",
            KeySyntax::SfString => "sf-string",
        }
    }
}

/// A gateway's idempotency dialect. Built-ins: [`BUILTIN`]; others: [`Dialect::custom`].
#[derive(Debug, Clone, PartialEq)]
pub struct Dialect {
    /// Its name (`'stripe'`, …; a custom one's own).
    pub name: String,
    /// The request header that carries the key (as documented; HTTP header names are
    /// case-insensitive).
    pub header: String,
    /// How the key is written in it.
    pub syntax: KeySyntax,
    /// The longest key the gateway accepts, in characters (the core's own rule, 1..=255 printable
    /// ASCII, applies too).
    pub max_key_len: u32,
    /// How long the gateway keeps a key, from its first use, in ms: past it a re-send with the
    /// same key would be a new charge. `f64::INFINITY`: not published (per API, or
    /// server-published), so no re-send is refused on age.
    pub retention_ms: f64,
    /// The status that means "a request with this key is still being processed" (`0`: none
    /// documented).
    pub in_progress_status: u16,
    /// The statuses that mean "this key was used for another request" (`0`: unused slot).
    pub reuse_statuses: [u16; 2],
    /// The error type the body must carry for a reuse status to mean reuse (`""`: the status
    /// alone). Read from `type` of an `application/problem+json` body, else `error.type`.
    pub reuse_error_type: String,
    /// The response header whose presence with value `true` marks a replayed answer (`""`: none
    /// documented).
    pub replay_header: String,
}

const HOUR_MS: f64 = 3_600_000.0;
const DAY_MS: f64 = 24.0 * HOUR_MS;

/// One built-in row, as static data.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// See [`Dialect`].
    pub name: &'static str,
    /// See [`Dialect`].
    pub header: &'static str,
    /// See [`Dialect`].
    pub syntax: KeySyntax,
    /// See [`Dialect`].
    pub max_key_len: u32,
    /// See [`Dialect`].
    pub retention_ms: f64,
    /// See [`Dialect`].
    pub in_progress_status: u16,
    /// See [`Dialect`].
    pub reuse_statuses: [u16; 2],
    /// See [`Dialect`].
    pub reuse_error_type: &'static str,
    /// See [`Dialect`].
    pub replay_header: &'static str,
}

/// The built-in dialects. `stripe` first: it is the default, and today's wire.
pub const BUILTIN: [Row; 5] = [
    Row {
        name: "stripe",
        header: "Idempotency-Key",
        syntax: KeySyntax::Raw,
        max_key_len: 255,
        retention_ms: DAY_MS,
        in_progress_status: 409,
        reuse_statuses: [400, 422],
        reuse_error_type: "idempotency_error",
        replay_header: "Idempotent-Replayed",
    },
    Row {
        name: "ietf",
        header: "Idempotency-Key",
        syntax: KeySyntax::SfString,
        max_key_len: 255,
        retention_ms: f64::INFINITY,
        in_progress_status: 409,
        reuse_statuses: [422, NO_STATUS],
        reuse_error_type: "",
        replay_header: "",
    },
    Row {
        name: "adyen",
        header: "Idempotency-Key",
        syntax: KeySyntax::Raw,
        max_key_len: 64,
        retention_ms: 31.0 * DAY_MS,
        in_progress_status: NO_STATUS,
        reuse_statuses: [NO_STATUS, NO_STATUS],
        reuse_error_type: "",
        replay_header: "",
    },
    Row {
        name: "paypal",
        header: "PayPal-Request-Id",
        syntax: KeySyntax::Raw,
        max_key_len: 255,
        retention_ms: f64::INFINITY,
        in_progress_status: NO_STATUS,
        reuse_statuses: [NO_STATUS, NO_STATUS],
        reuse_error_type: "",
        replay_header: "",
    },
    Row {
        name: "checkout",
        header: "Cko-Idempotency-Key",
        syntax: KeySyntax::Raw,
        max_key_len: 255,
        retention_ms: DAY_MS,
        in_progress_status: 429,
        reuse_statuses: [NO_STATUS, NO_STATUS],
        reuse_error_type: "",
        replay_header: "",
    },
];

/// What each built-in row's gateway documentation does not say, by row name (rendered into the
/// contract docs). Kept out of [`Row`]: the rows are data every shell reads at run time, while this
/// text is for the docs only, so a module that never asks for it does not carry it.
const UNCONFIRMED: [(&str, &str); 5] = [
    (
        "stripe",
        "the status of a key reused with other parameters (400 or 422: both are read as reuse when the body's error type is idempotency_error); the Idempotent-Replayed header is not in the idempotency page we could read",
    ),
    (
        "ietf",
        "the key limit and the retention window are the server's to publish (the table uses the core's 255 and no age limit); the draft defines no replay marker",
    ),
    (
        "adyen",
        "the answers for a key in progress and a key reused with another request; a replay marker (the response echoes the Idempotency-Key header, which confirms idempotent handling, not a replay); keys are not shared across regional endpoints",
    ),
    (
        "paypal",
        "the key limit and retention are per API (the table uses the core's 255 and no age limit); a second simultaneous request \"might fail\" with an undocumented answer; no replay marker",
    ),
    (
        "checkout",
        "the key limit (the table uses the core's 255); the answer for a key reused with another request; a replay marker. Only 2xx answers are kept, so an error answer is not replayed",
    ),
];

impl Row {
    /// What its gateway's public documentation does not say (rendered into the contract docs).
    pub fn unconfirmed(&self) -> &'static str {
        UNCONFIRMED
            .iter()
            .find(|(name, _)| *name == self.name)
            .map_or("", |(_, text)| text)
    }

    /// This row as a [`Dialect`].
    pub fn dialect(&self) -> Dialect {
        Dialect {
            name: owned(self.name),
            header: owned(self.header),
            syntax: self.syntax,
            max_key_len: self.max_key_len,
            retention_ms: self.retention_ms,
            in_progress_status: self.in_progress_status,
            reuse_statuses: self.reuse_statuses,
            reuse_error_type: owned(self.reuse_error_type),
            replay_header: owned(self.replay_header),
        }
    }
}

/// An owned copy of a row's text: one out-of-line copy for the four fields, not an inlined
/// allocate-and-copy each (wasm size).
#[inline(never)]
fn owned(s: &str) -> String {
    s.into()
}

/// The bytes of an RFC 9110 token (`tchar`): letters, digits and these symbols.
const TOKEN_SYMBOLS: &[u8] = b"!#$%&'*+-.^_`|~";

/// [`TOKEN_SYMBOLS`], letters and digits as a 128-bit set, bit `b` for byte `b`, in two halves.
/// Indexing is fine here: the set is built at compile time, where a bad index fails the build.
#[allow(clippy::indexing_slicing)]
const TOKEN_SET: [u64; 2] = {
    let mut set = [0u64; 2];
    let mut b = 0u8;
    while b < 128 {
        let mut is = b.is_ascii_alphanumeric();
        let mut i = 0;
        while i < TOKEN_SYMBOLS.len() {
            is |= TOKEN_SYMBOLS[i] == b;
            i += 1;
        }
        if is {
            set[(b / 64) as usize] |= 1 << (b % 64);
        }
        b += 1;
    }
    set
};

/// A header name: an RFC 9110 token. One set lookup per byte, out of line: it has two callers,
/// and a search of the symbol list inlined at each was a `memchr` loop apiece (wasm size).
#[inline(never)]
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| {
            TOKEN_SET
                .get(usize::from(b / 64))
                .is_some_and(|half| half >> (b % 64) & 1 == 1)
        })
}

/// Request header names a dialect's key header may not be (ASCII case-insensitive): the Fetch
/// standard's forbidden request-header names, which a browser's fetch drops or sets itself (and
/// undici refuses or overwrites), and `Content-Type`, which the checkout client sets on every
/// charge (a key there is merged into it). A key sent in one never reaches the gateway, yet the
/// client would keep retrying as if it did: every attempt a new charge there.
pub const FORBIDDEN_KEY_HEADERS: [&str; 25] = [
    "accept-charset",
    "accept-encoding",
    "access-control-request-headers",
    "access-control-request-method",
    "connection",
    "content-length",
    "content-type",
    "cookie",
    "cookie2",
    "date",
    "dnt",
    "expect",
    "host",
    "keep-alive",
    "origin",
    "referer",
    "set-cookie",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "via",
    "x-http-method",
    "x-http-method-override",
    "x-method-override",
];

/// Name prefixes a key header may not start with (ASCII case-insensitive): the Fetch standard
/// forbids every `Proxy-*` and `Sec-*` request header.
pub const FORBIDDEN_KEY_HEADER_PREFIXES: [&str; 2] = ["proxy-", "sec-"];

/// Whether `name` may carry the idempotency key: an HTTP token that is neither a forbidden
/// request header ([`FORBIDDEN_KEY_HEADERS`], [`FORBIDDEN_KEY_HEADER_PREFIXES`]) nor one the client
/// sets itself. The one copy of the rule for every shell (JS `dialect` options, the Rust `web`
/// shell's [`Dialect::custom`]).
pub fn is_key_header(name: &str) -> bool {
    if !is_token(name) {
        return false;
    }
    let lower = name.to_ascii_lowercase();
    !FORBIDDEN_KEY_HEADERS.contains(&lower.as_str())
        && !FORBIDDEN_KEY_HEADER_PREFIXES
            .iter()
            .any(|p| lower.starts_with(p))
}

/// A status slot of a dialect that holds none (no in-progress status, an unused reuse slot).
pub const NO_STATUS: u16 = 0;

fn status_ok(s: u16, allow_zero: bool) -> bool {
    (allow_zero && s == NO_STATUS) || (400..=599).contains(&s)
}

impl Dialect {
    /// The built-in dialect called `name`.
    pub fn builtin(name: &str) -> Option<Dialect> {
        // By index, then one call: a `find` was unrolled into a `dialect()` call per row.
        let i = BUILTIN.iter().position(|r| r.name == name)?;
        BUILTIN.get(i).map(Row::dialect)
    }

    /// A dialect of the caller's: every field validated (a key header that a request may carry,
    /// [`is_key_header`]: an HTTP token, not a forbidden request header nor `Content-Type`; a key limit of 1..=255, a retention window > 0 ms or infinite, statuses 400..=599 or 0 for
    /// none, a replay header that is a token or empty).
    pub fn custom(d: Dialect) -> Result<Dialect, Error> {
        let bad = |option, expected| Err(Error::InvalidOption { option, expected });
        if !is_token(&d.header) {
            return bad(Opt::Header, Expect::Token);
        }
        if !is_key_header(&d.header) {
            return bad(Opt::Header, Expect::KeyHeader);
        }
        if !(1..=255).contains(&d.max_key_len) {
            return bad(Opt::MaxKeyLength, Expect::IntegerAtLeastOne { max: 255 });
        }
        if d.retention_ms.is_nan() || d.retention_ms <= 0.0 {
            return bad(Opt::RetentionMs, Expect::Positive);
        }
        if !status_ok(d.in_progress_status, true) {
            return bad(Opt::InProgressStatus, Expect::ErrorStatus);
        }
        if !d.reuse_statuses.iter().all(|&s| status_ok(s, true)) {
            return bad(Opt::ReuseStatuses, Expect::ErrorStatus);
        }
        if !d.replay_header.is_empty() && !is_token(&d.replay_header) {
            return bad(Opt::ReplayHeader, Expect::Token);
        }
        Ok(d)
    }

    /// The header value for `key`, or [`Error::InvalidKey`] when the key breaks the core's rule or
    /// this dialect's length limit.
    pub fn header_value(&self, key: &str) -> Result<String, Error> {
        validate_key(key)?;
        if key.len() > self.max_key_len as usize {
            return Err(Error::KeyTooLong);
        }
        Ok(match self.syntax {
            KeySyntax::Raw => key.into(),
            KeySyntax::SfString => sf_string(key),
        })
    }

    /// What one HTTP answer is, for the charge's history: this dialect's in-progress status is
    /// [`Answer::InProgress`] (the gateway holds the key: it may have been processed), any other
    /// status is itself.
    pub fn answer(&self, status: u16) -> Answer {
        if self.in_progress_status != NO_STATUS && status == self.in_progress_status {
            Answer::InProgress
        } else {
            Answer::Status(status)
        }
    }

    /// Whether an answer says "this key was used for another request": one of the reuse statuses,
    /// and (when the dialect names one) the body's error type.
    pub fn is_reuse(&self, status: u16, error_type: &str) -> bool {
        status != NO_STATUS
            && self.reuse_statuses.contains(&status)
            && (self.reuse_error_type.is_empty() || self.reuse_error_type == error_type)
    }

    /// Whether the value of this dialect's replay header marks a replayed answer (`true`, ASCII
    /// case-insensitive, as sent by gateways that use it).
    pub fn is_replay(&self, header_value: Option<&str>) -> bool {
        !self.replay_header.is_empty()
            && header_value.is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }

    /// Whether a key first used at `first_used_ms` is past the gateway's retention window at
    /// `now_ms`: a re-send would be a new charge. A non-finite `first_used_ms` (unknown) is never
    /// expired.
    pub fn key_expired(&self, first_used_ms: f64, now_ms: f64) -> bool {
        first_used_ms.is_finite() && now_ms - first_used_ms >= self.retention_ms
    }
}

/// An RFC 9651 sf-string of printable ASCII (the key rule guarantees it): quoted, with `\` and
/// `"` escaped.
pub fn sf_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The inverse of [`sf_string`] (what a gateway following the IETF draft does): `None` for a value
/// that is not one sf-string of printable ASCII.
pub fn parse_sf_string(v: &str) -> Option<String> {
    let inner = v.trim().strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('"' | '\\')) => out.push(e),
                _ => return None,
            },
            '"' => return None,
            ' '..='~' => out.push(c),
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_set_is_the_tchar_rule() {
        for b in 0..=255u8 {
            let rule = b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
            let s = [b'a', b, b'z'];
            let text = std::str::from_utf8(&s).unwrap_or("a\u{80}z");
            assert_eq!(is_token(text), rule && text.len() == 3, "{b}");
        }
        assert!(!is_token(""));
    }

    #[test]
    fn sf_string_round_trips_and_escapes() {
        assert_eq!(sf_string("abc"), "\"abc\"");
        assert_eq!(sf_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
        for k in ["abc", "a\"b\\c", "x y"] {
            assert_eq!(parse_sf_string(&sf_string(k)).as_deref(), Some(k));
        }
        assert_eq!(parse_sf_string("abc"), None);
        assert_eq!(parse_sf_string("\"a\"b\""), None);
        assert_eq!(parse_sf_string("\"a\\x\""), None);
    }

    #[test]
    fn header_values_follow_each_dialect() {
        let ietf = Dialect::builtin("ietf").unwrap();
        assert_eq!(ietf.header_value("k-1").unwrap(), "\"k-1\"");
        let stripe = Dialect::builtin("stripe").unwrap();
        assert_eq!(stripe.header_value("k-1").unwrap(), "k-1");
        let adyen = Dialect::builtin("adyen").unwrap();
        assert_eq!(adyen.header_value(&"a".repeat(64)).unwrap().len(), 64);
        assert_eq!(adyen.header_value(&"a".repeat(65)), Err(Error::KeyTooLong));
        assert_eq!(stripe.header_value(" k"), Err(Error::InvalidKey));
    }

    #[test]
    fn in_progress_reuse_replay_and_retention() {
        let cko = Dialect::builtin("checkout").unwrap();
        assert_eq!(cko.answer(429), Answer::InProgress);
        let stripe = Dialect::builtin("stripe").unwrap();
        assert_eq!(stripe.answer(429), Answer::Status(429));
        assert_eq!(stripe.answer(409), Answer::InProgress);
        assert!(stripe.is_reuse(400, "idempotency_error"));
        assert!(!stripe.is_reuse(400, "invalid_request_error"));
        assert!(Dialect::builtin("ietf").unwrap().is_reuse(422, ""));
        assert!(!Dialect::builtin("adyen").unwrap().is_reuse(0, ""));
        assert!(stripe.is_replay(Some("true")));
        assert!(!stripe.is_replay(Some("false")));
        assert!(!Dialect::builtin("ietf").unwrap().is_replay(Some("true")));
        assert!(!stripe.key_expired(0.0, DAY_MS - 1.0));
        assert!(stripe.key_expired(0.0, DAY_MS));
        assert!(!stripe.key_expired(f64::NAN, DAY_MS * 9.0));
        assert!(!Dialect::builtin("paypal").unwrap().key_expired(0.0, 1e15));
    }

    #[test]
    fn a_key_header_fetch_drops_or_the_client_sets_is_refused() {
        let base = Dialect::builtin("stripe").unwrap();
        for name in [
            "Host",
            "host",
            "CONNECTION",
            "Content-Length",
            "Content-Type",
            "Cookie",
            "Origin",
            "Referer",
            "Transfer-Encoding",
            "TE",
            "Keep-Alive",
            "X-HTTP-Method-Override",
            "Sec-Idempotency-Key",
            "sec-fetch-mode",
            "Proxy-Authorization",
            "proxy-key",
        ] {
            assert!(!is_key_header(name), "{name}");
            let d = Dialect {
                header: name.into(),
                ..base.clone()
            };
            assert_eq!(
                Dialect::custom(d),
                Err(Error::InvalidOption {
                    option: Opt::Header,
                    expected: Expect::KeyHeader,
                }),
                "{name}"
            );
        }
        for name in [
            "Idempotency-Key",
            "X-Idempotency-Key",
            "Cko-Idempotency-Key",
            "PayPal-Request-Id",
            "Secret-Key",
            "Proxyish",
            "Hosts",
        ] {
            assert!(is_key_header(name), "{name}");
            let d = Dialect {
                header: name.into(),
                ..base.clone()
            };
            assert!(Dialect::custom(d).is_ok(), "{name}");
        }
        for row in BUILTIN {
            assert!(is_key_header(row.header), "{}", row.name);
        }
    }

    #[test]
    fn custom_dialects_are_validated() {
        let base = Dialect::builtin("stripe").unwrap();
        assert!(Dialect::custom(base.clone()).is_ok());
        let bad_header = Dialect {
            header: "Bad Header".into(),
            ..base.clone()
        };
        assert!(matches!(
            Dialect::custom(bad_header),
            Err(Error::InvalidOption {
                option: Opt::Header,
                ..
            })
        ));
        for (d, opt) in [
            (
                Dialect {
                    max_key_len: 0,
                    ..base.clone()
                },
                Opt::MaxKeyLength,
            ),
            (
                Dialect {
                    retention_ms: f64::NAN,
                    ..base.clone()
                },
                Opt::RetentionMs,
            ),
            (
                Dialect {
                    in_progress_status: 200,
                    ..base.clone()
                },
                Opt::InProgressStatus,
            ),
            (
                Dialect {
                    reuse_statuses: [422, 700],
                    ..base.clone()
                },
                Opt::ReuseStatuses,
            ),
        ] {
            assert!(
                matches!(Dialect::custom(d), Err(Error::InvalidOption { option, .. }) if option == opt),
                "{opt:?}"
            );
        }
    }
}
