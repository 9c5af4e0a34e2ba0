// `steadfast/lazy`: the entry without top-level await. A Vite production build whose .wasm is served
// 1.5 s late must render at once (the import does not wait for the wasm), a breaker can be made before
// the core is ready, its first use then throws WasmUnavailableError (reason 'pending'), and after
// `await ready` it (and everything else) works.
// Under `script-src 'self'` without 'wasm-unsafe-eval' the page renders and `ready` rejects with
// reason 'csp'.
import { test } from 'node:test';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { counter, makeConsumer, serve, launchBrowser, runBin } from './harness.mjs';

const HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8" /><title>lazy checkout</title><link rel="icon" href="data:," /></head>
<body><p id="rendered"></p><p id="early"></p><p id="core" data-state="pending"></p><script type="module" src="./main.js"></script></body></html>
`;
const MAIN = `import { ready, CircuitBreaker, WasmUnavailableError } from 'steadfast/lazy';
document.querySelector('#rendered').textContent = 'rendered at ' + Math.round(performance.now());
// Made before ready: construction never needs the core; its first use before ready throws.
const early = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
try {
  document.querySelector('#early').textContent = 'used before ready: ' + early.currentState;
} catch (e) {
  document.querySelector('#early').textContent = (e instanceof WasmUnavailableError) + ' ' + e.name + ' ' + e.reason;
}
const core = document.querySelector('#core');
ready.then(
  async () => {
    core.textContent = await early.execute(() => 'charged'); // the breaker made before ready
    core.dataset.at = String(Math.round(performance.now()));
    core.dataset.state = 'ready';
  },
  (e) => {
    core.textContent = e.message;
    core.dataset.reason = e.reason;
    core.dataset.state = 'failed';
  },
);
`;

test('steadfast/lazy renders before the wasm arrives; typed errors until ready', { timeout: 180_000 }, async (t) => {
  const check = counter('lazy');
  const app = await makeConsumer('vite-lazy', { files: { 'index.html': HTML, 'main.js': MAIN } });
  await runBin('vite', ['build'], app).catch((error) => {
    throw new Error(`vite build failed:\n${error.stdout}\n${error.stderr}`);
  });
  const assets = await readdir(join(app, 'dist', 'assets'));
  check.equal(assets.filter((f) => f.endsWith('.wasm')).length, 1, `Vite emitted the .wasm: ${assets.join(', ')}`);
  const server = await serve(join(app, 'dist'));
  try {
    for (const [label, policy] of [
      ['allowed', "default-src 'self'; img-src 'self' data:; script-src 'self' 'wasm-unsafe-eval'"],
      ['refused', "default-src 'self'; img-src 'self' data:; script-src 'self'"],
    ]) {
      const browser = await launchBrowser();
      try {
        await browser.context.route('**/*', async (route) => {
          const response = await route.fetch();
          if (route.request().url().endsWith('.wasm')) {
            await new Promise((r) => setTimeout(r, 1_500)); // a slow network for the wasm only
          }
          await route.fulfill({ response, headers: { ...response.headers(), 'content-security-policy': policy } });
        });
        await browser.page.goto(`${server.url}/`, { waitUntil: 'domcontentloaded' });
        await browser.page.waitForFunction(() => document.querySelector('#rendered').textContent !== '', undefined, { timeout: 10_000 });
        const early = await browser.page.evaluate(() => ({
          early: document.querySelector('#early').textContent,
          state: document.querySelector('#core').dataset.state,
        }));
        check.equal(early.state, 'pending', `${label}: the page rendered while the wasm was still on its way`);
        check.equal(early.early, 'true WasmUnavailableError pending', `${label}: a call before ready throws the typed error`);
        await browser.page.waitForSelector('#core[data-state="ready"], #core[data-state="failed"]', { timeout: 15_000 });
        const done = await browser.page.evaluate(() => ({ ...document.querySelector('#core').dataset, text: document.querySelector('#core').textContent }));
        t.diagnostic(`${label}: ${JSON.stringify({ early, done })}`);
        if (label === 'allowed') {
          check.equal(done.state, 'ready');
          check.equal(done.text, 'charged');
        } else {
          check.equal(done.state, 'failed');
          check.equal(done.reason, 'csp');
        }
        check.deepEqual(
          browser.problems.filter((p) => p.startsWith('pageerror')),
          [],
          `${label}: nothing uncaught`,
        );
      } finally {
        await browser.close();
      }
    }
  } finally {
    await server.close();
  }
  check.done(1 + 2 * 5);
});
