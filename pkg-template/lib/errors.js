// Why: callers branch on what went wrong. Every steadfast error is a real Error subclass with
// `name` equal to its class name and a stable `code`, and carries a brand (Symbol.for) so
// `isSteadfastError` works even when two copies of the package meet in one program.
// `name` is a string literal on each prototype (never `new.target.name`, which a minifier renames),
// writable so that catch code may tag an error; every error is a fresh object.

const BRAND = Symbol.for('steadfast.error');

/**
 * @param {unknown} error
 * @param {string} [code] also require this `code` (narrows to that error's type in TypeScript)
 */
export function isSteadfastError(error, code) {
  if (error === null || typeof error !== 'object') return false;
  // A value whose reads throw (a revoked Proxy, a hostile trap) is no steadfast error: the guard
  // answers, it never throws (it runs on whatever a gateway rejected with).
  try {
    return /** @type {any} */ (error)[BRAND] === true && (code === undefined || /** @type {any} */ (error).code === code);
  } catch {
    return false;
  }
}

/**
 * @internal `value instanceof C`, false when asking throws (a revoked Proxy's prototype cannot be
 * read): for what a gateway rejected with, which steadfast must judge without throwing.
 */
export function isInstance(value, C) {
  try {
    return value instanceof C;
  } catch {
    return false;
  }
}

/** @internal `value[name]` for what a gateway rejected with: undefined when reading it throws (see isInstance). */
export function fieldOf(value, name) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined;
  try {
    return value[name];
  } catch {
    return undefined;
  }
}

/**
 * @internal A refusal that never ran the call (a bulkhead that was full, an inner breaker that was
 * open, a charge refused as another request under its key): it says nothing about the dependency.
 */
export function neverRan(error) {
  return isSteadfastError(error, 'BULKHEAD_REJECTED') || isSteadfastError(error, 'CIRCUIT_OPEN') || isSteadfastError(error, 'KEY_REUSED');
}

/**
 * @internal A refusal that never ran (see neverRan) and ended a retried call after an earlier
 * attempt had been answered -> that attempt's error: a breaker around the retry judges the call by
 * it. Refusals are fresh objects, one per rejection, so keying by the error is safe here.
 */
export const ANSWERED_BEFORE = /* @__PURE__ */ new WeakMap();

/**
 * Give an error class its `name` as a literal on its prototype: survives minification, costs nothing
 * per instance, and stays writable (an instance may still be given its own `name`). `mark`, when
 * given, is a brand symbol set to true on the prototype too. Called as `export const C = /* @__PURE__ *\/
 * named(class C …)`: one pure expression, so a bundle drops the classes nothing names.
 * @template {Function} C
 * @param {C} ErrorClass
 * @param {string} name
 * @param {symbol} [mark]
 * @returns {C}
 */
export function named(ErrorClass, name, mark) {
  Object.defineProperty(ErrorClass.prototype, 'name', { value: name, writable: true, configurable: true, enumerable: false });
  if (mark !== undefined) Object.defineProperty(ErrorClass.prototype, mark, { value: true });
  return ErrorClass;
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
    this.code = code;
  }
}
Object.defineProperty(SteadfastError.prototype, BRAND, { value: true });
named(SteadfastError, 'SteadfastError');

/**
 * A store already holds its `maxRecords` live records, so a NEW key is refused before anything
 * runs. Nothing live is evicted to make room: evicting an in-flight or unknown record would allow a
 * second charge, evicting a done one a second charge on retry. Existing keys keep working.
 */
export const StoreFullError = /* @__PURE__ */ named(
  class StoreFullError extends SteadfastError {
    /**
     * @param {string} key the refused key
     * @param {number} maxRecords the limit
     */
    constructor(key, maxRecords) {
      super(`Idempotency store is full (${maxRecords} live records): new key ${key} refused, nothing was run`, 'STORE_FULL');
      this.key = key;
      this.maxRecords = maxRecords;
    }
  },
  'StoreFullError',
);

const OPEN_MESSAGE = 'Circuit is open: downstream is failing fast';

export const CircuitOpenError = /* @__PURE__ */ named(
  class CircuitOpenError extends SteadfastError {
    /**
     * @param {number} [retryAfterMs] remaining cooldown when rejected (0 while a probe is in flight, Infinity when isolated)
     * @param {string} [message]
     */
    constructor(retryAfterMs = 0, message = OPEN_MESSAGE) {
      super(message, 'CIRCUIT_OPEN');
      /** Remaining cooldown in ms at the time of the rejection. */
      this.retryAfterMs = retryAfterMs;
    }

    /**
     * @internal The breaker's rejection: flow control, so a fresh error without a stack trace (the
     * stack would only show steadfast's own frames, and capturing it is most of an Error's cost).
     */
    static fast(retryAfterMs) {
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 0;
      const error = new CircuitOpenError(retryAfterMs);
      Error.stackTraceLimit = limit;
      return error;
    }
  },
  'CircuitOpenError',
);

