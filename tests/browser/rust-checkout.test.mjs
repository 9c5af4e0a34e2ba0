// examples/rust-checkout (a Rust→wasm page on steadfast's async API, plain web-sys) in headless
// Chromium: Pay clicked twice under two 503s and a slow success charges once, with one key on every
// attempt, and a third click replays from the Rust IdempotencyStore without a request; declined
// cards never open the page's circuit breaker.
// The example is built here (examples/rust-checkout/build.sh: cargo + wasm-bindgen + wasm-opt).
import { test } from 'node:test';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { ROOT, OUT, counter, launchBrowser } from './harness.mjs';
import { startRustCheckout } from '../../examples/rust-checkout/server.mjs';

const run = promisify(execFile);

test('Rust checkout: Pay clicked twice under two 503s and a slow success → one key, one debit', { timeout: 600_000 }, async () => {
  const a = counter('rust-checkout');
  const { stdout } = await run(join(ROOT, 'examples', 'rust-checkout', 'build.sh'), [], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  console.log(stdout.trim());
  const ex = await startRustCheckout();
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
    const key = await page.getAttribute('body', 'data-key');
    a.match(key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    await page.click('#pay');
    await page.click('#pay'); // the double click
    await page.waitForSelector('body[data-outcome]', { timeout: 20_000 });
    const outcome = JSON.parse(await page.getAttribute('body', 'data-outcome'));
    a.deepEqual(Object.keys(outcome).sort(), ['key', 'reference', 'status']);
    a.equal(outcome.status, 'succeeded');
    a.equal(outcome.key, key);
    a.match(await page.textContent('#outcome'), /^Paid · ch_/);
    a.ok(keys.length === 3 && keys.every((k) => k === key), `3 requests, all with ${key}: ${keys}`);
    a.equal(ex.gateway.chargesByKey().get(key), 1);
    a.equal(ex.gateway.ledger().length, 1);
    // A third click after success replays from the store: no new request, same reference.
    await page.evaluate(() => document.body.removeAttribute('data-outcome'));
    await page.click('#pay');
    await page.waitForSelector('body[data-outcome]');
    a.deepEqual(JSON.parse(await page.getAttribute('body', 'data-outcome')), outcome);
    a.equal(keys.length, 3);
    await page.screenshot({ path: join(OUT, 'rust-checkout.png') });

    // A new page is a new order (a new key). A decline is definitive: shown with the gateway's
    // reason, not retried, nothing debited.
    ex.gateway.forceNext('decline');
    await page.goto(ex.url);
    await page.waitForSelector('body[data-ready="true"]');
    const key2 = await page.getAttribute('body', 'data-key');
    a.ok(key2 !== key, 'one key per page');
    await page.click('#pay');
    await page.waitForSelector('body[data-outcome]', { timeout: 20_000 });
    a.deepEqual(JSON.parse(await page.getAttribute('body', 'data-outcome')), { status: 'declined', reason: 'generic_decline', key: key2 });
    a.equal(keys.filter((k) => k === key2).length, 1);
    a.equal(ex.gateway.ledger().length, 1);
    // Declines say nothing about the gateway's health: eleven more in a row (past the breaker's
    // ten-call minimum at a 100 % "failure" rate) are each shown as declined, never as
    // "unavailable" from an open circuit, and each reaches the gateway.
    ex.gateway.forceNext('decline', 11);
    const shown = [];
    for (let i = 0; i < 11; i++) {
      await page.evaluate(() => {
        document.body.removeAttribute('data-outcome');
        document.querySelector('#outcome').textContent = '';
      });
      await page.click('#pay');
      await page.waitForFunction(() => /^(Declined|Payments are unavailable)/.test(document.querySelector('#outcome').textContent), null, { timeout: 20_000 });
      shown.push(await page.textContent('#outcome'));
    }
    a.deepEqual(shown, Array(11).fill('Declined · generic_decline'));
    a.equal(keys.filter((k) => k === key2).length, 12);
    // The only console noise is the browser reporting the injected 503s and the 402.
    a.deepEqual(
      browser.problems.filter((m) => !/status of (503|402)/.test(m)),
      [],
    );
    a.done(17);
  } finally {
    await browser.close();
    await ex.close();
  }
});
