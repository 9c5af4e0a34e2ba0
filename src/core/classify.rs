//! Which failures are worth retrying, and what the server said about when.
//!
//! Why this matters: retrying a `card_declined` burns quota, delays the user and can trip fraud
//! heuristics; a declined card will be declined forever. Transient means the request may succeed
//! if repeated: HTTP 408, 429 and every 5xx, and network-level failures. Every other 4xx is
//! permanent.
//!
//! Which requests may be repeated at all is HTTP's rule, not the error's: [`method_is_retryable`].

/// Network error codes (Node's `error.code`, also found nested as `error.cause.code`, undici's
/// fetch codes, and the HTTP clients' own) that mean "the request may succeed if repeated". None of
/// them proves that nothing was sent (that is [`crate::core::history::NOT_SENT_CODES`]): a code
/// listed here leaves a charge that may have been processed.
pub const TRANSIENT_CODES: [&str; 23] = [
    "ECONNRESET",
    "ETIMEDOUT",
    "EAI_AGAIN",
    "ECONNREFUSED",
    "ECONNABORTED",
    "EPIPE",
    "ENOTFOUND",
    "ENETUNREACH",
    "ENETDOWN",
    "EHOSTUNREACH",
    "EHOSTDOWN",
    "ESOCKETTIMEDOUT",
    "UND_ERR_CONNECT_TIMEOUT",
    "UND_ERR_HEADERS_TIMEOUT",
    "UND_ERR_BODY_TIMEOUT",
    "UND_ERR_SOCKET",
    "UND_ERR_CLOSED",
    "ERR_SOCKET_CONNECTION_TIMEOUT",
    "ERR_HTTP2_STREAM_ERROR",
    "ERR_STREAM_PREMATURE_CLOSE",
    // Node's http client (got's ReadError carries it): the body ended before its Content-Length,
    // so the server had answered, and the charge may have gone through.
    "ERR_HTTP_CONTENT_LENGTH_MISMATCH",
    // axios: a network error (its browser adapter's XMLHttpRequest error, its fetch adapter's
    // "Network Error"). The browser says nothing of whether the request left.
    "ERR_NETWORK",
    // axios: the request was aborted (its signal fired, a cancel token): an abort, as `AbortError`.
    "ERR_CANCELED",
];

/// The `type` of an error of a payment SDK that means the request was sent, or may have been, and
/// no definitive answer came: Stripe's `StripeConnectionError` (its `detail` holds the network
/// error, read first: a refused connection there still proves nothing was sent), and Braintree's
/// `unexpectedError` (a network error, a timeout, a cut-off body and an unlisted status such as
/// `502` alike: its message is all it keeps), `serverError` (`500`), `serviceUnavailableError`
/// (`503`), `gatewayTimeoutError` (`504`) and `requestTimeoutError` (`408`). Neither SDK puts a
/// status or a network code on these errors, so without this list they read as definitive
/// refusals, and a charge that may have gone through would free its key.
pub const TRANSIENT_TYPES: [&str; 6] = [
    "StripeConnectionError",
    "unexpectedError",
    "serverError",
    "serviceUnavailableError",
    "gatewayTimeoutError",
    "requestTimeoutError",
];

/// Whether a payment SDK's error `type` means "sent or possibly sent, not answered"
/// ([`TRANSIENT_TYPES`]; exact, case-sensitive).
pub fn is_transient_type(error_type: &str) -> bool {
    TRANSIENT_TYPES.contains(&error_type)
}

/// HTTP 408, 429 and every status ≥ 500 are transient; everything else is not. Non-integer or
/// out-of-range numbers (NaN, 99, 1000) are not HTTP statuses and are not transient.
pub fn is_transient_status(status: f64) -> bool {
    if !(100.0..=599.0).contains(&status) || status.fract() != 0.0 {
        return false;
    }
    status == 408.0 || status == 429.0 || status >= 500.0
}

/// Whether a network error code is transient (exact, case-sensitive match as Node reports them).
pub fn is_transient_code(code: &str) -> bool {
    TRANSIENT_CODES.contains(&code)
}

/// Whether the message of a fetch network error proves that the request never left: the
/// connection was never made. The codes that prove it are [`crate::core::history::NOT_SENT_CODES`]
/// (Node's `ECONNREFUSED`…); Deno's fetch names no code, only hyper's chain of causes, on the
/// rejection's `cause` (`TypeError("fetch failed")`) or, in older Deno, on the rejection itself:
///
/// `error sending request for url (http://127.0.0.1:9/): client error (Connect): tcp connect error: Connection refused (os error 111)`
///
/// The stage names the fact: `client error (Connect)` is the connector failing, before any byte of
/// the request was written; within it `tcp connect error` (refused, unreachable, connect timed
/// out) and `dns error` (the name did not resolve) mean no connection ever existed. Every other
/// text is not proof: a failure after connecting (`client error (SendRequest): connection closed
/// before message completed`, or a bare `Connection reset by peer (os error 104)`) may have
/// reached the server, and a TLS failure inside the connect stage is left to the status and code
/// rules. The stage is matched after the URL, which a serialized URL cannot fake (it has no
/// spaces); the OS's own words (`Connection refused`, which differ per platform) are not read.
pub fn message_proves_not_sent(message: &str) -> bool {
    const DENO: &[u8] = b"error sending request ";
    const CONNECT: &[u8] = b": client error (Connect): ";
    // On bytes, with `get`: a `str` slice and `rfind` linked a panic path that formats (the
    // char-boundary check) and the two-way searcher, ~3.7 KB gz of the npm module for one rule.
    let m = message.as_bytes();
    if !has_at(m, 0, DENO) {
        return false;
    }
    let last = (0..=m.len().saturating_sub(CONNECT.len()))
        .rev()
        .find(|&i| has_at(m, i, CONNECT));
    match last.map(|at| at + CONNECT.len()) {
        Some(cause) => has_at(m, cause, b"tcp connect error") || has_at(m, cause, b"dns error"),
        None => false,
    }
}