/**
 * @internal A promise that rejects with `error` one microtask from now, i.e. after a caller's
 * `await` / `.catch` has attached its handler. Why: a promise rejected while it has no handler
 * makes V8 call the host's rejection tracker twice (rejected without handler, then handler added);
 * in Node that costs more than the whole open-breaker decision. The rejection is only later, never
 * lost: a caller that attaches no handler still gets an unhandled rejection reported.
 * @param {unknown} error
 * @returns {Promise<never>}
 */
export function rejectSoon(error) {
  // A reaction on an already-resolved promise, not queueMicrotask: fake-timer libraries may
  // replace queueMicrotask, never a promise's own job queue.
  return new Promise((_, reject) => {
    RESOLVED.then(() => reject(error));
  });
}
const RESOLVED = Promise.resolve();

export const DuplicateRequestError = /* @__PURE__ */ named(
  class DuplicateRequestError extends SteadfastError {
    constructor(key, startedAt) {
      super(`Duplicate request for ${key} is already in flight`, 'DUPLICATE_IN_FLIGHT');
      this.key = key;
      this.startedAt = startedAt;
    }
  },
  'DuplicateRequestError',
);

export const OutcomeUnknownError = /* @__PURE__ */ named(
  class OutcomeUnknownError extends SteadfastError {
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
  },
  'OutcomeUnknownError',
);

/** `navigator.onLine` was false before sending: nothing was sent (so nothing can have been charged). */
export const OfflineError = /* @__PURE__ */ named(
  class OfflineError extends SteadfastError {
    constructor(message = 'Offline (navigator.onLine is false): nothing was sent') {
      super(message, 'OFFLINE');
    }
  },
  'OfflineError',
);

export const IdempotencyKeyReuseError = /* @__PURE__ */ named(
  class IdempotencyKeyReuseError extends SteadfastError {
    /**
     * @param {string} key
     * @param {{ reason?: 'changed', cause?: unknown }} [info] `reason: 'changed'`: the charge itself
     *   changed while its key was in use (between the call and a later attempt); nothing was sent for
     *   the changed charge. `cause`: then, what the attempt before it ended with (none when no
     *   attempt was sent).
     */
    constructor(key, info) {
      const changed = info?.reason === 'changed';
      super(
        changed
          ? `The charge under idempotency key ${key} changed while it was being charged; nothing was sent for the changed charge (a new charge needs a new key)`
          : `Idempotency key ${key} was already used for a different request`,
        'KEY_REUSED',
        info?.cause === undefined ? undefined : { cause: info.cause },
      );
      this.key = key;
      if (changed) this.reason = 'changed';
    }
  },
  'IdempotencyKeyReuseError',
);

/**
 * A re-send with this key was refused: the key is older than the gateway's retention window
 * (its dialect's `retentionMs`), so the gateway may have forgotten it and would take the re-send
 * as a NEW charge. An earlier attempt may have been processed: settle the charge by looking it up
 * at the gateway (`reconcile(store, lookup)`), never by re-sending.
 */
export const IdempotencyKeyExpiredError = /* @__PURE__ */ named(
  class IdempotencyKeyExpiredError extends SteadfastError {
    /**
     * @param {string} key
     * @param {{ firstUsedAt: number, retentionMs: number, dialect: string, cause?: unknown }} info
     */
    constructor(key, info) {
      super(
        `Idempotency key ${key} is past the ${info.dialect} retention window (${info.retentionMs} ms): not re-sent; reconcile by lookup`,
        'IDEMPOTENCY_KEY_EXPIRED',
        info.cause === undefined ? undefined : { cause: info.cause },
      );
      this.key = key;
      this.firstUsedAt = info.firstUsedAt;
      this.retentionMs = info.retentionMs;
      this.dialect = info.dialect;
    }
  },
  'IdempotencyKeyExpiredError',
);

export const RetryBudgetExhaustedError = /* @__PURE__ */ named(
  class RetryBudgetExhaustedError extends SteadfastError {
    constructor(cause, attempt) {
      super('Retry budget exhausted: failing fast instead of adding load', 'RETRY_BUDGET_EXHAUSTED', { cause });
      this.attempt = attempt;
    }
  },
  'RetryBudgetExhaustedError',
);

