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

const SOAK_CHARGES = Number(process.env.BROWSER_SOAK_CHARGES ?? 2_000);
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
  const { results, userAgent, ms } = await runPageSuite(browser, `${server.url}${path}`, {
    timeoutMs: 150_000,
    screenshot: `faults${path.replace(/\W+/g, '-').replace(/-html$/, '')}`,
  });
  t.diagnostic(`${browser.label} ${browser.version} (${userAgent}): ${results.length} cases in ${ms} ms`);
  for (const r of results) for (const note of r.notes ?? []) t.diagnostic(`${r.name}: ${note}`);
  assert.equal(results.length, expected, `${results.length} results for ${expected} cases`);
  await reportResults(t, results);
  await browser.page.evaluate(() => 0); // collect what the page reported
  assert.deepEqual(
    browser.problems.filter((p) => p.startsWith('pageerror')),
    [],
    'no uncaught page errors',
  );
}

test(`${ENGINE_LABEL}: fault suite in a page: every case of the shared list`, { timeout: 180_000 }, async (t) => {
  await run(t, '/index.html', CASES.length);
});

test(`${ENGINE_LABEL}: fault suite in a module Web Worker: the same cases`, { timeout: 180_000 }, async (t) => {
  await run(t, '/worker.html', CASES.length + 1);
});

test(
  `${ENGINE_LABEL}: browser soak: ${SOAK_CHARGES} faulted charges driven from the page, 0 lost, 0 double, every unknown reconciled`,
  { timeout: 300_000 },
  async (t) => {
    browser.problems.length = 0;
    const { results, raw: s, ms } = await runPageSuite(browser, `${server.url}/soak.html?charges=${SOAK_CHARGES}`, { timeoutMs: 280_000, pollMs: 500 });
    t.diagnostic(`${browser.label} ${browser.version}: soak in ${ms} ms`);
    for (const line of (s.text ?? '').split('\n')) t.diagnostic(line);
    assert.equal(results.length, 1);
    const f = s.figures;
    assert.ok(f, results[0].error);
    assert.ok(f.charges >= SOAK_CHARGES, `${f.charges} charges`);
    assert.equal(f.doubleCharges, 0, 'double charges');
    assert.equal(f.lost, 0, `lost charges: ${JSON.stringify(f.violations)}`);
    assert.equal(f.unknownAfter, 0, 'every unknown reconciled');
    assert.equal(f.rejected, 0, 'charge() never rejected');
    assert.equal(f.clientCents, f.ledgerCents);
    for (const name of ['debitThenReset', 'debitThenTimeout', 'processAfterGiveUp', 'status503', 'decline'])
      assert.ok(f.faults[name] > 0, `${name} never fired`);
    assert.ok(f.unknownBefore > 0, 'no unknown to reconcile');
    assert.ok(f.deferred > 0, 'no "failed" answer was deferred: the settle window was not exercised');
    await reportResults(t, results);
  },
);

test(`${ENGINE_LABEL}: offline`, { skip: `W3C WebDriver cannot take ${ENGINE} offline (Chromium covers it through Playwright)` }, () => {});
