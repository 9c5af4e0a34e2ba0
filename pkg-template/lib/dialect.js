// Why: each payment gateway speaks idempotency its own way (header name and syntax, key limit,
// retention window, what "in progress" and "key reused" look like, a replay marker). The table and
// every rule live in the Rust core (src/core/dialect.rs); this file reads the caller's `dialect`
// option, asks the core to validate it, and digs the facts the core needs (status, body error
// type, the replay header) out of a Response.

import { DialectCore, dialectNames } from '../steadfast_core.js';
import * as o from './options.js';
import { DIALECT, KEY_SYNTAXES, LAYOUT, namedSlots } from './wire.js';

/** The default dialect of the checkout client (the core's first row). */
export function defaultDialectName() {
  return dialectNames().split(',')[0];
}

const CUSTOM_FIELDS = [
  'base',
  'name',
  'header',
  'syntax',
  'maxKeyLength',
  'retentionMs',
  'inProgressStatus',
  'reuseStatuses',
  'reuseErrorType',
  'replayHeader',
];
const compiled = new Map();
/** Custom dialect objects already compiled: a resilientFetch per request must not build a core object each time. */
const compiledCustom = new WeakMap();
/** Dialects this file compiled (passed on from the checkout client to resilientFetch as is). */
const COMPILED = new WeakSet();

/**
 * A core dialect's fields as a plain object (`reuseStatuses` with its `NO_STATUS` slots): its
 * strings by getter, its numbers in one crossing (`fields()`, the wire's `dialectFields` slots).
 * Read once per compiled dialect.
 */
function fieldsOf(core) {
  const f = namedSlots(LAYOUT.dialectFields, core.fields());
  return {
    name: core.name,
    header: core.header,
    reuseErrorType: core.reuseErrorType,
    replayHeader: core.replayHeader,
    syntax: KEY_SYNTAXES[f.syntax],
    maxKeyLength: f.maxKeyLength,
    retentionMs: f.retentionMs,
    inProgressStatus: f.inProgressStatus,
    reuseStatuses: [f.reuseStatus0, f.reuseStatus1],
  };
}

function builtin(name, where) {
  const d = typeof name === 'string' ? DialectCore.builtin(name) : undefined;
  if (d !== undefined) return d;
  const list = dialectNames()
    .split(',')
    .map((n) => `'${n}'`)
    .join(', ');
  throw (typeof name === 'string' ? o.rangeError : o.typeError)(where, 'dialect', `one of ${list} or a dialect object`, name);
}

function custom(spec, where) {
  const baseCore = builtin(o.own(spec, 'base') ?? defaultDialectName(), where);
  const base = fieldsOf(baseCore);
  baseCore.free();
  for (const k of Object.keys(spec))
    if (!CUSTOM_FIELDS.includes(k)) throw o.typeError(where, `dialect.${k}`, `one of the dialect fields (${CUSTOM_FIELDS.join(', ')})`, spec[k]);
  const str = (k, fallback) => {
    const v = o.own(spec, k);
    if (v === undefined) return fallback;
    if (typeof v !== 'string') throw o.typeError(where, k, 'a string', v);
    return v;
  };
  const num = (k, fallback) => o.num(spec, k, where) ?? fallback;
  const reuse = o.own(spec, 'reuseStatuses') ?? base.reuseStatuses;
  if (!(Array.isArray(reuse) || ArrayBuffer.isView(reuse)) || reuse.length > 2 || ![...reuse].every((s) => typeof s === 'number')) {
    throw o.typeError(where, 'reuseStatuses', 'an array of at most 2 HTTP statuses', reuse);
  }
  const values = {
    header: str('header', base.header),
    syntax: KEY_SYNTAXES[o.oneOf(spec, 'syntax', where, KEY_SYNTAXES, KEY_SYNTAXES.indexOf(base.syntax))],
    maxKeyLength: num('maxKeyLength', base.maxKeyLength),
    retentionMs: num('retentionMs', base.retentionMs),
    inProgressStatus: num('inProgressStatus', base.inProgressStatus),
    reuseStatuses: reuse,
    reuseErrorType: str('reuseErrorType', base.reuseErrorType),
    replayHeader: str('replayHeader', base.replayHeader),
  };
  const name = str('name', `custom(${base.name})`);
  return o.core(where, values, () =>
    DialectCore.custom(
      name,
      values.header,
      KEY_SYNTAXES.indexOf(values.syntax),
      values.maxKeyLength,
      values.retentionMs,
      values.inProgressStatus,
      reuse[0] ?? DIALECT.NO_STATUS,
      reuse[1] ?? DIALECT.NO_STATUS,
      values.reuseErrorType,
      values.replayHeader,
    ),
  );
}

