// Why: the in-process store's one crossing per begin carries the key and the request's fingerprint
// bytes through an input buffer in wasm memory (src/wasm/input.rs), written here: a fingerprint
// string with one encodeInto, or (chargeCustomer) a charge's canonical bytes as it is walked, so
// that no text is built. Apart from idempotency.js so that a page without chargeCustomer does not
// carry the charge writer.

import { inputBuffer, wasmMemory } from '../steadfast_core.js';
import { ByteSink, writeCanonicalCharge } from './canonical.js';
import * as o from './options.js';

const encoder = new TextEncoder();
/** The core's input buffer: its address, size and a view of it (remade when memory grows). */
let input;
/**
 * The input buffer as a ByteSink, for a charge's canonical bytes (see writeCharge): it grows the
 * buffer through inputBytes, which keeps what was written (the core's buffer is resized, not
 * replaced). Its `bytes` are set at each write: the core may not be loaded when this module is.
 */
const sink = new ByteSink(undefined, (need) => inputBytes(2 * need));
/**
 * Set while a charge's canonical bytes are being written into the input buffer: a Proxy in the
 * charge may run code in the middle, and that code must not overwrite the buffer (see busy()).
 */
let writing = false;

/**
 * A view of the input buffer of at least `need` bytes, grown when it is smaller (input_buffer
 * resizes the core's buffer: the bytes already written stay, at its new address).
 */
function inputBytes(need) {
  if (input === undefined || need > input.size) {
    const size = Math.max(need, 4096);
    input = { ptr: inputBuffer(size), size, memory: wasmMemory(), bytes: undefined };
  }
  let bytes = input.bytes;
  if (bytes === undefined || bytes.byteLength === 0) {
    bytes = input.bytes = new Uint8Array(input.memory.buffer, input.ptr, input.size); // a grown memory detaches the old views
  }
  return bytes;
}

/** The TypeError for a charge that used the store while its own fields were being read. */
function busy() {
  return o.typeError('run', 'charge', 'plain JSON data (a Proxy in it ran code that used the store while the charge was read)', undefined);
}

/**
 * Write `key` and then `fp` (if any) as UTF-8 into the core's input buffer, growing it when a text
 * might not fit (3 bytes per UTF-16 unit at most); returns the fingerprint's byte length (the
 * key's is `key.length`, see below). Why: the fresh-key path's longest string is the fingerprint text,
 * and encodeInto copies it natively where a string argument would be copied by a JS loop per
 * character, with an allocation and a free. Key and text go in ONE encodeInto of their
 * concatenation (each call has a fixed cost about that of copying a short text). The core applies
 * the key rule to the first key.length bytes: a valid key is one byte per character.
 */
export function writeInput(key, fp) {
  if (writing) throw busy();
  const text = fp === undefined ? key : key + fp;
  return encoder.encodeInto(text, inputBytes(3 * text.length)).written - key.length;
}

/**
 * Write `key`, `f:` and the canonical bytes of `charge` (canonical.js, the same walk as its text)
 * into the core's input buffer; returns the fingerprint's byte length. The same bytes as
 * writeInput(key, `f:${canonicalCharge(charge)}`), with no string built: the text is written where
 * the core hashes it. A key's UTF-16 units become bytes one each, any unit beyond ASCII 0xFF, so
 * its first key.length bytes fail the core's key rule exactly when the key does.
 */
export function writeCharge(key, charge, skip, where) {
  if (writing) throw busy();
  const bytes = (sink.bytes = inputBytes(key.length + 2));
  const n = key.length;
  for (let i = 0; i < n; i++) {
    const c = key.charCodeAt(i);
    bytes[i] = c > 0x7e ? 0xff : c;
  }
  bytes[n] = 0x66; // f
  bytes[n + 1] = 0x3a; // :
  sink.at = n + 2;
  writing = true;
  try {
    writeCanonicalCharge(sink, charge, skip, where);
  } finally {
    writing = false;
  }
  return sink.at - n;
}
