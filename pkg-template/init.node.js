// Node loader: compiles the wasm that sits next to this file, synchronously. No top-level await, so that
// `require('steadfast')` works through require(esm) as well as `import`. (`await init()` cannot work in
// Node anyway: its fetch() does not read file: URLs.)
import { readFileSync } from 'node:fs';
import { initSync } from './steadfast_core.js';

initSync({ module: readFileSync(new URL('./steadfast_core_bg.wasm', import.meta.url)) });
