// The figures of one `make bench` run, written into docs/performance.md (run.mjs --write-docs, which
// `make bench` passes): each table the run prints is also kept as Markdown under a block name, and
// the doc's `<!-- bench:NAME:start -->` … `<!-- bench:NAME:end -->` blocks are replaced with them,
// so no figure in those tables is ever typed by hand and all of them come from the same run. A
// block the doc has and the run did not fill, or the other way round, fails the write (and a run
// with --quick, --only or --cases is refused before it starts: its figures would not be one run's).
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

  /** Open the run's header block: when, what, and on what machine. */
  constructor(version) {
    const cpu = cpus();
    const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
    this.#startLoad = loadavg()[0];
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

  /** Replace every bench block of `file` with this run's; throws (naming the blocks) when they differ. */
  write(file) {
    this.add('run', `One \`make bench\` run: ${this.#header}; load average ${this.#startLoad.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end.`);
    this.table('goals', this.#goals);
    const text = readFileSync(file, 'utf8');
    const inDoc = new Set([...text.matchAll(/<!-- bench:([\w-]+):start -->/g)].map((m) => m[1]));
    const missing = [...inDoc].filter((n) => !this.#blocks.has(n));
    const extra = [...this.#blocks.keys()].filter((n) => !inDoc.has(n));
    if (missing.length > 0 || extra.length > 0) {
      throw new Error(`bench: ${file}: blocks the run did not fill: [${missing.join(', ')}]; blocks the doc lacks: [${extra.join(', ')}]`);
    }
    let out = text;
    for (const [name, parts] of this.#blocks) {
      const re = new RegExp(`(<!-- bench:${name}:start -->\\n)[\\s\\S]*?(<!-- bench:${name}:end -->)`);
      if (!re.test(out)) throw new Error(`bench: ${file}: block ${name} has no end marker`);
      out = out.replace(re, (_, start, end) => `${start}${parts.join('\n\n')}\n${end}`);
    }
    writeFileSync(file, out);
  }
}