export const DeadlineExceededError = /* @__PURE__ */ named(
  class DeadlineExceededError extends SteadfastError {
    constructor(maxElapsedMs, cause, attempt, inFlight = false) {
      super(`Gave up: retrying would exceed maxElapsedMs (${maxElapsedMs} ms)`, 'DEADLINE_EXCEEDED', { cause });
      this.maxElapsedMs = maxElapsedMs;
      this.attempt = attempt;
      this.inFlight = inFlight === true;
    }
  },
  'DeadlineExceededError',
);

export const IdempotencyStateError = /* @__PURE__ */ named(
  class IdempotencyStateError extends SteadfastError {
    constructor(key, code, message) {
      super(message, code);
      this.key = key;
    }
  },
  'IdempotencyStateError',
);

/** Whether `cause` is a browser's Content-Security-Policy refusal to compile WebAssembly. */
function isCspRefusal(cause) {
  const text = cause instanceof Error ? `${cause.name} ${cause.message}` : String(cause);
  return /Content[- ]Security[- ]Policy|unsafe-eval|\bCSP\b/i.test(text);
}

/** Deno's refusal of a file read without --allow-read (Deno.errors.NotCapable; PermissionDenied before Deno 2). */
function isPermissionRefusal(cause) {
  return cause instanceof Error && (cause.name === 'NotCapable' || cause.name === 'PermissionDenied') && /read access/i.test(cause.message);
}

/**
 * The WebAssembly core could not be loaded (a Content-Security-Policy without 'wasm-unsafe-eval', a
 * 404 or wrong MIME type for the .wasm, a CDN rule…). Importing steadfast never throws it: `ready`
 * rejects with it, and every call that needs the core throws (or rejects with) a fresh one.
 */
export const WasmUnavailableError = /* @__PURE__ */ named(
  class WasmUnavailableError extends SteadfastError {
    /**
     * @param {unknown} cause what the platform threw (a CompileError, a TypeError from fetch, …)
     * @param {string} [where] the call that needed the core
     */
    constructor(cause, where) {
      const csp = isCspRefusal(cause);
      const permission = !csp && isPermissionRefusal(cause);
      const why =
        cause === undefined
          ? 'it has not loaded yet (await `ready`, or `init()`, before the first call)'
          : csp
            ? "the page's Content-Security-Policy refused to compile WebAssembly. Fix: add 'wasm-unsafe-eval' to script-src " +
              "(e.g. script-src 'self' 'wasm-unsafe-eval'); it allows WebAssembly only, not eval()"
            : permission
              ? `Deno refused to read steadfast_core_bg.wasm (${cause.message}). Fix: run with --allow-read ` +
                '(or --allow-read=node_modules, or "permissions" in deno.json), or pass the bytes or a WebAssembly.Module to init()'
              : `it failed to load (${cause instanceof Error ? cause.message : String(cause)}). Check that steadfast_core_bg.wasm is ` +
                'served next to the package (Content-Type application/wasm), or pass its URL to init()';
      super(
        `steadfast: ${where === undefined ? 'the WebAssembly core is unavailable' : `${where} needs the WebAssembly core, but`}: ${why}`,
        'WASM_UNAVAILABLE',
        cause === undefined ? undefined : { cause },
      );
      /**
       * 'csp' when a Content-Security-Policy refused WebAssembly; 'permission' when Deno refused to read
       * the .wasm (no --allow-read); 'pending' before loading ended; else 'load'.
       */
      this.reason = cause === undefined ? 'pending' : csp ? 'csp' : permission ? 'permission' : 'load';
    }
  },
  'WasmUnavailableError',
);

const PERMANENT = Symbol.for('steadfast.permanent');

/**
 * Throw it from inside a retried function to stop retrying at once (p-retry's AbortError, a "bail"):
 * `throw new PermanentError(error)`. withRetry then rejects with `error` itself (the cause), whatever
 * `isRetryable` would have said. Elsewhere it is an ordinary error with code 'PERMANENT'.
 */
export const PermanentError = /* @__PURE__ */ named(
  class PermanentError extends SteadfastError {
    /** @param {unknown} cause what the call should reject with */
    constructor(cause, message = 'Permanent failure: not retried') {
      super(message, 'PERMANENT', { cause });
    }
  },
  'PermanentError',
  PERMANENT,
);

/** @internal A PermanentError, from this copy of the package or another. */
export function isPermanent(error) {
  if (error === null || typeof error !== 'object') return false;
  try {
    return /** @type {any} */ (error)[PERMANENT] === true;
  } catch {
    return false; // unreadable (see isSteadfastError)
  }
}
