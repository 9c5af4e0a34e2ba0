// Why: callers branch on what went wrong. Every steadfast error is a real Error subclass with
// `name` equal to its class name and a stable `code`, and carries a brand (Symbol.for) so
// `isSteadfastError` works even when two copies of the package meet in one program.

const BRAND = Symbol.for('steadfast.error');

/** @param {unknown} error */
export function isSteadfastError(error) {
  return error !== null && typeof error === 'object' && /** @type {any} */ (error)[BRAND] === true;
}

/** Mark a built-in error (TypeError/RangeError for bad input) as steadfast's, with a code. */
export function brand(error, code, fields) {
  Object.defineProperty(error, BRAND, { value: true });
  error.code = code;
  if (fields) Object.assign(error, fields);
  return error;
}

export class SteadfastError extends Error {
  constructor(message, code, options) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}
Object.defineProperty(SteadfastError.prototype, BRAND, { value: true });

export class CircuitOpenError extends SteadfastError {
  constructor(retryAfterMs = 0, message = 'Circuit is open: downstream is failing fast') {
    super(message, 'CIRCUIT_OPEN');
    this.retryAfterMs = retryAfterMs;
  }
  /** @internal Cheap construction used by the breaker (no stack: it is flow control). */
  static fast(retryAfterMs) {
    // Inline, not a closure in try/finally: this runs once per rejected call. The constructor
    // cannot throw, so the limit is always restored.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    const error = new CircuitOpenError(retryAfterMs);
    Error.stackTraceLimit = limit;
    return error;
  }
}

export class DuplicateRequestError extends SteadfastError {
  constructor(key, startedAt) {
    super(`Duplicate request for ${key} is already in flight`, 'DUPLICATE_IN_FLIGHT');
    this.key = key;
    this.startedAt = startedAt;
  }
}

export class OutcomeUnknownError extends SteadfastError {
  constructor(key, startedAt, options) {
    super(`Outcome for ${key} is unknown — reconcile before retrying`, 'OUTCOME_UNKNOWN', options);
    this.key = key;
    this.startedAt = startedAt;
  }
}

export class IdempotencyKeyReuseError extends SteadfastError {
  constructor(key) {
    super(`Idempotency key ${key} was already used for a different request`, 'KEY_REUSED');
    this.key = key;
  }
}

export class RetryBudgetExhaustedError extends SteadfastError {
  constructor(cause, attempt) {
    super('Retry budget exhausted: failing fast instead of adding load', 'RETRY_BUDGET_EXHAUSTED', { cause });
    this.attempt = attempt;
  }
}

export class DeadlineExceededError extends SteadfastError {
  constructor(maxElapsedMs, cause, attempt) {
    super(`Gave up: retrying would exceed maxElapsedMs (${maxElapsedMs} ms)`, 'DEADLINE_EXCEEDED', { cause });
    this.maxElapsedMs = maxElapsedMs;
    this.attempt = attempt;
  }
}

export class IdempotencyStateError extends SteadfastError {
  constructor(key, code, message) {
    super(message, code);
    this.key = key;
  }
}
