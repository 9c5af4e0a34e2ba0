//! When may reconciliation believe "that charge never happened"?
//!
//! Why a window: a request the client gave up on (timed out, connection dropped, tab closed) can
//! still be processed by the gateway a moment later — it was queued, slow, or retried by a proxy.
//! A lookup that finds no debit *now* proves nothing about *then*. Freeing the key on that answer
//! lets the debit land unseen, and a new key for the next click charges the customer twice. So a
//! `failed` verdict is only believed once the last attempt can no longer be in anyone's hands: a
//! settle window after it. A `done` verdict (the debit was found) is always believed at once.
//!
//! # Default
//! The window is twice the longest an attempt could run: `2 × attemptTimeoutMs`, or `2 ×
//! deadlineMs` when only a deadline bounds the attempts (the smaller of the two when both are set),
//! or `2 × 60 s` when nothing bounds them. Twice, because a proxy that retries an upstream after
//! its own timeout keeps the request alive for about one more attempt time.

/// The checkout client's `attemptTimeoutMs` when the caller names none (ms): a charge attempt
/// that has not answered in 10 s is aborted and retried under the same key (so its default settle
/// window is 20 s).
pub const CHECKOUT_ATTEMPT_TIMEOUT_MS: f64 = 10_000.0;

/// The checkout client's `maxResponseBytes` when the caller names none: the most of an answer's
/// body it reads (1 MiB; a charge's JSON is a few KB). Past it the body is abandoned unread, and
/// the attempt counts as one that got no answer (it may have been processed), so a gateway or a
/// proxy that streams without end cannot grow the page until it crashes mid-charge.
pub const CHECKOUT_MAX_RESPONSE_BYTES: f64 = 1_048_576.0;

/// The per-attempt bound assumed when neither an attempt timeout nor a deadline is set (ms).
pub const DEFAULT_ATTEMPT_BOUND_MS: f64 = 60_000.0;

/// The settle window (ms) for an unknown outcome produced under these limits. `None`, or a value
/// that is not a finite number > 0, means "not set".
pub fn settle_after_ms(attempt_timeout_ms: Option<f64>, deadline_ms: Option<f64>) -> f64 {
    let valid = |v: Option<f64>| v.filter(|ms| ms.is_finite() && *ms > 0.0);
    let bound = match (valid(attempt_timeout_ms), valid(deadline_ms)) {
        (Some(a), Some(d)) => a.min(d),
        (Some(a), None) => a,
        (None, Some(d)) => d,
        (None, None) => DEFAULT_ATTEMPT_BOUND_MS,
    };
    2.0 * bound
}

/// How long (ms from `now_ms`) before a `failed` verdict for a record whose last attempt started
/// at `last_attempt_at_ms` may be believed; 0 means now. A last-attempt time that is not finite,
/// or a window that is not a number ≥ 0, can never be believed (`f64::INFINITY`): without knowing
/// when the request left, "never happened" cannot be proven.
pub fn failed_verdict_wait_ms(now_ms: f64, last_attempt_at_ms: f64, settle_after_ms: f64) -> f64 {
    if !last_attempt_at_ms.is_finite()
        || settle_after_ms.is_nan()
        || settle_after_ms < 0.0
        || now_ms.is_nan()
    {
        return f64::INFINITY;
    }
    let wait = last_attempt_at_ms + settle_after_ms - now_ms;
    if wait.is_nan() {
        f64::INFINITY
    } else {
        wait.max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_defaults_from_the_limits() {
        assert_eq!(settle_after_ms(Some(10_000.0), None), 20_000.0);
        assert_eq!(settle_after_ms(None, Some(30_000.0)), 60_000.0);
        assert_eq!(settle_after_ms(Some(10_000.0), Some(5_000.0)), 10_000.0);
        assert_eq!(settle_after_ms(None, None), 120_000.0);
        for bad in [f64::NAN, f64::INFINITY, -1.0, 0.0] {
            assert_eq!(settle_after_ms(Some(bad), Some(bad)), 120_000.0, "{bad}");
        }
    }

    #[test]
    fn failed_is_believed_only_after_the_window() {
        assert_eq!(failed_verdict_wait_ms(1_000.0, 900.0, 400.0), 300.0);
        assert_eq!(failed_verdict_wait_ms(1_300.0, 900.0, 400.0), 0.0);
        assert_eq!(failed_verdict_wait_ms(5_000.0, 900.0, 400.0), 0.0);
        assert_eq!(failed_verdict_wait_ms(1_000.0, 1_000.0, 0.0), 0.0);
        // Unknowable: never believed.
        for (now, last, window) in [
            (1.0, f64::NAN, 1.0),
            (1.0, f64::INFINITY, 1.0),
            (1.0, 0.0, f64::NAN),
            (1.0, 0.0, -1.0),
            (f64::NAN, 0.0, 1.0),
        ] {
            assert_eq!(failed_verdict_wait_ms(now, last, window), f64::INFINITY);
        }
        // An infinite window: never.
        assert_eq!(
            failed_verdict_wait_ms(1e15, 0.0, f64::INFINITY),
            f64::INFINITY
        );
    }
}
