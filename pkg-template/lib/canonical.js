// Why: a charge's canonical text (keys sorted at every level, plain JSON data only, volatile fields
// left out), so that the fingerprint is of exactly the request JSON.stringify sends: two charges
// that differ in any identifying field never share a fingerprint. It is written as UTF-8 bytes, not
// built as a string: the in-process store hashes it where it was written (the core's input buffer),
// with no string to flatten and encode on the charge path; the text is those bytes decoded.

import { brand } from './errors.js';
import * as o from './options.js';

const MAX_DEPTH = 32;

const PLAIN = 'plain JSON data (plain objects, arrays, strings, finite numbers, booleans, null; no class instance, toJSON, getter or boxed value)';

/** What a value that is not plain JSON data is, for the error. */
function kindOf(value) {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null || proto === Array.prototype) return 'an object with toJSON()';
  const name = proto?.constructor?.name;
  if (typeof name !== 'string' || name.length === 0) return 'an object of another kind';
  return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}`;
}

/** The typed error for a charge whose JSON form (what is sent) would differ from its own fields. */
function notPlain(where, path, value, what) {
  const e = new TypeError(`steadfast: ${where} option ${path} must be ${PLAIN}, got ${what ?? kindOf(value)}`);
  return brand(e, 'INVALID_OPTION', { option: path });
}

/**
 * Where the canonical bytes go: `bytes` from offset `at`, and `room(n)`, which makes room for n more
 * bytes (it may replace `bytes`, keeping what was written). One writer serves the text (a scratch
 * buffer, decoded) and the in-process store (the core's input buffer, hashed where it lies).
 * @internal
 */
export class ByteSink {
  constructor(bytes, grow) {
    this.bytes = bytes;
    this.at = 0;
    this.grow = grow;
  }

  room(n) {
    if (this.at + n > this.bytes.length) this.bytes = this.grow(this.at + n, this.bytes);
  }

  /** A string of printable ASCII without a quote or backslash as itself, any other through JSON.stringify. */
  string(s) {
    const n = s.length;
    this.room(n + 2);
    const b = this.bytes;
    const start = this.at;
    b[start] = 0x22;
    let j = start + 1;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
        // JSON writes at most 6 ASCII bytes per UTF-16 unit (\u001f), UTF-8 at most 3.
        this.at = start;
        this.room(6 * n + 2);
        this.at = start + encoder.encodeInto(JSON.stringify(s), this.bytes.subarray(start)).written;
        return;
      }
      b[j++] = c;
    }
    b[j++] = 0x22;
    this.at = j;
  }

  /** ASCII text (a number as JavaScript writes it, a literal). */
  ascii(s) {
    const n = s.length;
    this.room(n);
    const b = this.bytes;
    let j = this.at;
    for (let i = 0; i < n; i++) b[j++] = s.charCodeAt(i);
    this.at = j;
  }

  byte(c) {
    this.room(1);
    this.bytes[this.at++] = c;
  }

  /** Bytes made once (an object key's `"k":`). */
  copy(src) {
    const n = src.length;
    this.room(n);
    const b = this.bytes;
    let j = this.at;
    for (let i = 0; i < n; i++) b[j++] = src[i];
    this.at = j;
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Write a JSON value's canonical text; false (nothing written) for undefined (left out of objects,
 * null in arrays, as JSON.stringify does). Only plain data is accepted: for it, the own fields
 * walked here are exactly what JSON.stringify sends, so the fingerprint is of the request as sent.
 */
function canon(sink, value, depth, where, path) {
  switch (typeof value) {
    case 'string':
      sink.string(value);
      return true;
    case 'number':
      if (!Number.isFinite(value)) throw notPlain(where, path, value); // JSON would send null
      sink.ascii(String(value));
      return true;
    case 'boolean':
      sink.ascii(value ? 'true' : 'false');
      return true;
    case 'undefined':
      return false;
    case 'object':
      break;
    default:
      throw notPlain(where, path, value); // bigint (JSON refuses it), function, symbol (JSON drops them)
  }
  if (value === null) {
    sink.ascii('null');
    return true;
  }
  if (depth > MAX_DEPTH) throw o.typeError(where, path, `a plain object nested at most ${MAX_DEPTH} deep`, value);
  const proto = Object.getPrototypeOf(value);
  if (Array.isArray(value)) {
    if (proto !== Array.prototype || typeof value.toJSON === 'function') throw notPlain(where, path, value);
    sink.byte(0x5b);
    for (let i = 0; i < value.length; i++) {
      if (i > 0) sink.byte(0x2c);
      if (!canon(sink, element(value, i, where, path), depth + 1, where, `${path}[${i}]`)) sink.ascii('null');
    }
    sink.byte(0x5d);
    return true;
  }
  if ((proto !== Object.prototype && proto !== null) || typeof value.toJSON === 'function') throw notPlain(where, path, value);
  object(sink, value, depth, where, path, undefined);
  return true;
}

/** `array[i]`, refusing a getter (JSON would call it; the fingerprint must not depend on one). */
function element(array, i, where, path) {
  const d = Object.getOwnPropertyDescriptor(array, i);
  if (d !== undefined && d.get !== undefined) throw notPlain(where, `${path}[${i}]`, undefined, 'a getter');
  return d?.value;
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

/** The fields left out of every fingerprint: the key is not part of the request. */
const KEY_ONLY = new Set(['idempotencyKey']);

/**
 * `"k":` for an object key, as UTF-8: charges reuse a handful of field names, so each is encoded
 * once (bounded: cleared at QUOTED_MAX names, so hostile key names cannot grow it).
 */
const quoted = new Map();
const QUOTED_MAX = 1024;
function member(k) {
  let q = quoted.get(k);
  if (q === undefined) {
    if (quoted.size >= QUOTED_MAX) quoted.clear();
    q = encoder.encode(`${JSON.stringify(k)}:`);
    quoted.set(k, q);
  }
  return q;
}

/** `{"k":v,...}` with keys sorted, leaving out the keys `skip` holds and undefined values. */
function object(sink, value, depth, where, path, skip) {
  const keys = sortKeys(Object.keys(value));
  sink.byte(0x7b);
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (skip !== undefined && (skip === KEY_ONLY ? k === 'idempotencyKey' : skip.has(k))) continue;
    const d = Object.getOwnPropertyDescriptor(value, k);
    if (d.get !== undefined) throw notPlain(where, `${path}.${k}`, undefined, 'a getter');
    const v = d.value;
    if (v === undefined) continue;
    if (!first) sink.byte(0x2c);
    first = false;
    sink.copy(member(k));
    // The common field kinds inline (no call, no path string built); the rest through canon().
    if (typeof v === 'string') sink.string(v);
    else if (typeof v === 'number' && Number.isFinite(v)) sink.ascii(String(v));
    else canon(sink, v, depth + 1, where, `${path}.${k}`);
  }
  sink.byte(0x7d);
}

/**
 * Read a `volatileFields` option: top-level charge fields that do not identify the charge (a
 * per-attempt SDK nonce, a client timestamp). They are sent, but left out of the fingerprint.
 * Returns the set of names to skip (always with `idempotencyKey`: the key is not part of the request).
 */
export function volatileFields(value, where) {
  if (value === undefined) return KEY_ONLY;
  if (!Array.isArray(value) || !value.every((f) => typeof f === 'string')) throw o.typeError(where, 'volatileFields', 'an array of field names', value);
  return new Set(['idempotencyKey', ...value]);
}

/**
 * Write the canonical text of a charge, as UTF-8, into `sink` (see canonicalCharge). Throws its
 * TypeError before the sink is used by anyone: a refused charge leaves nothing to hash.
 * @internal
 */
export function writeCanonicalCharge(sink, charge, skip = KEY_ONLY, where = 'charge') {
  const proto = Object.getPrototypeOf(charge);
  if ((proto !== Object.prototype && proto !== null) || typeof charge.toJSON === 'function') throw notPlain(where, 'charge', charge);
  object(sink, charge, 0, where, 'charge', skip);
}

/** Grow a scratch buffer, keeping what was written. */
function scratchGrow(need, old) {
  const bytes = new Uint8Array(2 * need);
  bytes.set(old);
  return bytes;
}
/** The text's own buffer (twice the longest text so far), and whether a walk is writing into it. */
const scratch = new ByteSink(new Uint8Array(512), scratchGrow);
let scratchBusy = false;

/**
 * The canonical text of a charge: every own field except `idempotencyKey` (the key is not part of
 * the request) and the `skip` set's volatile fields, keys sorted at every level, JSON values. Only
 * plain JSON data is accepted (else a TypeError with code INVALID_OPTION naming the field), so the
 * text is of exactly what JSON.stringify sends. Two charges that differ in any other field —
 * amount, currency, customer, cart, items — have different fingerprints. (The bytes the store
 * hashes for chargeCustomer are written by the same walk: writeCanonicalCharge.)
 */
export function canonicalCharge(charge, skip = KEY_ONLY, where = 'charge') {
  // A Proxy in a charge may run code mid-walk that asks for another text: it gets a buffer of its own.
  const sink = scratchBusy ? new ByteSink(new Uint8Array(512), scratchGrow) : scratch;
  sink.at = 0;
  scratchBusy = true;
  try {
    writeCanonicalCharge(sink, charge, skip, where);
  } finally {
    scratchBusy = sink !== scratch;
  }
  return decoder.decode(sink.bytes.subarray(0, sink.at));
}
