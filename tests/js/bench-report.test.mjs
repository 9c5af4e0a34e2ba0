// benches/report.mjs (`make bench` writes its tables into docs/performance.md and docs/guarantees.md,
// `make soak` its figures into docs/guarantees.md) replaces exactly the docs' blocks of its tag with
// one run's tables, and refuses docs and a run that do not match.
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

const docFile = (text, name = 'performance.md') => {
  const file = join(mkdtempSync(join(tmpdir(), 'bench-report-')), name);
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
  assert.throws(() => partial.write(file), /did not fill: \[timing, goals\]/);
  assert.equal(readFileSync(file, 'utf8'), DOC);
  const extra = new Report('1.0.0');
  extra.table('timing', [['a'], ['b']]);
  extra.table('sizes', [['a'], ['b']]);
  assert.throws(() => extra.write(file), /the doc lacks: \[sizes\]/);
  assert.equal(readFileSync(file, 'utf8'), DOC);
});

const GUARANTEES = `# Guarantees

<!-- bench:records:start -->
old records
<!-- bench:records:end -->

<!-- soak:run:start -->
old soak run
<!-- soak:run:end -->

<!-- soak:soak:start -->
old soak figures
<!-- soak:soak:end -->
`;

test("one run fills its blocks across several docs, and leaves another tag's blocks alone", () => {
  const perf = docFile(DOC);
  const guarantees = docFile(GUARANTEES, 'guarantees.md');
  const r = new Report('9.9.9');
  r.table('timing', [['case'], ['1']]);
  r.add('records', '82 B a record');
  r.goal('a goal', '1×', true);
  r.write([perf, guarantees]);
  const g = readFileSync(guarantees, 'utf8');
  assert.match(g, /<!-- bench:records:start -->\n82 B a record\n<!-- bench:records:end -->/);
  assert.match(g, /old soak run/);
  assert.match(g, /old soak figures/);
  assert.match(readFileSync(perf, 'utf8'), /<!-- bench:timing:start -->\n\| case \|/);

  const soak = new Report('9.9.9', { tag: 'soak', command: 'make soak' });
  soak.add('soak', '0 double charges');
  soak.write(guarantees);
  const after = readFileSync(guarantees, 'utf8');
  assert.match(after, /<!-- soak:run:start -->\nOne `make soak` run: \d{4}-\d\d-\d\d \d\d:\d\d UTC, steadfast 9\.9\.9/);
  assert.match(after, /<!-- soak:soak:start -->\n0 double charges\n<!-- soak:soak:end -->/);
  assert.match(after, /82 B a record/);
});

test('a block one doc lacks fails the write of every doc, not just that one', () => {
  const perf = docFile(DOC);
  const guarantees = docFile(GUARANTEES, 'guarantees.md');
  const r = new Report('9.9.9');
  r.table('timing', [['case'], ['1']]);
  r.goal('a goal', '1×', true);
  // records is in guarantees.md and the run did not fill it.
  assert.throws(() => r.write([perf, guarantees]), /guarantees\.md: blocks the run did not fill: \[records\]/);
  assert.equal(readFileSync(perf, 'utf8'), DOC);
  assert.equal(readFileSync(guarantees, 'utf8'), GUARANTEES);
});
