// `make soak`: the long runs behind docs/guarantees.md, one after another, each in its own process;
// with --write-docs their figures are written into that page's `<!-- soak:NAME:start -->` blocks
// (benches/report.mjs), so none of them is typed by hand and all of them come from one run.
//
//   node tests/soak/all.mjs [--write-docs] [--quick] [--only=soak,window,fuzz,load,listing,shared]
//
//   soak     100,000 logical charges over real HTTP with every fault on (run.mjs, soak.mjs)
//   window   the same soak, 1,000 charges, with the settle window disabled: what it would lose
//   fuzz     1,000,000 fuzz cases (tests/js/fuzz-*.test.mjs, FUZZ_RUNS)
//   load     100,000 concurrent chargeCustomer calls × 5 waves (load.mjs)
//   listing  1,000,000 unknown records listed from a real Redis (shared-redis-limits.test.mjs)
//   shared   the shared breaker and store across four processes, what waitReplicas costs, and the
//            failover soaks, 3 runs each (shared-redis.test.mjs, shared-redis-failover.test.mjs,
//            shared-redis-cluster.test.mjs): docs/guide/shared-state.md
//
// A part that fails (a doubled or lost charge, a fuzz failure, a leak, a failing test) fails the run, and a failed
// run writes nothing. --quick runs each part small, to try the driver; --quick and --only are refused
// with --write-docs (their figures would not be the page's).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { Report, markdownTable } from '../../benches/report.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const writeDocs = argv.includes('--write-docs');
const only = argv
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');
const PARTS = ['soak', 'window', 'fuzz', 'load', 'listing', 'shared'];
const unknownPart = only?.find((p) => !PARTS.includes(p));
if (unknownPart !== undefined) {
  console.error(`soak: unknown part ${JSON.stringify(unknownPart)}; parts: ${PARTS.join(', ')}`);
  process.exit(2);
}
if (writeDocs && (quick || only)) {
  console.error('soak: --write-docs needs the whole run (no --quick or --only)');
  process.exit(2);
}
const want = (part) => only === undefined || only.includes(part);
const size = {
  charges: quick ? 2_000 : 100_000,
  windowCharges: quick ? 500 : 1_000,
  fuzzRuns: quick ? 10_000 : 1_000_000,
  loadCalls: quick ? 10_000 : 100_000,
  loadRounds: quick ? 2 : 5,
  unknown: quick ? 20_000 : 1_000_000,
  failoverRuns: quick ? 1 : 3,
};

const n = (x) => x.toLocaleString('en-US');
const seconds = (ms) => (ms >= 120_000 ? `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s` : `${(ms / 1000).toFixed(1)} s`);
const mb = (b) => `${(b / 1048576).toFixed(1)} MB`;
/** `lo–hi`, or one figure when both read the same. */
const range = (lo, hi) => (lo === hi ? lo : `${lo}–${hi}`);

/** Run a child process, echoing its output as it comes; resolves with its status, stdout and wall time. */
function run(args, env = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      process.stdout.write(chunk);
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, out, ms: performance.now() - t0 }));
  });
}
/** The JSON a child printed on its last line that starts with `prefix`. */
function lastJson(out, prefix) {
  const line = out
    .split('\n')
    .filter((l) => l.startsWith(prefix))
    .pop();
  if (line === undefined) throw new Error(`soak: no "${prefix}" line in the output`);
  return JSON.parse(line.slice(prefix.length));
}

const version = JSON.parse(readFileSync(join(ROOT, 'tests', 'node_modules', 'steadfast', 'package.json'), 'utf8')).version;
const doc = new Report(version, { tag: 'soak', command: 'make soak' });
// What goes into the page is printed too, as it will read there.
const report = {
  add(name, text) {
    console.log(`\n[${name}] ${text}`);
    doc.add(name, text);
  },
  table(name, rows) {
    console.log(`\n[${name}]\n${markdownTable(rows)}`);
    doc.table(name, rows);
  },
};
const failures = [];

