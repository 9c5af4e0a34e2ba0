// steadfast benchmarks, side by side with cockatiel, opossum and p-retry (see benches/README.md).
//
//   node benches/run.mjs [--quick] [--only=timing,store,sim,memory,startup,browser,size] [--no-browser] [--cases=4,5a,…]
//
// steadfast is imported BY NAME ('steadfast'), from the tarball `make build` packs, installed into
// benches/node_modules exactly as a user's `npm install` would (exports → index.node.js).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { installTarball, table, fmt, kib, BENCH_DIR } from './common.mjs';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const only = argv
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');
const casesWanted = argv
  .find((a) => a.startsWith('--cases='))
  ?.slice(8)
  .split(',');
const want = (part) => (only ? only.includes(part) : part !== 'browser' || !argv.includes('--no-browser'));

// Timings call gc() between batches and memory needs it: re-run ourselves with --expose-gc.
if (typeof globalThis.gc !== 'function') {
  const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), ...argv], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const tarball = installTarball();
console.log(`steadfast from ${tarball} (installed into benches/node_modules, imported as 'steadfast')`);
console.log(`Node ${process.version}, ${process.platform}/${process.arch}${quick ? ', --quick' : ''}\n`);

if (want('timing')) {
  const { cases, runCase, opened } = await import('./timing.mjs');
  const opts = quick ? { batch: 5_000, reps: 7, warmup: 2 } : { batch: 20_000, reps: 25, warmup: 3 };
  console.log(`## Cases 1–4: ns per call (median of ${opts.reps} interleaved repetitions × ${opts.batch} sequential awaited calls)\n`);
  const detail = [['case', 'variant', 'ns/call', 'overhead', '±MAD%']];
  const pairs = [['case', 'steadfast', 'ns/call', 'anchor', 'ns/call', 'ratio', 'overhead ratio', 'target', '']];
  for (const c of cases()) {
    if (casesWanted !== undefined && !casesWanted.includes(c.id)) continue;
    await c.setup?.();
    const rows = await runCase(c.variants, opts);
    const base = rows[0].ns;
    for (const r of rows) detail.push([`${c.id}. ${c.title}`, r.name, fmt(r.ns), r.lib === 'baseline' ? '' : fmt(r.ns - base), fmt(r.spread)]);
    const anchors = rows.filter((r) => r.lib !== 'baseline' && r.lib !== 'steadfast');
    for (const s of rows.filter((r) => r.lib === 'steadfast')) {
      for (const a of anchors.filter((a) => s.vs === undefined || s.vs.includes(a.name))) {
        const ratio = s.ns / a.ns;
        const over = (s.ns - base) / (a.ns - base);
        const target = s.target ?? c.target; // a variant may carry its own (issue 15: fresh key ≤ 1.0×)
        const targeted = target !== undefined && a.lib === 'cockatiel';
        pairs.push([
          `${c.id}. ${c.title}`,
          s.name,
          fmt(s.ns),
          a.name,
          fmt(a.ns),
          `${fmt(ratio, 2)}×`,
          `${fmt(over, 2)}×`,
          targeted ? `≤ ${target}×` : '',
          targeted ? (over <= target ? 'met' : 'MISSED') : '',
        ]);
      }
    }
  }
  for (const b of opened) b.shutdown();
  table(detail, 2);
  console.log('\nRatios (steadfast ÷ anchor; overhead ratio = (steadfast − baseline) ÷ (anchor − baseline)):\n');
  table(pairs, 2);
  console.log();
}

if (want('store')) {
  const { runStoreGrowth } = await import('./store.mjs');
  const records = quick ? 100_000 : 1_000_000;
  const g = await runStoreGrowth({ records, batch: 10_000 });
  console.log(
    `## Case 3b: chargeCustomer, fresh key per call into ONE store retaining every record (0 → ${records.toLocaleString('en')}; rounds of 10,000 calls, interleaved, medians)\n`,
  );
  table(g.rows);
  console.log(`\nflatness (steadfast overhead at the largest size ÷ at 10k–60k): ${fmt(g.flat, 2)}× (target ≤ 1.2×: ${g.flat <= 1.2 ? 'met' : 'MISSED'})`);
  console.log(
    `memory per retained done record, JS heap + wasm: ${fmt(g.perRecord, 0)} B = ${fmt(g.heapPerRecord, 0)} + ${fmt(g.wasmPerRecord, 0)} (target ≤ 100 B: ${g.perRecord <= 100 ? 'met' : 'MISSED'}; ${g.retained.toLocaleString('en')} of ${g.added.toLocaleString('en')} records retained; heap+wasm ${g.heapWasmMiB[0]} → ${g.heapWasmMiB[1]} MiB)\n`,
  );
}

if (want('sim')) {
  const { runSim } = await import('./sim.mjs');
  const { rows, scale } = runSim({ quick });
  console.log("## Simulator: the seed's histogram in wasm vs plain JS (one process, interleaved, medians)\n");
  table(rows, 2);
  console.log('\nOutage model, time as the population grows (capacity scaled with it):\n');
  table(scale, 2);
  console.log();
}

