/** Loading the WebAssembly core: `ready`, `init()` and `version()`. */

import type { FetchResponse } from './platform.js';

/**
 * Settles when loading the WebAssembly core has ended: resolves when it is ready, rejects with
 * `WasmUnavailableError` when it could not load (a Content-Security-Policy without
 * `'wasm-unsafe-eval'`, a 404 or wrong MIME type for the .wasm). Importing steadfast never rejects
 * because of the wasm, and nobody has to listen to `ready`: every call that needs the core throws
 * (or, for async APIs, rejects with) a fresh `WasmUnavailableError` until it has loaded. In Node the
 * core loads synchronously at import, so `ready` is already settled. `steadfast/lazy` (same
 * declarations) does not wait for the wasm at import: await `ready` before the first call.
 */
export const ready: Promise<void>;

/** Where `init()` may load the core from: a URL, a fetch Response, the bytes, or a compiled module. */
export type WasmSource = string | { readonly href: string } | ArrayBuffer | ArrayBufferView | FetchResponse | Promise<FetchResponse> | WasmModule;
/** `WebAssembly.Module` from the environment's lib (`never` when it has none). */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } } ? M : never;

/**
 * Load the core again after a failure, optionally from `source` (browser: a URL or Response, bytes, or a
 * `WebAssembly.Module`; Node: bytes or a `WebAssembly.Module`). A core that has loaded is kept: then it
 * resolves at once. With no argument while the first load is running, it returns that load.
 */
export function init(source?: WasmSource): Promise<void>;

/** The crate version. */
export function version(): string;
