// benches/report.mjs (`make bench` writes its tables into docs/performance.md) replaces exactly the
// doc's bench blocks with one run's tables, and refuses a doc and a run that do not match.
// Run: node --test tests/js/bench-report.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Report, markdownTable } from '../../benches/report.mjs';

const DOC = `# Title

Hand-written text stays.

<!-- bench:run:start -->
old run line
<!-- bench:run:end -->

<!-- bench:timing:start -->
| old | table |
<!-- bench:timing:end -->

More text.

<!-- bench:goals:start -->
<!-- bench:goals:end -->
`;

const docFile = (text) => {
  const file = join(mkdtempSync(join(tmpdir(), 'bench-report-')), 'performance.md');
  writeFileSync(file, text);
  return file;
};

test('a Markdown table escapes pipes and never prints the terminal-only verdict word', () => {
  const md = markdownTable([
    ['case', 'ns', 'goal'],
    ['a | b', '1.0', '≤ 1.0× MISSED'],
  ]);
  assert.equal(md, '| case | ns | goal |\n| --- | ---: | ---: |\n| a \\| b | 1.0 | ≤ 1.0× **not met** |');
});

test("the run's blocks replace the doc's, and every other line stays", () => {
  const file = docFile(DOC);
  const r = new Report('9.9.9');
  r.table('timing', [
    ['case', 'overhead'],
    ['1', '42.0'],
  ]);
  r.goal('a goal', '0.40×', true);
  r.goal('another', '2.00×', false);
  r.write(file);
  const out = readFileSync(file, 'utf8');
  assert.match(out, /Hand-written text stays\.\n/);
  assert.match(out, /More text\./);
  assert.doesNotMatch(out, /old run line|\| old \| table \|/);
  assert.match(out, /<!-- bench:run:start -->\nOne `make bench` run: \d{4}-\d\d-\d\d \d\d:\d\d UTC, steadfast 9\.9\.9, Node v/);
  assert.match(out, /<!-- bench:timing:start -->\n\| case \| overhead \|\n\| --- \| ---: \|\n\| 1 \| 42\.0 \|\n<!-- bench:timing:end -->/);
  assert.match(out, /\| a goal \| 0\.40× \| met \|\n\| another \| 2\.00× \| \*\*not met\*\* \|/);
});

test('a doc block the run did not fill, or a run block the doc lacks, fails and writes nothing', () => {
  const file = docFile(DOC);
  const partial = new Report('1.0.0');
  assert.throws(() => partial.write(file), /did not fill: \[timing\]/);
  assert.equal(readFileSync(file, 'utf8'), DOC);
  const extra = new Report('1.0.0');
  extra.table('timing', [['a'], ['b']]);
  extra.table('sizes', [['a'], ['b']]);
  assert.throws(() => extra.write(file), /the doc lacks: \[sizes\]/);
  assert.equal(readFileSync(file, 'utf8'), DOC);
});
