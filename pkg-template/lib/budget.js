// Why: backoff spreads one client's retries; a budget caps what every caller together may add.
// Only retries withdraw; first attempts never do. The arithmetic (lazy refill, exact ratios) is
// the Rust core's.

import { BudgetCore } from '../steadfast_core.js';
import * as o from './options.js';
import { fetchDefaults } from './defaults.js';
import { deferred } from './deferred.js';

const CORE = Symbol('steadfast.budget');
/**
 * @internal The key of the driver getter that RetryBudget and RetryQuota both define (see
 * budgetCore). A getter on the prototype, not an instance field: `BUDGET in value` holds for a
 * stand-in made before the core loaded (deferred.js), as `instanceof` did, and reading it builds
 * the real instance first. Through this key, code that takes "a RetryBudget or a RetryQuota" names
 * neither class, so a bundle carries RetryQuota only when the page imports it.
 */
export const BUDGET = Symbol('steadfast.budgetDriver');

export class RetryBudget {
  /**
   * @param {object} options `{ capacity, refillPerSec }` (token bucket) or
   *   `{ ratio = 0.2, minRetriesPerSec = 10, windowMs = 10000 }` (ratio budget); `clock?`.
   */
  constructor(options) {
    const where = 'RetryBudget';
    const stand = deferred(new.target, arguments, where);
    if (stand !== undefined) return stand;
    const opts = o.misspelt(o.object(options, where), ['capacity', 'refillPerSec', 'ratio', 'minRetriesPerSec', 'windowMs', 'clock'], where);
    const clock = o.clock(opts, where);
    const bucket = opts.capacity !== undefined || opts.refillPerSec !== undefined;
    const ratioShape = opts.ratio !== undefined || opts.minRetriesPerSec !== undefined || opts.windowMs !== undefined;
    if (bucket === ratioShape) {
      throw o.typeError(where, 'options', '{ capacity, refillPerSec } or { ratio, minRetriesPerSec, windowMs }', opts);
    }
    let core;
    if (bucket) {
      const values = { capacity: o.num(opts, 'capacity', where), refillPerSec: o.num(opts, 'refillPerSec', where) };
      for (const name of ['capacity', 'refillPerSec']) {
        if (values[name] === undefined) throw o.typeError(where, name, 'a number', undefined);
      }
      core = o.core(where, values, () => BudgetCore.tokenBucket(values.capacity, values.refillPerSec));
    } else {
      const d = fetchDefaults().budget;
      const values = {
        ratio: o.num(opts, 'ratio', where) ?? d.ratio,
        minRetriesPerSec: o.num(opts, 'minRetriesPerSec', where) ?? d.minRetriesPerSec,
        windowMs: o.num(opts, 'windowMs', where) ?? d.windowMs,
      };
      core = o.core(where, values, () => BudgetCore.ratio(values.ratio, values.minRetriesPerSec, values.windowMs));
    }
    const countsRequests = core.countsRequests;
    this[CORE] = {
      countRequest: countsRequests ? () => core.recordRequest(clock()) : () => {},
      tryWithdraw: () => core.tryWithdraw(clock()),
      available: () => core.available(clock()),
    };
    Object.freeze(this);
  }

  /** @internal The driver's view (budgetCore). */
  get [BUDGET]() {
    return this[CORE];
  }

  /** Take one retry from the budget: true if allowed. Never call it for a first attempt. */
  tryConsume() {
    return this[CORE].tryWithdraw();
  }

  /** Count one first attempt (ratio budgets earn retries from requests; no-op for buckets). */
  recordRequest() {
    this[CORE].countRequest();
  }

  /** Retries available now. */
  get available() {
    return this[CORE].available();
  }
}

/**
 * @internal The driver's view of a budget option: `{ countRequest(), tryWithdraw(error) -> receipt
 * | false, recordSuccess?(receipt), available() }`. A RetryQuota fits the same shape (it charges by
 * the error's class and is refunded on success).
 */
export function budgetCore(value, where) {
  if (isBudget(value)) return value[BUDGET];
  throw o.typeError(where, 'budget', 'a RetryBudget or a RetryQuota', value);
}

/** @internal Whether `value` is a RetryBudget or a RetryQuota (or a stand-in for one). */
export function isBudget(value) {
  return value !== null && typeof value === 'object' && BUDGET in value;
}