if (want('soak')) {
  console.log(`## soak: ${n(size.charges)} logical charges over real HTTP, every fault on\n`);
  const r = await run([join(HERE, 'run.mjs'), '--json', String(size.charges)]);
  const f = lastJson(r.out, 'soak-json ');
  if (r.status !== 0) failures.push('soak');
  const rows = [
    ['what', 'count'],
    ['logical charges (processed after the client gave up)', `${n(f.charges)} (${n(f.lateCharges)})`],
    ['HTTP attempts (retries)', `${n(f.httpAttempts)} (${n(f.retries)})`],
    ['succeeded (settled by reconciliation)', `${n(f.succeeded)} (${n(f.succeededViaReconcile)})`],
    ['declined', n(f.declined)],
    ['not charged', n(f.notCharged)],
    ['unknown before reconciliation', n(f.unknownBefore)],
    ['unknown after reconciliation', `**${n(f.unknownAfter)}**`],
    ['"failed" answers deferred inside the settle window, then found debited', n(f.deferred)],
    ['debited, dropped, then 401/404/409 from the front: charges (keys freed)', `${n(f.frontCharges)} (**${n(f.frontFreed)}**)`],
    ['double charges', `**${n(f.doubleCharges)}**`],
    ['lost charges', `**${n(f.lost)}**`],
    ['client total = ledger total', `${n(f.clientTotalCents)} ¢ ${f.clientTotalCents === f.ledgerTotalCents ? '=' : '≠'} ${n(f.ledgerTotalCents)} ¢`],
    ['retries after a 429 sooner than its Retry-After', `${n(f.retryAfter.violations)} of ${n(f.retryAfter.checked)}`],
    ['other errors', n(f.errors)],
  ];
  report.add(
    'soak',
    `${n(f.charges)} logical charges, ${f.concurrency} in flight, in ${seconds(f.wallMs)} (random seed ${f.seed}; the wall time is this machine's at the load the run header names):`,
  );
  report.table('soak', rows);
  console.log();
}

if (want('window')) {
  console.log(`## window: ${n(size.windowCharges)} charges with the settle window disabled\n`);
  const r = await run([join(HERE, 'run.mjs'), '--json', '--no-settle-window', String(size.windowCharges)]);
  const f = lastJson(r.out, 'soak-json ');
  // Losing charges is what this part shows; it fails only when the soak itself did not run through.
  if (f.doubleCharges !== 0 || f.errors !== 0) failures.push('window');
  report.add(
    'window',
    `With the window disabled (\`settleAfterMs: 0\`, ${n(f.charges)} charges, ${n(f.lateCharges)} of them processed after the client gave up): **${n(f.lost)} lost**, ${n(f.doubleCharges)} double charges.`,
  );
  console.log();
}

if (want('fuzz')) {
  console.log(`## fuzz: ${n(size.fuzzRuns)} cases\n`);
  const files = readdirSync(join(ROOT, 'tests', 'js'))
    .filter((f) => /^fuzz-.*\.test\.mjs$/.test(f))
    .map((f) => join('tests', 'js', f));
  const r = await run(['--test', '--test-reporter=spec', ...files], { FUZZ_RUNS: String(size.fuzzRuns) });
  const executed = [...r.out.matchAll(/^\s*fuzz (\S+): ([\d,]+) cases executed/gm)].reduce((t, m) => t + Number(m[2].replaceAll(',', '')), 0);
  const failed = Number(/^ℹ fail (\d+)/m.exec(r.out)?.[1] ?? NaN);
  if (r.status !== 0 || failed !== 0) failures.push('fuzz');
  report.add(
    'fuzz',
    `${n(executed)} cases (\`FUZZ_RUNS=${size.fuzzRuns}\`, ${files.length} files) in ${seconds(r.ms)}: ${Number.isNaN(failed) ? 'no summary' : `${failed} failures`}.`,
  );
  console.log();
}

