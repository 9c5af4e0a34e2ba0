//! Classification properties: the status table, Retry-After seconds, and HTTP-dates in all three
//! RFC 9110 formats produced by an independent formatter; garbage never panics.
//!
//! Why: a wrong "transient" retries a declined card; a misparsed Retry-After hammers a server
//! that asked for quiet, or waits for a century.

use proptest::prelude::*;
use steadfast::core::classify::{
    is_transient_code, is_transient_status, parse_http_date, parse_retry_after, parse_should_retry,
};

const DAYS: [&str; 7] = [
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
/// 9999-12-31T23:59:59Z.
const LAST_SECOND: i64 = 253_402_300_799;

/// Civil date of a day count since 1970-01-01, by repeated subtraction of years and months (a
/// different algorithm from the parser's, so the two cannot share a mistake).
fn civil(mut days: i64) -> (i64, usize, i64) {
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mut year = 1970;
    while days >= if leap(year) { 366 } else { 365 } {
        days -= if leap(year) { 366 } else { 365 };
        year += 1;
    }
    let lengths = [
        31,
        if leap(year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut month = 0;
    while days >= lengths[month] {
        days -= lengths[month];
        month += 1;
    }
    (year, month, days + 1)
}

/// The three formats of `secs` since the epoch: (IMF-fixdate, RFC 850 with its two-digit year,
/// asctime).
fn formats(secs: i64) -> (String, String, String) {
    let days = secs.div_euclid(86_400);
    let (y, m, d) = civil(days);
    let weekday = DAYS[days.rem_euclid(7) as usize]; // 1970-01-01 was a Thursday
    let (hh, mm, ss) = (secs % 86_400 / 3600, secs % 3600 / 60, secs % 60);
    let (wd, mon) = (&weekday[..3], MONTHS[m]);
    let imf = format!("{wd}, {d:02} {mon} {y} {hh:02}:{mm:02}:{ss:02} GMT");
    let rfc850 = format!(
        "{weekday}, {d:02}-{mon}-{:02} {hh:02}:{mm:02}:{ss:02} GMT",
        y % 100
    );
    let asctime = format!("{wd} {mon} {d:>2} {hh:02}:{mm:02}:{ss:02} {y}");
    (imf, rfc850, asctime)
}

#[test]
fn the_formatter_agrees_with_the_rfc_examples() {
    let (imf, rfc850, asctime) = formats(784_111_777);
    assert_eq!(imf, "Sun, 06 Nov 1994 08:49:37 GMT");
    assert_eq!(rfc850, "Sunday, 06-Nov-94 08:49:37 GMT");
    assert_eq!(asctime, "Sun Nov  6 08:49:37 1994");
    assert_eq!(formats(LAST_SECOND).0, "Fri, 31 Dec 9999 23:59:59 GMT");
}

#[test]
fn status_table_for_every_integer_status() {
    for s in 100..=599u32 {
        let want = s == 408 || s == 429 || (500..=599).contains(&s);
        assert_eq!(is_transient_status(f64::from(s)), want, "{s}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn non_statuses_are_never_transient(
        x in prop_oneof![any::<f64>(), -1e4f64..1e4, (100u32..600).prop_map(|s| f64::from(s) + 0.5)],
    ) {
        let integer_status = x.fract() == 0.0 && (100.0..=599.0).contains(&x);
        if !integer_status {
            prop_assert!(!is_transient_status(x), "{}", x);
        } else {
            let s = x as u32;
            prop_assert_eq!(is_transient_status(x), s == 408 || s == 429 || s >= 500);
        }
    }

    #[test]
    fn retry_after_seconds_round_trip(n in any::<u32>(), now in any::<f64>(), pad in "[ ]{0,2}") {
        let header = format!("{pad}{n}{pad}");
        prop_assert_eq!(parse_retry_after(&header, now), Some(f64::from(n) * 1000.0));
    }

    #[test]
    fn http_dates_parse_to_the_exact_instant(secs in 0i64..=LAST_SECOND, now in 0.0f64..1e13) {
        let (imf, rfc850, asctime) = formats(secs);
        let ms = secs as f64 * 1000.0;
        prop_assert_eq!(parse_http_date(&imf, now), Some(ms), "{}", imf);
        prop_assert_eq!(parse_http_date(&asctime, now), Some(ms), "{}", asctime);
        // Read at its own instant, a two-digit year is that year (it is not 50 years ahead).
        prop_assert_eq!(parse_http_date(&rfc850, ms), Some(ms), "{}", rfc850);
        // As a Retry-After: the time left from `now`, never negative.
        prop_assert_eq!(parse_retry_after(&imf, now), Some((ms - now).max(0.0)));
    }

    /// RFC 9110 §5.6.7, for any `now`: the two digits are kept, the instant is at most 50 years
    /// after `now`, and it is the latest such (the year a century later would be too far ahead).
    #[test]
    fn rfc850_years_are_within_fifty_years_of_now(secs in 0i64..=LAST_SECOND, now_secs in 3_155_760_000i64..=250_000_000_000) {
        let (_, rfc850, _) = formats(secs);
        let now = now_secs as f64 * 1000.0;
        let Some(ms) = parse_http_date(&rfc850, now) else {
            // Only 29 Feb can fail: the chosen year is not a leap year.
            prop_assert!(rfc850.contains("29-Feb"), "{}", rfc850);
            return Ok(());
        };
        let (year, _, _) = civil((ms / 1000.0).floor() as i64 / 86_400);
        let (now_year, _, _) = civil(now_secs / 86_400);
        prop_assert_eq!(year % 100, civil(secs / 86_400).0 % 100, "{}", rfc850);
        prop_assert!(year <= now_year + 50 && year + 50 >= now_year, "{} read in {} gave {}", rfc850, now_year, year);
        // Never more than 50 calendar years after `now` (the rule is by calendar, field by field):
        // those hold at most 18,263 days (13 leap days). Measured in mean 365.2425-day years, as
        // this once was, a date within the last day of a 13-leap-day span failed (1 run in ~10^5:
        // "Tuesday, 26-Nov-57 06:27:39 GMT" read in 7407, now_secs = 171603556059).
        prop_assert!(ms - now <= 18_263.0 * 86_400_000.0, "{} read in {}", rfc850, now_year);
        prop_assert!((ms - now) / 31_556_952_000.0 > -51.0, "{} read in {}", rfc850, now_year);
    }

    #[test]
    fn garbage_never_panics(s in prop_oneof![
        any::<String>(),
        "[0-9A-Za-z ,:-]{0,40}",
        (0i64..=LAST_SECOND, any::<prop::sample::Index>(), any::<char>()).prop_map(|(t, i, c)| {
            // A real date with one character replaced: near-misses exercise every branch.
            let mut chars: Vec<char> = formats(t).0.chars().collect();
            let at = i.index(chars.len());
            chars[at] = c;
            chars.into_iter().collect()
        }),
    ], now in any::<f64>()) {
        if let Some(ms) = parse_http_date(&s, now) {
            prop_assert!(ms.is_finite(), "{:?} -> {}", s, ms); // years 0000-9999: finite
        }
        if let Some(ms) = parse_retry_after(&s, now) {
            prop_assert!(ms >= 0.0 || ms.is_nan(), "{:?} -> {}", s, ms);
        }
        let _ = parse_should_retry(&s);
        let _ = is_transient_code(&s);
    }
}
