// engines: chromium firefox webkit
// The store's promise in each engine's real wasm runtime, past every JIT tier-up and several memory
// growths: tens of thousands of keys in one store, each replayed, refused for another request and
// parked, every key checked (fixtures/integrity.js, a page suite: see page-suite.mjs). The wasm
// boundary suites run the core's tests in the engines too, but in debug builds and a few calls each;
// this runs the shipped module the way a long-lived checkout tab does.
import { test, before, after } from 'node:test';
import { makeConsumer, serve, launchBrowser, ENGINE_LABEL } from './harness.mjs';
import { runPageSuite, reportResults } from './page-suite.mjs';

let server;
let browser;

before(async () => {
  const app = await makeConsumer('integrity', { copy: ['integrity.html', 'integrity.js'] });
  server = await serve(app);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test(`${ENGINE_LABEL}: one store under tier-up and memory growth: replays, refusals, unknowns`, { timeout: 240_000 }, async (t) => {
  const { results, userAgent, ms } = await runPageSuite(browser, `${server.url}/integrity.html`, { timeoutMs: 200_000 });
  t.diagnostic(`${userAgent}; ${ms} ms`);
  await reportResults(t, results);
});
