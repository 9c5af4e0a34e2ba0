//! A charge's fate is decided by everything that happened to it, not by its last answer.
//!
//! Why: attempt 1 reaches the gateway, debits, and times out; attempt 2 is answered `409` (the
//! gateway is still processing attempt 1), `401` by an auth proxy, `404` by a load balancer in the
//! middle of a deploy. Judged by that last answer the charge "failed" and its key is freed, and the
//! next try charges twice. So each shell reports evidence, attempt by attempt — was it sent, was
//! it answered, with what — and this module folds it into a small history in which *may have been
//! processed* is sticky: once an attempt may have reached the gateway and been acted on, no later
//! refusal can free the key. Only an answer about that key settles it (a success; reconciliation
//! by lookup after the settle window; a same-key re-send after the window, answered by a gateway
//! that honours keys: [`crate::core::reconcile`]).
//!
//! The same history tells `unavailable` from `unknown`: a charge none of whose attempts can have
//! been processed (never sent — offline, connection refused, an open circuit — or answered `429`,
//! which a gateway sends before it processes anything) is *not processed*, and the key is free;
//! one refused with another definitive answer (a decline, a `400`) is *refused*, also free.
//!
//! A history is one `u32` ([`History`]), so a shell keeps it in a plain number and folds an attempt
//! with one call across the boundary; the rule is here, once, for the JS stores, `resilientFetch`,
//! the checkout client, the Rust `web` shell and (in Lua) the Redis store's sticky bit.

/// What one attempt showed, as the shell saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Provably never reached a server: offline before sending, connection refused, DNS failure,
    /// connect timeout, an open circuit, a rate limiter or budget that refused before sending.
    NotSent,
    /// Sent (or possibly sent) and not answered: a timeout, a dropped connection, an abort after
    /// sending, a body cut off mid-stream. The request may have been processed.
    NoAnswer,
    /// Refused with no HTTP status (an error of the caller's own gateway that its classifier calls
    /// definitive, e.g. a thrown "card declined"): this attempt was not processed.
    Refused,
    /// An HTTP answer with this status (`0`: a filtered/opaque redirect, which a charge never
    /// follows).
    Status(u16),
    /// The gateway's own "a request with this key is still being processed" (its dialect's
    /// in-progress status, [`crate::core::dialect::Dialect::answer`]: `409` at most gateways,
    /// `429` at Checkout.com): the gateway holds the key, the charge may have been processed.
    InProgress,
}

/// What one attempt says about whether the charge was processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Answered with success (2xx): processed.
    Processed,
    /// It may have been processed: no answer, `408`, `409` (still processing: the gateway holds
    /// the key), `5xx`.
    MaybeProcessed,
    /// Refused: a definitive answer about this attempt (a decline, `400`, `401`, `404`, a redirect).
    /// It says nothing about an earlier attempt.
    Refused,
    /// Provably not processed: never sent, or `429` (throttled before any processing).
    NotProcessed,
}

/// [`Seen`] of one attempt.
pub fn seen(answer: Answer) -> Seen {
    match answer {
        Answer::NotSent => Seen::NotProcessed,
        Answer::NoAnswer => Seen::MaybeProcessed,
        Answer::Refused => Seen::Refused,
        Answer::InProgress => Seen::MaybeProcessed,
        Answer::Status(s) => match s {
            200..=299 => Seen::Processed,
            429 => Seen::NotProcessed,
            408 | 409 | 500..=599 => Seen::MaybeProcessed,
            _ => Seen::Refused,
        },
    }
}

/// How a charge's history ends when its last attempt did not succeed (or did: [`Verdict::Done`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// An attempt succeeded.
    Done,
    /// Some attempt may have been processed and none succeeded: park the key as unknown.
    Unknown,
    /// Nothing may have been processed and some attempt was refused: the key is free; the
    /// refusal is the caller's answer.
    Refused,
    /// Nothing was processed at all (no attempt sent, or only `429`s): the key is free; the
    /// charge is *unavailable*, not unknown.
    NotProcessed,
}

impl Verdict {
    /// Every verdict, by id.
    pub const ALL: [Verdict; 4] = [
        Verdict::Done,
        Verdict::Unknown,
        Verdict::Refused,
        Verdict::NotProcessed,
    ];

