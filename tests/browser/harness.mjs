// Shared by tests/browser/*.test.mjs (not a test itself): throwaway consumer projects that install the
// PACKED tarball, a tiny static server on 127.0.0.1, the browser engines (headless Debian Chromium
// through playwright-core; Firefox and WebKit through W3C WebDriver, see webdriver.mjs), and an
// assertion counter so that a suite which ran nothing cannot pass.
//
// Engines: a test file whose header has a line `// engines: <names>` (e.g. `chromium firefox webkit`)
// runs once per engine named; scripts/test-browser.sh sets STEADFAST_ENGINE for each run (default
// chromium), and the file's tests name the engine. Files without that line are Chromium-only.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { launchWebDriver } from './webdriver.mjs';

const run = promisify(execFile);

export const ROOT = process.env.STEADFAST_ROOT ?? fileURLToPath(new URL('../..', import.meta.url));
export const OUT = join(ROOT, 'tests', '.out');
export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run through scripts/test-browser.sh (after 'make build')`);
  return value;
}

/** Counts assertions; `done(planned)` fails the test unless exactly that many ran. */
export function counter(label) {
  let n = 0;
  const wrap =
    (fn) =>
    (...args) => {
      fn(...args);
      n += 1;
    };
  return {
    equal: wrap(assert.equal),
    deepEqual: wrap(assert.deepEqual),
    ok: wrap(assert.ok),
    match: wrap(assert.match),
    get count() {
      return n;
    },
    done(planned) {
      assert.equal(n, planned, `${label}: ${n} assertions ran, ${planned} planned`);
      console.log(`${label}: ${n} assertions`);
    },
  };
}

/**
 * A fresh project under tests/.out/browser/<name>: package.json, the given files (fixtures copied by
 * name, or { path: contents }), and `npm install <tarball>`. Returns its absolute path.
 */
export async function makeConsumer(name, { copy = [], files = {} } = {}) {
  const tarball = required('STEADFAST_TARBALL');
  await stat(tarball).catch(() => {
    throw new Error(`tarball ${tarball} is missing: run 'make build'`);
  });
  const dir = join(OUT, 'browser', name);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: `consumer-${name}`, private: true, type: 'module' }, null, 2));
  for (const f of copy) await cp(join(FIXTURES, f), join(dir, f));
  for (const [path, contents] of Object.entries(files)) await writeFile(join(dir, path), contents);
  await run('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error', tarball], { cwd: dir });
  const pkg = join(dir, 'node_modules', 'steadfast', 'package.json');
  if (!existsSync(pkg)) throw new Error(`npm did not install steadfast into ${dir}/node_modules`);
  return dir;
}

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.map': 'application/json',
  '.ts': 'text/plain; charset=utf-8',
};

/**
 * Serves `root` on 127.0.0.1 (ephemeral port). GET/HEAD only, no directory listing ('/' → index.html),
 * nothing outside root. Every request is logged as { path, status, type } for assertions. Requests under
 * /api/ go to `api(req, body) → { status, headers?, body? }` when given (a stub backend for the page).
 */
export async function serve(root, { api } = {}) {
  const base = resolve(root);
  const requests = [];
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const log = (status, type = '') => requests.push({ path, status, type });
    if (api !== undefined && path.startsWith('/api/')) {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const answer = await api(req, Buffer.concat(chunks).toString('utf8'));
      log(answer.status, 'api');
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body === undefined ? undefined : JSON.stringify(answer.body));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      log(405);
      res.writeHead(405).end();
      return;
    }
    const file = normalize(join(base, path.endsWith('/') ? `${path}index.html` : path));
    if (file !== base && !file.startsWith(base + sep)) {
      log(403);
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      const type = MIME[extname(file)] ?? 'application/octet-stream';
      log(200, type);
      res.writeHead(200, { 'content-type': type, 'content-length': body.length, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch {
      log(404);
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  await new Promise((ok, fail) => server.once('error', fail).listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections();
        server.close(ok);
      }),
  };
}

/** The engine this run drives: STEADFAST_ENGINE = chromium (default) | firefox | webkit. */
export const ENGINE = process.env.STEADFAST_ENGINE || 'chromium';
export const ENGINE_LABEL = { chromium: 'Chromium', firefox: 'Firefox', webkit: 'WebKit' }[ENGINE];
if (ENGINE_LABEL === undefined) throw new Error(`STEADFAST_ENGINE must be chromium, firefox or webkit, got ${ENGINE}`);

/** The Chromium flags this project's machines need (see /work/shared/TOOLCHAIN.md). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * The browser of this run's ENGINE, with a fresh profile: { engine, label, version, page, problems,
 * newPage(), close() }. `page` is a Playwright page in Chromium and a Playwright-shaped WebDriverPage
 * in Firefox/WebKit (webdriver.mjs: the subset the suites use). `problems` collects page errors and
 * console errors/warnings (in WebDriver engines only those raised by page scripts: the protocol does
 * not report the browser's own network console messages).
 */
export async function launchBrowser(engine = ENGINE) {
  if (engine === 'chromium') return launchChromium();
  return launchWebDriver(engine);
}

/**
 * Headless Debian Chromium with a fresh --user-data-dir (launchPersistentContext: Playwright passes it
 * as --user-data-dir). Collects page errors and console errors. `close()` removes the profile.
 */
async function launchChromium() {
  const executablePath = required('STEADFAST_CHROMIUM');
  const profile = await mkdtemp(join(tmpdir(), 'steadfast-chromium-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 800, height: 600 },
      timeout: 30_000,
    });
  } catch (error) {
    await rm(profile, { recursive: true, force: true });
    throw new Error(`Chromium (${executablePath}) did not start: ${error.message}`);
  }
  const problems = [];
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()}`);
  });
  const version = context.browser()?.version() ?? (await page.evaluate(() => navigator.userAgent));
  return {
    engine: 'chromium',
    label: 'Chromium',
    context,
    page,
    problems,
    version,
    newPage: () => context.newPage(),
    async close() {
      await context.close().catch(() => {});
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Runs `node_modules/.bin/<bin>` of the repo root with args in cwd; returns { stdout, stderr }. */
export function runBin(bin, args, cwd) {
  return run(join(ROOT, 'node_modules', '.bin', bin), args, { cwd, maxBuffer: 16 * 1024 * 1024 });
}
