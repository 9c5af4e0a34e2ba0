// Cloudflare Workers (`workerd`) and Next.js's edge runtime (`edge-light`) loader. Both refuse to
// compile WebAssembly from bytes at run time ("Wasm code generation disallowed by embedder") and have
// no file next to the code to fetch: the wasm must be IMPORTED as a module, which their bundlers
// (wrangler's CompiledWasm rule, Next's `?module` import) turn into a precompiled WebAssembly.Module.
// It is instantiated asynchronously: a module handed over from another realm (Next's edge sandbox)
// fails wasm-bindgen's synchronous `instanceof WebAssembly.Module` check; WebAssembly.instantiate
// accepts it. The import waits for it (top-level await), so a handler never meets a core still loading.
import wasmModule from './steadfast_core_bg.wasm?module';
import initWasm from './steadfast_core.js';
import { start } from './lib/loader.js';

/** Resolves when the core is loaded; rejects with WasmUnavailableError (nobody has to listen). */
export const ready = start((input) => initWasm({ module_or_path: input ?? wasmModule }));

await ready.catch(() => {});
