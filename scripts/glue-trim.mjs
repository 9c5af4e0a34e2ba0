// Cut from the wasm-bindgen glue the code this package can never reach (run by scripts/build.sh on
// each generated steadfast_*.js, in place, after scripts/glue-pure.mjs):
//
//   node scripts/glue-trim.mjs <glue.js>...
//
// Why: the glue is written for every caller wasm-bindgen may have; this package is its only caller,
// and every byte of it ships in every page. Each cut below is an exact piece of wasm-bindgen's output
// replaced by what remains true for this package's calls; each is checked, not hoped for: a glue
// whose text differs (another wasm-bindgen version) fails the build instead of shipping half-trimmed.
//
// - The init functions' "deprecated parameters" branches: every loader (init.*.js) passes one
//   object (`{ module_or_path }`, `{ module }`), so the branch that warns about a bare argument is
//   dead (no argument at all still means none).
// - passStringToWasm0's path for a caller without `realloc`: every call passes
//   wasm.__wbindgen_realloc (checked below), so only the encodeInto path runs.
// - One FinalizationRegistry maker for every class instead of a copy of the same expression per
//   class (same registries, same free calls).
// - Each class's free() does what __destroy_into_raw() did, inline: free() was that method's only
//   caller (no exported method consumes its object).
// - A string or a Vec<f64>/Vec<u32> the wasm returns is copied out and freed by one helper per kind
//   (takeString, takeF64, takeU32) instead of the same lines in every function that returns one;
//   a string passed in goes through passString0(arg), which names wasm's malloc and realloc once.
import { readFileSync, writeFileSync } from 'node:fs';

/** [what wasm-bindgen writes, what this package needs, how many times it must occur (0: at least once)]. */
const CUTS = [
  [
    `    if (module !== undefined) {
        if (Object.getPrototypeOf(module) === Object.prototype) {
            ({module} = module)
        } else {
            console.warn('using deprecated parameters for \`initSync()\`; pass a single object instead')
        }
    }
`,
    `    if (module !== undefined) ({module} = module)
`,
    1,
  ],
  [
    `    if (module_or_path !== undefined) {
        if (Object.getPrototypeOf(module_or_path) === Object.prototype) {
            ({module_or_path} = module_or_path)
        } else {
            console.warn('using deprecated parameters for the initialization function; pass a single object instead')
        }
    }
`,
    `    if (module_or_path !== undefined) ({module_or_path} = module_or_path)
`,
    1,
  ],
  [
    `function passStringToWasm0(arg, malloc, realloc) {
    if (realloc === undefined) {
        const buf = cachedTextEncoder.encode(arg);
        const ptr = malloc(buf.length, 1) >>> 0;
        getUint8ArrayMemory0().subarray(ptr, ptr + buf.length).set(buf);
        WASM_VECTOR_LEN = buf.length;
        return ptr;
    }

`,
    `function passStringToWasm0(arg, malloc, realloc) {
`,
    1,
  ],
];

const FINALIZATION =
  /^const (\w+)Finalization = \(typeof FinalizationRegistry === 'undefined'\)\n {4}\? \{ register: \(\) => \{\}, unregister: \(\) => \{\} \}\n {4}: \/\* @__PURE__ \*\/ new FinalizationRegistry\(ptr => wasm\.(__wbg_\w+_free)\(ptr, 1\)\);$/gm;

const DESTROY_THEN_FREE =
  /^ {4}__destroy_into_raw\(\) \{\n {8}const ptr = this\.__wbg_ptr;\n {8}this\.__wbg_ptr = 0;\n {8}(\w+)Finalization\.unregister\(this\);\n {8}return ptr;\n {4}\}\n {4}free\(\) \{\n {8}const ptr = this\.__destroy_into_raw\(\);\n {8}wasm\.(__wbg_\w+_free)\(ptr, 0\);\n {4}\}\n/gm;

/** A string return: wasm-bindgen's try/finally around getStringFromWasm0 and __wbindgen_free. */
const STRING_RETURN =
  /^( +)let (deferred\d+)_0;\n\1let \2_1;\n\1try \{\n\1 {4}const ret = (wasm\.\w+\([^;\n]*\));\n\1 {4}\2_0 = ret\[0\];\n\1 {4}\2_1 = ret\[1\];\n\1 {4}return getStringFromWasm0\(ret\[0\], ret\[1\]\);\n\1\} finally \{\n\1 {4}wasm\.__wbindgen_free\(\2_0, \2_1, 1\);\n\1\}\n/gm;
/** A Vec<f64> or Vec<u32> return: copied out of memory, then freed (8 or 4 bytes a slot). */
const ARRAY_RETURN =
  /^( +)const ret = (wasm\.\w+\([^;\n]*\));\n\1var (v\d+) = getArray(F64|U32)FromWasm0\(ret\[0\], ret\[1\]\)\.slice\(\);\n\1wasm\.__wbindgen_free\(ret\[0\], ret\[1\] \* (8|4), \5\);\n\1return \3;\n/gm;

