// Case 6: start-up. Node: spawn a cold process N times per library, interleaved, and take the
// median of (a) the in-process `await import(name)` time and (b) the whole process wall time minus a
// bare `node -e ''`. Chromium (optional, `--browser`): playwright-core driving /usr/bin/chromium, a
// fresh context per run (cold HTTP cache), timing `await import()` of the package's browser entry,
// which fetches and instantiates the .wasm.
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, extname, normalize } from 'node:path';
import { BENCH_DIR, INSTALLED, median } from './common.mjs';

const IMPORT = (spec) => `const t = performance.now(); await import(${JSON.stringify(spec)}); process.stdout.write(String(performance.now() - t));`;

export function nodeStartup(runs) {
  const libs = ['steadfast', 'cockatiel', 'opossum', 'p-retry'];
  const samples = Object.fromEntries(['(bare node)', ...libs].map((k) => [k, { imp: [], wall: [] }]));
  for (let r = 0; r < runs; r++) {
    for (const name of ['(bare node)', ...libs]) {
      const t0 = process.hrtime.bigint();
      const res = spawnSync(process.execPath, ['--input-type=module', '-e', name === '(bare node)' ? '' : IMPORT(name)], {
        cwd: BENCH_DIR,
        encoding: 'utf8',
      });
      const wall = Number(process.hrtime.bigint() - t0) / 1e6;
      if (res.status !== 0) throw new Error(`startup: ${name} failed: ${res.stderr}`);
      samples[name].wall.push(wall);
      if (name !== '(bare node)') samples[name].imp.push(Number(res.stdout));
    }
  }
  const bare = median(samples['(bare node)'].wall);
  return libs.map((name) => ({ name, importMs: median(samples[name].imp), wallMs: median(samples[name].wall) - bare, bareMs: bare }));
}

const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };

export async function browserStartup(runs) {
  const chromium = process.env.STEADFAST_CHROMIUM || '/usr/bin/chromium';
  if (!existsSync(chromium)) return { skipped: `no Chromium at ${chromium}` };
  let playwright;
  try {
    playwright = await import('playwright-core');
  } catch {
    return { skipped: 'playwright-core is not installed' };
  }
  const roots = { '/steadfast/': INSTALLED, '/out/': join(BENCH_DIR, '.out') };
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>bench</title>');
      return;
    }
    const prefix = Object.keys(roots).find((p) => url.pathname.startsWith(p));
    const file = prefix && normalize(join(roots[prefix], url.pathname.slice(prefix.length)));
    if (!file || !file.startsWith(roots[prefix])) return void res.writeHead(404).end();
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  // playwright's launch() already uses a fresh temporary profile (it refuses --user-data-dir).
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
  const browser = await playwright.chromium.launch({ executablePath: chromium, args, headless: true });
  const version = browser.version();
  const entries = {
    'steadfast (unbundled: ~20 modules + .wasm)': '/steadfast/index.browser.js',
    'steadfast (bundled min + .wasm)': '/out/steadfast.min.js',
    'cockatiel (bundled min)': '/out/cockatiel.min.js',
    'p-retry (bundled min)': '/out/p-retry.min.js',
  };
  const samples = Object.fromEntries(Object.keys(entries).map((k) => [k, []]));
  try {
    for (let r = 0; r < runs; r++) {
      for (const [name, path] of Object.entries(entries)) {
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(`${base}/`);
        const ms = await page.evaluate(async (src) => {
          const t = performance.now();
          await import(src);
          return performance.now() - t;
        }, `${base}${path}`);
        samples[name].push(ms);
        await context.close();
      }
    }
  } finally {
    await browser.close();
    server.close();
  }
  return { version, rows: Object.entries(samples).map(([name, s]) => ({ name, importMs: median(s) })) };
}
