// Why: an app creates its breaker, store or checkout client at module level, before (or without) the
// WebAssembly core: a strict Content-Security-Policy refused it, `steadfast/lazy` is still loading it,
// a host needs `init(...)` first. Construction must not throw then, or the whole page goes blank. An
// object made while the core is unavailable is a stand-in that builds the real one, with the same
// arguments, at its first use once the core has loaded; until then each use reports the documented
// WasmUnavailableError: sync members throw it, async methods reject with it.

import { coreUnavailable } from './loader.js';

/** Well-known lookups that must not throw (await, inspection, string conversion). */
const PASS = new Set([
  'then',
  'constructor',
  Symbol.toStringTag,
  Symbol.toPrimitive,
  Symbol.iterator,
  Symbol.asyncIterator,
  Symbol.for('nodejs.util.inspect.custom'),
]);

/** The descriptor of `prop` on `proto` or its chain (not Object.prototype's). */
function describe(proto, prop) {
  for (let p = proto; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    const d = Object.getOwnPropertyDescriptor(p, prop);
    if (d !== undefined) return d;
  }
  return undefined;
}

/**
 * @internal In a constructor: `const stand = deferred(new.target, arguments, where, ASYNC); if (stand) return stand;`.
 * undefined when the core is ready (construct normally). Otherwise a stand-in, `instanceof Class`,
 * whose members build the real instance once the core is ready and forward to it. `asyncMethods`:
 * the methods that return a promise without being `async` (they, and `async` ones, reject instead of
 * throwing).
 */
export function deferred(Class, args, where, asyncMethods = []) {
  if (coreUnavailable(where) === undefined) return undefined;
  const argv = Array.from(args);
  const promises = (prop) => asyncMethods.includes(prop) || describe(Class.prototype, prop)?.value?.[Symbol.toStringTag] === 'AsyncFunction';
  let real;
  const bound = new Map();
  const target = Object.create(Class.prototype);
  return new Proxy(target, {
    get(_, prop) {
      if (real === undefined) {
        const unavailable = coreUnavailable(`${where}${typeof prop === 'string' ? `.${prop}` : ''}`);
        if (unavailable === undefined) {
          try {
            real = Reflect.construct(Class, argv);
          } catch (e) {
            // Options only the core validates (ranges): the error construction would have thrown.
            if (!promises(prop)) throw e;
            return () => Promise.reject(e);
          }
        } else {
          if (PASS.has(prop)) return Reflect.get(target, prop);
          const d = describe(Class.prototype, prop);
          if (typeof d?.value !== 'function') throw unavailable; // a getter or an internal field: needs the core
          const name = `${where}.${String(prop)}`;
          return promises(prop)
            ? () => Promise.reject(coreUnavailable(name))
            : () => {
                throw coreUnavailable(name);
              };
        }
      }
      const v = Reflect.get(real, prop);
      if (typeof v !== 'function' || PASS.has(prop)) return v;
      let f = bound.get(prop);
      if (f === undefined) bound.set(prop, (f = v.bind(real)));
      return f;
    },
    set(_, prop, value) {
      if (real === undefined) throw coreUnavailable(where);
      return Reflect.set(real, prop, value);
    },
  });
}
