//! A weighted retry quota: retries are paid for by kind of failure, and successes pay back.
//!
//! Why weights and not one token per retry: a retry after a timeout may double work the server is
//! still doing; a retry after a 5xx repeats work that failed; a retry after a 429 repeats work the
//! server refused cheaply. A quota that charges each its own cost runs dry fastest when the
//! dependency is sickest, and refills only as fast as calls succeed — so a fleet stops retrying
//! exactly when retries would hurt, and starts again on its own when the dependency recovers. This
//! is the AWS SDKs' "standard" retry mode (`@smithy/util-retry`), with our classes and defaults.
//!
//! Rules (no clock: the quota moves only on outcomes):
//! - A first attempt costs nothing and is never refused.
//! - A retry after a failure of class `c` withdraws `cost(c)` if at least that much is available;
//!   otherwise it is refused (the caller fails with the error it has).
//! - A success refunds what the call's last retry cost (a retried call that finally worked gives
//!   its retry back), or `success_refund` if it succeeded without a retry. Never above `capacity`.
//!
//! # Default ([`QuotaConfig::default`], ours)
//! `capacity = 500`, `timeout = 10`, `server_error = 5`, `throttled = 5`, `success_refund = 1`.
//! Same scale as AWS (100 back-to-back timeouts or 50 … drain it), but a 5xx costs half a
//! timeout: a 5xx is a finished answer, a timeout may still be running at the server (and may be a
//! charge), so only the timeout pays double.
//!
//! # AWS standard mode ([`QuotaConfig::aws_standard`])
//! From `@smithy/util-retry` 4.x (`constants.ts`, `StandardRetryStrategy.ts`): `INITIAL_RETRY_TOKENS
//! = 500` (also the cap), `TIMEOUT_RETRY_COST = 10` for TRANSIENT errors (timeouts, connection
//! errors, and HTTP 500/502/503/504 — `TRANSIENT_ERROR_STATUS_CODES`), `RETRY_COST = 5` otherwise
//! (throttling), `NO_RETRY_INCREMENT = 1`, and a success refunds its last retry's cost. So:
//! `timeout = 10`, `server_error = 10`, `throttled = 5`, `success_refund = 1`.

use super::error::{check, Error, Opt};

/// Largest accepted capacity or cost (integers: the quota is exact).
pub const MAX_QUOTA: u32 = 1_000_000_000;

/// What kind of failure a retry follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// No answer: a timeout or a connection error (the server may still be working). HTTP 408 too.
    Timeout,
    /// The server refused for load: HTTP 429.
    Throttled,
    /// Any other retryable answer (5xx …).
    ServerError,
}

impl ErrorClass {
    /// All classes, by id (0 timeout, 1 throttled, 2 server error).
    pub const ALL: [ErrorClass; 3] = [
        ErrorClass::Timeout,
        ErrorClass::Throttled,
        ErrorClass::ServerError,
    ];

    /// The class of a failure with HTTP `status` (NaN or 0: no response at all).
    pub fn of_status(status: f64) -> ErrorClass {
        if status.is_nan() || status < 100.0 || status == 408.0 {
            ErrorClass::Timeout
        } else if status == 429.0 {
            ErrorClass::Throttled
        } else {
            ErrorClass::ServerError
        }
    }

    /// Class by id; unknown ids are server errors.
    pub fn from_id(id: u32) -> ErrorClass {
        ErrorClass::ALL
            .get(id as usize)
            .copied()
            .unwrap_or(ErrorClass::ServerError)
    }

    /// Its name across the boundary (`retryErrorClass`'s answer).
    pub const fn name(self) -> &'static str {
        match self {
            ErrorClass::Timeout => "timeout",
            ErrorClass::Throttled => "throttled",
            ErrorClass::ServerError => "serverError",
        }
    }

    /// Stable id.
    pub const fn id(self) -> u32 {
        match self {
            ErrorClass::Timeout => 0,
            ErrorClass::Throttled => 1,
            ErrorClass::ServerError => 2,
        }
    }
}

/// Validated quota parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaConfig {
    /// Tokens when full (the quota starts full).
    pub capacity: u32,
    /// Cost of a retry after a timeout / connection error.
    pub timeout: u32,
    /// Cost of a retry after a 429.
    pub throttled: u32,
    /// Cost of a retry after another retryable failure.
    pub server_error: u32,
    /// Refund of a call that succeeded without a retry.
    pub success_refund: u32,
}

impl Default for QuotaConfig {
    fn default() -> Self {
        Self {
            capacity: 500,
            timeout: 10,
            throttled: 5,
            server_error: 5,
            success_refund: 1,
        }
    }
}

impl QuotaConfig {
    /// The AWS SDK's standard mode (see the module docs for the source of each number).
    pub const fn aws_standard() -> Self {
        Self {
            capacity: 500,
            timeout: 10,
            throttled: 5,
            server_error: 10,
            success_refund: 1,
        }
    }

