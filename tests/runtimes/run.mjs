// The same small program (program.js: retry over 503s, an open breaker, a replayed chargeCustomer,
// resilientFetch) run from the PACKED TARBALL, installed with npm as a user would, in every host the
// package claims: Deno (with --allow-read, and without it: a typed error naming the permission), Bun,
// a `bun build --compile` executable moved away from node_modules, a Cloudflare Worker (wrangler dev:
// wrangler's bundle served by workerd, locally), and a Next.js app built by Turbopack and by webpack
// and served by `next start` (a client component loaded in headless Chromium, a Node route, an edge
// route). Every server listens on 127.0.0.1 only. Run by scripts/test-runtimes.sh, which installs the
// runtimes (tools.json) into STEADFAST_RUNTIMES and sets the variables read below. connect.mjs: a
// refused connection and a reset after connecting, from Deno's (and Bun's) own fetch, with Node as the
// reference. faults.js: the fault matrix (refused, unresolvable name, reset after the request, a body
// cut off three ways, no answer, a reset before the body was read) met by each runtime's own fetch,
// through resilientFetch, a checkout client and chargeCustomer, in Node, Deno, Bun, workerd and
// Next.js's Node and edge routes; each runtime's raw error is printed with its verdict.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { launchBrowser } from '../browser/harness.mjs';
import { startServer } from './server.mjs';
import { freePort } from '../shared/redis-server.mjs';

