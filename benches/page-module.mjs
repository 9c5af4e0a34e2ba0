// What a .wasm holding only the rules a page calls would weigh: the exports a bundled page's JS
// reads from the wasm instance, and the shipped module cut to those exports (every other export
// removed, then the build's wasm-opt flags again with --remove-unused-module-elements, so the code
// only they reached goes too). Case 7 reports it for the checkout page: the floor of a module made
// for that page from today's core, with wasm-bindgen's glue as it is.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './common.mjs';
import { encodeUleb, uleb } from '../scripts/wasm-module.mjs';

// ESLint's own parser and scope analyser (root dev dependencies): a minifier renames the binding
// that holds the instance's exports, and reuses its short name for locals elsewhere.
const require = createRequire(join(ROOT, 'package.json'));
const espree = require('espree');
const eslintScope = require('eslint-scope');

/**
 * The export names `code` (one bundled ES module) reads from the wasm instance: every `x.name` of
 * the one module-level variable assigned `<something>.exports` (wasm-bindgen's `wasm =
 * instance.exports`), resolved by scope. Throws if that variable is used any other way (passed on
 * whole, read with a computed name), which would make the list incomplete; the whole uses allowed
 * are the init function's: comparing it to undefined, and returning it.
 */
export function exportsRead(code) {
  const ast = espree.parse(code, { ecmaVersion: 'latest', sourceType: 'module', range: true });
  const scopes = eslintScope.analyze(ast, { ecmaVersion: 2022, sourceType: 'module' });
  const parent = new Map();
  const walk = (node, up) => {
    parent.set(node, up);
    for (const [k, v] of Object.entries(node)) {
      if (k === 'parent') continue;
      for (const child of Array.isArray(v) ? v : [v]) if (child !== null && typeof child?.type === 'string') walk(child, node);
    }
  };
  walk(ast, undefined);
  const holders = new Set();
  for (const scope of scopes.scopes) {
    for (const ref of scope.references) {
      const assign = parent.get(ref.identifier);
      const rhs = assign?.type === 'AssignmentExpression' && assign.left === ref.identifier ? assign.right : undefined;
      const moduleLevel = ref.resolved !== null && ['module', 'global'].includes(ref.resolved.scope.type);
      if (ref.isWrite() && moduleLevel && rhs?.type === 'MemberExpression' && !rhs.computed && rhs.property.name === 'exports') holders.add(ref.resolved);
    }
  }
  if (holders.size !== 1) throw new Error(`page-module: expected one module-level \`x = instance.exports\`, found ${holders.size}`);
  const [holder] = holders;
  const names = new Set();
  for (const ref of holder.references) {
    if (ref.isWrite()) continue;
    const use = parent.get(ref.identifier);
    if (use?.type === 'MemberExpression' && use.object === ref.identifier && (!use.computed || use.property.type === 'Literal')) {
      names.add(use.computed ? String(use.property.value) : use.property.name);
    } else if (use?.type === 'BinaryExpression' && ['===', '!=='].includes(use.operator)) {
      // "already loaded?" (`wasm !== undefined`)
    } else if (returned(ref.identifier, parent)) {
      // wasm-bindgen's init returns the exports object; the package's loader awaits it and drops it.
    } else {
      throw new Error(`page-module: the exports object is used whole: ${code.slice(...(use ?? ref.identifier).range).slice(0, 80)}`);
    }
  }
  return names;
}

/** Whether the value of `node` is only returned (through ?:, `,` and the like), never stored or passed. */
function returned(node, parent) {
  for (let n = node, up = parent.get(n); up !== undefined; n = up, up = parent.get(n)) {
    if (up.type === 'ReturnStatement') return true;
    if (up.type === 'ArrowFunctionExpression') return up.body === n;
    const through =
      (up.type === 'ConditionalExpression' && up.test !== n) ||
      (up.type === 'SequenceExpression' && up.expressions.at(-1) === n) ||
      up.type === 'LogicalExpression' ||
      up.type === 'AwaitExpression';
    if (!through) return false;
  }
  return false;
}

/** The module in `buf` with only the exports named in `keep` (every other byte as it was). */
export function keepExports(buf, keep) {
  for (let p = 8; p < buf.length;) {
    const id = buf[p];
    const [size, start] = uleb(buf, p + 1);
    const end = start + size;
    if (id === 7) {
      let [count, q] = uleb(buf, start);
      const kept = [];
      const seen = new Set();
      for (; count > 0; count--) {
        const entry = q;
        const [len, at] = uleb(buf, q);
        const name = buf.toString('utf8', at, at + len);
        q = uleb(buf, at + len + 1)[1]; // the kind byte, then the index
        seen.add(name);
        if (keep.has(name)) kept.push(buf.subarray(entry, q));
      }
      const missing = [...keep].filter((k) => !seen.has(k));
      if (missing.length > 0) throw new Error(`page-module: the module has no export ${missing.join(', ')}`);
      const body = Buffer.concat([Buffer.from(encodeUleb(kept.length)), ...kept]);
      return Buffer.concat([buf.subarray(0, p), Buffer.from([7, ...encodeUleb(body.length)]), body, buf.subarray(end)]);
    }
    p = end;
  }
  throw new Error('page-module: no export section');
}

/** The features of rustc's wasm32-unknown-unknown output (the build's module uses these, and only these). */
const FEATURES = [
  '--enable-bulk-memory',
  '--enable-bulk-memory-opt',
  '--enable-call-indirect-overlong',
  '--enable-multivalue',
  '--enable-mutable-globals',
  '--enable-nontrapping-float-to-int',
  '--enable-reference-types',
  '--enable-sign-ext',
];

/**
 * The shipped module `wasm` cut to the exports `js` reads, optimised again with the build's flags
 * (scripts/build.sh's default WASM_OPT_FLAGS) and --remove-unused-module-elements.
 * Returns `{ bytes, kept, of }`: the module, how many exports it kept, and how many it had.
 */
export function cutToPage(wasm, js) {
  const keep = exportsRead(js);
  const of = WebAssembly.Module.exports(new WebAssembly.Module(wasm)).length;
  const dir = mkdtempSync(join(tmpdir(), 'sf-page-'));
  try {
    writeFileSync(join(dir, 'cut.wasm'), keepExports(wasm, keep));
    const flags = (process.env.WASM_OPT_FLAGS ?? '-Oz --converge --low-memory-unused --strip-producers --strip-target-features').split(/\s+/).filter(Boolean);
    // The shipped module has no target-features section (the build strips it): name the features
    // rustc's wasm32 target emits, so wasm-opt reads it as the build's wasm-opt read its input.
    const opt = process.env.STEADFAST_WASM_OPT ?? 'wasm-opt';
    const args = [...flags, ...FEATURES, '--remove-unused-module-elements', join(dir, 'cut.wasm'), '-o', join(dir, 'out.wasm')];
    try {
      execFileSync(opt, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (e) {
      throw new Error(`page-module: ${opt} failed: ${String(e.stderr).slice(0, 400)}`);
    }
    const bytes = readFileSync(join(dir, 'out.wasm'));
    new WebAssembly.Module(bytes); // still a valid module
    return { bytes, kept: keep.size, of };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
