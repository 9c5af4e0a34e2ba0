// Browser (and web worker, Deno, bundler) loader: streams and instantiates the wasm that sits next to this
// file, once, before any export is used. `new URL(..., import.meta.url)` is the pattern bundlers (Vite,
// webpack, Rollup) recognise to emit the .wasm as an asset. No `window`: works in workers too.
//
// The import never rejects because of the wasm: a failure (a Content-Security-Policy without
// 'wasm-unsafe-eval', a 404, a wrong MIME type) settles `ready` with a WasmUnavailableError, and every
// call that needs the core throws one, while the rest of the page keeps working. `init(url)` retries.
import initWasm from './steadfast_core.js';
import { start } from './lib/loader.js';

/** Resolves when the core is loaded; rejects with WasmUnavailableError (nobody has to listen). */
export const ready = start((input) => initWasm({ module_or_path: input ?? new URL('./steadfast_core_bg.wasm', import.meta.url) }));

// Constructing a CircuitBreaker at module level in the importing code keeps working: the import ends
// once loading has ended, either way.
await ready.catch(() => {});