if (want('memory')) {
  const calls = quick ? 100_000 : 1_000_000;
  const burst = quick ? 10_000 : 100_000;
  console.log(
    `## Case 5: memory after GC (one process per row; ${calls.toLocaleString('en')} sequential calls, then ${burst.toLocaleString('en')} in flight at once)\n`,
  );
  const scenarios = [
    'steadfast execute+withRetry',
    'steadfast chargeCustomer (replay key)',
    'steadfast chargeCustomer (fresh keys, 24 h TTL)',
    'cockatiel wrap(retry, SamplingBreaker)',
    'opossum fire() (timeout: false)',
    'p-retry pRetry(fn, {retries: 2})',
  ];
  const mib = (n) => (n / 1048576).toFixed(2);
  const signed = (n) => `${n >= 0 ? '+' : ''}${mib(n)}`;
  const rows = [
    ['scenario', 'heap before', 'Δ after calls', 'Δ in flight', 'Δ settled', 'wasm before', 'Δ wasm after', 'Δ wasm settled', 'growth ≤ 0.5', 'back'],
  ];
  for (const s of scenarios) {
    const r = spawnSync(process.execPath, ['--expose-gc', `${BENCH_DIR}/memory.mjs`, s, String(calls), String(burst)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`memory ${s}: ${r.stderr}`);
    const m = JSON.parse(r.stdout.trim().split('\n').pop());
    const growth = m.after.heap - m.before.heap + (m.after.wasm - m.before.wasm);
    const back = m.settled.heap - m.after.heap <= 256 * 1024;
    const isSf = s.startsWith('steadfast');
    rows.push([
      s,
      mib(m.before.heap),
      signed(m.after.heap - m.before.heap),
      signed(m.peak.heap - m.after.heap),
      signed(m.settled.heap - m.after.heap),
      isSf ? mib(m.before.wasm) : '',
      isSf ? signed(m.after.wasm - m.before.wasm) : '',
      isSf ? signed(m.settled.wasm - m.after.wasm) : '',
      growth <= 0.5 * 1048576 ? 'yes' : 'NO',
      back ? 'yes' : 'NO',
    ]);
  }
  table(rows);
  console.log('(MiB; Δ after calls = growth over the sequential calls; Δ in flight / settled relative to "after";');
  console.log(' wasm linear memory never shrinks, so "settled" shows what the burst left reserved; "back" = heap within 0.25 MiB)\n');
}

if (want('size')) {
  const { sizes, checkoutJsByFile } = await import('./size.mjs');
  console.log('## Case 7: size (what a bundler ships; gzip -9 and brotli q11)\n');
  const rows = [['artifact', 'raw', 'gzip -9', 'brotli']];
  const measured = await sizes();
  for (const [name, m] of measured) rows.push([name, kib(m.raw), kib(m.gz), kib(m.br)]);
  table(rows);
  const gz = (label) => measured.find(([name]) => name === label)[1].gz;
  const verdict = (label) => `${kib(gz(label))} (${gz(label) <= 20 * 1024 ? 'met' : 'MISSED'})`;
  console.log(
    `(target: .wasm + JS gzipped ≤ 20 KB: checkout page ${verdict('checkout page (Vite build): JS + .wasm')}, pipeline ${verdict('steadfast .wasm + pipeline bundle')})\n`,
  );
  const byFile = await checkoutJsByFile();
  const total = byFile.reduce((t, [, b]) => t + b, 0);
  console.log('checkout page JS by file (esbuild --minify, the same two imports; bytes before gzip):\n');
  table([['file', 'min bytes', 'share'], ...byFile.slice(0, 12).map(([f, b]) => [f, String(b), `${((100 * b) / total).toFixed(1)} %`])]);
  console.log(`(${byFile.length} files, ${total} B minified)\n`);
}

if (want('startup')) {
  const { nodeStartup } = await import('./startup.mjs');
  const runs = quick ? 5 : 15;
  console.log(`## Case 6: start-up in Node ${process.version} (median of ${runs} cold processes, interleaved)\n`);
  const rows = [['package', 'import() ms', 'process wall − bare node, ms']];
  const res = nodeStartup(runs);
  for (const r of res) rows.push([r.name, fmt(r.importMs, 2), fmt(r.wallMs, 1)]);
  table(rows);
  console.log(`(bare \`node -e ''\`: ${fmt(res[0].bareMs, 1)} ms)\n`);
}

if (want('browser')) {
  const { browserStartup } = await import('./startup.mjs');
  if (!want('size')) await (await import('./size.mjs')).sizes(); // builds the comparison bundles it serves
  const runs = quick ? 3 : 9;
  const r = await browserStartup(runs);
  if (r.skipped) console.log(`## Case 6b: start-up in Chromium: skipped (${r.skipped})\n`);
  else {
    console.log(`## Case 6b: start-up in Chromium ${r.version} (fresh context per run, median of ${runs})\n`);
    table([['entry', 'await import() ms'], ...r.rows.map((x) => [x.name, fmt(x.importMs, 2)])]);
    console.log();
  }
}
