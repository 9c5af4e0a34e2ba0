// Size table for the built package: node scripts/sizes.mjs <pkg dir> [--readme <file>]
// .wasm raw / gzip -9 / brotli (max quality), and every shipped .js with the same, plus the JS total.
// Uses node:zlib, so no gzip/brotli CLI is needed. Sizes are per file, as a server would send them.
// --readme <file>: also write the .wasm rows and the JS total, in bytes, as a Markdown table between
// the file's `<!-- sizes:start -->` and `<!-- sizes:end -->` lines (scripts/build.sh does it for the
// npm README in pkg/), so the sizes a user reads are those of the files just built.
// --budget <file>: fail (exit 1, naming the file and both sizes) when a file's gzip -9 size is over
// its ceiling in <file> (scripts/size-budget.json; scripts/build.sh passes it), or a named file is missing.
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';

const dir = process.argv[2] ?? 'pkg';
const readmeAt = process.argv.indexOf('--readme');
const readme = readmeAt > 0 ? process.argv[readmeAt + 1] : undefined;
const budgetAt = process.argv.indexOf('--budget');
const budget = budgetAt > 0 ? process.argv[budgetAt + 1] : undefined;

function* walk(d) {
  for (const name of readdirSync(d).sort()) {
    const p = join(d, name);
    if (statSync(p).isDirectory()) yield* walk(p);
    else yield p;
  }
}

const measure = (buf) => ({
  raw: buf.length,
  gz: gzipSync(buf, { level: 9 }).length,
  br: brotliCompressSync(buf, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: buf.length },
  }).length,
});

const rows = [];
const js = { raw: 0, gz: 0, br: 0 };
for (const file of walk(dir)) {
  if (!/\.(wasm|js)$/.test(file)) continue;
  const m = measure(readFileSync(file));
  rows.push([relative(dir, file), m]);
  if (file.endsWith('.js')) for (const k of Object.keys(js)) js[k] += m[k];
}
rows.push(['total JS', js]);

const kb = (n) => `${(n / 1024).toFixed(1)} KB`.padStart(9);
console.log(`${'file'.padEnd(32)}${'raw'.padStart(9)}${'gzip -9'.padStart(9)}${'brotli'.padStart(9)}`);
for (const [name, m] of rows) console.log(`${name.padEnd(32)}${kb(m.raw)}${kb(m.gz)}${kb(m.br)}`);

if (readme !== undefined) {
  const text = readFileSync(readme, 'utf8');
  const re = /(<!-- sizes:start -->\n)[\s\S]*?(<!-- sizes:end -->)/;
  if (!re.test(text)) {
    console.error(`sizes: ${readme} has no <!-- sizes:start --> … <!-- sizes:end --> block`);
    process.exit(1);
  }
  const bytes = (n) => `${n.toLocaleString('en-US')} B`;
  const table = [
    '| file | raw | gzip -9 | brotli |',
    '| --- | --- | --- | --- |',
    ...rows
      .filter(([name]) => name.endsWith('.wasm') || name === 'total JS')
      .map(([name, m]) => `| ${name === 'total JS' ? 'all shipped JS (unbundled)' : `\`${name}\``} | ${bytes(m.raw)} | ${bytes(m.gz)} | ${bytes(m.br)} |`),
  ].join('\n');
  writeFileSync(readme, text.replace(re, `$1${table}\n$2`));
}

if (budget !== undefined) {
  const ceilings = JSON.parse(readFileSync(budget, 'utf8')).gzip;
  const sizes = new Map(rows);
  const over = [];
  for (const [name, ceiling] of Object.entries(ceilings)) {
    const m = sizes.get(name);
    if (m === undefined) over.push(`${name}: not built`);
    else if (m.gz > ceiling) over.push(`${name}: ${m.gz.toLocaleString('en-US')} B gzip -9, over its ${ceiling.toLocaleString('en-US')} B`);
  }
  if (over.length > 0) {
    console.error(
      `sizes: over the size budget (${budget}):\n  ${over.join('\n  ')}\nFind what the change pulled in (node benches/wasm-breakdown.mjs), or raise the line on purpose.`,
    );
    process.exit(1);
  }
}
