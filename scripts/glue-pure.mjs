// Make the wasm-bindgen glue tree-shakable by class (run by scripts/build.sh on each generated
// steadfast_*.js, in place):
//
//   node scripts/glue-pure.mjs <glue.js>...
//
// Why: wasm-bindgen emits two statements per exported class that a bundler must keep even when
// nothing imports the class: `if (Symbol.dispose) C.prototype[Symbol.dispose] = C.prototype.free;`
// after it, and `const CFinalization = … new FinalizationRegistry(…)` at the end. So every class of
// the module, with all its methods, ships in every bundle (a page that never compiles a gateway
// dialect still carried DialectCore's glue). Rewritten, each class is one pure expression:
//
//   export const C = /* @__PURE__ */ disposable(class C { … });
//   const CFinalization = … : /* @__PURE__ */ new FinalizationRegistry(…);
//
// where `disposable` does what the `if` did. Same objects and behaviour at run time (the class is
// built and gets its Symbol.dispose when the module is evaluated, as before); a bundler drops a
// class, its registry and its wasm calls together when nothing names the class. The rewrite is
// checked, not hoped for: a glue whose shape differs from the one expected (another wasm-bindgen
// version) fails the build instead of shipping half-rewritten.
import { readFileSync, writeFileSync } from 'node:fs';

const HELPER = `/** Give a glue class its Symbol.dispose (the statement wasm-bindgen writes after each class), as one pure expression. */
function disposable(C) {
    if (Symbol.dispose) C.prototype[Symbol.dispose] = C.prototype.free;
    return C;
}
`;

export function rewrite(text, file = 'glue') {
  const fail = (why) => {
    throw new Error(`glue-pure: ${file}: ${why}`);
  };
  const classes = [...text.matchAll(/^export class (\w+) \{$/gm)].map((m) => m[1]);
  if (classes.length === 0) fail('no exported class found');
  let out = text;
  for (const c of classes) {
    const head = `export class ${c} {\n`;
    const tail = `\n}\nif (Symbol.dispose) ${c}.prototype[Symbol.dispose] = ${c}.prototype.free;\n`;
    const start = out.indexOf(head);
    const end = out.indexOf(tail, start);
    if (start < 0 || end < 0 || out.indexOf(tail, end + 1) >= 0) fail(`class ${c}: not followed by exactly one Symbol.dispose statement`);
    out = `${out.slice(0, start)}export const ${c} = /* @__PURE__ */ disposable(class ${c} {\n${out.slice(start + head.length, end)}\n});\n${out.slice(end + tail.length)}`;
  }
  const registries = out.match(/: new FinalizationRegistry\(/g)?.length ?? 0;
  if (registries !== classes.length) fail(`${registries} FinalizationRegistry constructions for ${classes.length} classes`);
  out = out.replaceAll(': new FinalizationRegistry(', ': /* @__PURE__ */ new FinalizationRegistry(');
  if (/^if \(Symbol\.dispose\)/m.test(out)) fail('a Symbol.dispose statement is left');
  // After the leading `/* @ts-self-types=… */` line, so that TypeScript still finds the declarations.
  const firstLine = out.indexOf('\n') + 1;
  if (!out.startsWith('/* @ts-self-types=')) fail('no @ts-self-types header');
  return `${out.slice(0, firstLine)}\n${HELPER}${out.slice(firstLine)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const file of process.argv.slice(2)) writeFileSync(file, rewrite(readFileSync(file, 'utf8'), file));
}
