// Why: what an idempotency key is, in one place for the in-process store, the shared (Redis) store
// and the pipelines. The rule is the Rust core's (KEY_RULE, read once from the core); this module
// applies it in JS where a key never crosses (the shared stores, the store's other methods; the
// in-process store's begin lets the core check the bytes it hashes), and renders the errors a
// caller reads.

import { keyRule } from '../steadfast_core.js';
import { brand } from './errors.js';
import * as o from './options.js';
import { LAYOUT, namedSlots } from './wire.js';

let rule;

/**
 * Whether `key` (a string) passes the core's key rule: 1 to 255 printable ASCII characters, not
 * starting or ending with a space. Applied in JS with the core's numbers so a key need not cross.
 */
export function validKey(key) {
  rule ??= namedSlots(LAYOUT.keyRule, keyRule());
  const { minLength: min, maxLength: max, lowestByte: lo, highestByte: hi, lowestEdgeByte: edge } = rule;
  const n = key.length;
  if (n < min || n > max) return false;
  if (key.charCodeAt(0) < edge || key.charCodeAt(n - 1) < edge) return false;
  for (let i = 0; i < n; i++) {
    const c = key.charCodeAt(i);
    if (c < lo || c > hi) return false;
  }
  return true;
}

export function invalidKey(key) {
  return brand(
    new RangeError(`steadfast: idempotency key must be 1 to 255 printable ASCII characters, not starting or ending with a space, got ${o.show(key)}`),
    'INVALID_KEY',
    { key },
  );
}

/** Throw unless `key` is a valid key string (`where` names the method). */
export function checkKey(key, where) {
  if (typeof key !== 'string') throw brand(new TypeError(`steadfast: ${where} key must be a string, got ${o.show(key)}`), 'INVALID_KEY');
  if (!validKey(key)) throw invalidKey(key);
}