    /// Validate: every value an integer from 0 to [`MAX_QUOTA`] (capacity from 1).
    pub fn new(
        capacity: f64,
        timeout: f64,
        throttled: f64,
        server_error: f64,
        success_refund: f64,
    ) -> Result<Self, Error> {
        let int = |o: Opt, v: f64| check::integer(o, v, MAX_QUOTA);
        Ok(Self {
            capacity: check::count(Opt::Capacity, capacity, MAX_QUOTA)?,
            timeout: int(Opt::TimeoutCost, timeout)?,
            throttled: int(Opt::ThrottledCost, throttled)?,
            server_error: int(Opt::ServerErrorCost, server_error)?,
            success_refund: int(Opt::SuccessRefund, success_refund)?,
        })
    }

    /// What a retry after `class` costs.
    pub const fn cost(&self, class: ErrorClass) -> u32 {
        match class {
            ErrorClass::Timeout => self.timeout,
            ErrorClass::Throttled => self.throttled,
            ErrorClass::ServerError => self.server_error,
        }
    }
}

/// The quota's state: [`QuotaConfig`] plus the tokens available.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryQuota {
    config: QuotaConfig,
    available: u32,
}

impl RetryQuota {
    /// A full quota.
    pub const fn new(config: QuotaConfig) -> Self {
        Self {
            config,
            available: config.capacity,
        }
    }

    /// The parameters.
    pub const fn config(&self) -> QuotaConfig {
        self.config
    }

    /// Tokens available now.
    pub const fn available(&self) -> u32 {
        self.available
    }

    /// Pay for a retry after a failure of `class`: `Some(cost)` (remember it for
    /// [`record_success`](Self::record_success)) or `None` when the quota cannot cover it.
    pub fn try_acquire(&mut self, class: ErrorClass) -> Option<u32> {
        let cost = self.config.cost(class);
        let left = self.available.checked_sub(cost)?;
        self.available = left;
        Some(cost)
    }

    /// A call succeeded; `last_retry_cost` is what its last retry paid (`None`: it never retried).
    pub fn record_success(&mut self, last_retry_cost: Option<u32>) {
        let refund = last_retry_cost.unwrap_or(self.config.success_refund);
        self.available = self
            .available
            .saturating_add(refund)
            .min(self.config.capacity);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_by_class_and_refunds() {
        let mut q = RetryQuota::new(QuotaConfig::new(20.0, 10.0, 5.0, 5.0, 1.0).unwrap());
        assert_eq!(q.try_acquire(ErrorClass::Timeout), Some(10));
        assert_eq!(q.try_acquire(ErrorClass::Throttled), Some(5));
        assert_eq!(q.try_acquire(ErrorClass::Timeout), None);
        assert_eq!(q.available(), 5);
        assert_eq!(q.try_acquire(ErrorClass::ServerError), Some(5));
        assert_eq!(q.try_acquire(ErrorClass::ServerError), None);
        q.record_success(Some(10));
        assert_eq!(q.available(), 10);
        q.record_success(None);
        assert_eq!(q.available(), 11);
        for _ in 0..100 {
            q.record_success(None);
        }
        assert_eq!(q.available(), 20);
    }

    #[test]
    fn classes() {
        assert_eq!(ErrorClass::of_status(f64::NAN), ErrorClass::Timeout);
        assert_eq!(ErrorClass::of_status(0.0), ErrorClass::Timeout);
        assert_eq!(ErrorClass::of_status(408.0), ErrorClass::Timeout);
        assert_eq!(ErrorClass::of_status(429.0), ErrorClass::Throttled);
        assert_eq!(ErrorClass::of_status(503.0), ErrorClass::ServerError);
        for c in ErrorClass::ALL {
            assert_eq!(ErrorClass::from_id(c.id()), c);
        }
    }

    #[test]
    fn validation() {
        assert!(QuotaConfig::new(0.0, 1.0, 1.0, 1.0, 1.0).is_err());
        assert!(QuotaConfig::new(10.0, -1.0, 1.0, 1.0, 1.0).is_err());
        assert!(QuotaConfig::new(10.0, 1.5, 1.0, 1.0, 1.0).is_err());
        assert!(QuotaConfig::new(10.0, 1.0, f64::NAN, 1.0, 1.0).is_err());
        assert!(QuotaConfig::new(1e10, 1.0, 1.0, 1.0, 1.0).is_err());
        assert_eq!(
            QuotaConfig::new(10.0, 0.0, 0.0, 0.0, 0.0).unwrap().timeout,
            0
        );
        assert_eq!(
            QuotaConfig::new(500.0, 10.0, 5.0, 10.0, 1.0).unwrap(),
            QuotaConfig::aws_standard()
        );
    }
}
