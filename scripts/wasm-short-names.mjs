// Give the glue the short export and import names wasm-opt gave the module (run by scripts/build.sh
// after wasm-opt, on each generated steadfast_*.js, in place):
//
//   node scripts/wasm-short-names.mjs <glue.js> <names.json> <module.wasm>
//
// Why: wasm-bindgen names every export after its Rust path (`breakercore_setSlowCallDurationMs`,
// `__wbg_storecore_free`, …) and every import after a hash (`__wbg_random_df36b90cd78a7d54`), and each
// name is shipped twice: in the module's export or import section, and in the glue that calls
// `wasm.<name>` or provides the import. Nothing outside the glue reads them (the package's entries go
// through the glue's init/initSync), so build.sh runs wasm-opt with
// `--minify-imports-and-exports-and-modules`, which renames them to one or two characters and prints
// the old → new mapping (<names.json>), and this script applies that mapping to the glue.
//
// The rewrite is checked, not hoped for: every `wasm.<name>` the glue reads must be an export of the
// mapping, every renamed import must be provided exactly once, the module must import from one
// module name only, and the glue must read no export the renamed module lacks; otherwise the build
// fails instead of shipping a glue that calls a name the module no longer has.
import { readFileSync, writeFileSync } from 'node:fs';

const IDENT = /^[A-Za-z_$][\w$]*$/;

/** The glue text with wasm-opt's `mapping` applied; `renamed`: the renamed module's export names and imports. */
export function rewrite(text, mapping, renamed, file = 'glue') {
  const fail = (why) => {
    throw new Error(`wasm-short-names: ${file}: ${why}`);
  };
  const exportNames = new Map(mapping.exports.map(([from, to]) => [from, to]));
  const newExports = new Set(renamed.exports);
  for (const [from, to] of exportNames) {
    if (!IDENT.test(to)) fail(`export ${from} renamed to ${JSON.stringify(to)}, not an identifier`);
    if (!newExports.has(to)) fail(`export ${from} → ${to}: the module has no export ${to}`);
  }
  let out = text.replace(/\bwasm\.([A-Za-z_$][\w$]*)/g, (whole, name) => {
    const to = exportNames.get(name);
    if (to === undefined) fail(`the glue reads wasm.${name}, which the mapping does not rename`);
    return `wasm.${to}`;
  });
  const modules = new Set(mapping.imports.map(([module]) => module));
  const newModules = new Set(renamed.imports.map((i) => i.module));
  if (modules.size > 1 || newModules.size > 1) fail(`imports from ${modules.size} modules, renamed to ${newModules.size}: expected one`);
  for (const [, from, to] of mapping.imports) {
    if (!IDENT.test(to)) fail(`import ${from} renamed to ${JSON.stringify(to)}, not an identifier`);
    const key = `\n        ${from}: function(`;
    const at = out.indexOf(key);
    if (at < 0 || out.indexOf(key, at + 1) >= 0) fail(`import ${from} is not provided exactly once`);
    out = out.replace(key, `\n        ${to}: function(`);
  }
  if (modules.size === 1) {
    const [from] = modules;
    const [to] = newModules;
    const key = `${JSON.stringify(from)}: import0,`;
    const at = out.indexOf(key);
    if (at < 0 || out.indexOf(key, at + 1) >= 0) fail(`the import object for ${from} is not there exactly once`);
    out = out.replace(key, `${JSON.stringify(to)}: import0,`);
  }
  const provided = new Set([...out.matchAll(/^ {8}([A-Za-z_$][\w$]*): function\(/gm)].map((m) => m[1]));
  for (const i of renamed.imports) if (!provided.has(i.name)) fail(`the module imports ${i.module}.${i.name}, which the glue does not provide`);
  return out;
}

/**
 * wasm-opt's printed mappings as one: with --converge the pass runs once per round and prints one
 * JSON object each time (the later rounds rename the short names again, mostly to themselves), so
 * each name is followed through every round in order.
 */
export function composed(text) {
  const rounds = text
    .split(/^(?=\{$)/m)
    .filter((part) => part.trim() !== '')
    .map((part) => JSON.parse(part));
  if (rounds.length === 0) throw new Error('wasm-short-names: wasm-opt printed no mapping');
  const [first, ...rest] = rounds;
  const exportRounds = rest.map((r) => new Map(r.exports.map(([from, to]) => [from, to])));
  const importRounds = rest.map((r) => new Map(r.imports.map(([, from, to]) => [from, to])));
  const follow = (name, maps) => maps.reduce((n, map) => map.get(n) ?? n, name);
  return {
    exports: first.exports.map(([from, to]) => [from, follow(to, exportRounds)]),
    imports: first.imports.map(([module, from, to]) => [module, from, follow(to, importRounds)]),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [glue, names, wasm] = process.argv.slice(2);
  if (!glue || !names || !wasm) throw new Error('usage: node scripts/wasm-short-names.mjs <glue.js> <names.json> <module.wasm>');
  const module = new WebAssembly.Module(readFileSync(wasm));
  const renamed = {
    exports: WebAssembly.Module.exports(module).map((e) => e.name),
    imports: WebAssembly.Module.imports(module),
  };
  writeFileSync(glue, rewrite(readFileSync(glue, 'utf8'), composed(readFileSync(names, 'utf8')), renamed, glue));
}
