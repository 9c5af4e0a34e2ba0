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

function uleb(buf, p) {
  let r = 0;
  let s = 0;
  for (;;) {
    const b = buf[p++];
    r += (b & 0x7f) * 2 ** s;
    if (b < 0x80) return [r, p];
    s += 7;
  }
}

function encodeUleb(n) {
  const out = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

export function trapPanics(buf, file = 'module') {
  const fail = (why) => {
    throw new Error(`wasm-trap-panics: ${file}: ${why}`);
  };
  if (buf.readUInt32LE(0) !== 0x6d736100) fail('not a wasm module');
  const sections = [];
  let importedFunctions = 0;
  const names = new Map();
  let p = 8;
  while (p < buf.length) {
    const id = buf[p];
    const [size, start] = uleb(buf, p + 1);
    sections.push({ id, headerStart: p, start, end: start + size });
    if (id === 2) {
      let [count, q] = uleb(buf, start);
      for (let i = 0; i < count; i++) {
        for (let k = 0; k < 2; k++) {
          const [len, r] = uleb(buf, q);
          q = r + len;
        }
        const kind = buf[q++];
        if (kind === 0) {
          importedFunctions++;
          q = uleb(buf, q)[1];
        } else if (kind === 1) {
          q++;
          const flags = buf[q++];
          q = uleb(buf, q)[1];
          if (flags & 1) q = uleb(buf, q)[1];
        } else if (kind === 2) {
          const flags = buf[q++];
          q = uleb(buf, q)[1];
          if (flags & 1) q = uleb(buf, q)[1];
        } else if (kind === 3) q += 2;
        else if (kind === 4) q = uleb(buf, q + 1)[1];
        else fail(`import kind ${kind}`);
      }
    } else if (id === 0) {
      const [len, q] = uleb(buf, start);
      if (buf.toString('utf8', q, q + len) === 'name') {
        let r = q + len;
        while (r < start + size) {
          const sub = buf[r];
          const [subLen, body] = uleb(buf, r + 1);
          if (sub === 1) {
            let [count, t] = uleb(buf, body);
            for (let i = 0; i < count; i++) {
              const [index, u] = uleb(buf, t);
              const [nameLen, v] = uleb(buf, u);
              names.set(index, buf.toString('utf8', v, v + nameLen));
              t = v + nameLen;
            }
          }
          r = body + subLen;
        }
      }
    }
    p = start + size;
  }
  if (names.size === 0) fail('no function names (run it on wasm-bindgen output, before wasm-opt)');
  const code = sections.find((s) => s.id === 10) ?? fail('no code section');
  const targets = new Set();
  for (const path of TRAPS) {
    const hits = [...names].filter(([, n]) => pathOf(n) === path);
    if (hits.length !== 1) fail(`${hits.length} functions named ${path}`);
    targets.add(hits[0][0] - importedFunctions);
  }
  // The code section again, each target's body replaced by: no locals, `unreachable`, `end`.
  const STUB = [3, 0x00, 0x00, 0x0b];
  const parts = [];
  let [count, q] = uleb(buf, code.start);
  parts.push(Buffer.from(encodeUleb(count)));
  for (let i = 0; i < count; i++) {
    const [len, body] = uleb(buf, q);
    parts.push(targets.has(i) ? Buffer.from(STUB) : buf.subarray(q, body + len));
    q = body + len;
  }
  const payload = Buffer.concat(parts);
  return Buffer.concat([buf.subarray(0, code.headerStart), Buffer.from([10, ...encodeUleb(payload.length)]), payload, buf.subarray(code.end)]);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const file of process.argv.slice(2)) writeFileSync(file, trapPanics(readFileSync(file), file));
}
