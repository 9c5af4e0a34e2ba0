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

/**
 * A store already holds its `maxRecords` live records, so a NEW key is refused before anything
 * runs. Nothing live is evicted to make room: evicting an in-flight or unknown record would allow a
 * second charge, evicting a done one a second charge on retry. Existing keys keep working.
 */
export class StoreFullError extends SteadfastError {
  /**
   * @param {string} key the refused key
   * @param {number} maxRecords the limit
   */
  constructor(key, maxRecords) {
    super(`Idempotency store is full (${maxRecords} live records): new key ${key} refused, nothing was run`, 'STORE_FULL');
    this.key = key;
    this.maxRecords = maxRecords;
  }
}
named(StoreFullError, 'StoreFullError');

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
