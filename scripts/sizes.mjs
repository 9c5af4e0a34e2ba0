// Size table for the built package: node scripts/sizes.mjs <pkg dir>
// .wasm raw / gzip -9 / brotli (max quality), and every shipped .js with the same, plus the JS total.
// Uses node:zlib, so no gzip/brotli CLI is needed. Sizes are per file, as a server would send them.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';

const dir = process.argv[2] ?? 'pkg';

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
