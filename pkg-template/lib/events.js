// Why: dashboards, logs and tracing want to hear about retries, give-ups, breaker transitions, budget
// refusals and idempotency outcomes, from many listeners at once, each able to stop listening. One
// process-wide hub (like diagnostics_channel, but in browsers too): components emit only when someone
// listens (one boolean read otherwise), and every listener gets a disposer.

import { brand } from './errors.js';

const TYPES = ['retry', 'giveUp', 'breakerState', 'budgetRefused', 'idempotency', 'hedge'];

/** type -> listeners (copied on change, so emitting needs no copy). */
const listeners = Object.create(null);
/** type -> whether anyone listens: the only cost of an event nobody hears. */
export const listening = Object.create(null);
for (const t of TYPES) {
  listeners[t] = [];
  listening[t] = false;
}

/**
 * @internal Call every listener of `type` with `event`. A throwing listener never disturbs steadfast
 * (a breaker's or a key's state must not depend on telemetry) nor the other listeners: its error is
 * reported as uncaught, asynchronously, as node:diagnostics_channel does (`reportError` where the
 * platform has it).
 */
export function emit(type, event) {
  const list = listeners[type];
  for (let i = 0; i < list.length; i++) {
    try {
      list[i](event);
    } catch (e) {
      if (typeof globalThis.reportError === 'function') globalThis.reportError(e);
      else
        queueMicrotask(() => {
          throw e;
        });
    }
  }
}

function subscribe(type, listener, where) {
  if (typeof listener !== 'function') {
    throw brand(new TypeError(`steadfast: events.${where} listener must be a function, got ${typeof listener}`), 'INVALID_OPTION', { option: 'listener' });
  }
  // Each subscription is its own entry, so the same function added twice is called twice and each
  // disposer removes only its own.
  const entry = (event) => listener(event);
  listeners[type] = [...listeners[type], entry];
  listening[type] = true;
  let disposed = false;
  const dispose = () => {
    if (disposed) return;
    disposed = true;
    listeners[type] = listeners[type].filter((l) => l !== entry);
    listening[type] = listeners[type].length > 0;
  };
  if (typeof Symbol.dispose === 'symbol') dispose[Symbol.dispose] = dispose;
  return dispose;
}

/**
 * Process-wide events of every steadfast component in this copy of the package. Each `on…` adds a
 * listener and returns a function that removes it (also usable with `using`).
 */
// Pure: a page that never subscribes carries none of this object (a bundler keeps a bare call).
export const events = /* @__PURE__ */ Object.freeze({
  /** Before each retry's sleep: `{ attempt, delayMs, error, result? }` (every withRetry, pipeline, chargeCustomer). */
  onRetry: (listener) => subscribe('retry', listener, 'onRetry'),
  /** A retried call stopped failing-over: `{ attempt, error | result, reason: 'attempts' | 'not-retryable' | 'permanent' | 'deadline' | 'budget' }`. */
  onGiveUp: (listener) => subscribe('giveUp', listener, 'onGiveUp'),
  /** A CircuitBreaker changed state: `{ breaker, state }`. */
  onBreakerStateChange: (listener) => subscribe('breakerState', listener, 'onBreakerStateChange'),
  /** A retry budget refused a retry: `{ attempt, error }`. */
  onBudgetRefused: (listener) => subscribe('budgetRefused', listener, 'onBudgetRefused'),
  /** An IdempotencyStore decided or settled a key: `{ store, key, outcome }`. */
  onIdempotency: (listener) => subscribe('idempotency', listener, 'onIdempotency'),
  /**
   * A hedged attempt: `{ kind: 'started', attempt, copy, delayMs }` (a copy beyond the first went out),
   * `{ kind: 'won', attempt, copy, copies }` (a race of several copies was answered), `{ kind:
   * 'cancelled', attempt, copy }` (a losing copy was aborted), `{ kind: 'refused', attempt, copy }`
   * (the budget refused a copy; those running go on).
   */
  onHedge: (listener) => subscribe('hedge', listener, 'onHedge'),
});