if (want('load')) {
  console.log(`## load: ${n(size.loadCalls)} concurrent calls × ${size.loadRounds} waves\n`);
  const r = await run(['--expose-gc', join(HERE, 'load.mjs'), '--json', String(size.loadCalls), String(size.loadRounds)]);
  const l = JSON.parse(r.out.trim().split('\n').pop());
  const leaked = l.results.some((x) => x.completed !== x.calls || x.sizeAfterExpiry !== 0);
  const grew = l.results.slice(1).some((x) => x.wasmAfter > l.results[0].wasmAfter);
  if (r.status !== 0 || leaked || grew) failures.push('load');
  const ms = l.results.map((x) => x.ms);
  const heaps = l.results.map((x) => x.heapAfter);
  report.add(
    'load',
    `${n(size.loadCalls)} concurrent calls × ${l.results.length} waves: ${l.results.every((x) => x.completed === x.calls) ? 'every call completed' : 'NOT every call completed'}, ` +
      `${range((Math.min(...ms) / 1000).toFixed(2), (Math.max(...ms) / 1000).toFixed(2))} s a wave; records left after expiry ${Math.max(...l.results.map((x) => x.sizeAfterExpiry))}; ` +
      `JS heap after GC ${range(mb(Math.min(...heaps)), mb(Math.max(...heaps)))} (${mb(l.baseline.heap)} before the first wave); ` +
      `wasm memory ${mb(l.results[0].wasmAfter)} after the first wave and ${grew ? 'grown after it' : 'not grown after it'} (${mb(l.baseline.wasm)} before).`,
  );
  console.log();
}

if (want('listing')) {
  console.log(`## listing: ${n(size.unknown)} unknown records in a real Redis\n`);
  const figures = join(ROOT, 'tests', '.out', 'shared-figures.json');
  rmSync(figures, { force: true });
  const r = await run(['--test', '--test-reporter=spec', '--test-name-pattern=paged', join('tests', 'js', 'shared-redis-limits.test.mjs')], {
    UNKNOWN_N: String(size.unknown),
  });
  const u = existsSync(figures) ? JSON.parse(readFileSync(figures, 'utf8')).unknownListing : undefined;
  if (r.status !== 0 || u === undefined) failures.push('listing');
  else {
    report.add(
      'listing',
      `**${n(u.unknown)} unknown records in ${n(u.calls)} script calls, per call median ${u.medianCallMs} ms, max ${u.maxCallMs} ms** (Redis SLOWLOG; ${seconds(u.totalMs)} in total).`,
    );
  }
  console.log();
}

