// The `steadfast/lazy` browser loader: like init.browser.js, but WITHOUT the top-level await. The
// import resolves at once and the page renders while the wasm downloads; `ready` (or `await init()`)
// says when the core can be used. A call that needs the core before then throws WasmUnavailableError
// (reason 'pending').
import initWasm from './steadfast_core.js';
import { start } from './lib/loader.js';

/** Resolves when the core is loaded; rejects with WasmUnavailableError (nobody has to listen). */
export const ready = start((input) => initWasm({ module_or_path: input ?? new URL('./steadfast_core_bg.wasm', import.meta.url) }));
