/** Loading the WebAssembly core: `ready`, `init()` and `version()`. */

import type { FetchResponse } from './platform.js';

/**
 * Settles when loading the WebAssembly core has ended: resolves when it is ready, rejects with
 * `WasmUnavailableError` when it could not load (a Content-Security-Policy without
 * `'wasm-unsafe-eval'`, a 404 or wrong MIME type for the .wasm, Deno without `--allow-read`).
 * It follows the LATEST load: after a failed load, a successful `init(...)` makes it resolve.
 * Importing steadfast never rejects because of the wasm, and nobody has to listen to `ready`: every
 * call that needs the core throws (or, for async APIs, rejects with) a fresh `WasmUnavailableError`
 * until it has loaded. Constructing never needs the core: a `CircuitBreaker`, `RetryBudget`,
 * `RetryQuota`, `RateLimiter`, `IdempotencyStore`, `BreakerRegistry`, `retry()` policy or checkout
 * client made before it loaded works from its first call after it has (options only the core
 * validates, such as ranges, are then checked at that first call); a checkout client's `charge()`
 * resolves `{ status: 'unavailable', reason: 'wasm' }` until then.
 *
 * Each host gets its loader by export condition: Node (and Deno) compile the file next to the code
 * synchronously, so `ready` is already settled at import; Bun does too, from a file that
 * `bun build --compile` embeds; Cloudflare Workers (`workerd`) and Next.js's edge runtime
 * (`edge-light`) import the wasm as a module and instantiate it before the import ends; browsers and
 * bundlers fetch it, and the import waits. `steadfast/lazy` (same declarations) does not wait for the
 * wasm at import in browsers: await `ready` before the first call.
 */
export const ready: Promise<void>;

/** Where `init()` may load the core from: a URL, a fetch Response, the bytes, or a compiled module. */
export type WasmSource = string | { readonly href: string } | ArrayBuffer | ArrayBufferView | FetchResponse | Promise<FetchResponse> | WasmModule;
/** `WebAssembly.Module` from the environment's lib (`never` when it has none). */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } } ? M : never;

/**
 * Load the core again after a failure, optionally from `source` (browser: a URL or Response, bytes, or a
 * `WebAssembly.Module`; Node, Deno and Bun: bytes or a `WebAssembly.Module`; Workers and Next.js edge:
 * the `WebAssembly.Module` of `import wasm from 'steadfast/steadfast_core_bg.wasm'`). It settles `ready`
 * too: after a failed load, a successful `init` makes `ready` resolve. A core that has loaded is kept:
 * then it resolves at once. With no argument while the first load is running, it returns that load.
 */
export function init(source?: WasmSource): Promise<void>;

/** The crate version. */
export function version(): string;
