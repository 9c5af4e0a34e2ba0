// engines: firefox webkit
// The browser fault suite (tests/browser/faults/: the shared case list, run inside a page and inside a
// module Web Worker against the fault server's gateway) in Firefox and WebKit, through the page-suite
// runner over WebDriver. faults.test.mjs runs the same pages in Chromium (Playwright), plus the offline
// case, which needs Playwright's context.setOffline: W3C WebDriver has no command to take a browser
// offline, so geckodriver and WebKitWebDriver cannot script it (it is not run here, and says so).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ROOT, ENGINE, ENGINE_LABEL, launchBrowser } from './harness.mjs';
import { runPageSuite, reportResults } from './page-suite.mjs';
import { startFaultServer } from './faults/server.mjs';
import { CASES } from './faults/cases.js';

let server;
let browser;

before(async () => {
  server = await startFaultServer({ packageDir: join(ROOT, 'tests', 'node_modules', 'steadfast') });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function run(t, path, expected) {
  browser.problems.length = 0;
  const { results, userAgent, ms } = await runPageSuite(browser, `${server.url}${path}`, { timeoutMs: 150_000, screenshot: `faults${path.replace(/\W+/g, '-').replace(/-html$/, '')}` });
  t.diagnostic(`${browser.label} ${browser.version} (${userAgent}): ${results.length} cases in ${ms} ms`);
  for (const r of results) for (const note of r.notes ?? []) t.diagnostic(`${r.name}: ${note}`);
  assert.equal(results.length, expected, `${results.length} results for ${expected} cases`);
  await reportResults(t, results);
  await browser.page.evaluate(() => 0); // collect what the page reported
  assert.deepEqual(browser.problems.filter((p) => p.startsWith('pageerror')), [], 'no uncaught page errors');
}

test(`${ENGINE_LABEL}: fault suite in a page: every case of the shared list`, { timeout: 180_000 }, async (t) => {
  await run(t, '/index.html', CASES.length);
});

test(`${ENGINE_LABEL}: fault suite in a module Web Worker: the same cases`, { timeout: 180_000 }, async (t) => {
  await run(t, '/worker.html', CASES.length + 1);
});

test(`${ENGINE_LABEL}: offline`, { skip: `W3C WebDriver cannot take ${ENGINE} offline (Chromium covers it through Playwright)` }, () => {});
