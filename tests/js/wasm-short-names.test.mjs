// scripts/wasm-short-names.mjs (build.sh: the glue gets the export and import names wasm-opt
// shortened) refuses every mismatch it must catch, and the packed package's glue and module agree.
// Run: node --test tests/js/wasm-short-names.test.mjs (after scripts/install-tarball.sh)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { composed, rewrite } from '../../scripts/wasm-short-names.mjs';

const GLUE = `function __wbg_get_imports() {
    const import0 = {
        __proto__: null,
        __wbg_random_df36: function() {
            return Math.random();
        },
    };
    return {
        __proto__: null,
        "./steadfast_core_bg.js": import0,
    };
}
export function jitter(a) { return wasm.jitterDelay(a) + wasm.jitterDelay(a); }
export function free(p) { wasm.__wbg_retrycore_free(p, 1); }
`;
const MAPPING = {
  imports: [['./steadfast_core_bg.js', '__wbg_random_df36', 'a']],
  exports: [
    ['jitterDelay', 'b'],
    ['__wbg_retrycore_free', 'c'],
  ],
};
const RENAMED = { exports: ['b', 'c'], imports: [{ module: 'a', name: 'a', kind: 'function' }] };

test('every export the glue calls, the import it provides and the module name are renamed', () => {
  const out = rewrite(GLUE, MAPPING, RENAMED);
  assert.match(out, /return wasm\.b\(a\) \+ wasm\.b\(a\);/);
  assert.match(out, /wasm\.c\(p, 1\)/);
  assert.match(out, /\n {8}a: function\(\)/);
  assert.match(out, /"a": import0,/);
  assert.doesNotMatch(out, /jitterDelay|__wbg_retrycore_free|__wbg_random_df36|steadfast_core_bg\.js/);
});

test('a glue call the mapping does not rename fails the build', () => {
  const glue = GLUE.replace('wasm.__wbg_retrycore_free(p, 1)', 'wasm.storecore_new(p)');
  assert.throws(() => rewrite(glue, MAPPING, RENAMED), /reads wasm\.storecore_new/);
});

test('a rename to a name the module does not export fails the build', () => {
  assert.throws(() => rewrite(GLUE, MAPPING, { ...RENAMED, exports: ['b'] }), /no export c/);
});

test('an import the glue does not provide, or provides twice, fails the build', () => {
  const missing = { ...MAPPING, imports: [...MAPPING.imports, ['./steadfast_core_bg.js', '__wbg_now', 'd']] };
  assert.throws(() => rewrite(GLUE, missing, RENAMED), /import __wbg_now is not provided exactly once/);
  const twice = GLUE.replace('        __proto__: null,\n        __wbg_random', '        __wbg_random_df36: function() {},\n        __wbg_random');
  assert.throws(() => rewrite(twice, MAPPING, RENAMED), /not provided exactly once/);
  const unprovided = { ...RENAMED, imports: [...RENAMED.imports, { module: 'a', name: 'z', kind: 'function' }] };
  assert.throws(() => rewrite(GLUE, MAPPING, unprovided), /imports a\.z, which the glue does not provide/);
});

test('imports from more than one module fail the build', () => {
  const two = { ...MAPPING, imports: [...MAPPING.imports, ['./other.js', '__wbg_x', 'd']] };
  assert.throws(() => rewrite(GLUE, two, RENAMED), /expected one/);
});

test('the mappings of every --converge round are followed in order', () => {
  const rounds = [
    { imports: [['m', 'longImport', 'a']], exports: [['longExport', 'b']] },
    { imports: [['a', 'a', 'x']], exports: [['b', 'b']] },
    { imports: [['a', 'x', 'y']], exports: [['b', 'q']] },
  ];
  const text = rounds.map((r) => `${JSON.stringify(r, null, 1)}\n`).join('');
  assert.deepEqual(composed(text), { imports: [['m', 'longImport', 'y']], exports: [['longExport', 'q']] });
  assert.throws(() => composed(''), /printed no mapping/);
});

test("the packed package's glue reads only what its module exports, by the short names", () => {
  const require = createRequire(import.meta.url);
  const dir = dirname(require.resolve('steadfast/package.json'));
  for (const name of ['steadfast_core', 'steadfast_sim']) {
    const module = new WebAssembly.Module(readFileSync(join(dir, `${name}_bg.wasm`)));
    const exports = new Set(WebAssembly.Module.exports(module).map((e) => e.name));
    const glue = readFileSync(join(dir, `${name}.js`), 'utf8');
    const read = new Set([...glue.matchAll(/\bwasm\.([A-Za-z_$][\w$]*)/g)].map((m) => m[1]));
    assert.ok(read.size > 20, `${name}: the glue reads ${read.size} exports`);
    for (const e of read) assert.ok(exports.has(e), `${name}: the glue reads wasm.${e}, which the module does not export`);
    for (const e of exports) assert.ok(e.length <= 2, `${name}: export ${e} kept its long name`);
    for (const i of WebAssembly.Module.imports(module))
      assert.ok(i.module.length <= 2 && i.name.length <= 2, `${name}: import ${i.module}.${i.name} kept its long name`);
  }
});