    /// Its name across the boundary.
    pub const fn name(self) -> &'static str {
        match self {
            Verdict::Done => "done",
            Verdict::Unknown => "unknown",
            Verdict::Refused => "refused",
            Verdict::NotProcessed => "not-processed",
        }
    }

    /// Stable id across the boundary.
    pub const fn id(self) -> u32 {
        match self {
            Verdict::Done => 0,
            Verdict::Unknown => 1,
            Verdict::Refused => 2,
            Verdict::NotProcessed => 3,
        }
    }
}

/// A charge's history, folded attempt by attempt: flags in the low byte, the attempt count above.
/// `History::default()` (0) is a charge with no attempt yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct History(pub u32);

const PROCESSED: u32 = 1;
const MAYBE: u32 = 2;
const REFUSED: u32 = 4;
const SENT: u32 = 8;
const ATTEMPT: u32 = 256;
const MAX_ATTEMPTS: u32 = u32::MAX / ATTEMPT;

impl History {
    /// Fold one attempt in. Flags only accumulate: *may have been processed* never goes away.
    #[must_use]
    pub fn record(self, answer: Answer) -> History {
        let flag = match seen(answer) {
            Seen::Processed => PROCESSED,
            Seen::MaybeProcessed => MAYBE,
            Seen::Refused => REFUSED,
            Seen::NotProcessed => 0,
        };
        let sent = if answer == Answer::NotSent { 0 } else { SENT };
        let count = (self.0 / ATTEMPT).saturating_add(1).min(MAX_ATTEMPTS);
        History((count * ATTEMPT) | (self.0 % ATTEMPT) | flag | sent)
    }

    /// Attempts folded in (the count saturates at 2^24 − 1).
    pub fn attempts(self) -> u32 {
        self.0 / ATTEMPT
    }

    /// Whether some attempt may have been processed (sticky).
    pub fn may_have_been_processed(self) -> bool {
        self.0 & MAYBE != 0
    }

    /// Whether some attempt left the client (was not provably unsent).
    pub fn sent(self) -> bool {
        self.0 & SENT != 0
    }

    /// The verdict of the whole history: success if any attempt succeeded, else unknown if any
    /// may have been processed, else refused if any was refused, else not processed.
    pub fn verdict(self) -> Verdict {
        if self.0 & PROCESSED != 0 {
            Verdict::Done
        } else if self.0 & MAYBE != 0 {
            Verdict::Unknown
        } else if self.0 & REFUSED != 0 {
            Verdict::Refused
        } else {
            Verdict::NotProcessed
        }
    }
}

/// [`answer_from_code`]'s code for [`Answer::NotSent`].
pub const NOT_SENT_CODE: i32 = -1;
/// [`answer_from_code`]'s code for [`Answer::NoAnswer`] (any code it does not know reads so too).
pub const NO_ANSWER_CODE: i32 = -2;
/// [`answer_from_code`]'s code for [`Answer::Refused`].
pub const REFUSED_CODE: i32 = -3;
/// [`answer_from_code`]'s code for [`Answer::InProgress`].
pub const IN_PROGRESS_CODE: i32 = -4;

/// The answer code the boundary uses for [`Answer`]: `-1` not sent, `-2` no answer, `-3` refused,
/// `-4` in progress (the dialect's in-progress answer), any other number an HTTP status (`0` to `999`; anything else reads as no answer — the safe
/// reading of a code nobody defined).
pub fn answer_from_code(code: f64) -> Answer {
    if code == f64::from(NOT_SENT_CODE) {
        Answer::NotSent
    } else if code == f64::from(REFUSED_CODE) {
        Answer::Refused
    } else if code == f64::from(IN_PROGRESS_CODE) {
        Answer::InProgress
    } else if (0.0..=999.0).contains(&code) && code.fract() == 0.0 {
        Answer::Status(code as u16)
    } else {
        Answer::NoAnswer
    }
}

/// Network error codes that prove the request never left the client: the connection was never
/// made (refused, DNS failed, connect timed out). Node reports these; a browser's fetch error
/// carries no code, so there it is never proof; Deno's carries none either, and its words say it
/// instead ([`crate::core::classify::message_proves_not_sent`]). The one copy of the rule for both
/// shells.
pub const NOT_SENT_CODES: [&str; 4] = [
    "ECONNREFUSED",
    "ENOTFOUND",
    "EAI_AGAIN",
    "UND_ERR_CONNECT_TIMEOUT",
];