const exec = promisify(execFile);
const HERE = fileURLToPath(new URL('.', import.meta.url));

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run through scripts/test-runtimes.sh (after 'make build')`);
  return value;
}
const TARBALL = required('STEADFAST_TARBALL');
const TOOLS = required('STEADFAST_RUNTIMES');
const APPS = join(TOOLS, 'apps');
const DENO = join(TOOLS, 'node_modules', '@deno', 'linux-x64-glibc', 'deno');
const BUN = join(TOOLS, 'node_modules', '@oven', 'bun-linux-x64', 'bin', 'bun');
const bin = (name) => join(TOOLS, 'node_modules', '.bin', name);

/** What every child gets: no telemetry, no update checks, caches inside the tool directory. */
const ENV = {
  ...process.env,
  DENO_DIR: join(TOOLS, 'cache', 'deno'),
  DENO_NO_UPDATE_CHECK: '1',
  BUN_INSTALL: join(TOOLS, 'cache', 'bun'),
  BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0',
  WRANGLER_SEND_METRICS: 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false', // no download of the Request.cf object: the placeholder is fine
  XDG_CONFIG_HOME: join(TOOLS, 'cache', 'config'),
  WRANGLER_LOG_PATH: join(TOOLS, 'cache', 'wrangler-logs'),
  NEXT_TELEMETRY_DISABLED: '1',
  STEADFAST_RUNTIMES: TOOLS,
  CI: '1',
};

const server = await startServer();
const children = new Set();
after(async () => {
  for (const child of children) stopGroup(child);
  await server.close();
});

let checksPassed = 0;
/** Asserts every check of one run and prints it; returns how many passed. */
function expectChecks(result, label, planned) {
  assert.equal(result.label, label, `the result is ${label}'s`);
  for (const c of result.checks) console.log(`runtimes: ${label.padEnd(16)} ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
  const failed = result.checks.filter((c) => !c.ok);
  assert.deepEqual(failed, [], `${label}: every check passes`);
  assert.equal(result.checks.length, planned, `${label}: ${planned} checks ran`);
  checksPassed += planned;
}

/** The last line of `stdout` that parses as JSON. */
function lastJson(stdout, what) {
  const line = stdout
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  if (line === undefined) throw new Error(`${what} printed no result:\n${stdout}`);
  return JSON.parse(line);
}

async function run(file, args, options = {}) {
  try {
    return await exec(file, args, { env: ENV, maxBuffer: 32 * 1024 * 1024, timeout: 300_000, ...options });
  } catch (e) {
    throw new Error(`${file} ${args.join(' ')} failed (${e.code ?? e.signal}):\n${e.stdout}\n${e.stderr}`);
  }
}

/** A fresh app directory under the tool cache with `files` (paths under tests/runtimes) and the tarball installed by npm. */
async function makeApp(name, files, packageJson = { type: 'module' }) {
  const dir = join(APPS, name);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  for (const [from, to] of files) await cp(join(HERE, from), join(dir, to), { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: `steadfast-${name}`, private: true, ...packageJson }, null, 2));
  await run('npm', ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', TARBALL], { cwd: dir });
  return dir;
}

function stopGroup(child) {
  children.delete(child);
  if (child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid, 'SIGTERM'); // its own process group: the server and what it started
    } catch {
      // already gone
    }
  }
}

/** Start a server process in its own process group; resolves once `url` answers 200. */
async function startServing(file, args, cwd, url, what) {
  const child = spawn(file, args, { cwd, env: ENV, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}) before serving:\n${output}`);
    const r = await fetch(url).catch(() => undefined);
    if (r?.status === 200) return { child, response: await r.json(), output: () => output };
    if (Date.now() > deadline) {
      stopGroup(child);
      throw new Error(`${what} did not serve ${url} within 120 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** faults.js's checks: 8 faults, each met by the host's fetch, resilientFetch, the checkout client and chargeCustomer. */
const FAULT_CHECKS = 32;

/** Prints what each fault gave the host's own fetch, and the verdict it must have; then asserts the checks. */
function expectFaults(result, label) {
  for (const s of result.shapes ?? []) {
    console.log(`runtimes: ${label.padEnd(16)} raw  ${s.fault} → ${s.stage}${s.status === undefined ? '' : ` HTTP ${s.status}`}: ${s.error} → ${s.expected}`);
  }
  expectChecks(result, label, FAULT_CHECKS);
}

const versions = {};
const PLAIN = [
  ['program.js', 'program.js'],
  ['cli.mjs', 'cli.mjs'],
  ['deno-no-read.mjs', 'deno-no-read.mjs'],
  ['connect.mjs', 'connect.mjs'],
  ['faults.js', 'faults.js'],
  ['faults-cli.mjs', 'faults-cli.mjs'],
];

test('Deno: with --allow-read it runs; without, a typed error names the permission', { timeout: 300_000 }, async () => {
  versions.deno = (await run(DENO, ['--version'])).stdout.split('\n')[0];
  const dir = await makeApp('deno', PLAIN);
  const ok = await run(DENO, ['run', '--allow-net=127.0.0.1', '--allow-read', 'cli.mjs', server.base, 'deno'], { cwd: dir });
  expectChecks(lastJson(ok.stdout, 'deno'), 'deno', 5);
  const refused = await run(DENO, ['run', '--allow-net=127.0.0.1', 'deno-no-read.mjs', server.base], { cwd: dir });
  expectChecks(lastJson(refused.stdout, 'deno (no --allow-read)'), 'deno-no-read', 2);
});

test('Deno: a refused connection was not sent (free key), a reset after connecting is unknown, as in Node', { timeout: 300_000 }, async () => {
  const dir = join(APPS, 'deno'); // made by the test above
  const closed = String(await freePort()); // bound and released: nobody listens there
  // Node first, the reference: its refused connection carries ECONNREFUSED, Deno's only words.
  const node = await run(process.execPath, ['connect.mjs', server.base, closed, 'node-connect'], { cwd: dir });
  expectChecks(lastJson(node.stdout, 'node connect.mjs'), 'node-connect', 5);
  const deno = await run(DENO, ['run', '--allow-net=127.0.0.1', '--allow-read', 'connect.mjs', server.base, closed, 'deno-connect'], { cwd: dir });
  expectChecks(lastJson(deno.stdout, 'deno connect.mjs'), 'deno-connect', 5);
});

test('Fault matrix in Node (the reference) and Deno: only a failure that proves nothing was sent frees the key', { timeout: 300_000 }, async () => {
  const dir = join(APPS, 'deno'); // made by the first test
  const closed = String(await freePort());
  const node = await run(process.execPath, ['faults-cli.mjs', server.base, closed, 'node-faults'], { cwd: dir });
  expectFaults(lastJson(node.stdout, 'node faults-cli.mjs'), 'node-faults');
  const net = '--allow-net=127.0.0.1,nonexistent.invalid'; // the unresolvable name too: else a permission error
  const deno = await run(DENO, ['run', net, '--allow-read', 'faults-cli.mjs', server.base, closed, 'deno-faults'], { cwd: dir });
  expectFaults(lastJson(deno.stdout, 'deno faults-cli.mjs'), 'deno-faults');
});

test('Bun: bun run (and connect.mjs), and a bun build --compile executable away from node_modules', { timeout: 300_000 }, async () => {
  versions.bun = `bun ${(await run(BUN, ['--version'])).stdout.trim()}`;
  const dir = await makeApp('bun', PLAIN);
  expectChecks(lastJson((await run(BUN, ['cli.mjs', server.base, 'bun'], { cwd: dir })).stdout, 'bun'), 'bun', 5);
  const closed = String(await freePort());
  expectChecks(lastJson((await run(BUN, ['connect.mjs', server.base, closed, 'bun-connect'], { cwd: dir })).stdout, 'bun connect.mjs'), 'bun-connect', 5);
  expectFaults(lastJson((await run(BUN, ['faults-cli.mjs', server.base, closed, 'bun-faults'], { cwd: dir })).stdout, 'bun faults-cli.mjs'), 'bun-faults');
  // The executable runs from an empty directory: the wasm must be inside it, not next to it.
  const away = await mkdtemp(join(tmpdir(), 'steadfast-bun-compiled-'));
  try {
    const exe = join(away, 'steadfast-app');
    await run(BUN, ['build', '--compile', 'cli.mjs', '--outfile', exe], { cwd: dir });
    await rm(join(dir, 'node_modules'), { recursive: true, force: true });
    expectChecks(lastJson((await run(exe, [server.base, 'bun-compiled'], { cwd: away })).stdout, 'bun --compile'), 'bun-compiled', 5);
  } finally {
    await rm(away, { recursive: true, force: true });
  }
});

test('Cloudflare Workers: wrangler dev (workerd, local), no init() in the worker; the fault matrix', { timeout: 300_000 }, async () => {
  versions.wrangler = `wrangler ${(await run(bin('wrangler'), ['--version'])).stdout.trim().split('\n').pop()}`;
  const dir = await makeApp('workerd', [
    ['program.js', 'program.js'],
    ['faults.js', 'faults.js'],
    ['workerd/worker.mjs', 'worker.mjs'],
    ['workerd/wrangler.json', 'wrangler.json'],
  ]);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/?base=${encodeURIComponent(server.base)}`;
  const served = await startServing(bin('wrangler'), ['dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn'], dir, url, 'wrangler dev');
  try {
    expectChecks(served.response, 'workerd', 5);
    const faults = `http://127.0.0.1:${port}/faults?base=${encodeURIComponent(server.base)}&closed=${await freePort()}`;
    expectFaults(await (await fetch(faults)).json(), 'workerd-faults');
  } finally {
    stopGroup(served.child);
  }
});

