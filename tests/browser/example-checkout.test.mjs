// engines: chromium firefox webkit
// examples/browser-checkout in each engine: clicking Pay twice under injected faults charges the test
// gateway exactly once, and every attempt carries the same key.
import { test } from 'node:test';
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { ROOT, OUT, ENGINE, ENGINE_LABEL, counter, launchBrowser } from './harness.mjs';
import { startCheckoutExample } from '../../examples/browser-checkout/server.mjs';

/**
 * The Idempotency-Key of every POST /v1/charges the page sends. Chromium: from the network (Playwright
 * request events). WebDriver engines have no network events: the page's fetch is observed instead
 * (the checkout client calls globalThis.fetch at call time), and the server's request count is checked
 * against it below.
 */
async function observeKeys(browser) {
  const { page } = browser;
  if (browser.engine === 'chromium') {
    const keys = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/v1/charges')) keys.push(r.headers()['idempotency-key']);
    });
    return async () => keys;
  }
  await page.addScript(`{
    const seen = (window.__chargeKeys = []);
    const real = window.fetch;
    window.fetch = (input, init) => {
      const req = new Request(input, init);
      if (req.url.endsWith('/v1/charges')) seen.push(req.headers.get('idempotency-key'));
      return real.call(window, input, init);
    };
  }`);
  return () => page.evaluate(() => Array.from(window.__chargeKeys));
}

test(`${ENGINE_LABEL}: Pay clicked twice under faults: one charge, one key`, { timeout: 90_000 }, async (t) => {
  const a = counter(`example-checkout ${ENGINE}`);
  const ex = await startCheckoutExample({ packageDir: join(ROOT, 'tests', 'node_modules', 'steadfast') });
  await mkdir(OUT, { recursive: true });
  const browser = await launchBrowser();
  try {
    const { page } = browser;
    t.diagnostic(`${browser.label} ${browser.version}`);
    // Two 503s, then a slow success (the key stays in flight at the gateway meanwhile).
    ex.gateway.forceNext('status503', 2);
    ex.gateway.forceNext('slow');
    const requestsBefore = ex.gateway.requests();
    await page.goto(ex.url);
    await page.waitForSelector('body[data-ready="true"]');
    const keys = await observeKeys(browser);
    await page.click('#pay');
    await page.click('#pay'); // the double click
    await page.waitForSelector('body[data-outcome]', { timeout: 15_000 });
    const outcome = JSON.parse(await page.getAttribute('body', 'data-outcome'));
    a.equal(outcome.status, 'succeeded');
    a.match(await page.textContent('#outcome'), /Paid · ch_/);
    const sent = await keys();
    a.ok(sent.length === 3 && sent.every((k) => k === outcome.key), `3 requests, all with ${outcome.key}: ${sent}`);
    a.equal(ex.gateway.requests() - requestsBefore, 3, 'the gateway received exactly those 3 requests');
    a.equal(ex.gateway.chargesByKey().get(outcome.key), 1);
    a.equal(ex.gateway.ledger().length, 1);
    // A third click after success replays from the store: no new request.
    await page.click('#pay');
    await page.waitForFunction(() => document.querySelector('#outcome').textContent.startsWith('Paid'));
    a.equal((await keys()).length, 3);
    a.equal(ex.gateway.requests() - requestsBefore, 3);
    if (browser.engine === 'chromium') {
      // The only console noise is the browser reporting the two injected 503s.
      a.deepEqual(
        browser.problems.filter((m) => !/status of 503/.test(m)),
        [],
      );
      a.equal(browser.problems.length, 2);
    } else {
      // WebDriver reports no browser network messages: only page-script errors/warnings, of which none.
      await page.evaluate(() => 0); // collects them
      a.deepEqual(browser.problems, []);
    }
    await page.screenshot({ path: join(OUT, `example-checkout-${ENGINE}.png`) });
    a.done(browser.engine === 'chromium' ? 10 : 9);
  } finally {
    await browser.close();
    await ex.close();
  }
});
