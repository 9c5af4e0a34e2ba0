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
  #retryAfterMs;
  #clock;
  /**
   * @param {number} [retryAfterMs] remaining cooldown (0 while a probe is in flight, Infinity when isolated)
   * @param {string} [message]
   */
  constructor(retryAfterMs = 0, message = 'Circuit is open: downstream is failing fast') {
    super(message, 'CIRCUIT_OPEN');
    this.#retryAfterMs = retryAfterMs;
  }

  /** Remaining cooldown in ms, as of when you read it. */
  get retryAfterMs() {
    return this.#clock === undefined ? this.#retryAfterMs : Math.max(0, this.#retryAfterMs - this.#clock());
  }

  /** @internal A rejection without a stack trace, with a fixed `retryAfterMs` (shared breakers). */
  static fast(retryAfterMs) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    const error = new CircuitOpenError(retryAfterMs);
    Error.stackTraceLimit = limit;
    return error;
  }

  /**
   * @internal The breaker's rejection: flow control, so no stack trace, and one frozen instance per
   * open period shared by every call it rejects (building a fresh Error per rejection costs more than
   * the rest of the rejection together). `retryAfterMs` counts down on the breaker's `clock` to
   * `openUntil`.
   */
  static shared(openUntil, clock) {
    const error = CircuitOpenError.fast(openUntil);
    if (clock !== undefined) error.#clock = clock;
    return Object.freeze(error);
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
  /**
   * @param {string} key
   * @param {number} startedAt
   * @param {{ cause?: unknown, attempts?: number, lastAttemptAt?: number, settleAfterMs?: number }} [options]
   *   what reconciliation needs: attempts sent, when the last one started, the settle window.
   */
  constructor(key, startedAt, options) {
    super(`Outcome for ${key} is unknown — reconcile before retrying`, 'OUTCOME_UNKNOWN', options);
    this.key = key;
    this.startedAt = startedAt;
    for (const field of ['attempts', 'lastAttemptAt', 'settleAfterMs']) {
      if (typeof options?.[field] === 'number') this[field] = options[field];
    }
  }
}

/** `navigator.onLine` was false before sending: nothing was sent (so nothing can have been charged). */
export class OfflineError extends SteadfastError {
  constructor(message = 'Offline (navigator.onLine is false): nothing was sent') {
    super(message, 'OFFLINE');
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
