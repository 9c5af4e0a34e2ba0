// A payment page with a strict Content-Security-Policy (sent as a response header, as deployments do),
// built by Vite (production build: minified, class names mangled) from the packed tarball, in Chromium:
//   - with the policy the README documents, `script-src 'self' 'wasm-unsafe-eval'`, steadfast works;
//   - with `script-src 'self'` alone the wasm is refused, and yet the page renders: the import does not
//     reject, a checkout client and a breaker made at MODULE LEVEL (the README's pattern) are made,
//     `ready` rejects with WasmUnavailableError (reason 'csp', the fix in its message), the breaker's
//     execute() rejects with the same typed error, and a charge resolves `unavailable` (reason 'wasm').
// Error names are read from the minified bundle: they must be the class names, not mangled ones.
// Screenshots: tests/.out/browser-csp-{allowed,refused}.png.
import { test } from 'node:test';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { counter, makeConsumer, serve, launchBrowser, runBin, OUT } from './harness.mjs';

const HTML = `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><title>strict CSP checkout</title><link rel="icon" href="data:," /></head>
  <body>
    <h1 id="title">Checkout</h1>
    <p id="rendered"></p>
    <p id="core" data-state="pending"></p>
    <script type="module" src="./main.js"></script>
  </body>
</html>
`;

const MAIN = `import { ready, createCheckoutClient, CircuitBreaker, CircuitOpenError, WasmUnavailableError, isSteadfastError } from 'steadfast';

// Made at module level, before anything awaited: construction must not need the core.
const client = createCheckoutClient({
  endpoint: '/charges',
  fetch: async () => new Response(JSON.stringify({ reference: 'ch_1' }), { status: 200, headers: { 'content-type': 'application/json' } }),
});
const early = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });

// The rest of the page: it must render whatever happens to the wasm.
document.querySelector('#rendered').textContent = 'The page rendered';

const core = document.querySelector('#core');
const charged = async () => {
  const outcome = await client.charge({ amountCents: 500, currency: 'eur' }, { idempotencyKey: 'cart-1' });
  return outcome.status + '/' + (outcome.reason ?? outcome.reference);
};
ready.then(
  async () => {
    const first = await early.execute(() => 'charged');
    await early.execute(() => Promise.reject(new Error('gateway down'))).catch(() => {});
    const refused = await early.execute(() => 'never').catch((e) => e);
    refused.requestId = 'req-1'; // catch code may tag it
    core.textContent = first;
    core.dataset.name = refused.name;
    core.dataset.instance = String(refused instanceof CircuitOpenError && isSteadfastError(refused, 'CIRCUIT_OPEN'));
    core.dataset.outcome = await charged();
    core.dataset.state = 'ready';
  },
  async (error) => {
    const rejected = await early.execute(() => 'never').catch((e) => e);
    core.textContent = error.message;
    core.dataset.name = error.name;
    core.dataset.reason = error.reason;
    core.dataset.instance = String(error instanceof WasmUnavailableError && rejected instanceof WasmUnavailableError && rejected.name === 'WasmUnavailableError');
    core.dataset.outcome = await charged();
    core.dataset.state = 'failed';
  },
);
`;

test('strict CSP: documented policy works; without it, a typed error and the page still renders', { timeout: 180_000 }, async (t) => {
  const check = counter('csp');
  const app = await makeConsumer('vite-csp', { files: { 'index.html': HTML, 'main.js': MAIN } });
  await runBin('vite', ['build'], app).catch((error) => {
    throw new Error(`vite build failed:\\n${error.stdout}\\n${error.stderr}`);
  });
  const assets = await readdir(join(app, 'dist', 'assets'));
  const js = assets.filter((f) => f.endsWith('.js'));
  check.equal(js.length, 1, `one JS chunk: ${assets.join(', ')}`);
  const bundle = await readFile(join(app, 'dist', 'assets', js[0]), 'utf8');
  check.ok(!/class CircuitOpenError\b/.test(bundle), 'the bundle is minified (class names mangled)');

  const server = await serve(join(app, 'dist'));
  try {
    for (const [label, policy, expected] of [
      ['allowed', "default-src 'self'; img-src 'self' data:; script-src 'self' 'wasm-unsafe-eval'", 'ready'],
      ['refused', "default-src 'self'; img-src 'self' data:; script-src 'self'", 'failed'],
    ]) {
      const browser = await launchBrowser();
      try {
        const { page, context } = browser;
        // Serve every response with the policy as a header (as a real deployment would).
        await context.route('**/*', async (route) => {
          const response = await route.fetch();
          await route.fulfill({ response, headers: { ...response.headers(), 'content-security-policy': policy } });
        });
        await page.goto(`${server.url}/`, { waitUntil: 'load' });
        await page.waitForSelector('#core[data-state="ready"], #core[data-state="failed"]', { timeout: 15_000 });
        const shown = await page.evaluate(() => {
          const core = document.querySelector('#core');
          return { rendered: document.querySelector('#rendered').textContent, ...core.dataset, text: core.textContent };
        });
        await page.screenshot({ path: join(OUT, `browser-csp-${label}.png`), fullPage: true });
        t.diagnostic(`${label} (${policy}): ${JSON.stringify(shown)}`);
        check.equal(shown.rendered, 'The page rendered', `${label}: the rest of the page rendered`);
        check.equal(shown.state, expected, `${label}: the core is ${expected}`);
        check.equal(shown.instance, 'true', `${label}: instanceof and the brand guard hold`);
        const pageErrors = browser.problems.filter((p) => p.startsWith('pageerror'));
        check.deepEqual(pageErrors, [], `${label}: no uncaught error (the import did not reject)`);
        if (expected === 'ready') {
          check.equal(shown.text, 'charged', 'the breaker ran the call');
          check.equal(shown.name, 'CircuitOpenError', 'the name survives minification');
          check.deepEqual(browser.problems, [], 'no console errors with the documented policy');
          check.equal(shown.outcome, 'succeeded/ch_1', 'the module-level client charged');
        } else {
          check.equal(shown.name, 'WasmUnavailableError', 'the name survives minification');
          check.equal(shown.reason, 'csp', 'the cause is recognised as the CSP');
          check.match(shown.text, /'wasm-unsafe-eval'/, 'the message names the fix');
          check.equal(shown.outcome, 'unavailable/wasm', 'the module-level client answers unavailable (nothing sent), not a rejection');
        }
      } finally {
        await browser.close();
      }
    }
  } finally {
    await server.close();
  }
  check.done(2 + 2 * 4 + 4 + 4);
});
