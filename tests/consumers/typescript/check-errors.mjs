// Compares tsc's diagnostics for type-errors.ts with the `// @expect TSxxxx|TSyyyy` markers in it:
// every marked line must get one of its codes, and no unmarked line may get an error.
//   node check-errors.mjs <tsc output file> <label>
import { readFileSync } from 'node:fs';

const [outputFile, label] = process.argv.slice(2);
const source = readFileSync('type-errors.ts', 'utf8').split('\n');
const expected = new Map();
source.forEach((text, i) => {
  const m = text.match(/\/\/ @expect ((?:TS\d+\|?)+)\s*$/);
  if (m) expected.set(i + 1, m[1].split('|'));
});
const got = new Map();
const stray = [];
for (const line of readFileSync(outputFile, 'utf8').split('\n')) {
  const m = line.match(/^(.*?)\((\d+),(\d+)\): error (TS\d+):/);
  if (!m) continue;
  if (!m[1].endsWith('type-errors.ts')) {
    stray.push(line);
    continue;
  }
  const n = Number(m[2]);
  if (!got.has(n)) got.set(n, []);
  got.get(n).push(m[4]);
}
const problems = [...stray.map((l) => `an error outside type-errors.ts: ${l}`)];
for (const [line, codes] of expected) {
  const seen = got.get(line) ?? [];
  if (!seen.some((c) => codes.includes(c))) {
    problems.push(`line ${line}: expected ${codes.join(' or ')}, got ${seen.join(', ') || 'no error'}: ${source[line - 1].trim()}`);
  }
}
for (const [line, codes] of got) {
  if (!expected.has(line)) problems.push(`line ${line}: unexpected ${codes.join(', ')}: ${source[line - 1].trim()}`);
}
if (expected.size === 0) problems.push('type-errors.ts has no // @expect markers');
if (problems.length > 0) {
  console.error(problems.map((p) => `check-errors (${label}): ${p}`).join('\n'));
  process.exit(1);
}
console.log(`typescript: type-errors.ts (${label}): all ${expected.size} deliberate errors reported with the expected codes, no others`);
