// The README's bundler notes, tested: the same strict-CSP checkout page (script-src 'self'
// 'wasm-unsafe-eval', sent as a header) built from the packed tarball by webpack 5, Rollup 4 (with
// @web/rollup-plugin-import-meta-assets) and esbuild (minified; the .wasm copied next to the bundle),
// each loaded in headless Chromium: the core loads, a breaker works, and error names survive each
// production build. (Vite: vite.test.mjs and csp.test.mjs.)
import { test } from 'node:test';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { copyFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { counter, makeConsumer, serve, launchBrowser, runBin } from './harness.mjs';

const run = promisify(execFile);
const POLICY = "default-src 'self'; img-src 'self' data:; script-src 'self' 'wasm-unsafe-eval'";

const MAIN = `import { ready, CircuitBreaker, CircuitOpenError, isSteadfastError } from 'steadfast';
document.querySelector('#rendered').textContent = 'The page rendered';
const core = document.querySelector('#core');
ready.then(
  async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
    const first = await breaker.execute(() => 'charged');
    await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => {});
    const refused = await breaker.execute(() => 'never').catch((e) => e);
    core.textContent = first;
    core.dataset.name = refused.name;
    core.dataset.instance = String(refused instanceof CircuitOpenError && isSteadfastError(refused, 'CIRCUIT_OPEN'));
    core.dataset.state = 'ready';
  },
  (error) => {
    core.textContent = error.message;
    core.dataset.state = 'failed';
  },
);
`;
const html = (script) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8" /><title>bundled checkout</title><link rel="icon" href="data:," /></head>
<body><p id="rendered"></p><p id="core" data-state="pending"></p>${script}</body></html>
`;

const WEBPACK = `import webpack from 'webpack';
webpack({
  mode: 'production',
  target: 'web',
  entry: './main.js',
  output: { path: new URL('./dist', import.meta.url).pathname, filename: 'main.js', publicPath: 'auto', clean: true },
}, (error, stats) => {
  if (error || stats.hasErrors()) { console.error(error ?? stats.toString('errors-only')); process.exit(1); }
});
`;
const ROLLUP = `import { rollup } from 'rollup';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { importMetaAssets } from '@web/rollup-plugin-import-meta-assets';
const bundle = await rollup({ input: 'main.js', plugins: [nodeResolve({ browser: true }), importMetaAssets()] });
await bundle.write({ dir: 'dist', format: 'es', entryFileNames: 'main.js' });
`;

const BUILDS = {
  webpack: {
    deps: ['webpack@5.113.0'],
    files: { 'build.mjs': WEBPACK },
    build: (dir) => run(process.execPath, ['build.mjs'], { cwd: dir }),
    script: '<script src="./main.js"></script>',
  },
  rollup: {
    deps: ['rollup@4.68.8', '@rollup/plugin-node-resolve@16.0.3', '@web/rollup-plugin-import-meta-assets@2.3.3'],
    files: { 'build.mjs': ROLLUP },
    build: (dir) => run(process.execPath, ['build.mjs'], { cwd: dir }),
    script: '<script type="module" src="./main.js"></script>',
  },
  esbuild: {
    deps: [],
    files: {},
    build: async (dir) => {
      await runBin(
        'esbuild',
        ['main.js', '--bundle', '--minify', '--format=esm', '--platform=browser', '--target=es2022', '--outfile=dist/main.js', '--log-level=warning'],
        dir,
      );
      // esbuild keeps new URL('./steadfast_core_bg.wasm', import.meta.url) as is: ship the file next to the bundle.
      await copyFile(join(dir, 'node_modules/steadfast/steadfast_core_bg.wasm'), join(dir, 'dist/steadfast_core_bg.wasm'));
    },
    script: '<script type="module" src="./main.js"></script>',
  },
};

for (const [name, b] of Object.entries(BUILDS)) {
  test(`${name}: a production build loads the core under the documented CSP`, { timeout: 180_000 }, async (t) => {
    const check = counter(name);
    const app = await makeConsumer(`bundler-${name}`, { files: { 'main.js': MAIN, ...b.files } });
    if (b.deps.length > 0) {
      await run('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error', ...b.deps], { cwd: app });
    }
    await mkdir(join(app, 'dist'), { recursive: true });
    await b.build(app).catch((error) => {
      throw new Error(`${name} build failed:\n${error.stdout ?? ''}\n${error.stderr ?? error.message}`);
    });
    await writeFile(join(app, 'dist', 'index.html'), html(b.script));
    const files = await readdir(join(app, 'dist'), { recursive: true });
    check.ok(
      files.some((f) => f.endsWith('.wasm')),
      `${name} put a .wasm in dist: ${files.join(', ')}`,
    );

    const server = await serve(join(app, 'dist'));
    const browser = await launchBrowser();
    try {
      await browser.context.route('**/*', async (route) => {
        const response = await route.fetch();
        await route.fulfill({ response, headers: { ...response.headers(), 'content-security-policy': POLICY } });
      });
      await browser.page.goto(`${server.url}/`, { waitUntil: 'load' });
      await browser.page.waitForSelector('#core[data-state="ready"], #core[data-state="failed"]', { timeout: 15_000 });
      const shown = await browser.page.evaluate(() => ({
        rendered: document.querySelector('#rendered').textContent,
        ...document.querySelector('#core').dataset,
        text: document.querySelector('#core').textContent,
      }));
      t.diagnostic(JSON.stringify(shown));
      check.equal(shown.rendered, 'The page rendered');
      check.equal(shown.state, 'ready', `${name}: the core loaded (${shown.text})`);
      check.equal(shown.text, 'charged');
      check.equal(shown.name, 'CircuitOpenError', `${name}: the error name survives the production build`);
      check.equal(shown.instance, 'true');
      check.deepEqual(browser.problems, [], `${name}: no page or console errors`);
      check.ok(
        server.requests.some((r) => r.path.endsWith('.wasm') && r.status === 200 && r.type === 'application/wasm'),
        'the .wasm was served as application/wasm',
      );
    } finally {
      await browser.close();
      await server.close();
    }
    check.done(8);
  });
}
