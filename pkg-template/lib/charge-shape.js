// Why: a charge is checked at every door (the checkout client's charge, fingerprint and reconcile,
// chargeCustomer, and a client made before the core has loaded), and a charge one door accepts must
// not be refused by another with other words. The rule lives here once.

import * as o from './options.js';

/**
 * @internal A charge's shape: an object with a positive integer `amountCents` and a non-empty
 * `currency`; returns the charge. Throws a TypeError (INVALID_OPTION) — or a RangeError for a number
 * that is not a positive integer — naming `where` and the field.
 */
export function checkCharge(charge, where) {
  const c = o.object(charge, where);
  if (!Number.isSafeInteger(c.amountCents) || c.amountCents <= 0) {
    throw (typeof c.amountCents === 'number' ? o.rangeError : o.typeError)(where, 'amountCents', 'a positive integer', c.amountCents);
  }
  if (typeof c.currency !== 'string' || c.currency.length === 0) throw o.typeError(where, 'currency', 'a non-empty string', c.currency);
  return c;
}