/// Whether a network error code proves that nothing was sent ([`NOT_SENT_CODES`]).
pub fn proves_not_sent(code: &str) -> bool {
    NOT_SENT_CODES.contains(&code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(answers: &[Answer]) -> History {
        answers.iter().fold(History::default(), |h, &a| h.record(a))
    }

    #[test]
    fn a_later_refusal_never_frees_what_an_earlier_attempt_may_have_processed() {
        for later in [400, 401, 402, 403, 404, 409, 410, 422, 429, 301, 0] {
            let h = history(&[Answer::NoAnswer, Answer::Status(later)]);
            assert_eq!(h.verdict(), Verdict::Unknown, "timeout then {later}");
            let h = history(&[Answer::Status(503), Answer::Status(later)]);
            assert_eq!(h.verdict(), Verdict::Unknown, "503 then {later}");
        }
        assert_eq!(
            history(&[Answer::NoAnswer, Answer::Refused]).verdict(),
            Verdict::Unknown
        );
        assert_eq!(
            history(&[Answer::NoAnswer, Answer::NotSent]).verdict(),
            Verdict::Unknown
        );
    }

    #[test]
    fn an_in_progress_answer_holds_the_key_whatever_its_status() {
        // Checkout.com answers 429 while it still processes the key: not "throttled, nothing done".
        assert_eq!(seen(Answer::InProgress), Seen::MaybeProcessed);
        assert_eq!(history(&[Answer::InProgress]).verdict(), Verdict::Unknown);
        assert_eq!(
            history(&[Answer::Status(429)]).verdict(),
            Verdict::NotProcessed
        );
    }

    #[test]
    fn verdicts_of_histories_without_a_maybe() {
        assert_eq!(History::default().verdict(), Verdict::NotProcessed);
        assert_eq!(history(&[Answer::NotSent]).verdict(), Verdict::NotProcessed);
        let throttled = history(&[Answer::Status(429), Answer::Status(429)]);
        assert_eq!(throttled.verdict(), Verdict::NotProcessed);
        assert!(throttled.sent());
        assert_eq!(
            history(&[Answer::Status(429), Answer::Status(402)]).verdict(),
            Verdict::Refused
        );
        assert_eq!(history(&[Answer::Refused]).verdict(), Verdict::Refused);
        assert_eq!(
            history(&[Answer::NoAnswer, Answer::Status(201)]).verdict(),
            Verdict::Done
        );
        assert!(!history(&[Answer::NotSent]).sent());
    }

    #[test]
    fn status_table() {
        for s in [200, 201, 204, 299] {
            assert_eq!(seen(Answer::Status(s)), Seen::Processed, "{s}");
        }
        for s in [408, 409, 500, 502, 503, 504, 599] {
            assert_eq!(seen(Answer::Status(s)), Seen::MaybeProcessed, "{s}");
        }
        for s in [
            0, 100, 301, 302, 303, 307, 400, 401, 402, 403, 404, 422, 600,
        ] {
            assert_eq!(seen(Answer::Status(s)), Seen::Refused, "{s}");
        }
        assert_eq!(seen(Answer::Status(429)), Seen::NotProcessed);
    }

    #[test]
    fn codes_cross_the_boundary() {
        assert_eq!(answer_from_code(-1.0), Answer::NotSent);
        assert_eq!(answer_from_code(-2.0), Answer::NoAnswer);
        assert_eq!(answer_from_code(-3.0), Answer::Refused);
        assert_eq!(answer_from_code(-4.0), Answer::InProgress);
        assert_eq!(answer_from_code(404.0), Answer::Status(404));
        assert_eq!(answer_from_code(0.0), Answer::Status(0));
        for odd in [f64::NAN, 1000.0, 404.5, -5.0, f64::INFINITY] {
            assert_eq!(answer_from_code(odd), Answer::NoAnswer, "{odd}");
        }
    }

    #[test]
    fn attempts_are_counted_and_saturate() {
        assert_eq!(history(&[Answer::NotSent; 5]).attempts(), 5);
        let full = History(MAX_ATTEMPTS * ATTEMPT).record(Answer::Status(429));
        assert_eq!(full.attempts(), MAX_ATTEMPTS);
        assert_eq!(
            full.verdict(),
            Verdict::NotProcessed,
            "saturation sets no flag"
        );
        assert!(full.record(Answer::NoAnswer).may_have_been_processed());
    }

    #[test]
    fn not_sent_codes() {
        assert!(proves_not_sent("ECONNREFUSED"));
        assert!(!proves_not_sent("ECONNRESET"));
        assert!(!proves_not_sent("econnrefused"));
    }
}
