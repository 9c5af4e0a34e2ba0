// steadfast benchmarks, side by side with cockatiel, opossum and p-retry (see benches/README.md).
//
//   node benches/run.mjs [--quick] [--only=timing,store,profile,figures,sim,memory,records,startup,browser,size,rust] [--no-browser] [--cases=4,5a,…] [--write-docs]
//
// steadfast is imported BY NAME ('steadfast'), from the tarball `make build` packs, installed into
// benches/node_modules exactly as a user's `npm install` would (exports → index.node.js).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { installTarball, table, fmt, kib, BENCH_DIR, INSTALLED, ROOT } from './common.mjs';
import { Report } from './report.mjs';

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
// --write-docs (`make bench`): the tables go into docs/performance.md and the bytes per record into
// docs/guarantees.md too (benches/report.mjs), so only a whole run may write them: every figure there
// is then from the same run.
const writeDocs = argv.includes('--write-docs');
if (writeDocs && (quick || only || casesWanted || argv.includes('--no-browser'))) {
  console.error('bench: --write-docs needs the whole run (no --quick, --only, --cases or --no-browser)');
  process.exit(2);
}

// Timings call gc() between batches and memory needs it: re-run ourselves with --expose-gc.
if (typeof globalThis.gc !== 'function') {
  const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), ...argv], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const tarball = installTarball();
const report = writeDocs ? new Report(JSON.parse(readFileSync(join(INSTALLED, 'package.json'), 'utf8')).version) : undefined;
/** Print `rows` as a table and, with --write-docs, keep them for the page's `block`. */
const show = (block, rows, alignLeft = 1) => {
  table(rows, alignLeft);
  report?.table(block, rows, alignLeft);
};
console.log(`steadfast from ${tarball} (installed into benches/node_modules, imported as 'steadfast')`);
console.log(`Node ${process.version}, ${process.platform}/${process.arch}${quick ? ', --quick' : ''}\n`);

if (want('timing')) {
  const { cases, runCase, opened } = await import('./timing.mjs');
  const opts = quick ? { batch: 5_000, reps: 7, warmup: 2 } : { batch: 20_000, reps: 25, warmup: 3 };
  console.log(`## Cases 1–4: ns per call (median of ${opts.reps} interleaved repetitions × ${opts.batch} sequential awaited calls)\n`);
  const detail = [['case', 'variant', 'ns/call', 'overhead', '±MAD%']];
  const pairs = [['case', 'steadfast', 'ns/call', 'anchor', 'ns/call', 'ratio', 'overhead ratio', 'target', '']];
  const doc = [['case', 'steadfast', 'overhead ns', '±MAD %', 'anchor', 'overhead ns', '±MAD %', 'overhead ratio', 'goal']];
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
        // An anchor no slower than the baseline (within the noise of a near-free call) gives no ratio.
        const over = a.ns - base > 0 ? (s.ns - base) / (a.ns - base) : NaN;
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
        doc.push([
          c.id,
          s.name,
          fmt(s.ns - base),
          fmt(s.spread, 0),
          a.name,
          fmt(a.ns - base),
          fmt(a.spread, 0),
          `${fmt(over, 2)}×`,
          targeted ? `≤ ${target}×: ${over <= target ? 'met' : '**not met**'}` : '',
        ]);
        if (targeted) report?.goal(`${s.name}, overhead vs ${a.name} (case ${c.id}) ≤ ${target}×`, `${fmt(over, 2)}×`, over <= target);
      }
    }
  }
  for (const b of opened) b.shutdown();
  table(detail, 2);
  console.log('\nRatios (steadfast ÷ anchor; overhead ratio = (steadfast − baseline) ÷ (anchor − baseline)):\n');
  table(pairs, 2);
  console.log();
  report?.table('timing', doc, 2);
}

