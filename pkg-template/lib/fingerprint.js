// Why: a request's fingerprint, from run()'s `fingerprint` and `scope` options, for the stores to
// tell a retry of the same request from another request under a reused key. The hash is the Rust
// core's (SHA-256/128, what Redis keeps); this module builds the text and renders the digest.

import { fingerprintWords as coreWords } from '../steadfast_core.js';
import * as o from './options.js';

/**
 * The text a record's fingerprint is taken of, from run()'s options: `fingerprint` (the request,
 * any string) and `scope` (the principal a client-supplied key belongs to). Undefined when both are
 * absent. Prefixed so that no fingerprint string can pose as a scoped one.
 */
/** The option names of run() (RunOptions in types/idempotency.d.ts) and resubmit() (ResubmitOptions). */
export const RUN_OPTIONS = ['fingerprint', 'scope', 'settleAfterMs', 'progress'];
export const RESUBMIT_OPTIONS = [...RUN_OPTIONS, 'startedAt', 'refutes'];

export function fingerprintText(opts, where) {
  const f = o.ownValue(opts, opts.fingerprint, 'fingerprint');
  const scope = o.ownValue(opts, opts.scope, 'scope');
  if (f !== undefined && typeof f !== 'string') throw o.typeError(where, 'fingerprint', 'a string', f);
  if (scope !== undefined && typeof scope !== 'string') throw o.typeError(where, 'scope', 'a string', scope);
  if (scope === undefined) return f === undefined ? undefined : `f:${f}`;
  return `s:${JSON.stringify([scope, f ?? null])}`;
}

/**
 * Hex digests of recent fingerprint texts, for the Redis store (a retry, a double click or a
 * replay sends the same request again). Bounded: cleared at CACHE_MAX.
 * The in-memory store does not come here: its StoreCore.beginInput hashes the text it is given.
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
