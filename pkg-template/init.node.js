// Node loader: compiles the wasm that sits next to this file, synchronously. No top-level await, so that
// `require('steadfast')` works through require(esm) as well as `import`. (`await init()` cannot work in
// Node anyway: its fetch() does not read file: URLs.)
//
// The path is made with node:url's own URL and fileURLToPath: under jsdom (Vitest's jsdom environment
// with the package inlined) the global URL is jsdom's, which node:fs refuses ("The URL must be of
// scheme file"). A failure never throws from the import: see init.browser.js and lib/loader.js.
import { readFileSync } from 'node:fs';
import { URL as NodeURL, fileURLToPath } from 'node:url';
import { initSync } from './steadfast_core.js';
import { start } from './lib/loader.js';

/** Settled at import: resolved when the core loaded, rejected with WasmUnavailableError otherwise. */
export const ready = start((input) => {
  initSync({ module: input ?? readFileSync(fileURLToPath(new NodeURL('./steadfast_core_bg.wasm', import.meta.url).href)) });
});