if (want('store')) {
  const { runStoreGrowth } = await import('./store.mjs');
  const records = quick ? 100_000 : 1_000_000;
  const g = await runStoreGrowth({ records, batch: 10_000 });
  console.log(
    `## Case 3b: chargeCustomer, fresh key per call into ONE store retaining every record (0 → ${records.toLocaleString('en')}; rounds of 10,000 calls, interleaved, medians)\n`,
  );
  show('store', g.rows);
  console.log(`\nflatness (steadfast overhead at the largest size ÷ at 10k–60k): ${fmt(g.flat, 2)}× (target ≤ 1.2×: ${g.flat <= 1.2 ? 'met' : 'MISSED'})`);
  const memoryLine = `memory per retained done record, JS heap + wasm: ${fmt(g.perRecord, 0)} B = ${fmt(g.heapPerRecord, 0)} + ${fmt(g.wasmPerRecord, 0)} (target ≤ 100 B: ${g.perRecord <= 100 ? 'met' : 'MISSED'}; ${g.retained.toLocaleString('en')} of ${g.added.toLocaleString('en')} records retained; heap+wasm ${g.heapWasmMiB[0]} → ${g.heapWasmMiB[1]} MiB)`;
  console.log(`${memoryLine}\n`);
  if (report) {
    report.add(
      'store',
      `Flatness (overhead at the largest size ÷ at 10k–60k): ${fmt(g.flat, 2)}×. Memory per retained done record: ${fmt(g.perRecord, 0)} B = ${fmt(g.heapPerRecord, 0)} B JS heap + ${fmt(g.wasmPerRecord, 0)} B wasm (${g.retained.toLocaleString('en')} of ${g.added.toLocaleString('en')} records retained; heap + wasm ${g.heapWasmMiB[0]} → ${g.heapWasmMiB[1]} MiB).`,
    );
    for (const r of g.rows.slice(1))
      report.goal(`fresh-key \`chargeCustomer\` into ONE store at ${r[0]} records, overhead vs cockatiel \`wrap\` ≤ 1.0×`, r[4], r[5].endsWith('met'));
    report.goal('flat: overhead at 1M records ≤ 1.2× at 10k', `${fmt(g.flat, 2)}×`, g.flat <= 1.2);
    report.goal('memory per retained done record ≤ 100 B', `${fmt(g.perRecord, 0)} B`, g.perRecord <= 100);
  }
}

