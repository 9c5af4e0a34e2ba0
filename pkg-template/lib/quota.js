// Why: a retry after a timeout, a 5xx and a 429 do not cost a sick server the same, and a quota
// that every caller shares should run dry fastest when retries hurt most and refill only as calls
// succeed (the AWS SDKs' standard retry mode). The arithmetic, the presets and the error classes
// are the Rust core's (src/core/quota.rs); this shell reads the status off an error and keeps the
// per-call receipt (what the last retry paid) for the refund.

import { QuotaCore, quotaPreset, quotaErrorClass } from '../steadfast_core.js';
import * as o from './options.js';
import { deferred } from './deferred.js';
import { BUDGET } from './budget.js';
import { statusOf } from './classify.js';
import { ERROR_CLASSES, LAYOUT, QUOTA_PRESETS } from './wire.js';

const CORE = Symbol('steadfast.quota');

/**
 * The class of a failure, as the quota charges it: `'throttled'` (HTTP 429), `'timeout'` (no
 * response at all — a timeout, a network error, an unknown outcome — or HTTP 408), else
 * `'serverError'`.
 * @param {unknown} error
 * @returns {'timeout' | 'throttled' | 'serverError'}
 */
export function retryErrorClass(error) {
  return ERROR_CLASSES[quotaErrorClass(statusOf(error) ?? NaN)] ?? 'serverError';
}

export class RetryQuota {
  /**
   * @param {object} [options] `preset = 'steadfast'` (capacity 500; a retry after a timeout costs
   *   10, after a 429 5, after another failure 5; a success without retry refunds 1) or `'aws'`
   *   (the AWS SDK's standard mode: 500; 10, 5, 10; 1), and any of `capacity`, `timeoutCost`,
   *   `throttledCost`, `serverErrorCost`, `successRefund` (integers ≥ 0; capacity ≥ 1) to override
   *   it. A success after retries refunds what its last retry paid.
   */
  constructor(options) {
    const where = 'RetryQuota';
    const stand = deferred(new.target, arguments, where);
    if (stand !== undefined) return stand;
    const opts = o.misspelt(o.object(options, where, true), ['preset', ...LAYOUT.quotaPreset], where);
    const preset = quotaPreset(o.oneOf(opts, 'preset', where, QUOTA_PRESETS, 0));
    const values = {};
    LAYOUT.quotaPreset.forEach((name, i) => (values[name] = o.num(opts, name, where) ?? preset[i]));
    const core = o.core(where, values, () => new QuotaCore(...LAYOUT.quotaPreset.map((name) => values[name])));
    this[CORE] = {
      countRequest() {},
      /** Pay for a retry after `error`: the cost paid (the receipt), or false when refused. */
      tryWithdraw(error) {
        const cost = core.tryAcquire(quotaErrorClass(statusOf(error) ?? NaN));
        return cost < 0 ? false : cost;
      },
      /** A call succeeded; `receipt` is what its last retry paid (undefined: it never retried). */
      recordSuccess(receipt) {
        core.recordSuccess(typeof receipt === 'number' ? receipt : -1);
      },
      available: () => core.available,
      capacity: core.capacity,
    };
    Object.freeze(this);
  }

  /** @internal The driver's view (budget.js's budgetCore): the same shape as a RetryBudget's. */
  get [BUDGET]() {
    return this[CORE];
  }

  /** Pay for one retry after `error` (by its class): true if the quota covers it. */
  tryConsume(error) {
    return this[CORE].tryWithdraw(error) !== false;
  }

  /** Report a success; `retryCost` = what its last retry paid (omit when it never retried). */
  recordSuccess(retryCost) {
    if (retryCost !== undefined && !(typeof retryCost === 'number' && retryCost >= 0)) {
      throw o.typeError('recordSuccess', 'retryCost', 'a number >= 0 or undefined', retryCost);
    }
    this[CORE].recordSuccess(retryCost);
  }

  /** Tokens when full. */
  get capacity() {
    return this[CORE].capacity;
  }

  /** Tokens available now. */
  get available() {
    return this[CORE].available();
  }
}
