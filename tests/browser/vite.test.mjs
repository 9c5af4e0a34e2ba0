// engines: chromium firefox webkit
// A Vite app consuming the packed tarball: `import { ... } from 'steadfast'` in a checkout page, built
// with `vite build` (vite 8 from the root devDependencies, default build target), served from a static
// server on 127.0.0.1 and paid for in each engine (see harness.mjs). Screenshot: tests/.out/browser-vite-<engine>.png.
import { test } from 'node:test';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { counter, makeConsumer, serve, launchBrowser, runBin, FIXTURES, ENGINE, ENGINE_LABEL } from './harness.mjs';
import { payTwice, checkWasmServed } from './checkout-page.mjs';

test(`${ENGINE_LABEL}: Vite build of a checkout page: retried charge with one key, replay`, { timeout: 120_000 }, async (t) => {
  const check = counter(`vite ${ENGINE}`);
  const app = await makeConsumer('vite-app', { copy: ['index.html', 'checkout.js'] });

  const built = await runBin('vite', ['build'], app).catch((error) => {
    throw new Error(`vite build failed:\n${error.stdout}\n${error.stderr}`);
  });
  t.diagnostic(
    built.stdout
      .trim()
      .split('\n')
      .filter((l) => l.includes('dist/'))
      .join('\n'),
  );
  const assets = await readdir(join(app, 'dist', 'assets'));
  const wasm = assets.filter((f) => f.endsWith('.wasm'));
  const js = assets.filter((f) => f.endsWith('.js'));
  check.equal(wasm.length, 1, `Vite emitted the .wasm as an asset: ${assets.join(', ')}`);
  check.equal(js.length, 1, `one JS chunk: ${assets.join(', ')}`);
  const bundle = await readFile(join(app, 'dist', 'assets', js[0]), 'utf8');
  check.ok(!/node:fs|readFileSync/.test(bundle), 'the bundle took the browser entry, not the Node loader');
  check.ok(bundle.includes(wasm[0]), 'the bundle points at the emitted .wasm');

  const server = await serve(join(app, 'dist'));
  const browser = await launchBrowser();
  try {
    t.diagnostic(`${browser.label} ${browser.version}, ${server.url}`);
    const { screenshot } = await payTwice(browser, `${server.url}/`, check, `browser-vite-${ENGINE}`);
    t.diagnostic(`screenshot: ${screenshot}`);
    checkWasmServed(server, check);
    check.deepEqual(browser.problems, [], 'no page errors, console errors or warnings');
  } finally {
    await browser.close();
    await server.close();
  }
  check.done(19);
});

// Vite bundles workers as IIFE by default, and IIFE cannot hold the browser loader's top-level await
// ("[INVALID_TLA_FORMAT] Module format "iife" does not support top-level await"): a Vite app that runs
// steadfast in a worker needs `worker: { format: 'es' }` (the npm README says so). This proves that works.
test(`${ENGINE_LABEL}: Vite build of a module worker (worker.format es): charges and replays without window`, { timeout: 120_000 }, async (t) => {
  const check = counter(`vite worker ${ENGINE}`);
  const worker = (await readFile(join(FIXTURES, 'worker.js'), 'utf8')).replace("'/node_modules/steadfast/index.browser.js'", "'steadfast'");
  const html = (await readFile(join(FIXTURES, 'worker.html'), 'utf8')).replace(
    "new Worker('./worker.js', { type: 'module' })",
    "new Worker(new URL('./worker.js', import.meta.url), { type: 'module' })",
  );
  check.ok(worker.includes("from 'steadfast'") && html.includes('import.meta.url'), 'fixtures rewritten for Vite');
  const app = await makeConsumer('vite-worker', {
    files: { 'index.html': html, 'worker.js': worker, 'vite.config.js': "export default { worker: { format: 'es' } };\n" },
  });
  await runBin('vite', ['build'], app).catch((error) => {
    throw new Error(`vite build failed:\n${error.stdout}\n${error.stderr}`);
  });
  const assets = await readdir(join(app, 'dist', 'assets'));
  check.equal(assets.filter((f) => f.endsWith('.wasm')).length, 1, `one .wasm asset: ${assets.join(', ')}`);
  check.equal(assets.filter((f) => f.startsWith('worker-') && f.endsWith('.js')).length, 1, `a worker chunk: ${assets.join(', ')}`);

  const server = await serve(join(app, 'dist'));
  const browser = await launchBrowser();
  try {
    const { page } = browser;
    await page.goto(`${server.url}/`, { waitUntil: 'load' });
    await page.waitForSelector('#outcome[data-status]', { timeout: 15_000 });
    const r = await page.evaluate(() => globalThis.__worker);
    check.ok(r?.ok, `the worker charged: ${JSON.stringify(r)}`);
    check.equal(r.hasWindow, false, 'a worker has no window');
    check.equal(r.calls, 2, 'one transient failure (504), then success');
    check.ok(r.keys.length === 2 && r.keys.every((k) => k.key === r.key), `every attempt carried ${r.key}`);
    check.deepEqual(r.replay, r.result, 'the replay returns the stored result');
    checkWasmServed(server, check);
    check.deepEqual(browser.problems, [], 'no page errors, console errors or warnings');
    t.diagnostic(`worker outcome: ${await page.textContent('#outcome')}`);
  } finally {
    await browser.close();
    await server.close();
  }
  check.done(13);
});