if (want('profile')) {
  // Where case 3's fresh-key charge spends its time, by layer (V8's sampling profiler, self time),
  // in a child process of its own (see benches/profile.mjs).
  const child = spawnSync(process.execPath, ['--expose-gc', join(BENCH_DIR, 'profile.mjs'), '--json', ...(quick ? ['--quick'] : [])], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const found = child.stdout.split('\n').find((l) => l.startsWith('profile-json '));
  if (child.status !== 0 || found === undefined) throw new Error(`bench: benches/profile.mjs failed (status ${child.status})`);
  const p = JSON.parse(found.slice('profile-json '.length));
  console.log('## Case 3p: where a fresh-key chargeCustomer spends its time (share of CPU samples, self time, by layer)\n');
  show('profile', p.rows);
  const line = `Mean per charge with the profiler on: ${Object.entries(p.ns)
    .map(([k, v]) => `${k} ${fmt(v, 0)} ns`)
    .join(', ')} (${Object.values(p.samples)
    .map((n) => n.toLocaleString('en'))
    .join(' and ')} samples).`;
  console.log(`\n${line}\n`);
  report?.add('profile', line);
}

if (want('figures')) {
  // The simulated experiments of the page's first sections (seeded: the same figures every run).
  const { figures } = await import('./figures.mjs');
  const f = figures();
  console.log('## The simulated experiments (`make demo`, seed 1)\n');
  show('storm', f.storm);
  console.log();
  show('jitter', f.jitter);
  console.log();
  for (const rows of f.outage) {
    show('outage', rows);
    console.log();
  }
  for (const { rows, summary } of f.throttle) {
    show('throttle', rows);
    console.log(`\n${summary}\n`);
    report?.add('throttle', summary);
  }
  show('tail', f.tail);
  console.log();
}

if (want('sim')) {
  const { runSim } = await import('./sim.mjs');
  const { rows, scale } = runSim({ quick });
  console.log("## Simulator: the seed's histogram in wasm vs plain JS (one process, interleaved, medians)\n");
  show('sim', rows, 2);
  console.log('\nOutage model, time as the population grows (capacity scaled with it):\n');
  show('sim', scale, 2);
  console.log();
  if (report) {
    for (const r of rows.slice(1).filter((x) => x.at(-1) !== '')) report.goal(`${r[0]}: wasm ≥ 4× plain JS`, r[3], r.at(-1).endsWith('met'));
    const last = scale.at(-1);
    report.goal(`\`simulateOutage\`, ${last[0]} clients: ≤ 500 ms, per event ≤ 1.3× of 10,000`, `${last[1]} ms, ${last[5]}`, last.at(-1).endsWith('met'));
  }
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
  show('memory', rows);
  console.log('(MiB; Δ after calls = growth over the sequential calls; Δ in flight / settled relative to "after";');
  console.log(' wasm linear memory never shrinks, so "settled" shows what the burst left reserved; "back" = heap within 0.25 MiB)\n');
}

if (want('records')) {
  // Bytes per retained idempotency record (docs/guarantees.md): one child process per size, so each
  // heap figure is of that store alone; Redis through the real script in the first.
  const sizes = quick
    ? [[20_000, 2_000]]
    : [
        [100_000, 20_000],
        [1_000_000, 0],
      ];
  const runs = sizes.map(([n, m]) => {
    const r = spawnSync(process.execPath, ['--expose-gc', `${BENCH_DIR}/records.mjs`, String(n), String(m)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`bench: records.mjs ${n} ${m} failed: ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').pop());
  });
  const redis = runs[0].redis;
  if (report && redis.skipped) throw new Error(`bench: the Redis bytes per record were not measured (${redis.skipped}); docs/guarantees.md needs them`);
  const n = (x) => x.toLocaleString('en');
  const rows = [['records', 'JS heap, B each', 'wasm memory, B each', 'Redis `used_memory`, B each']];
  for (const { memory: m } of runs) rows.push([`${n(m.records)} done, in memory`, String(m.heapBytesPerRecord), String(m.wasmBytesPerRecord), '']);
  const sm = runs[0].memory.smallStores;
  rows.push([`${n(sm.stores)} stores of ${sm.records} done records each, per store`, String(sm.heapBytesPerStore), String(sm.wasmBytesPerStore), '']);
  if (!redis.skipped) {
    rows.push([`${n(redis.records)} done, in Redis`, '', '', String(redis.doneBytesPerRecord)]);
    rows.push([`${n(redis.records)} unknown, in Redis`, '', '', String(redis.unknownBytesPerRecord)]);
  }
  console.log('## Bytes per retained idempotency record (benches/records.mjs)\n');
  show('records', rows);
  const last = runs.at(-1).memory;
  const full = `At the default \`maxRecords\` (${n(last.defaultMaxRecords)}) a full in-memory store takes about ${fmt((last.defaultMaxRecords * last.wasmBytesPerRecord) / 1e6, 0)} MB of wasm memory (the ${n(last.records)}-record row × \`maxRecords\`), plus the JS heap its results and their slots take.`;
  console.log(`\n${full}${redis.skipped ? ` Redis: ${redis.skipped}.` : ''}\n`);
  report?.add('records', full);
}

if (want('size')) {
  const { sizes, checkoutJsByFile } = await import('./size.mjs');
  console.log('## Case 7: size (what a bundler ships; gzip -9 and brotli q11)\n');
  const rows = [['artifact', 'raw', 'gzip -9', 'brotli']];
  const measured = await sizes();
  for (const [name, m] of measured) rows.push([name, kib(m.raw), kib(m.gz), kib(m.br)]);
  show('sizes', rows);
  const gz = (label) => measured.find(([name]) => name === label)[1].gz;
  const verdict = (label) => `${kib(gz(label))} (${gz(label) <= 20 * 1024 ? 'met' : 'MISSED'})`;
  console.log(
    `(target: .wasm + JS gzipped ≤ 20 KB: checkout page ${verdict('checkout page (Vite build): JS + .wasm')}, pipeline ${verdict('steadfast .wasm + pipeline bundle')})\n`,
  );
  const byFile = await checkoutJsByFile();
  const total = byFile.reduce((t, [, b]) => t + b, 0);
  console.log('checkout page JS by file (esbuild --minify, the same two imports; bytes before gzip):\n');
  report?.add('sizes', "The checkout page's JS by file (esbuild `--minify`, the same two imports; bytes before gzip, which is shared):");
  show('sizes', [['file', 'minified bytes', 'share'], ...byFile.slice(0, 12).map(([f, b]) => [f, String(b), `${((100 * b) / total).toFixed(1)} %`])]);
  console.log(`(${byFile.length} files, ${total} B minified)\n`);
  if (report) {
    for (const [what, label] of [
      ['a checkout page (Vite), JS + .wasm ≤ 20 KB gz', 'checkout page (Vite build): JS + .wasm'],
      ['the pipeline import + .wasm ≤ 20 KB gz', 'steadfast .wasm + pipeline bundle'],
    ]) {
      report.goal(what, kib(gz(label)), gz(label) <= 20 * 1024);
    }
  }
}

if (want('startup')) {
  const { nodeStartup } = await import('./startup.mjs');
  const runs = quick ? 5 : 15;
  console.log(`## Case 6: start-up in Node ${process.version} (median of ${runs} cold processes, interleaved)\n`);
  const rows = [['package', 'import() ms', 'process wall − bare node, ms']];
  const res = nodeStartup(runs);
  for (const r of res) rows.push([r.name, fmt(r.importMs, 2), fmt(r.wallMs, 1)]);
  show('startup', rows);
  console.log(`(bare \`node -e ''\`: ${fmt(res[0].bareMs, 1)} ms)\n`);
  report?.add('startup', `A bare \`node -e ''\`: ${fmt(res[0].bareMs, 1)} ms.`);
}

if (want('browser')) {
  const { browserStartup } = await import('./startup.mjs');
  if (!want('size')) await (await import('./size.mjs')).sizes(); // builds the comparison bundles it serves
  const runs = quick ? 3 : 9;
  const r = await browserStartup(runs);
  if (r.skipped) {
    console.log(`## Case 6b: start-up in Chromium: skipped (${r.skipped})\n`);
    report?.add('browser', `Start-up in Chromium: skipped (${r.skipped}).`);
  } else {
    console.log(`## Case 6b: start-up in Chromium ${r.version} (fresh context per run, median of ${runs})\n`);
    show('browser', [
      [`entry (Chromium ${r.version}, fresh context per run, median of ${runs})`, 'await import() ms'],
      ...r.rows.map((x) => [x.name, fmt(x.importMs, 2)]),
    ]);
    console.log();
  }
}

if (want('rust')) {
  // What a Rust→wasm app pays: examples/rust-checkout/build.sh builds the example page and the same
  // page without steadfast, and prints the module, the baseline and the difference.
  console.log('## The Rust API: what steadfast adds to a Rust→wasm page (examples/rust-checkout/build.sh)\n');
  const r = spawnSync('bash', [join(ROOT, 'examples', 'rust-checkout', 'build.sh')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`bench: examples/rust-checkout/build.sh failed: ${r.stderr}`);
  const lines = r.stdout.split('\n').filter((l) => l.startsWith('rust-checkout: '));
  const sizes = lines.map((l) => /([\d.]+) KB raw, ([\d.]+) KB gzip -9$/.exec(l));
  if (lines.length !== 3 || sizes.some((m) => m === null)) throw new Error(`bench: unexpected build.sh output:\n${r.stdout}`);
  const rows = [['Rust→wasm page', 'raw', 'gzip -9']];
  const labels = [
    'the example page (retry, breaker, store and charge from the async API)',
    'the same page without steadfast (one plain fetch)',
    'what steadfast adds',
  ];
  sizes.forEach((m, i) => rows.push([labels[i], `${m[1]} KB`, `${m[2]} KB`]));
  show('rust', rows);
  console.log();
  if (report) {
    report.goal('a Rust→wasm app pays ≤ 20 KB gz for retry + breaker + store (what steadfast adds)', `${sizes[2][2]} KB`, Number(sizes[2][2]) <= 20);
  }
}

if (report) {
  const docs = ['performance.md', 'guarantees.md'].map((name) => join(ROOT, 'docs', name));
  report.write(docs);
  console.log(`bench: this run's tables are written into ${docs.join(' and ')}`);
}