const TAKE = `/** A string passed to the wasm, in its memory: the pointer (the length is WASM_VECTOR_LEN). */
function passString0(arg) {
    return passStringToWasm0(arg, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
}
/** A string the wasm returned (pointer, length), decoded, then its memory freed. */
function takeString(ret) {
    try {
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(ret[0], ret[1], 1);
    }
}
/** A Vec<f64> the wasm returned (pointer, length), copied out, then its memory freed. */
function takeF64(ret) {
    const v = getArrayF64FromWasm0(ret[0], ret[1]).slice();
    wasm.__wbindgen_free(ret[0], ret[1] * 8, 8);
    return v;
}
/** A Vec<u32> the wasm returned (pointer, length), copied out, then its memory freed. */
function takeU32(ret) {
    const v = getArrayU32FromWasm0(ret[0], ret[1]).slice();
    wasm.__wbindgen_free(ret[0], ret[1] * 4, 4);
    return v;
}
`;

const HELPER = `/** A class's FinalizationRegistry: frees its wasm object when the JS object is collected. */
function finalization(free) {
    return (typeof FinalizationRegistry === 'undefined')
        ? { register: () => {}, unregister: () => {} }
        : new FinalizationRegistry(ptr => free(ptr, 1));
}
`;

export function trim(text, file = 'glue') {
  const fail = (why) => {
    throw new Error(`glue-trim: ${file}: ${why}`);
  };
  let out = text;
  for (const [from, to, times] of CUTS) {
    const n = out.split(from).length - 1;
    if (n === 0 || (times > 0 && n !== times)) fail(`expected ${times || 'some'} of:\n${from}\nfound ${n}`);
    out = out.replaceAll(from, to);
  }
  // Every string passed keeps realloc (the cut above removed the path without it).
  for (const m of out.matchAll(/passStringToWasm0\(([^)]*)\)/g)) {
    if (m[1] !== 'arg, malloc, realloc' && !m[1].endsWith(', wasm.__wbindgen_malloc, wasm.__wbindgen_realloc'))
      fail(`a string passed without realloc: ${m[0]}`);
  }
  out = out.replace(/passStringToWasm0\((\w+), wasm\.__wbindgen_malloc, wasm\.__wbindgen_realloc\)/g, 'passString0($1)');
  if (/passStringToWasm0\((?!arg, malloc, realloc\))/.test(out)) fail('a passStringToWasm0 call is left');
  const classes = [...out.matchAll(/^export const (\w+) = \/\* @__PURE__ \*\/ disposable\(class /gm)].map((m) => m[1]);
  const registries = [...out.matchAll(FINALIZATION)];
  if (registries.length !== classes.length || registries.some((m, i) => m[1] !== classes[i])) {
    fail(`FinalizationRegistry blocks (${registries.map((m) => m[1])}) do not match the classes (${classes})`);
  }
  out = out.replace(FINALIZATION, (_, c, free) => `const ${c}Finalization = /* @__PURE__ */ finalization((ptr, owned) => wasm.${free}(ptr, owned));`);
  if (/FinalizationRegistry\(ptr => wasm\./.test(out)) fail('a FinalizationRegistry block is left');
  const frees = out.match(DESTROY_THEN_FREE)?.length ?? 0;
  if (frees !== classes.length) fail(`${frees} __destroy_into_raw + free pairs for ${classes.length} classes`);
  out = out.replace(
    DESTROY_THEN_FREE,
    (_, c, free) =>
      `    free() {\n        const ptr = this.__wbg_ptr;\n        this.__wbg_ptr = 0;\n        ${c}Finalization.unregister(this);\n        wasm.${free}(ptr, 0);\n    }\n`,
  );
  if (out.includes('__destroy_into_raw')) fail('__destroy_into_raw is still used');
  const strings = out.match(STRING_RETURN)?.length ?? 0;
  const arrays = out.match(ARRAY_RETURN)?.length ?? 0;
  if (strings === 0 || arrays === 0) fail(`no string (${strings}) or no array (${arrays}) return in wasm-bindgen's shape`);
  out = out.replace(STRING_RETURN, (_, indent, _d, call) => `${indent}return takeString(${call});\n`);
  out = out.replace(ARRAY_RETURN, (_, indent, call, _v, kind, size) => {
    if ((kind === 'F64') !== (size === '8')) fail(`a ${kind} array freed as ${size}-byte slots`);
    return `${indent}return take${kind}(${call});\n`;
  });
  const at = out.indexOf('\nfunction __wbg_get_imports()');
  if (at < 0) fail('no __wbg_get_imports');
  return `${out.slice(0, at + 1)}${HELPER}${TAKE}${out.slice(at + 1)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const file of process.argv.slice(2)) writeFileSync(file, trim(readFileSync(file, 'utf8'), file));
}
