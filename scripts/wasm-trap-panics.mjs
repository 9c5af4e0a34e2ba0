// Replace the panic and allocation-failure entry points of a wasm-bindgen module with a bare trap
// (run by scripts/build.sh on each module, before wasm-opt, in place):
//
//   node scripts/wasm-trap-panics.mjs <module_bg.wasm>...
//
// Why: the crate builds with `panic = "abort"`, so a panic (none is reachable by design: the crate
// denies unwrap, expect, panic and indexing) or a failed allocation ends in `unreachable` anyway.
// On the way there std formats the message for its default hook, which on wasm32-unknown-unknown
// writes to a stderr that discards it — and that formatting is what links `core::fmt`, integer
// `Display`, the panic payloads and their strings into the module. Each function named below
// becomes `unreachable`: the same trap (a `RuntimeError: unreachable` in JS), at the same point,
// without the text nobody can read; wasm-opt then drops what only they called. This is what
// nightly's `panic_immediate_abort` does, on the stable toolchain.
//
// By name, from the name section wasm-bindgen keeps (wasm-opt strips it later): a module in which
// a name is missing, or matches more than once, fails the build rather than shipping unpatched.
import { readFileSync, writeFileSync } from 'node:fs';
import { encodeUleb, readModule } from './wasm-module.mjs';

/** Functions whose body becomes `unreachable`, by the path of their symbol (hash left out). */
// Measured alone (main module, gzip -9 after wasm-opt): panic_fmt −329 B, because `Vec` growth still
// reached the formatting through a failed allocation; both together −2,615 B.
export const TRAPS = [
  // Every panic (`panic!`, a bounds check, `unwrap` on None, capacity overflow) goes through here.
  'core::panicking::panic_fmt',
  // A failed allocation: std's handler, which runs the default hook ("memory allocation of N bytes
  // failed", formatted) and then aborts.
  'alloc::alloc::handle_alloc_error',
];

/** A symbol's path without crate hashes (`core[c5930c85a12de822]::x` → `core::x`) or a trailing `::h<hash>`. */
const pathOf = (name) => name.replace(/\[[0-9a-f]{16}\]/g, '').replace(/::h[0-9a-f]{16}$/, '');

export function trapPanics(buf, file = 'module') {
  const fail = (why) => {
    throw new Error(`wasm-trap-panics: ${file}: ${why}`);
  };
  let module;
  try {
    module = readModule(buf);
  } catch (e) {
    fail(e.message);
  }
  const { sections, names, bodies } = module; // body indexes count the imports, as the name section does
  if (names.size === 0) fail('no function names (run it on wasm-bindgen output, before wasm-opt)');
  const code = sections.find((s) => s.id === 10) ?? fail('no code section');
  const targets = new Set();
  for (const path of TRAPS) {
    const hits = [...names].filter(([, n]) => pathOf(n) === path);
    if (hits.length !== 1) fail(`${hits.length} functions named ${path}`);
    targets.add(hits[0][0]);
  }
  // The code section again, each target's body replaced by: no locals, `unreachable`, `end`.
  const STUB = [3, 0x00, 0x00, 0x0b];
  const parts = [Buffer.from(encodeUleb(bodies.length))];
  for (const b of bodies) parts.push(targets.has(b.index) ? Buffer.from(STUB) : buf.subarray(b.entryStart, b.end));
  const payload = Buffer.concat(parts);
  return Buffer.concat([buf.subarray(0, code.headerStart), Buffer.from([10, ...encodeUleb(payload.length)]), payload, buf.subarray(code.end)]);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const file of process.argv.slice(2)) writeFileSync(file, trapPanics(readFileSync(file), file));
}
