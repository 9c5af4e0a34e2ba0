// Why: bad input must fail loudly, naming the option and the value, and never reach the wasm core
// as something it could misread. Type checks happen here (only JS can see a string or a getter);
// range rules live in the Rust core, which throws "<option>\u0001<must be …>" and we dress it up.

import { brand } from './errors.js';
import { coreUnavailable } from './loader.js';

/** Render any value for an error message without throwing (symbols, cycles, getters). */
export function show(value) {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.length > 60 ? value.slice(0, 57) + '...' : value);
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'bigint':
      return `${value}n`;
    case 'boolean':
    case 'symbol':
      return String(value);
    case 'function':
      return 'a function';
    case 'undefined':
      return 'undefined';
    default:
      if (value === null) return 'null';
      return Array.isArray(value) ? 'an array' : 'an object';
  }
}

export function typeError(where, name, expected, value) {
  return brand(new TypeError(`steadfast: ${where} option ${name} must be ${expected}, got ${show(value)}`), 'INVALID_OPTION', { option: name });
}

/** Edit distance of two short strings (insertions, deletions, substitutions), or > `limit` early. */
function distance(a, b, limit) {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

/**
 * A misspelt option name is a TypeError naming it and the known option nearest to it (within 2
 * edits, case aside): an option left out takes its default, so `maxAttemps: 5` would otherwise run
 * with 3 attempts, silently. So is a name of `others` (another library's name for an option,
 * `retries`, or an option given in the wrong place), with its hint. Other unknown names (a config
 * object's own fields) are left alone. Every options object with defaults is checked once, when read.
 */
export function misspelt(opts, known, where, others) {
  for (const name of Object.keys(opts)) {
    if (name.length < 4 || known.includes(name)) continue;
    const hint = others !== undefined && Object.hasOwn(others, name) ? others[name] : nearest(name, known);
    if (hint !== undefined) throw typeError(where, name, `a known option (did you mean ${hint}?)`, opts[name]);
  }
  return opts;
}

/**
 * The name of `known` fewest edits from `name` (case and time unit aside: `ttlSeconds`,
 * `ttlMillis` and `ttlMs` compare alike, so a unit mix-up is caught too), if at most 2 away.
 */
function nearest(name, known) {
  const n = unitless(name);
  let best;
  let fewest = 3;
  for (const k of known) {
    const d = distance(n, unitless(k), 2);
    if (d < fewest) [best, fewest] = [k, d];
  }
  return best;
}

/** A name in lower case with a trailing time unit (ms, millis, sec, seconds …) as one mark. */
function unitless(name) {
  return name.toLowerCase().replace(/(milliseconds?|millis|msecs?|ms|seconds?|secs?)$/, '\u0001');
}

/** The options object itself: undefined allowed when `optional`. */
export function object(value, where, optional = false) {
  if (value === undefined && optional) return {};
  if (value === null || typeof value !== 'object') {
    throw brand(new TypeError(`steadfast: ${where} options must be an object, got ${show(value)}`), 'INVALID_OPTION');
  }
  return value;
}

/**
 * An option's value, read from the options object's OWN properties only: a property inherited from
 * a polluted Object.prototype (`Object.prototype.ttlMs = 1`) must never steer an option.
 */
export function own(opts, name) {
  return opts !== null && opts !== undefined && Object.hasOwn(opts, name) ? opts[name] : undefined;
}

/**
 * own(opts, name) for a hot path: `value` is `opts.name`, read at the call site by its literal name
 * (one monomorphic load, where own()'s computed name is a megamorphic one); it is kept only if it is
 * opts' OWN property. An absent option costs no hasOwn call. (The read runs an inherited getter
 * before it is refused; a polluted prototype holds data, not getters, unless code already ran.)
 */
export function ownValue(opts, value, name) {
  return value === undefined || Object.hasOwn(opts, name) ? value : undefined;
}

/** A number option (range checked later by the core), or undefined when absent. */
export function num(opts, name, where) {
  const v = own(opts, name);
  if (v === undefined || typeof v === 'number') return v;
  throw typeError(where, name, 'a number', v);
}

/** A function option, or undefined when absent. */
export function fn(opts, name, where) {
  const v = own(opts, name);
  if (v === undefined || typeof v === 'function') return v;
  throw typeError(where, name, 'a function', v);
}

/** One of a fixed set of strings; returns its index. */
export function oneOf(opts, name, where, choices, fallback) {
  const v = own(opts, name);
  if (v === undefined) return fallback;
  const i = choices.indexOf(v);
  if (typeof v === 'string' && i >= 0) return i;
  const list = choices.map((c) => `'${c}'`).join(', ');
  throw (typeof v === 'string' ? rangeError : typeError)(where, name, `one of ${list}`, v);
}

export function rangeError(where, name, rule, value) {
  return brand(new RangeError(`steadfast: ${where} option ${name} must be ${rule}, got ${show(value)}`), 'INVALID_OPTION', { option: name });
}

/**
 * Call a wasm constructor/validator; turn its thrown "<option>\u0001<rule>" into a RangeError that
 * names the option and the value the caller passed (`values` holds what was read).
 */
export function core(where, values, make) {
  try {
    return make();
  } catch (thrown) {
    // Not a rule the core reported (those are strings): if the wasm failed to load, say so.
    const unavailable = typeof thrown === 'string' ? undefined : coreUnavailable(where);
    if (unavailable !== undefined) throw unavailable;
    if (typeof thrown === 'string') {
      const i = thrown.indexOf('\u0001');
      if (i >= 0) {
        const name = thrown.slice(0, i);
        throw rangeError(where, name, thrown.slice(i + 1), values[name]);
      }
    }
    throw thrown;
  }
}

/** An AbortSignal-like value, or undefined. */
export function signal(opts, name, where) {
  const v = own(opts, name);
  if (v === undefined) return v;
  if (v !== null && typeof v === 'object' && typeof v.addEventListener === 'function' && 'aborted' in v) return v;
  throw typeError(where, name, 'an AbortSignal', v);
}

/**
 * The `clock` option: the system clock when absent; a user clock is wrapped so that a value that is
 * not a number (a Symbol, a BigInt, a string) is a TypeError naming the option, not an engine error
 * deep inside a call. Date.now is read at call time, so fake timers control the default.
 */
export function clock(opts, where) {
  const user = fn(opts, 'clock', where);
  if (user === undefined) return systemClock;
  return function checkedClock() {
    const t = user();
    if (typeof t !== 'number') throw typeError(where, 'clock', 'a function returning a number', t);
    return t;
  };
}

/** The default clock (one function for every object that has no clock of its own; `make bench`'s profile names it). */
function systemClock() {
  return Date.now();
}