// webpack without the edge route: Next.js 16.4's webpack build fails on ANY edge route handler (an
// empty one too: "route_client-reference-manifest.js: ENOENT"), so only Turbopack (the default) can
// prove the `edge-light` entry.
for (const [bundler, edge] of [
  ['turbopack', true],
  ['webpack', false],
]) {
  test(`Next.js (${bundler}): client component in Chromium, Node route${edge ? ', edge route' : ''}; the fault matrix`, { timeout: 600_000 }, async () => {
    const dir = await makeApp(`next-${bundler}`, [
      ['program.js', 'program.js'],
      ['faults.js', 'faults.js'],
      ['next/handler.js', 'handler.js'],
      ['next/app/layout.js', 'app/layout.js'],
      ['next/app/page.js', 'app/page.js'],
      ['next/app/api/node', 'app/api/node'],
      ...(edge ? [['next/app/api/edge', 'app/api/edge']] : []),
      ['next/next.config.mjs', 'next.config.mjs'],
    ]);
    const build = await run(bin('next'), ['build', `--${bundler}`], { cwd: dir });
    versions.next = build.stdout.match(/Next\.js [\d.]+/)?.[0] ?? 'Next.js';
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const base = encodeURIComponent(server.base);
    const served = await startServing(bin('next'), ['start', '-H', '127.0.0.1', '-p', String(port)], dir, `${origin}/api/node?base=${base}`, 'next start');
    try {
      expectChecks(served.response, 'next-node', 5);
      if (edge) expectChecks(await (await fetch(`${origin}/api/edge?base=${base}`)).json(), 'next-edge', 5);
      const closed = await freePort();
      expectFaults(await (await fetch(`${origin}/api/node/faults?base=${base}&closed=${closed}`)).json(), 'next-node-faults');
      if (edge) expectFaults(await (await fetch(`${origin}/api/edge/faults?base=${base}&closed=${closed}`)).json(), 'next-edge-faults');
      const browser = await launchBrowser('chromium');
      try {
        versions.chromium = `Chromium ${browser.version}`;
        await browser.page.goto(`${origin}/?base=${base}`);
        await browser.page.waitForSelector('#result[data-done="yes"]', { timeout: 60_000 });
        expectChecks(JSON.parse(await browser.page.textContent('#result')), 'next-client', 5);
        const errors = browser.problems.filter((p) => p.startsWith('pageerror'));
        assert.deepEqual(errors, [], 'no uncaught error on the page');
      } finally {
        await browser.close();
      }
    } finally {
      stopGroup(served.child);
    }
  });
}

test('summary', () => {
  assert.ok(checksPassed > 0, 'some checks ran');
  console.log(`runtimes: ${checksPassed} checks passed (${Object.values(versions).join(', ')})`);
});
