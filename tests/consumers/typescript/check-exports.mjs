// Every export is covered and the types match the runtime: the names exported by the installed
// index.d.ts (values: function/class; types: interface/type) and by `import('steadfast')` at run time
// must agree, and every one of them must be imported by every-export.ts. Run from the consumer dir.
// index.d.ts is a barrel: its `export * from './types/….js'` files are read in, as TypeScript does.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

function declarations(file) {
  const text = readFileSync(file, 'utf8');
  const barrel = [...text.matchAll(/^export \* from '(\.[^']+)\.js';$/gm)].map(([, rel]) => declarations(join(dirname(file), `${rel}.d.ts`)));
  return [text, ...barrel].join('\n');
}
const dts = declarations('node_modules/steadfast/index.d.ts');
const declared = { value: new Set(), type: new Set() };
for (const [, kind, name] of dts.matchAll(/^export\s+(?:declare\s+)?(function|class|const|interface|type)\s+([A-Za-z_$][\w$]*)/gm)) {
  declared[kind === 'interface' || kind === 'type' ? 'type' : 'value'].add(name);
}
const runtime = new Set(Object.keys(await import('steadfast')));
const consumer = readFileSync('every-export.ts', 'utf8');
const imported = new Set(
  [...consumer.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'steadfast'/g)].flatMap(([, names]) =>
    names
      .split(',')
      .map((n) => n.trim().replace(/^type\s+/, ''))
      .filter(Boolean),
  ),
);

const problems = [];
for (const name of runtime) if (!declared.value.has(name)) problems.push(`runtime export ${name} has no declaration in index.d.ts`);
for (const name of declared.value) if (!runtime.has(name)) problems.push(`index.d.ts declares ${name}, the runtime module does not export it`);
for (const name of [...declared.value, ...declared.type]) if (!imported.has(name)) problems.push(`every-export.ts does not use ${name}`);
if (runtime.size === 0 || declared.type.size === 0) problems.push('found no exports at all');
if (problems.length > 0) {
  console.error(problems.map((p) => `check-exports: ${p}`).join('\n'));
  process.exit(1);
}
console.log(`check-exports: ${declared.value.size} values (= runtime exports) and ${declared.type.size} types, all used by every-export.ts`);
