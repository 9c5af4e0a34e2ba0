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
