// scripts/lint-docs.mjs (the `lint-docs` step of make test) fails on each process word it must catch,
// and leaves alone the look-alikes users' docs legitimately hold (a UUID, a colour, an RNG seed option).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const LINT = fileURLToPath(new URL('../../scripts/lint-docs.mjs', import.meta.url));

function lint(text) {
  const dir = mkdtempSync(join(tmpdir(), 'lint-docs-'));
  try {
    writeFileSync(join(dir, 'page.md'), text);
    const r = spawnSync(process.execPath, [LINT, dir], { encoding: 'utf8' });
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const [word, rule] of [
  ['Fixed in issue 42.', 'issue number'],
  ['See #17 for the discussion.', 'issue reference'],
  ["In the seed's order.", 'the seed'],
  ['As seed 003 asks.', 'seed id'],
  ['Target: **MISSED**.', 'MISSED'],
  ['Performance, round two.', 'round name'],
  ['Measured on main at `c808cd5`.', 'commit id'],
  ['At 4beafc9e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a.', 'commit id'],
]) {
  test(`lint-docs fails on a planted ${rule}: ${JSON.stringify(word)}`, () => {
    const r = lint(`# A page\n\nSome text. ${word}\n`);
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, new RegExp(`page\\.md:3: ${rule} `));
  });
}

test('lint-docs passes product text with look-alikes of process words', () => {
  const r = lint(
    [
      '# A page',
      'Idempotency-Key: 3b0c2f8e-6a41-4d7e-9a55-1f0e0f6f4a2b',
      '<rect fill="#333"/> and a deadbeef value, 1234567 calls, `seedRandom(1)`, `{ seed: 1 }`',
      'A round trip to Redis; two rounds of reconciliation; the store seed is secret.',
    ].join('\n'),
  );
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /1 files users read, no process words/);
});
