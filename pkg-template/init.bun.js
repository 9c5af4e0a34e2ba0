// Bun loader: like init.node.js, but the wasm is imported as a file (`with { type: 'file' }`), which
// `bun build --compile` embeds in the single-file executable (the import then names its place in the
// executable's own file system; a path next to this file would not exist there). Plain `bun run`
// gets the file's path in node_modules. Compiled synchronously, as in Node.
import { readFileSync } from 'node:fs';
import wasmPath from './steadfast_core_bg.wasm' with { type: 'file' };
import { initSync } from './steadfast_core.js';
import { start } from './lib/loader.js';

/** Settled at import: resolved when the core loaded, rejected with WasmUnavailableError otherwise. */
export const ready = start((input) => {
  initSync({ module: input ?? readFileSync(wasmPath) });
});
