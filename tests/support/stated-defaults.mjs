// What the declarations state: every default and range written in the JSDoc of a package's .d.ts files
// (index.d.ts and the types/*.d.ts it re-exports, sim.d.ts), as { key, kind, value, text, where }.
// key = `<declaration>.<property>` (`<declaration>.<property>@<preset>` for an object literal after a
// quoted preset name); kind = 'default' (a number, a quoted string, a boolean, or each field of an
// object literal `{ name: number, … }`), 'range' ([low, high] of "from A to B" / "(A to B)").
// Used by tests/js/types-defaults.test.mjs.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const num = (s) => Number(s.replace(/[,_]/g, ''));
const NUMBER = String.raw`-?\d[\d,_]*(?:\.\d+)?`;

/** The .d.ts files of an installed package directory: the entries and what they re-export. */
export function declarationFiles(dir) {
  const types = readdirSync(join(dir, 'types'))
    .filter((f) => f.endsWith('.d.ts'))
    .map((f) => join('types', f));
  return ['index.d.ts', 'sim.d.ts', ...types.sort()];
}

/** Parse one file's doc comments, each with the declaration and property it documents. */
export function statedDefaults(dir) {
  const out = [];
  for (const file of declarationFiles(dir)) {
    const lines = readFileSync(join(dir, file), 'utf8').split('\n');
    let decl = '';
    let doc = [];
    let inDoc = false;
    lines.forEach((line, i) => {
      const t = line.trim();
      if (t.startsWith('/**')) {
        inDoc = true;
        doc = [];
      }
      if (inDoc) {
        doc.push(t.replace(/^\/\*\*|\*\/$|^\*/g, '').trim());
        if (t.endsWith('*/')) inDoc = false;
        return;
      }
      const top = /^(?:export\s+)?(?:declare\s+)?(?:interface|class|type|function|const)\s+(\w+)/.exec(t);
      if (top) decl = top[1];
      const prop = /^(?:readonly\s+|get\s+)?(\w+)\??\s*[:(<]/.exec(t);
      const name = prop && !top ? `${decl}.${prop[1]}` : top ? decl : undefined;
      if (name !== undefined && doc.length > 0) out.push(...parse(doc.join(' '), name, `${file}:${i + 1}`));
      if (t !== '') doc = [];
    });
  }
  return out;
}

function parse(text, key, where) {
  const found = [];
  const add = (k, kind, value) => found.push({ key: k, kind, value, text, where });
  // Object literals of numbers, labelled by the quoted preset name just before them (else 'default').
  for (const m of text.matchAll(/\{([^{}]*)\}/g)) {
    const pairs = [...m[1].matchAll(new RegExp(String.raw`(\w+):\s*(${NUMBER})`, 'g'))];
    if (pairs.length === 0) continue;
    const before = text.slice(0, m.index);
    const label = [...before.matchAll(/'([\w-]+)'/g)].pop()?.[1];
    const at = label !== undefined && !/Default[^']*$/.test(before) ? `@${label}` : '';
    for (const [, field, value] of pairs) add(`${key}${at}.${field}`, 'default', num(value));
  }
  const plain = text.replace(/\{[^{}]*\}/g, '{…}');
  for (const m of plain.matchAll(new RegExp(String.raw`(?<!\()\b[Dd]efault:?\s+(${NUMBER})(?!\s*[×x])`, 'g'))) add(key, 'default', num(m[1]));
  for (const m of plain.matchAll(new RegExp(String.raw`\((${NUMBER}) when neither is set\)`, 'g'))) add(`${key}#unset`, 'default', num(m[1]));
  for (const m of plain.matchAll(new RegExp(String.raw`\bat most\s+(${NUMBER})`, 'gi'))) add(key, 'limit', num(m[1]));
  for (const m of plain.matchAll(new RegExp(String.raw`\bDefaults: (${NUMBER}) × (${NUMBER})`, 'g'))) add(key, 'default', [num(m[1]), num(m[2])]);
  for (const m of plain.matchAll(/\b[Dd]efault:?\s+`?'([\w-]+)'`?/g)) add(key, 'default', m[1]);
  for (const m of plain.matchAll(/\b[Dd]efault:?\s+(true|false)\b/g)) add(key, 'default', m[1] === 'true');
  for (const m of plain.matchAll(/\b[Dd]efault:?\s+\[([^\]]*)\]/g))
    add(
      key,
      'default',
      [...m[1].matchAll(/'([\w-]+)'/g)].map((x) => x[1]),
    );
  for (const m of plain.matchAll(new RegExp(String.raw`\x60(\w+)\x60 \(default (${NUMBER})[;)]`, 'g'))) add(`${key}.${m[1]}`, 'default', num(m[2]));
  for (const m of plain.matchAll(new RegExp(String.raw`(?:from|\()\s*(${NUMBER}) to (${NUMBER})`, 'g'))) add(key, 'range', [num(m[1]), num(m[2])]);
  // One statement once (a sentence may match two patterns).
  const seen = new Set();
  return found.filter((f) => {
    const id = `${f.key} ${f.kind} ${JSON.stringify(f.value)}`;
    return !seen.has(id) && seen.add(id);
  });
}
