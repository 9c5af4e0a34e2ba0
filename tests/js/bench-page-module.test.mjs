// benches/page-module.mjs (case 7's "the .wasm cut to the exports the page reads" rows): it finds
// exactly the exports a minified page reads, refuses a page whose exports object escapes (the list
// would be incomplete), and cuts a real module to them, still a valid module.
// Run: node --test tests/js/bench-page-module.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { cutToPage, exportsRead, keepExports } from '../../benches/page-module.mjs';

test('the exports a page reads: only the instance-exports binding counts, not locals that reuse its short name', () => {
  const page = `let k;
function init(e){ if (k !== void 0) return k; return k = e.exports, k.rb(), k; }
export function a(x){ return k.Aa(x) + k['Ba'](x); }
export function b(k){ return k.zz; } // a local k: not the exports
export const c = () => (k === void 0 ? null : k.Ca);
`;
  assert.deepEqual([...exportsRead(page)].sort(), ['Aa', 'Ba', 'Ca', 'rb']);
});

test('a page that hands the exports object on, or reads it by a computed name, is refused', () => {
  assert.throws(() => exportsRead('let w; export function i(m){ w = m.exports; send(w); }'), /used whole/);
  assert.throws(() => exportsRead('let w; export function i(m, n){ w = m.exports; return w[n]; }'), /used whole/);
  assert.throws(() => exportsRead('export const x = 1;'), /expected one module-level/);
});

test('the shipped module cut to two exports is much smaller, valid, and has exactly those exports', () => {
  const pkg = dirname(createRequire(import.meta.url).resolve('steadfast/package.json'));
  const wasm = readFileSync(join(pkg, 'steadfast_core_bg.wasm'));
  const exports = WebAssembly.Module.exports(new WebAssembly.Module(wasm));
  const all = exports.map((e) => e.name);
  const memory = exports.find((e) => e.kind === 'memory').name;
  const keep = new Set([memory, exports.find((e) => e.kind === 'function').name]);
  const cut = keepExports(wasm, keep);
  assert.deepEqual(
    WebAssembly.Module.exports(new WebAssembly.Module(cut))
      .map((e) => e.name)
      .sort(),
    [...keep].sort(),
  );
  assert.throws(() => keepExports(wasm, new Set(['no-such-export'])), /has no export no-such-export/);
  const page = `let w; export function i(m){ w = m.exports; } export const f = () => w.${[...keep][1]}(); export const g = () => w.${memory};`;
  const r = cutToPage(wasm, page);
  assert.equal(r.kept, 2);
  assert.equal(r.of, all.length);
  assert.ok(r.bytes.length < wasm.length / 2, `${r.bytes.length} of ${wasm.length} bytes`);
  assert.deepEqual(
    WebAssembly.Module.exports(new WebAssembly.Module(r.bytes))
      .map((e) => e.name)
      .sort(),
    [...keep].sort(),
  );
});
