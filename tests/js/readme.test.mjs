// The docs' runnable examples run: the README's Node quick start and the guide's jitter calls
// (docs/guide/retry.md), extracted and executed against the installed package (so neither can drift
// from the API).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The first js block after `marker` in `doc` (a path from the repo root). */
const blockAfter = (marker, doc = 'README.md') => {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  const at = text.indexOf(marker);
  assert.ok(at >= 0, `${doc} has "${marker}"`);
  const m = /```js\n([\s\S]*?)```/.exec(text.slice(at));
  assert.ok(m, `a js block after "${marker}" in ${doc}`);
  return m[1];
};
/** Run `source` as an ES module that resolves 'steadfast' from tests/node_modules; returns stdout lines. */
function run(source) {
  const dir = mkdtempSync(join(ROOT, 'tests', '.readme-'));
  try {
    const file = join(dir, 'example.mjs');
    writeFileSync(file, source);
    return execFileSync(process.execPath, [file], { encoding: 'utf8', timeout: 20_000 }).trim().split('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('README quick start (Node): charged once, then replayed', () => {
  const lines = run(blockAfter('Node 24 (ESM;'));
  assert.equal(lines.length, 2);
  assert.match(lines[0], /reference: 'ch_[0-9a-f]{8}'/);
  assert.equal(lines[1], lines[0], 'the second call replays the first result');
});

test('guide jitter examples stay in their documented ranges', () => {
  const src = blockAfter('## Jitter', 'docs/guide/retry.md').replace(/^(\w+Jitter\(.*?\));.*$/gm, 'console.log($1);');
  const [full, equal, decorrelated] = run(src).map(Number);
  assert.ok(full >= 0 && full < 8000, `fullJitter(4, 1000, 30000) = ${full}`);
  assert.ok(equal >= 4000 && equal < 8000, `equalJitter = ${equal}`);
  assert.ok(decorrelated >= 1000 && decorrelated < 24000, `decorrelatedJitter = ${decorrelated}`);
});
