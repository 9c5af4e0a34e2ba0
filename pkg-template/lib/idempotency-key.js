// Why: one home for what an idempotency key and a request fingerprint are, shared by the in-process
// store, the shared (Redis) store and the pipelines. The rules are the Rust core's (key rule,
// SHA-256/128 fingerprint that Redis keeps, defaults); this module reads them from the core once and adds what only
// JS can do: render messages, and turn a charge object into its canonical text.

import { keyRule, fingerprintWords as coreWords, storeDefaults } from '../steadfast_core.js';
import { brand } from './errors.js';
import * as o from './options.js';

/** Wire codes of StoreCore.begin (low 3 bits; bit 3 = expired slots to drain first). Mirrors src/wasm/idempotency.rs. */
export const BEGIN = Object.freeze({ RUN: 0, REPLAY: 1, IN_FLIGHT: 2, UNKNOWN: 3, MISMATCH: 4, FULL: 5, EXPIRED_FLAG: 8 });
/** Wire codes of StoreCore.resolve. Mirrors src/wasm/idempotency.rs. */
export const RESOLVE = Object.freeze({ RESOLVED: 0, NOT_FOUND: 1, WRONG_STATE: 2 });

let rule;
let defaults;

/**
 * The core's defaults: `{ ttlMs, maxRecords, inFlightLeaseMs, unknownTtlMs, maxDurationMs }` (read
 * once; maxDurationMs bounds every duration option: 10 years).
 */
export function idempotencyDefaults() {
  if (defaults === undefined) {
    const [ttlMs, maxRecords, inFlightLeaseMs, unknownTtlMs, maxDurationMs] = storeDefaults();
    defaults = Object.freeze({ ttlMs, maxRecords, inFlightLeaseMs, unknownTtlMs, maxDurationMs });
  }
  return defaults;
}

/**
 * Whether `key` (a string) passes the core's key rule: 1 to 255 printable ASCII characters, not
 * starting or ending with a space. Applied in JS with the core's numbers so a key need not cross.
 */
export function validKey(key) {
  rule ??= Array.from(keyRule()); // a plain array: destructuring a Uint32Array goes through its iterator
  const [min, max, lo, hi, edge] = rule;
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

/**
 * The text a record's fingerprint is taken of, from run()'s options: `fingerprint` (the request,
 * any string) and `scope` (the principal a client-supplied key belongs to). Undefined when both are
 * absent. Prefixed so that no fingerprint string can pose as a scoped one.
 */
export function fingerprintText(opts, where) {
  const f = o.own(opts, 'fingerprint');
  const scope = o.own(opts, 'scope');
  if (f !== undefined && typeof f !== 'string') throw o.typeError(where, 'fingerprint', 'a string', f);
  if (scope !== undefined && typeof scope !== 'string') throw o.typeError(where, 'scope', 'a string', scope);
  if (scope === undefined) return f === undefined ? undefined : `f:${f}`;
  return `s:${JSON.stringify([scope, f ?? null])}`;
}

/**
 * Hex digests of recent fingerprint texts, for the Redis store (a retry, a double click or a
 * replay sends the same request again). Bounded: cleared at CACHE_MAX.
 * The in-memory store does not come here: its StoreCore.begin hashes the text it is given.
 */
const cache = new Map();
const CACHE_MAX = 256;

/** The fingerprint of a fingerprint text, as Redis keeps it: SHA-256/128 in 32 hex digits (the core's words, most significant first). */
export function fingerprintHex(text) {
  if (text === undefined) return '';
  let hex = cache.get(text);
  if (hex === undefined) {
    hex = Array.from(coreWords(text), (w) => w.toString(16).padStart(8, '0')).join('');
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(text, hex);
  }
  return hex;
}

const MAX_DEPTH = 32;

/** JSON.stringify(s), without the call for the common case (printable ASCII, no quote or backslash). */
function quote(s) {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(s);
  }
  return `"${s}"`;
}

/** A JSON value's canonical text, or undefined for what JSON leaves out (undefined, functions, symbols). */
function canon(value, depth) {
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return `${value}n`;
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      break;
  }
  if (value === null) return 'null';
  if (depth > MAX_DEPTH) throw o.typeError('fingerprint', 'charge', `a plain object nested at most ${MAX_DEPTH} deep`, value);
  if (typeof value.toJSON === 'function') return canon(value.toJSON(), depth + 1);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + (canon(value[i], depth + 1) ?? 'null');
    return `${out}]`;
  }
  return object(value, depth, undefined);
}

/**
 * `keys` sorted in place by UTF-16 code units, as Array.prototype.sort() does: an insertion sort
 * for a charge-sized object (no comparator calls, nothing allocated; ~160 ns less per charge than
 * sort() on `{ idempotencyKey, amountCents, currency }`), sort() beyond 16 keys.
 */
function sortKeys(keys) {
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i];
    let j = i - 1;
    for (; j >= 0 && keys[j] > k; j--) keys[j + 1] = keys[j];
    keys[j + 1] = k;
  }
  return keys;
}

/** `{"k":v,...}` with keys sorted, leaving out `skip` and what JSON leaves out. */
function object(value, depth, skip) {
  const keys = sortKeys(Object.keys(value));
  let out = '{';
  for (const k of keys) {
    if (k === skip) continue;
    const v = canon(value[k], depth + 1);
    if (v === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${quote(k)}:${v}`;
  }
  return `${out}}`;
}

/**
 * The canonical text of a charge: every own enumerable field except `idempotencyKey` (the key is
 * not part of the request), keys sorted at every level, JSON values. Two charges that differ in any
 * field — amount, currency, customer, cart, items — have different fingerprints.
 */
export function canonicalCharge(charge) {
  return object(charge, 0, 'idempotencyKey');
}
