// What users read speaks of the product only: no words of the project's own process (issue numbers,
// "the seed", review rounds, MISSED targets, commit ids) in README.md, CHANGELOG.md, CONTRIBUTING.md,
// docs/ and everything npm ships (pkg-template/, and pkg/ when a build made it). A step of `make test`
// (scripts/test.sh lint-docs). Usage: node scripts/lint-docs.mjs [file or directory …] (default: the above).
// Prints each hit as path:line: word — the line, and exits 1 when there is any.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEFAULT = ['README.md', 'CHANGELOG.md', 'CONTRIBUTING.md', 'docs', 'pkg-template', 'pkg'];
const TEXT = /\.(md|js|mjs|cjs|ts|cts|mts|json|txt|html)$|(^|\/)(LICENSE[^/]*)$/;
// Generated output (the API reference is built from pkg-template's declarations, which are checked).
const SKIP_DIRS = new Set(['node_modules', 'api']);

/** Each rule: a name for the report and a pattern; `keep(match, line)` may excuse a hit. */
const RULES = [
  { name: 'issue number', re: /\bissues?\s+#?\d+/gi },
  { name: 'issue reference', re: /(?<![\w&/#])#\d{1,5}\b(?![-\w"'])/g }, // not a colour ("#333")
  { name: 'the seed', re: /\b(?:the|a|our|this)\s+seed(?:'s)?\b(?!\s*(?:[:=(]|value|number|for the (?:generator|RNG)))/gi },
  { name: 'the seeds', re: /\bseeds(?:'s)?\b/gi },
  { name: 'seed id', re: /\bseed[\s-]?0\d{2}\b/gi },
  { name: 'MISSED', re: /\bMISSED\b/g },
  { name: 'round name', re: /\bround[\s-](?:one|two|three|four|\d)\b/gi },
  {
    name: 'commit id',
    re: /(?<![\w.-])[0-9a-f]{7,40}(?![\w-])/g,
    // A hex run that is only digits is a number; one that is only letters is a word ("deadbeef", "facade").
    keep: (m) => !/[0-9]/.test(m) || !/[a-f]/.test(m),
  },
];

function* files(path) {
  const st = statSync(path);
  if (st.isDirectory()) {
    for (const name of readdirSync(path).sort()) if (!SKIP_DIRS.has(name)) yield* files(join(path, name));
  } else if (TEXT.test(path)) yield path;
}

const targets = process.argv.length > 2 ? process.argv.slice(2) : DEFAULT.map((p) => join(ROOT, p)).filter(existsSync);
const hits = [];
let checked = 0;
for (const target of targets) {
  for (const file of files(target)) {
    checked += 1;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const { name, re, keep } of RULES) {
          for (const [m] of line.matchAll(re)) {
            if (!keep?.(m, line)) hits.push(`${relative(ROOT, file) || file}:${i + 1}: ${name} "${m}" — ${line.trim().slice(0, 140)}`);
          }
        }
      });
  }
}
if (checked === 0) {
  console.error('lint-docs: no files to check');
  process.exit(1);
}
if (hits.length > 0) {
  console.error(hits.join('\n'));
  console.error(`lint-docs: ${hits.length} process word(s) in what users read: say it in the product's terms`);
  process.exit(1);
}
console.log(`lint-docs: ${checked} files users read, no process words`);
