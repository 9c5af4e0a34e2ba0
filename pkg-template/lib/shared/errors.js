// Why: a shared store that cannot be reached must never turn into a silent double charge or a hung
// request. Every store call is bounded; when it fails, the caller gets this typed error (or the
// documented fallback) and the user's `onStoreError` hears about it.

import { SteadfastError, named } from '../errors.js';

export class StateStoreUnavailableError extends SteadfastError {
  /**
   * @param {string} op the store operation that failed ('acquire', 'record', 'begin', 'complete', …)
   * @param {string} detail what happened
   * @param {unknown} [cause] the client's error, if any
   */
  constructor(op, detail, cause) {
    super(`State store unavailable during ${op}: ${detail}`, 'STORE_UNAVAILABLE', cause === undefined ? undefined : { cause });
    this.op = op;
  }
}
named(StateStoreUnavailableError, 'StateStoreUnavailableError');

// StoreFullError lives in ../errors.js (the in-process store raises it too); re-exported here so
// the shared layer's import point keeps naming it.
export { StoreFullError } from '../errors.js';

/**
 * Redis lost the store's data (its epoch marker is gone or older than the one this process knew: a
 * restart without persistence, FLUSHALL, a failover to a node that had not received it). Begins,
 * reopens, resolves, peeks and listings reject with this, WITHOUT running anything, until an
 * operator has settled what was lost and calls acknowledgeAmnesia(): answering from what is left
 * would run keys again (a second debit).
 */
export class StoreAmnesiaError extends SteadfastError {
  /**
   * @param {string} prefix the store's key prefix
   * @param {string} detail what was found
   */
  constructor(prefix, detail) {
    super(
      `Idempotency store '${prefix}' lost data in Redis (${detail}): nothing runs until the lost keys are reconciled with the gateway and acknowledgeAmnesia() is called`,
      'STORE_AMNESIA',
    );
    this.prefix = prefix;
  }
}
named(StoreAmnesiaError, 'StoreAmnesiaError');