/** The error type of an error answer's body: `type` of application/problem+json, else `error.type`. */
function errorTypeOf(data, contentType) {
  if (data === null || typeof data !== 'object') return '';
  const t = /application\/problem\+json/i.test(contentType ?? '') ? data.type : data.error?.type;
  return typeof t === 'string' ? t : '';
}

/**
 * @internal The caller's `dialect` option, compiled: `undefined` stays undefined (the caller's own
 * headers, today's behaviour), a name or an object becomes a frozen view over the core's rules.
 */
export function compileDialect(value, where) {
  if (value === undefined || COMPILED.has(value)) return value;
  const cacheable = typeof value === 'string';
  if (cacheable && compiled.has(value)) return compiled.get(value);
  if (value !== null && typeof value === 'object' && compiledCustom.has(value)) return compiledCustom.get(value);
  const core = cacheable ? builtin(value, where) : value !== null && typeof value === 'object' ? custom(value, where) : builtin(value, where);
  const f = fieldsOf(core);
  const reuseStatuses = Object.freeze(f.reuseStatuses.filter((s) => s !== DIALECT.NO_STATUS));
  const d = Object.freeze({
    name: f.name,
    header: f.header,
    syntax: f.syntax,
    maxKeyLength: f.maxKeyLength,
    retentionMs: f.retentionMs,
    inProgressStatus: f.inProgressStatus === DIALECT.NO_STATUS ? undefined : f.inProgressStatus,
    reuseStatuses,
    reuseErrorType: f.reuseErrorType === '' ? undefined : f.reuseErrorType,
    replayHeader: f.replayHeader === '' ? undefined : f.replayHeader,
    /** The header value for `key`, or a RangeError naming `idempotencyKey`. */
    headerValue(key, at) {
      try {
        return core.headerValue(key);
      } catch (thrown) {
        const rule =
          thrown === 'KEY_TOO_LONG'
            ? `at most ${f.maxKeyLength} characters for dialect '${f.name}'`
            : '1 to 255 printable ASCII characters, no space at either end';
        throw o.rangeError(at, 'idempotencyKey', rule, key);
      }
    },
    /** The history answer code of a status (the in-progress status reads as "in progress"). */
    answerCode: (status) => core.answer(status),
    /** Whether an error answer says "key reused for another request". */
    isReuse: (status, data, contentType) => core.isReuse(status, errorTypeOf(data, contentType)),
    /** Whether a Response carries the replay marker. */
    isReplay: (headers) => f.replayHeader !== '' && core.isReplay(headers?.get?.(f.replayHeader) ?? undefined),
    /** Whether a key first used at `firstUsedAt` is past retention now. */
    keyExpired: (firstUsedAt, now) => core.keyExpired(firstUsedAt, now),
  });
  COMPILED.add(d);
  if (cacheable) compiled.set(value, d);
  // A caller that mutates its dialect object after first use keeps the first reading (documented).
  else if (value !== null && typeof value === 'object') compiledCustom.set(value, d);
  return d;
}

/**
 * A gateway dialect, resolved and validated: a built-in name or a custom object (see the types).
 * @param {string | object} dialect
 */
export function gatewayDialect(dialect) {
  const d = compileDialect(dialect ?? defaultDialectName(), 'gatewayDialect');
  const { name, header, syntax, maxKeyLength, retentionMs, inProgressStatus, reuseStatuses, reuseErrorType, replayHeader } = d;
  return Object.freeze({ name, header, syntax, maxKeyLength, retentionMs, inProgressStatus, reuseStatuses, reuseErrorType, replayHeader });
}

/**
 * Whether the gateway marked this Response as a replay of an earlier answer for the same key
 * (e.g. Stripe's `Idempotent-Replayed: true`). False for a dialect without a replay marker.
 * @param {Response} response
 * @param {string | object} [dialect] default: the checkout client's default dialect
 */
export function isReplayed(response, dialect) {
  return compileDialect(dialect ?? defaultDialectName(), 'isReplayed').isReplay(response?.headers);
}
