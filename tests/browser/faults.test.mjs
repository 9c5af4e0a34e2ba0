// The fault suite in real headless Chromium, through the INSTALLED package: the shared cases
// (tests/browser/faults/cases.js) run inside a page and inside a module Web Worker against the
// fault server's gateway (debit-then-drop, debit-then-hang, processed-after-give-up, 503, 429 +
// Retry-After); the driver only opens pages and reads globalThis.__suite. One case is
// driver-specific and labelled so: going offline (Playwright's context.setOffline). Then the
// browser soak: thousands of faulted charges driven from the page, figures printed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ROOT, launchBrowser } from './harness.mjs';
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

/** Open `path`, wait for globalThis.__suite.done, return it. */
async function suite(path, timeout = 120_000) {
  const { page } = browser;
  browser.problems.length = 0;
  await page.goto(`${server.url}${path}`, { waitUntil: 'load' });
  await page.waitForFunction(() => globalThis.__suite?.done === true, undefined, { timeout, polling: 250 });
  return page.evaluate(() => globalThis.__suite);
}

/** One subtest per case result; uncaught page errors fail the run (network noise in the console is expected). */
async function report(t, s, expected) {
  t.diagnostic(`chromium ${browser.version}: ${s.userAgent}`);
  assert.equal(s.results.length, expected, `${s.results.length} results for ${expected} cases`);
  for (const r of s.results) {
    await t.test(r.name, () => {
      for (const note of r.notes ?? []) t.diagnostic(`${r.name}: ${note}`);
      assert.ok(r.ok, r.error);
      assert.ok(r.assertions > 0, 'asserted something');
    });
  }
  assert.deepEqual(
    browser.problems.filter((p) => p.startsWith('pageerror')),
    [],
    'no uncaught page errors',
  );
}

test('fault suite in a Chromium page: every case of the shared list', { timeout: 180_000 }, async (t) => {
  await report(t, await suite('/index.html'), CASES.length);
});

test('fault suite in a module Web Worker in Chromium: the same cases', { timeout: 180_000 }, async (t) => {
  await report(t, await suite('/worker.html'), CASES.length + 1);
});

test('[driver-specific: Playwright setOffline] offline: unavailable, key freed, no phantom success', { timeout: 60_000 }, async (t) => {
  const { page, context } = browser;
  await page.goto(`${server.url}/offline.html`, { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="true"]');
  const before = server.gateway.requests();
  await context.setOffline(true);
  let offline;
  try {
    offline = await page.evaluate(() => globalThis.__offline());
  } finally {
    await context.setOffline(false);
  }
  t.diagnostic(`offline: the engine's error was ${JSON.stringify(offline.rawMessage)}`);
  assert.ok(offline.ok, offline.error);
  assert.equal(server.gateway.requests(), before, 'nothing reached the gateway while offline');
  const back = await page.evaluate((key) => globalThis.__offlineAfter(key), offline.key);
  assert.ok(back.ok, back.error);
  assert.equal(server.gateway.chargesByKey().get(offline.key), 1);
});

test(`browser soak: ${SOAK_CHARGES} faulted charges driven from the page, 0 lost, 0 double, every unknown reconciled`, { timeout: 240_000 }, async (t) => {
  const s = await suite(`/soak.html?charges=${SOAK_CHARGES}`, 200_000);
  for (const line of (s.text ?? '').split('\n')) t.diagnostic(line);
  assert.equal(s.results.length, 1);
  const f = s.figures;
  assert.ok(f, s.results[0].error);
  assert.ok(f.charges >= SOAK_CHARGES, `${f.charges} charges`);
  assert.equal(f.doubleCharges, 0, 'double charges');
  assert.equal(f.lost, 0, `lost charges: ${JSON.stringify(f.violations)}`);
  assert.equal(f.unknownAfter, 0, 'every unknown reconciled');
  assert.equal(f.rejected, 0, 'charge() never rejected');
  assert.equal(f.clientCents, f.ledgerCents);
  // It was real: faults fired, unknowns happened and were reconciled both ways.
  for (const name of ['debitThenReset', 'debitThenTimeout', 'processAfterGiveUp', 'status503', 'decline']) assert.ok(f.faults[name] > 0, `${name} never fired`);
  assert.ok(f.unknownBefore > 0, 'no unknown to reconcile');
  assert.ok(f.deferred > 0, 'no "failed" answer was deferred: the settle window was not exercised');
  assert.ok(s.results[0].ok, s.results[0].error);
});
