// examples/browser-checkout in headless Chromium: clicking Pay twice under injected faults charges
// the test gateway exactly once, and every attempt carries the same key.
import { test } from 'node:test';
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { ROOT, OUT, counter, launchBrowser } from './harness.mjs';
import { startCheckoutExample } from '../../examples/browser-checkout/server.mjs';


test('Pay clicked twice under faults: one charge, one key', async () => {
  const a = counter('example-checkout');
  const ex = await startCheckoutExample({ packageDir: join(ROOT, 'tests', 'node_modules', 'steadfast') });
  await mkdir(OUT, { recursive: true });
  const browser = await launchBrowser();
  try {
    const { page } = browser;
    const keys = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/v1/charges')) keys.push(r.headers()['idempotency-key']);
    });
    // Two 503s, then a slow success (the key stays in flight at the gateway meanwhile).
    ex.gateway.forceNext('status503', 2);
    ex.gateway.forceNext('slow');
    await page.goto(ex.url);
    await page.waitForSelector('body[data-ready="true"]');
    await page.click('#pay');
    await page.click('#pay'); // the double click
    await page.waitForSelector('body[data-outcome]', { timeout: 15_000 });
    const outcome = JSON.parse(await page.getAttribute('body', 'data-outcome'));
    a.equal(outcome.status, 'succeeded');
    a.match(await page.textContent('#outcome'), /Paid · ch_/);
    a.ok(keys.length === 3 && keys.every((k) => k === outcome.key), `3 requests, all with ${outcome.key}: ${keys}`);
    a.equal(ex.gateway.chargesByKey().get(outcome.key), 1);
    a.equal(ex.gateway.ledger().length, 1);
    // A third click after success replays from the store: no new request.
    const before = keys.length;
    await page.click('#pay');
    await page.waitForFunction(() => document.querySelector('#outcome').textContent.startsWith('Paid'));
    a.equal(keys.length, before);
    // The only console noise is the browser reporting the two injected 503s.
    a.deepEqual(browser.problems.filter((m) => !/status of 503/.test(m)), []);
    a.equal(browser.problems.length, 2);
    await page.screenshot({ path: join(OUT, 'example-checkout.png') });
    a.done(8);
  } finally {
    await browser.close();
    await ex.close();
  }
});
