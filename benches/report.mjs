// The figures of one run written into the docs: `make bench` (run.mjs --write-docs) fills the
// `<!-- bench:NAME:start -->` … `<!-- bench:NAME:end -->` blocks of docs/performance.md and
// docs/guarantees.md, `make soak` (tests/soak/all.mjs --write-docs) the `soak:` blocks of
// docs/guarantees.md. Each table or line the run prints is also kept as Markdown under a block name,
// so no figure in those blocks is ever typed by hand and all of them come from the same run. A block
// a doc has and the run did not fill, or the other way round, fails the write before any file is
// touched (and run.mjs refuses --quick, --only or --cases with --write-docs: its figures would not be
// one run's).
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

// A verdict reads "not met" in the doc (the console's word for it is for the terminal only).
const cell = (v) =>
  String(v ?? '')
    .replaceAll('|', '\\|')
    .replace(/\bMISSED\b/g, '**not met**');

/** Markdown table of `rows` (the first row is the header; columns from `alignLeft` on are right-aligned). */
export function markdownTable(rows, alignLeft = 1) {
  const head = rows[0].map(cell);
  const rule = head.map((_, c) => (c < alignLeft ? '---' : '---:'));
  return [head, rule, ...rows.slice(1).map((r) => head.map((_, c) => cell(r[c])))].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

export class Report {
  #blocks = new Map();
  #goals = [['goal', 'measured', '']];
  #startLoad;
  #header;
  #tag;
  #command;

  /**
   * Open the run's header block: when, what, and on what machine. `tag` is the marker prefix
   * (`bench`, `soak`) and `command` what the header says made the figures.
   */
  constructor(version, { tag = 'bench', command = 'make bench' } = {}) {
    const cpu = cpus();
    const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
    this.#startLoad = loadavg()[0];
    this.#tag = tag;
    this.#command = command;
    this.#header = `${when} UTC, steadfast ${version}, Node ${process.version} on ${process.platform}/${process.arch}, ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}`;
  }

  /** Append Markdown text (a table or a line) to block `name`. */
  add(name, text) {
    const parts = this.#blocks.get(name) ?? [];
    parts.push(text);
    this.#blocks.set(name, parts);
  }

  table(name, rows, alignLeft = 1) {
    this.add(name, markdownTable(rows, alignLeft));
  }

  /** A goal the run measured: what it is, the figure, and `met`. */
  goal(what, measured, met) {
    this.#goals.push([what, measured, met ? 'met' : '**not met**']);
  }

  /**
   * Replace every block of `files` (one path or several) with this run's. Each block the run filled
   * must be in some file, and each block a file has must be filled; a block in several files (the
   * `run` header) gets the same text in each. `goals` is a block only when a goal was recorded.
   * Throws, naming the blocks, and writes nothing when they differ.
   */
  write(files) {
    const list = Array.isArray(files) ? files : [files];
    this.add(
      'run',
      `One \`${this.#command}\` run: ${this.#header}; load average ${this.#startLoad.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end.`,
    );
    if (this.#goals.length > 1) this.table('goals', this.#goals);
    const marker = new RegExp(`<!-- ${this.#tag}:([\\w-]+):start -->`, 'g');
    const texts = list.map((file) => readFileSync(file, 'utf8'));
    const inDocs = texts.map((text) => new Set([...text.matchAll(marker)].map((m) => m[1])));
    const problems = [];
    for (const [i, names] of inDocs.entries()) {
      const missing = [...names].filter((n) => !this.#blocks.has(n));
      if (missing.length > 0) problems.push(`${list[i]}: blocks the run did not fill: [${missing.join(', ')}]`);
    }
    const extra = [...this.#blocks.keys()].filter((n) => !inDocs.some((names) => names.has(n)));
    if (extra.length > 0) problems.push(`blocks the doc lacks: [${extra.join(', ')}]`);
    if (problems.length > 0) throw new Error(`${this.#tag}: ${problems.join('; ')}`);
    const out = texts.map((text, i) => {
      let doc = text;
      for (const name of inDocs[i]) {
        const re = new RegExp(`(<!-- ${this.#tag}:${name}:start -->\\n)[\\s\\S]*?(<!-- ${this.#tag}:${name}:end -->)`);
        if (!re.test(doc)) throw new Error(`${this.#tag}: ${list[i]}: block ${name} has no end marker`);
        doc = doc.replace(re, (_, start, end) => `${start}${this.#blocks.get(name).join('\n\n')}\n${end}`);
      }
      return doc;
    });
    for (const [i, file] of list.entries()) writeFileSync(file, out[i]);
  }
}