/// Whether `m` holds `literal` from index `at` on. Kept out of line: inlined, each literal was
/// compared as its own unrolled run of 8-byte words (wasm size); here it is one `memcmp`.
#[inline(never)]
fn has_at(m: &[u8], at: usize, literal: &[u8]) -> bool {
    m.get(at..).is_some_and(|rest| rest.starts_with(literal))
}

/// Whether a request with this method may be sent again after a failure that left its fate unknown
/// (RFC 9110 §9.2.2): the idempotent methods GET, HEAD, OPTIONS, PUT, DELETE and QUERY always;
/// POST and PATCH only with an `Idempotency-Key` (the server then deduplicates); TRACE and CONNECT
/// never (fetch refuses to send them), nor any other method. ASCII case-insensitive.
///
/// This is the one copy of the rule: `resilientFetch` (through the wasm export
/// `methodIsRetryable`) and the Rust async shell both ask it.
pub fn method_is_retryable(method: &str, has_idempotency_key: bool) -> bool {
    const SAFE: [&str; 6] = ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "QUERY"];
    const KEYED: [&str; 2] = ["POST", "PATCH"];
    let is = |m: &&str| same_method(m, method);
    SAFE.iter().any(is) || (has_idempotency_key && KEYED.iter().any(is))
}

/// ASCII case-insensitive equality, kept out of line: inlined, each of the eight comparisons
/// above was unrolled for its constant's length (1.5 KB of wasm for one method rule).
#[inline(never)]
fn same_method(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Whether `method` is one that only an Idempotency-Key makes repeatable (POST, PATCH): the
/// requests that carry a key, are never redirected and may end "outcome unknown". Derived from
/// [`method_is_retryable`], so the method lists exist once; both shells (`resilientFetch` through
/// the wasm export `methodIsKeyed`, and the Rust `fetch`) ask this.
pub fn method_is_keyed(method: &str) -> bool {
    method_is_retryable(method, true) && !method_is_retryable(method, false)
}

/// `Stripe-Should-Retry`: `Some(true)`/`Some(false)` for the literal strings, else `None`.
pub fn parse_should_retry(value: &str) -> Option<bool> {
    match value.trim() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Whether an HTTP answer is worth retrying: the server's own verdict (`Stripe-Should-Retry:
/// true|false`) wins — a 409 "key in use" says true — else [`is_transient_status`]. The Rust
/// `fetch` asks this with the raw header; JS asks [`is_transient_verdict`] (through the wasm
/// export `isTransientResponse`) with the header already read by [`parse_should_retry`].
pub fn is_transient_response(status: f64, should_retry: Option<&str>) -> bool {
    is_transient_verdict(status, should_retry.and_then(parse_should_retry))
}

/// The one copy of the combining rule: the server's parsed verdict wins, else the status rule.
pub fn is_transient_verdict(status: f64, verdict: Option<bool>) -> bool {
    match verdict {
        Some(verdict) => verdict,
        None => is_transient_status(status),
    }
}

/// `Retry-After` in milliseconds from `now_ms`: delta-seconds (`"120"`) or an HTTP-date in any of
/// the three RFC 9110 formats. A date in the past gives 0. Anything unparseable gives `None`.
pub fn parse_retry_after(value: &str, now_ms: f64) -> Option<f64> {
    let v = value.trim();
    if v.is_empty() {
        return None;
    }
    // One pass that leaves for the date path at the first non-digit: a loop with two exits,
    // which the compiler keeps rolled (wasm size).
    let mut secs = 0.0;
    for b in v.bytes() {
        if !b.is_ascii_digit() {
            let at = parse_http_date(v, now_ms)?;
            return Some((at - now_ms).max(0.0));
        }
        // Saturates to a huge finite or infinite value for absurd inputs; callers cap it.
        secs = secs * 10.0 + f64::from(b - b'0');
    }
    Some(secs * 1000.0)
}

/// Every name an HTTP-date may contain, lowercase, each after its length: the twelve months
/// first (their index is the month - 1), then the weekdays (short and long) and `GMT`, which
/// carry nothing the date needs. One byte table walked by one loop, not a comparison per name.
const NAMES: &[u8] =
    b"\x03jan\x03feb\x03mar\x03apr\x03may\x03jun\x03jul\x03aug\x03sep\x03oct\x03nov\x03dec\
\x03mon\x03tue\x03wed\x03thu\x03fri\x03sat\x03sun\x06monday\x07tuesday\x09wednesday\x08thursday\
\x06friday\x08saturday\x06sunday\x03gmt";

/// The index of `token` among [`NAMES`], ASCII case-insensitive. A name of another length is
/// stepped over whole.
fn name_index(token: &[u8]) -> Option<u32> {
    let (mut index, mut rest) = (0, NAMES);
    while let Some((&len, tail)) = rest.split_first() {
        let (name, next) = tail.split_at_checked(usize::from(len))?;
        // `n` is a lowercase letter, so `t | 0x20 == n` holds for exactly `n` and its capital.
        if name.len() == token.len() && name.iter().zip(token).all(|(n, t)| t | 0x20 == *n) {
            return Some(index);
        }
        index += 1;
        rest = next;
    }
    None
}

/// Milliseconds since the Unix epoch of an HTTP-date: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37
/// GMT`), obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) or asctime (`Sun Nov  6 08:49:37
/// 1994`).
///
/// An RFC 850 two-digit year is read as RFC 9110 §5.6.7 requires, relative to `now_ms` (no fixed
/// pivot): the latest year ending in those digits whose date is not more than 50 years after
/// `now_ms` — a date that would be further ahead is the most recent past year with the same two
/// digits (read in 2026, `-76` is 2076 and `-77` is 1977; read in 2060, `-00` is 2100). A `now_ms`
/// that is not finite counts as the epoch.
pub fn parse_http_date(value: &str, now_ms: f64) -> Option<f64> {
    // Bytes, not chars: every delimiter and every accepted token is ASCII, and byte slices split
    // and compare without the str pattern machinery or a lowercased copy (wasm size).
    let mut month = None;
    let mut time = None;
    let mut numbers = [0u32; 2];
    let mut year_digits = 0;
    let mut count = 0;
    let tokens = value.as_bytes().split(|b| matches!(b, b' ' | b',' | b'-'));
    for token in tokens.filter(|t| !t.is_empty()) {
        if let Some(n) = parse_small(token) {
            match count {
                0 => numbers[0] = n,
                1 => {
                    numbers[1] = n;
                    year_digits = token.len();
                }
                _ => return None,
            }
            count += 1;
        } else if let Some(i) = name_index(token) {
            if i < 12 {
                month = Some(i + 1);
            }
        } else {
            // Neither one to four digits nor a name: only `hh:mm:ss` is left (a token without
            // a `:` is one part, and so refused there, as is a longer run of digits).
            time = Some(parse_time(token)?);
        }
    }
    let (month, time_of_day) = (month?, time?);
    if count != 2 {
        return None;
    }
    let day = numbers[0];
    let year = match year_digits {
        2 => two_digit_year(numbers[1], month, day, time_of_day, now_ms),
        4 => numbers[1],
        _ => return None,
    };
    if day == 0 || day > days_in_month(year, month) {
        return None;
    }
    // Exact: both terms and their sum are integers below 2^53.
    let days = f64::from(days_from_civil(year, month, day)) - EPOCH_DAYS;
    Some(days * 86_400_000.0 + f64::from(time_of_day) * 1000.0)
}

/// RFC 9110 §5.6.7: the latest year ending in `yy` whose date is at most 50 years after `now_ms`.
/// Compared field by field (year, month, day, time) with `now` + 50 years, so a day that does not
/// exist in a candidate year (29 Feb) cannot confuse the comparison.
fn two_digit_year(yy: u32, month: u32, day: u32, time_of_day: u32, now_ms: f64) -> u32 {
    // Clamp to years 0..=9999 so the arithmetic below stays in range for any input.
    const LAST_MS: f64 = 253_402_300_799_000.0;
    let now = if now_ms.is_finite() {
        now_ms.clamp(0.0, LAST_MS)
    } else {
        0.0
    };
    let now_secs = (now / 1000.0).floor() as u64;
    let (now_year, now_month, now_day) = civil_from_days((now_secs / 86_400) as u32);
    // (month, day, time) as one number ordered as the triple is: day < 32, time <= 86_400
    // (a leap second), so no two triples share a number.
    let within_year = |m: u32, d: u32, t: u32| (m * 32 + d) * 86_401 + t;
    let limit = (
        now_year + 50,
        within_year(now_month, now_day, (now_secs % 86_400) as u32),
    );
    let date = within_year(month, day, time_of_day);
    let mut year = now_year / 100 * 100 + yy;
    if (year + 100, date) <= limit {
        year += 100;
    } else if (year, date) > limit && year >= 100 {
        year -= 100;
    }
    year
}

/// The second of the day of `h:m:s`: exactly three fields of one to four digits each, at most
/// 23, 59 and 60 (a leap second).
fn parse_time(token: &[u8]) -> Option<u32> {
    let mut fields = [0u32; 3];
    let mut count = 0;
    // One loop over the fields, so the split is inlined once (wasm size).
    for part in token.split(|b| *b == b':') {
        *fields.get_mut(count)? = parse_small(part)?;
        count += 1;
    }
    let [h, m, s] = fields;
    if count != 3 || h > 23 || m > 59 || s > 60 {
        return None;
    }
    Some(h * 3600 + m * 60 + s)
}

/// One to four ASCII digits. Not inlined: its four callers share one copy (wasm size).
#[inline(never)]
fn parse_small(t: &[u8]) -> Option<u32> {
    if t.is_empty() || t.len() > 4 {
        return None;
    }
    let mut n = 0;
    for &b in t {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u32::from(b - b'0');
    }
    Some(n)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// What [`days_from_civil`] gives for 1970-01-01.
const EPOCH_DAYS: f64 = 719_468.0 + 146_097.0;

/// The proleptic Gregorian (year, month, day) of a day count since 1970-01-01, for days in years
/// 0..=9999 (Howard Hinnant's algorithm, the inverse of `days_from_civil`). Unsigned: no day
/// before the epoch is asked for.
fn civil_from_days(days: u32) -> (u32, u32, u32) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + u32::from(month <= 2), month, day)
}

/// Days from 0000-03-01 minus one 400-year era (so that every count is unsigned) to a proleptic
/// Gregorian date (Howard Hinnant's algorithm); [`EPOCH_DAYS`] is 1970-01-01's.
fn days_from_civil(year: u32, month: u32, day: u32) -> u32 {
    let y = year + 400 - u32::from(month <= 2);
    let era = y / 400;
    let yoe = y % 400;
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The parser as it was before it was rewritten for size: the new one must agree with it on
    /// every input.
    mod oracle {
        pub(super) fn parse_retry_after(value: &str, now_ms: f64) -> Option<f64> {
            let v = value.trim();
            if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
                // Saturates to a huge finite or infinite value for absurd inputs; callers cap it.
                let secs: f64 = v
                    .bytes()
                    .fold(0.0, |acc, b| acc * 10.0 + f64::from(b - b'0'));
                return Some(secs * 1000.0);
            }
            let at = parse_http_date(v, now_ms)?;
            Some((at - now_ms).max(0.0))
        }

        pub(super) const MONTHS: [&str; 12] = [
            "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
        ];

        /// Milliseconds since the Unix epoch of an HTTP-date: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37
        /// GMT`), obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) or asctime (`Sun Nov  6 08:49:37
        /// 1994`).
        ///
        /// An RFC 850 two-digit year is read as RFC 9110 §5.6.7 requires, relative to `now_ms` (no fixed
        /// pivot): the latest year ending in those digits whose date is not more than 50 years after
        /// `now_ms` — a date that would be further ahead is the most recent past year with the same two
        /// digits (read in 2026, `-76` is 2076 and `-77` is 1977; read in 2060, `-00` is 2100). A `now_ms`
        /// that is not finite counts as the epoch.
        pub(super) fn parse_http_date(value: &str, now_ms: f64) -> Option<f64> {
            // Bytes, not chars: every delimiter and every accepted token is ASCII, and byte slices split
            // and compare without the str pattern machinery or a lowercased copy (wasm size: issue 15).
            let mut month = None;
            let mut time = None;
            let mut numbers = [0u32; 2];
            let mut year_digits = 0;
            let mut count = 0;
            let tokens = value.as_bytes().split(|b| matches!(b, b' ' | b',' | b'-'));
            for token in tokens.filter(|t| !t.is_empty()) {
                if token.contains(&b':') {
                    let mut parts = token.split(|b| *b == b':').map(parse_small);
                    let (h, m, s) = (parts.next()??, parts.next()??, parts.next()??);
                    if parts.next().is_some() || h > 23 || m > 59 || s > 60 {
                        return None;
                    }
                    time = Some((h, m, s));
                } else if token.iter().all(u8::is_ascii_digit) {
                    let n = parse_small(token)?;
                    match count {
                        0 => numbers[0] = n,
                        1 => {
                            numbers[1] = n;
                            year_digits = token.len();
                        }
                        _ => return None,
                    }
                    count += 1;
                } else if let Some(i) = MONTHS
                    .iter()
                    .position(|m| m.as_bytes().eq_ignore_ascii_case(token))
                {
                    month = Some(i as u32 + 1);
                } else if !is_weekday_or_gmt(token) {
                    return None;
                }
            }
            let (month, (h, m, s)) = (month?, time?);
            if count != 2 {
                return None;
            }
            let day = numbers[0];
            let time_of_day = i64::from(h * 3600 + m * 60 + s);
            let year = match year_digits {
                2 => two_digit_year(numbers[1], month, day, time_of_day, now_ms),
                4 => numbers[1],
                _ => return None,
            };
            if day == 0 || day > days_in_month(year, month) {
                return None;
            }
            let days = days_from_civil(i64::from(year), month, day);
            Some((days * 86_400 + time_of_day) as f64 * 1000.0)
        }

        /// RFC 9110 §5.6.7: the latest year ending in `yy` whose date is at most 50 years after `now_ms`.
        /// Compared field by field (year, month, day, time) with `now` + 50 years, so a day that does not
        /// exist in a candidate year (29 Feb) cannot confuse the comparison.
        pub(super) fn two_digit_year(
            yy: u32,
            month: u32,
            day: u32,
            time_of_day: i64,
            now_ms: f64,
        ) -> u32 {
            // Clamp to years 0..=9999 so the arithmetic below stays in range for any input.
            const LAST_MS: f64 = 253_402_300_799_000.0;
            let now = if now_ms.is_finite() {
                now_ms.clamp(0.0, LAST_MS)
            } else {
                0.0
            };
            let now_secs = (now / 1000.0).floor() as i64;
            let (now_year, now_month, now_day) = civil_from_days(now_secs.div_euclid(86_400));
            let now_time = now_secs.rem_euclid(86_400);
            let limit = (now_year + 50, now_month, now_day, now_time);
            let mut year = now_year / 100 * 100 + yy;
            if (year + 100, month, day, time_of_day) <= limit {
                year += 100;
            } else if (year, month, day, time_of_day) > limit && year >= 100 {
                year -= 100;
            }
            year
        }

        pub(super) fn parse_small(t: &[u8]) -> Option<u32> {
            if t.is_empty() || t.len() > 4 || !t.iter().all(u8::is_ascii_digit) {
                return None;
            }
            Some(t.iter().fold(0, |acc, b| acc * 10 + u32::from(b - b'0')))
        }

        /// The weekday names (short and long) and `GMT`, in the order the parser's table lists them.
        pub(super) const WEEKDAYS_AND_GMT: [&str; 15] = [
            "mon",
            "tue",
            "wed",
            "thu",
            "fri",
            "sat",
            "sun",
            "monday",
            "tuesday",
            "wednesday",
            "thursday",
            "friday",
            "saturday",
            "sunday",
            "gmt",
        ];

        /// A weekday name (short or long) or `GMT`, ASCII case-insensitive.
        pub(super) fn is_weekday_or_gmt(token: &[u8]) -> bool {
            WEEKDAYS_AND_GMT
                .iter()
                .any(|n| n.as_bytes().eq_ignore_ascii_case(token))
        }

        pub(super) fn days_in_month(year: u32, month: u32) -> u32 {
            match month {
                2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            }
        }

        /// The proleptic Gregorian (year, month, day) of a day count since 1970-01-01, for days in years
        /// 0..=9999 (Howard Hinnant's algorithm, the inverse of `days_from_civil`).
        pub(super) fn civil_from_days(days: i64) -> (u32, u32, u32) {
            let z = days + 719_468;
            let era = z.div_euclid(146_097);
            let doe = z - era * 146_097;
            let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
            let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
            let mp = (5 * doy + 2) / 153;
            let day = doy - (153 * mp + 2) / 5 + 1;
            let month = if mp < 10 { mp + 3 } else { mp - 9 };
            let year = yoe + era * 400 + i64::from(month <= 2);
            (
                u32::try_from(year).unwrap_or(0),
                u32::try_from(month).unwrap_or(1),
                u32::try_from(day).unwrap_or(1),
            )
        }

        /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
        pub(super) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
            let y = if month <= 2 { year - 1 } else { year };
            let era = y.div_euclid(400);
            let yoe = y - era * 400;
            let m = i64::from(month);
            let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
            let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
            era * 146_097 + doe - 719_468
        }
    }

    /// Date-like strings from the parser's own vocabulary, so most of them are near misses.
    fn date_like() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("Sun".to_string()),
            Just("sunday".to_string()),
            Just("WEDNESDAY".to_string()),
            Just("Thurs".to_string()),
            Just("GMT".to_string()),
            Just("UTC".to_string()),
            Just("feb".to_string()),
            Just("Nov".to_string()),
            Just("DEC".to_string()),
            Just("Sept".to_string()),
            (0u32..10_000).prop_map(|n| n.to_string()),
            (0u32..100).prop_map(|n| format!("{n:02}")),
            (0u32..32).prop_map(|n| n.to_string()),
            (0u32..100_000).prop_map(|n| n.to_string()),
            (0u32..26, 0u32..62, 0u32..62).prop_map(|(h, m, s)| format!("{h:02}:{m:02}:{s:02}")),
            (0u32..26, 0u32..62).prop_map(|(h, m)| format!("{h}:{m}")),
            Just("1:2:3:4".to_string()),
            Just("::".to_string()),
            Just("08::37".to_string()),
            Just("x".to_string()),
            Just("".to_string()),
        ];
        let sep = prop_oneof![
            Just(" "),
            Just(", "),
            Just("-"),
            Just("  "),
            Just(","),
            Just("\t")
        ];
        proptest::collection::vec((piece, sep), 0..8)
            .prop_map(|v| v.into_iter().map(|(p, s)| p + s).collect())
    }

    fn now_ms() -> impl Strategy<Value = f64> {
        prop_oneof![
            -1e13..3e14f64,
            (0u64..253_402_300_800).prop_map(|s| s as f64 * 1000.0),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-1e300),
            Just(253_402_300_799_000.0),
        ]
    }

    fn same(a: Option<f64>, b: Option<f64>) -> bool {
        a.map(f64::to_bits) == b.map(f64::to_bits)
    }

    #[test]
    fn name_table_lists_the_names_in_order() {
        // The oracle's names: the months (index = month - 1), then the weekdays and GMT.
        let names: Vec<&str> = oracle::MONTHS
            .iter()
            .chain(&oracle::WEEKDAYS_AND_GMT)
            .copied()
            .collect();
        let table: Vec<u8> = names
            .iter()
            .flat_map(|n| std::iter::once(n.len() as u8).chain(n.bytes()))
            .collect();
        assert_eq!(NAMES, &table[..]);
        for (i, n) in names.iter().enumerate() {
            assert_eq!(name_index(n.as_bytes()), Some(i as u32));
            assert_eq!(name_index(n.to_uppercase().as_bytes()), Some(i as u32));
        }
        for t in ["", "ja", "janu", "mond", "@an", "gmt ", "utc"] {
            assert_eq!(name_index(t.as_bytes()), None, "{t}");
        }
    }

    #[test]
    fn the_fifty_year_edge_agrees_with_the_oracle() {
        // Dates a second, or a day, either side of `now` + 50 years (where the century flips),
        // read at instants that include 29 Feb, a year's last second and a leap second's neighbours.
        let months = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        for now_secs in [
            0i64,
            784_111_777,
            951_782_400,
            951_868_799,
            1_796_083_200,
            1_796_169_599,
            2_840_140_800,
            4_107_542_399,
            253_402_300_799 - 50 * 366 * 86_400,
        ] {
            let (y, m, d) = oracle::civil_from_days(now_secs.div_euclid(86_400));
            let t = now_secs.rem_euclid(86_400);
            for (dd, dt) in [
                (0, -1),
                (0, 0),
                (0, 1),
                (-1, 0),
                (1, 0),
                (0, 86_400 - t),
                (0, -t),
            ] {
                let (day, secs) = (i64::from(d) + dd, t + dt);
                if !(1..=31).contains(&day) || !(0..=86_400).contains(&secs) {
                    continue;
                }
                let s = format!(
                    "Monday, {day:02}-{}-{:02} {} GMT",
                    months[m as usize - 1],
                    (y + 50) % 100,
                    if secs == 86_400 {
                        "23:59:60".to_string() // the leap second: the day's latest time
                    } else {
                        format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
                    }
                );
                let now = now_secs as f64 * 1000.0;
                assert!(
                    same(parse_http_date(&s, now), oracle::parse_http_date(&s, now)),
                    "{s} at {now}"
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn http_dates_agree_with_the_oracle(s in date_like(), now in now_ms()) {
            prop_assert!(same(parse_http_date(&s, now), oracle::parse_http_date(&s, now)), "{s:?} at {now}");
            prop_assert!(same(parse_retry_after(&s, now), oracle::parse_retry_after(&s, now)), "{s:?} at {now}");
        }

        #[test]
        fn real_dates_agree_with_the_oracle(
            secs in 0u64..253_402_300_800,
            format in 0..3,
            now in now_ms(),
        ) {
            // Every day and time of years 0..=9999 in each of the three formats.
            let (days, t) = (secs / 86_400, secs % 86_400);
            let (y, m, d) = oracle::civil_from_days(days as i64);
            let mon = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][m as usize - 1];
            let hms = format!("{:02}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60);
            let s = match format {
                0 => format!("Mon, {d:02} {mon} {y:04} {hms} GMT"),
                1 => format!("Monday, {d:02}-{mon}-{:02} {hms} GMT", y % 100),
                _ => format!("Mon {mon} {d:2} {hms} {y:04}"),
            };
            let new = parse_http_date(&s, now);
            prop_assert!(same(new, oracle::parse_http_date(&s, now)), "{s:?} at {now}");
            if format != 1 {
                prop_assert_eq!(new, Some(secs as f64 * 1000.0));
            }
        }

        #[test]
        fn delta_seconds_agree_with_the_oracle(n in "[ ]?[0-9]{0,30}[ ]?", now in now_ms()) {
            prop_assert!(same(parse_retry_after(&n, now), oracle::parse_retry_after(&n, now)), "{n:?}");
        }
    }

    #[test]
    fn status_table() {
        for s in [408.0, 429.0, 500.0, 502.0, 503.0, 504.0, 599.0] {
            assert!(is_transient_status(s), "{s}");
        }
        for s in [
            200.0, 301.0, 400.0, 401.0, 402.0, 403.0, 404.0, 409.0, 422.0, 451.0,
        ] {
            assert!(!is_transient_status(s), "{s}");
        }
        for s in [f64::NAN, 99.0, 600.0, 1000.0, 500.5, -500.0, f64::INFINITY] {
            assert!(!is_transient_status(s), "{s}");
        }
    }

    #[test]
    fn sdk_types_that_may_have_been_processed() {
        for t in [
            "StripeConnectionError",
            "unexpectedError",
            "serverError",
            "serviceUnavailableError",
            "gatewayTimeoutError",
            "requestTimeoutError",
        ] {
            assert!(is_transient_type(t), "{t}");
        }
        // Definitive answers keep their own status (Stripe's StripeCardError has its 402), or are
        // refusals before processing (Braintree's authentication, authorization, not found).
        for t in [
            "StripeCardError",
            "StripeInvalidRequestError",
            "card_error",
            "authenticationError",
            "authorizationError",
            "notFoundError",
            "tooManyRequestsError",
            "ServerError",
            "",
        ] {
            assert!(!is_transient_type(t), "{t}");
        }
    }

    #[test]
    fn client_codes_are_transient_but_never_proof_of_not_sent() {
        for c in [
            "ERR_NETWORK",
            "ERR_CANCELED",
            "ERR_HTTP_CONTENT_LENGTH_MISMATCH",
        ] {
            assert!(is_transient_code(c), "{c}");
            assert!(!crate::core::history::proves_not_sent(c), "{c}");
        }
    }

    #[test]
    fn code_table() {
        for c in [
            "ECONNRESET",
            "ETIMEDOUT",
            "EAI_AGAIN",
            "ECONNREFUSED",
            "EPIPE",
            "ENOTFOUND",
            "UND_ERR_SOCKET",
            "ERR_HTTP_CONTENT_LENGTH_MISMATCH",
            "ERR_NETWORK",
            "ERR_CANCELED",
        ] {
            assert!(is_transient_code(c));
        }
        for c in [
            "EACCES",
            "ERR_INVALID_ARG_TYPE",
            "econnreset",
            "",
            "card_declined",
        ] {
            assert!(!is_transient_code(c));
        }
    }

    #[test]
    fn deno_connect_stage_failures_prove_nothing_was_sent() {
        // What Deno 2.9's fetch puts on the rejection's cause, measured against a closed port
        // and an unresolvable name (tests/runtimes/run.mjs drives the real thing).
        for m in [
            "error sending request for url (http://127.0.0.1:36559/x): client error (Connect): tcp connect error: Connection refused (os error 111)",
            "error sending request for url (http://nonexistent.invalid/x): client error (Connect): dns error: failed to lookup address information: Name or service not known",
            "error sending request for url (http://10.255.255.1/): client error (Connect): tcp connect error: Connection timed out (os error 110)",
            "error sending request for url (http://[::1]:9/): client error (Connect): tcp connect error: No connection could be made because the target machine actively refused it. (os error 10061)",
            "error sending request from 127.0.0.1:1 for http://127.0.0.1:2/ (127.0.0.1:2): client error (Connect): tcp connect error: Connection refused (os error 61)",
        ] {
            assert!(message_proves_not_sent(m), "{m}");
        }
    }

    #[test]
    fn failures_after_connecting_and_other_texts_are_not_proof() {
        for m in [
            // Connected, then the server let go: the request may have been processed.
            "error sending request from 127.0.0.1:35952 for http://127.0.0.1:38087/close (127.0.0.1:38087): client error (SendRequest): connection closed before message completed",
            "Connection reset by peer (os error 104)",
            "error sending request for url (http://127.0.0.1:1/): connection error: Connection reset by peer (os error 104)",
            // A TLS failure in the connect stage: left to the other rules.
            "error sending request for url (https://127.0.0.1:8443/): client error (Connect): invalid peer certificate: UnknownIssuer",
            // The stage inside a URL (no spaces survive serialization) or in another error's words.
            "error sending request for url (http://h/:%20client%20error%20(Connect):%20tcp%20connect%20error): client error (SendRequest): connection closed before message completed",
            "client error (Connect): tcp connect error: Connection refused (os error 111)",
            "fetch failed",
            "Failed to fetch",
            "ECONNREFUSED",
            "",
            "error sending request ",
            "error sending request for url (x): client error (Connect): ",
        ] {
            assert!(!message_proves_not_sent(m), "{m}");
        }
    }

    #[test]
    fn response_rule_header_wins() {
        assert!(is_transient_response(503.0, None));
        assert!(!is_transient_response(503.0, Some("false")));
        assert!(is_transient_response(409.0, Some(" true ")));
        assert!(!is_transient_response(409.0, Some("maybe")));
        assert!(is_transient_response(429.0, Some("")));
    }

    #[test]
    fn retry_after_seconds() {
        assert_eq!(parse_retry_after("120", 0.0), Some(120_000.0));
        assert_eq!(parse_retry_after(" 0 ", 0.0), Some(0.0));
        assert_eq!(parse_retry_after("-1", 0.0), None);
        assert_eq!(parse_retry_after("1.5", 0.0), None);
        assert_eq!(parse_retry_after("", 0.0), None);
        assert!(parse_retry_after(&"9".repeat(400), 0.0).is_some());
    }

    #[test]
    fn retry_after_dates_in_all_three_formats() {
        let t = 784_111_777_000.0; // 1994-11-06T08:49:37Z
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT", t), Some(t));
        assert_eq!(
            parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", t),
            Some(t)
        );
        assert_eq!(parse_http_date("Sun Nov  6 08:49:37 1994", t), Some(t));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", t),
            Some(10_000.0)
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:27 GMT", t),
            Some(0.0)
        );
        assert_eq!(
            parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT", t),
            Some(0.0)
        );
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2028 23:59:59 GMT", t),
            Some(1_835_481_599_000.0)
        );
    }

    /// 1 Dec 2026 00:00:00 UTC.
    const DEC_2026: f64 = 1_796_083_200_000.0;

    fn year_of(rfc850: &str, now: f64) -> u32 {
        let ms = parse_http_date(rfc850, now).unwrap_or(f64::NAN);
        oracle::civil_from_days((ms / 86_400_000.0).floor() as i64).0
    }

    #[test]
    fn rfc850_two_digit_years_are_relative_to_now() {
        // RFC 9110 §5.6.7: more than 50 years ahead means the last century.
        assert_eq!(year_of("Monday, 01-Jan-27 00:00:00 GMT", DEC_2026), 2027);
        assert_eq!(year_of("Thursday, 01-Jan-75 00:00:00 GMT", DEC_2026), 2075);
        assert_eq!(year_of("Wednesday, 01-Dec-76 00:00:00 GMT", DEC_2026), 2076); // exactly 50 years
        assert_eq!(year_of("Wednesday, 01-Dec-76 00:00:01 GMT", DEC_2026), 1976); // one second more
        assert_eq!(year_of("Saturday, 01-Jan-77 00:00:00 GMT", DEC_2026), 1977);
        assert_eq!(year_of("Friday, 31-Dec-99 23:59:59 GMT", DEC_2026), 1999);
        assert_eq!(year_of("Saturday, 01-Jan-00 00:00:00 GMT", DEC_2026), 2000);
        // The same header read in 1994 and in 2060: a fixed pivot would get one of them wrong.
        assert_eq!(
            year_of("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777_000.0),
            1994
        );
        assert_eq!(
            year_of("Sunday, 06-Nov-94 08:49:37 GMT", 2_840_140_800_000.0),
            2094
        );
        assert_eq!(
            year_of("Tuesday, 06-Nov-40 08:49:37 GMT", 784_111_777_000.0),
            2040
        );
        assert_eq!(
            year_of("Sunday, 06-Nov-44 08:49:37 GMT", 784_111_777_000.0),
            2044
        );
        assert_eq!(
            year_of("Sunday, 06-Nov-44 08:49:38 GMT", 784_111_777_000.0),
            1944
        );
        // 29 Feb: valid in 2000, not in 2100 (read in 2060, -00 is 2100).
        assert!(parse_http_date("Tuesday, 29-Feb-00 00:00:00 GMT", DEC_2026).is_some());
        assert_eq!(
            year_of("Friday, 01-Jan-00 00:00:00 GMT", 2_840_140_800_000.0),
            2100
        );
        assert_eq!(
            parse_http_date("Monday, 29-Feb-00 00:00:00 GMT", 2_840_140_800_000.0),
            None
        );
        // Any `now`, however odd, gives an answer and never panics.
        for now in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1e300, 1e300] {
            assert!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", now).is_some());
        }
    }

    #[test]
    fn civil_from_days_inverts_days_from_civil() {
        for days in (0..2_932_897).step_by(997).chain([2_932_896]) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(
                f64::from(days_from_civil(y, m, d)) - EPOCH_DAYS,
                f64::from(days)
            );
            assert_eq!((y, m, d), oracle::civil_from_days(i64::from(days)));
        }
        // Before the epoch (parsed years from 0000), against the signed original.
        for year in [0, 1, 4, 99, 100, 399, 400, 1600, 1900, 1969] {
            for (m, d) in [(1, 1), (2, 28), (2, 29), (3, 1), (12, 31)] {
                assert_eq!(
                    f64::from(days_from_civil(year, m, d)) - EPOCH_DAYS,
                    oracle::days_from_civil(i64::from(year), m, d) as f64,
                    "{year}-{m}-{d}"
                );
            }
        }
    }

    #[test]
    fn method_rule() {
        for m in [
            "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "QUERY", "get", "Query",
        ] {
            assert!(method_is_retryable(m, false), "{m}");
            assert!(method_is_retryable(m, true), "{m}");
        }
        for m in ["POST", "PATCH", "post", "patch"] {
            assert!(!method_is_retryable(m, false), "{m}");
            assert!(method_is_retryable(m, true), "{m}");
        }
        for m in ["TRACE", "CONNECT", "PROPFIND", "", "GET ", "GETT"] {
            assert!(!method_is_retryable(m, false), "{m}");
            assert!(!method_is_retryable(m, true), "{m}");
        }
    }

    #[test]
    fn keyed_methods_are_post_and_patch_in_any_case() {
        for m in ["POST", "PATCH", "post", "Patch"] {
            assert!(method_is_keyed(m), "{m}");
        }
        for m in [
            "GET", "PUT", "DELETE", "QUERY", "TRACE", "", "POST ", "POSTS",
        ] {
            assert!(!method_is_keyed(m), "{m}");
        }
    }

    #[test]
    fn bad_dates_are_none() {
        for s in [
            "Sun, 31 Feb 2026 00:00:00 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:00:00 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Sun, 06 Nov 08:49:37 GMT",
            "tomorrow",
            "Sun, 06 Nov 1994 08:49:37 GMT 12",
            "Sun, 06 Nov 199 08:49:37 GMT",
        ] {
            assert_eq!(parse_http_date(s, 0.0), None, "{s}");
        }
    }
}
