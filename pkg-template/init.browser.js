// Browser (and web worker, Deno, bundler) loader: streams and instantiates the wasm that sits next to this
// file, once, before any export is used. `new URL(..., import.meta.url)` is the pattern bundlers (Vite,
// webpack, Rollup) recognise to emit the .wasm as an asset. No `window`: works in workers too.
import init from './steadfast_core.js';

await init({ module_or_path: new URL('./steadfast_core_bg.wasm', import.meta.url) });
