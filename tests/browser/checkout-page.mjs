// Drives the checkout page (fixtures/index.html + checkout.js) in a Playwright page: shared by the Vite
// and the unbundled suites, which differ only in how the page reached the browser. Not a test itself.
import { join } from 'node:path';
import { OUT } from './harness.mjs';

/** Opens `url`, pays twice (the second click must replay), screenshots to tests/.out/<shot>.png. */
export async function payTwice(browser, url, check, shot) {
  const { page } = browser;
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="true"]', { timeout: 15_000 });
  const orderKey = await page.textContent('#key');
  check.match(orderKey, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'the page shows a v4 key');

  await page.fill('#amount', '49.99');
  await page.click('#pay');
  await page.waitForSelector('#outcome[data-status="paid"], #outcome[data-status="failed"]', { timeout: 15_000 });
  check.equal(await page.textContent('#outcome'), 'Paid 49.99 USD (ch_2)');

  const state = await page.evaluate(() => ({
    gatewayLog: globalThis.__checkout.gatewayLog,
    version: globalThis.__checkout.version,
    breaker: globalThis.__checkout.breakerState(),
  }));
  check.equal(state.gatewayLog.length, 2, 'one transient failure, then success: two gateway calls');
  check.deepEqual(
    state.gatewayLog.map((a) => a.attempt),
    [1, 2],
  );
  check.ok(
    state.gatewayLog.every((a) => a.key === orderKey),
    `every attempt carried ${orderKey}: ${JSON.stringify(state.gatewayLog)}`,
  );
  check.ok(state.gatewayLog.every((a) => a.amountCents === 4999));
  check.match(state.version, /^\d+\.\d+\.\d+/);
  check.equal(state.breaker, 'closed');

  // A second click on the same order is a replay: same outcome, the gateway is not called again.
  await page.evaluate(() => {
    document.querySelector('#outcome').dataset.status = '';
  });
  await page.click('#pay');
  await page.waitForSelector('#outcome[data-status="paid"], #outcome[data-status="failed"]', { timeout: 15_000 });
  check.equal(await page.textContent('#outcome'), 'Paid 49.99 USD (ch_2)');
  check.equal(await page.evaluate(() => globalThis.__checkout.gatewayLog.length), 2, 'a replay must not reach the gateway');

  const path = join(OUT, `${shot}.png`);
  await page.screenshot({ path, fullPage: true });
  return { orderKey, screenshot: path };
}

/** The served .wasm: fetched once, 200, application/wasm (instantiateStreaming needs that MIME). */
export function checkWasmServed(server, check) {
  const wasm = server.requests.filter((r) => r.path.endsWith('.wasm'));
  check.equal(wasm.length, 1, `one .wasm request: ${JSON.stringify(server.requests)}`);
  check.equal(wasm[0].status, 200);
  check.equal(wasm[0].type, 'application/wasm');
  const failed = server.requests.filter((r) => r.status !== 200);
  check.deepEqual(failed, [], 'no request failed');
}
