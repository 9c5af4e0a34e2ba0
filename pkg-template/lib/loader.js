// Why: a page must never go blank because the wasm could not load (a strict Content-Security-Policy,
// a 404 from a wrong base path, a CDN rule). The loaders report through here instead of throwing
// from the import: `ready` rejects with a WasmUnavailableError that names the cause and the fix, and
// every call that needs the core throws a fresh one (see options.core and api.js).

import { WasmUnavailableError } from './errors.js';
import { loadWire } from './wire.js';

/** -1 never started (only `steadfast/sim` loaded: it has its own glue), 0 loading, 1 ready, 2 failed. */
let status = -1;
/** What the platform threw when loading failed. */
let failureCause;
let current;
/** The platform's instantiate(input?): returns a promise (browser) or completes synchronously (Node). */
let instantiate;

/**
 * `ready`: a promise that follows the LATEST load, so that a user's successful `init(...)` (a Worker's
 * imported module, a Deno run that was given the permission) resolves it after a failed first load.
 * A promise that has rejected cannot resolve later; this one delegates `then` (and so `await`,
 * `catch`, `finally`) to the current load instead. Nobody has to listen to it.
 */
class Ready extends Promise {
  static get [Symbol.species]() {
    return Promise;
  }
  then(onFulfilled, onRejected) {
    return current.then(onFulfilled, onRejected);
  }
}
const ready = new Ready(() => {});

/**
 * @internal Called once by the entry's loader with how to instantiate the core on this platform.
 * Returns `ready` (already settled when `instantiate` is synchronous).
 */
export function start(platformInstantiate) {
  instantiate = platformInstantiate;
  load(undefined);
  return ready;
}

function load(input) {
  status = 0;
  let settled;
  try {
    const r = instantiate(input);
    settled = r !== null && typeof r === 'object' && typeof r.then === 'function' ? r.then(succeed, fail) : succeed();
  } catch (cause) {
    settled = fail(cause);
  }
  // Nobody has to listen: the failure is also reported by every call that needs the core.
  settled.catch(() => {});
  current = settled;
  return settled;
}

function succeed() {
  loadWire(); // the names of the core's slots and codes, before any call can reach the core
  status = 1;
  failureCause = undefined;
  return Promise.resolve();
}

function fail(cause) {
  status = 2;
  failureCause = cause;
  return Promise.reject(new WasmUnavailableError(cause));
}

/** The promise of the current load: resolves when the core is ready, rejects with WasmUnavailableError. */
export function whenReady() {
  return current;
}

/**
 * Load the core again after a failure, optionally from `input` (browser: a URL, Request, Response,
 * bytes or WebAssembly.Module; Node: bytes or a WebAssembly.Module). A loaded core is kept: no-op.
 */
export function init(input) {
  if (status === 1) return Promise.resolve();
  if (status === 0 && input === undefined) return current;
  return load(input);
}

/**
 * undefined when the core is ready (or this loader was never started: the `steadfast/sim` entry
 * loads its own module); otherwise a fresh WasmUnavailableError for `where`.
 */
export function coreUnavailable(where) {
  if (status === 1 || status === -1) return undefined;
  return new WasmUnavailableError(status === 2 ? failureCause : undefined, where);
}

/** Throw a WasmUnavailableError for `where` unless the core is ready. */
export function requireCore(where) {
  if (status !== 1 && status !== -1) throw coreUnavailable(where);
}