if (want('shared')) {
  console.log('## shared: one breaker and one store across four processes, over a real Redis\n');
  const figures = join(ROOT, 'tests', '.out', 'shared-figures.json');
  rmSync(figures, { force: true });
  const a = await run(['--test', '--test-reporter=spec', join('tests', 'js', 'shared-redis.test.mjs')]);
  const b = await run([
    '--test',
    '--test-reporter=spec',
    '--test-name-pattern=the cost of waitReplicas',
    join('tests', 'js', 'shared-redis-failover.test.mjs'),
  ]);
  // The failover soaks (300 keys, two processes, a primary killed mid-soak, then every key
  // retried), each run anew: how many keys a promotion debits twice without the durability mode,
  // and that waitReplicas: 1 debits none. Each test asserts its own outcome; this counts.
  const soaks = [];
  for (let i = 0; i < size.failoverRuns; i += 1) {
    for (const [file, pattern] of [
      ['shared-redis-failover.test.mjs', 'promoted mid-soak'],
      ['shared-redis-cluster.test.mjs', 'killed mid-soak'],
    ]) {
      const r = await run(['--test', '--test-reporter=spec', `--test-name-pattern=${pattern}`, join('tests', 'js', file)]);
      if (r.status !== 0) failures.push(`shared (${file})`);
      for (const m of r.out.matchAll(/primary\+replica (no durability mode|waitReplicas: 1): (\{.*\})$/gm))
        soaks.push({ at: 'pair', durable: m[1] !== 'no durability mode', ...JSON.parse(m[2]) });
      for (const m of r.out.matchAll(/cluster failover \(waitReplicas (\d)\): (\{.*\})$/gm))
        soaks.push({ at: 'cluster', durable: m[1] === '1', ...JSON.parse(m[2]) });
    }
  }
  const f = existsSync(figures) ? JSON.parse(readFileSync(figures, 'utf8')) : {};
  const cost = [...b.out.matchAll(/cost: (\{.*\})$/gm)].map((m) => JSON.parse(m[1]));
  const adapters = ['node-redis', 'ioredis'];
  const complete = adapters.every((x) => ['trip', 'probe', 'race', 'killed', 'outage'].every((k) => f[`${x}.${k}`] !== undefined));
  const FAILOVER = [
    ['pair', false, 'primary + replica 50 ms behind, promotion, no durability mode'],
    ['pair', true, 'primary + replica 50 ms behind, promotion, `waitReplicas: 1`'],
    ['cluster', false, 'Cluster, 3 primaries + 3 replicas 200 ms behind, no durability mode'],
    ['cluster', true, 'Cluster, 3 primaries + 3 replicas 200 ms behind, `waitReplicas: 1`'],
  ].map(([at, durable, label]) => ({ label, runs: soaks.filter((x) => x.at === at && x.durable === durable) }));
  const failoverComplete = FAILOVER.every((row) => row.runs.length === size.failoverRuns);
  if (a.status !== 0 || b.status !== 0 || !complete || f.twin === undefined || cost.length !== 4 || !failoverComplete) failures.push('shared');
  else {
    const per = (pick) => adapters.map((x) => pick(Object.fromEntries(['trip', 'probe', 'race', 'killed', 'outage'].map((k) => [k, f[`${x}.${k}`]]))));
    const latency = (o) => `median ${o.median} ms, max ${o.max} ms`;
    report.table('shared', [
      ['scenario', ...adapters],
      ['trip → every process fails fast (4 processes), slowest process', ...per((g) => `${g.trip.maxPropagationMs} ms`)],
      ['one fast-failing call (one round trip), slowest', ...per((g) => `${g.trip.fastFailMs} ms`)],
      ['calls that reached the dead dependency before all failed fast (window 20; per-process breakers: up to 80)', ...per((g) => String(g.trip.calls))],
      ['half-open: 100 concurrent calls in 4 processes after the cooldown, probes per round', ...per((g) => g.probe.probes.join(', '))],
      ['2 processes racing one key', ...per((g) => `${g.race.races} races, ${g.race.gatewayCalls} gateway calls, ${g.race.refused} refused in flight`)],
      [
        'process SIGKILLed mid-charge (the gateway debited)',
        ...per((g) => `${g.killed.refusedInFlight} refused (in flight), then ${g.killed.refusedUnknown} refused (unknown); ${g.killed.debits} debit`),
      ],
      ['Redis hung (SIGSTOP), settled in', ...per((g) => `${latency(g.outage.hungMs)} (\`timeoutMs\` ${g.outage.timeoutMs})`)],
      ['Redis dead (killed), settled in', ...per((g) => latency(g.outage.deadMs))],
    ]);
    report.add(
      'shared',
      `The Lua twin against the wasm core: ${n(f.twin.steps)} operations on ${f.twin.breakers} breakers (${f.twin.trips} trips), identical answers.`,
    );
    const spread = (runs, pick) => range(Math.min(...runs.map(pick)), Math.max(...runs.map(pick)));
    report.table('failover', [
      ['deployment', 'runs', 'keys debited twice (of 300)', 'debited keys forgotten', 'keys debited', 'refusals, by code (summed)'],
      ...FAILOVER.map(({ label, runs }) => {
        const codes = {};
        for (const r of runs) for (const [code, count] of Object.entries(r.codes)) codes[code] = (codes[code] ?? 0) + count;
        const refusals = Object.entries(codes)
          .sort((x, y) => y[1] - x[1])
          .map(([code, count]) => `${code} ${n(count)}`)
          .join(', ');
        return [
          label,
          String(runs.length),
          String(spread(runs, (r) => r.doubles)),
          String(spread(runs, (r) => r.forgotten)),
          String(spread(runs, (r) => r.debited)),
          refusals,
        ];
      }),
    ]);
    const lag = (ms) => (ms === 0 ? 'on time' : `${ms} ms behind`);
    report.table('durability', [
      ['replica link', '`waitReplicas`', 'one charge alone (median of 30)', 'under load (median of 300)', 'throughput'],
      ...cost.map((r) => [lag(r.lagMs), String(r.waitReplicas), `${r.aloneMedianMs} ms`, `${r.underLoadMedianMs} ms`, `${n(r.chargesPerSecond)} charges/s`]),
    ]);
  }
  console.log();
}

if (failures.length > 0) {
  console.error(`soak: FAILED: ${failures.join(', ')}${writeDocs ? ' (docs/guarantees.md not written)' : ''}`);
  process.exit(1);
}
if (writeDocs) {
  const docs = [join(ROOT, 'docs', 'guarantees.md'), join(ROOT, 'docs', 'guide', 'shared-state.md')];
  doc.write(docs);
  console.log(`soak: this run's figures are written into ${docs.join(' and ')}`);
} else console.log('soak: OK');
