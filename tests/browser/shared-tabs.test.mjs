// engines: chromium firefox webkit
// Shared state across tabs of one origin, in each engine: (1) a breaker trip in one tab opens it in
// the others (BroadcastChannel), including a tab opened later; (2) a checkout's key survives a
// reload during the charge and a second tab sees it in flight; no double charge at the gateway;
// (3) a charge failed over to the secondary gateway (the primary's circuit held open) and cut short
// there by a reload is resumed at the secondary only, never at the primary (a second debit).
// Pages come from one server (static, /v1 proxied to tests/support/gateway.mjs, /v2 to a second
// gateway, the secondary: same origin).
// Tabs are pages of one browser (Playwright pages of one context; WebDriver windows of one session).
/* global __tabs */ // the page-side object the fixture defines (read inside page.evaluate)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { makeConsumer, launchBrowser, ENGINE_LABEL } from './harness.mjs';
import { serveOrigin } from '../shared/origin-server.mjs';
import { startGateway } from '../support/gateway.mjs';

const PAGE = await readFile(fileURLToPath(new URL('../shared/tabs-page.js', import.meta.url)), 'utf8');
const HTML = `<!doctype html><meta charset="utf-8"><title>tabs</title>
<script type="importmap">{ "imports": { "steadfast": "/node_modules/steadfast/index.browser.js" } }</script>
<script type="module" src="/tabs-page.js"></script><body></body>`;
let gateway;
let secondary;
let server;
let browser;

before(async () => {
  const app = await makeConsumer('shared-tabs', { files: { 'index.html': HTML, 'tabs-page.js': PAGE } });
  gateway = await startGateway({ seed: 5, faults: { slowMs: 1500 } });
  secondary = await startGateway({ seed: 6, faults: { slowMs: 1500 } });
  server = await serveOrigin(app, gateway.url, { '/v2/': secondary.url });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.close();
  await gateway?.close();
  await secondary?.close();
});

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
// The reload aborts the in-flight charge: the engines' network-error messages for it are expected.
const ABORTED = /Failed to fetch|net::|NetworkError when attempting to fetch resource|Load failed/;

async function open(page) {
  await page.goto(`${server.url}/index.html`, { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached', timeout: 15_000 });
  return page;
}

test(`${ENGINE_LABEL}: a breaker trip in one tab opens it in every tab of the origin`, { timeout: 60_000 }, async (t) => {
  browser.problems.length = 0;
  const a = await open(browser.page);
  const b = await open(await browser.newPage());
  assert.equal(await b.evaluate(() => __tabs.state()), 'closed');
  const trippedAt = await a.evaluate(() => __tabs.trip());
  await b.waitForFunction(() => __tabs.state() === 'open', null, { timeout: 5_000 });
  const seenAt = await b.evaluate(() => __tabs.transitions.find((x) => x.s === 'open').at);
  assert.deepEqual(await b.evaluate(() => __tabs.call()), { r: 'CircuitOpenError', ran: false }, 'the other tab fails fast without calling');
  assert.equal(await a.evaluate(() => __tabs.state()), 'open');
  // A tab opened during the cooldown asks its peers and opens too.
  const c = await open(await browser.newPage());
  await c.waitForFunction(() => __tabs.state() === 'open', null, { timeout: 5_000 });
  assert.deepEqual(await c.evaluate(() => __tabs.call()), { r: 'CircuitOpenError', ran: false });
  const lag = seenAt - trippedAt;
  t.diagnostic(`trip in tab A → open in tab B after ${lag} ms (includes A's two failing calls); a tab opened later opened at once`);
  assert.ok(lag < 1000);
  await b.close();
  await c.close();
  assert.deepEqual(browser.problems, []);
});

test(`${ENGINE_LABEL}: reload during a charge keeps the key; a second tab sees it in flight; one debit`, { timeout: 60_000 }, async (t) => {
  browser.problems.length = 0;
  const a = browser.page;
  await a.evaluate(() => localStorage.clear());
  await open(a);
  const b = await open(await browser.newPage());
  const key = await a.evaluate(() => __tabs.key);
  assert.equal(await b.evaluate(() => __tabs.key), key, 'both tabs of the cart share one key');

  gateway.forceNext('slow'); // the charge takes 1.5 s at the gateway
  // Started, not awaited (the page will be reloaded under it): a WebDriver session runs one command
  // at a time, so the script must return at once rather than hold the session for the charge.
  await a.evaluate(() => {
    __tabs.pay().catch(() => {});
  });
  await a.waitForFunction(() => __tabs.gatewayCalls.length === 1);
  await b.waitForFunction(async () => (await __tabs.checkoutState()).status === 'in-flight', null, { timeout: 5_000, polling: 50 });
  assert.deepEqual(await b.evaluate(() => __tabs.pay()), { status: 'in-flight', key }, 'the second tab does not charge');
  assert.equal(await b.evaluate(() => __tabs.gatewayCalls.length), 0);

  await a.reload({ waitUntil: 'load' }); // mid-charge
  await a.waitForSelector('body[data-ready="true"]', { state: 'attached' });
  assert.equal(await a.evaluate(() => __tabs.key), key, 'the reload kept the key');
  const after = await a.evaluate(() => __tabs.checkoutState());
  assert.equal(after.status, 'unknown', 'the interrupted charge reads unknown, not "try again"');
  assert.equal(after.interrupted, true);
  assert.deepEqual(await a.evaluate(() => __tabs.pay()), { status: 'unknown', key }, 'a plain retry is refused');
  assert.equal(await a.evaluate(() => __tabs.gatewayCalls.length), 0);

  // The gateway finishes the original charge; resuming sends the SAME key and gets the replay.
  for (let i = 0; i < 100 && gateway.ledger().length === 0; i += 1) await new Promise((ok) => setTimeout(ok, 50));
  const resumed = await a.evaluate(() => __tabs.pay(true));
  assert.equal(resumed.status, 'succeeded');
  assert.equal(resumed.key, key);
  assert.equal(resumed.reference, gateway.ledger()[0].id, 'the replayed reference is the first charge');
  const again = await b.evaluate(() => __tabs.pay());
  assert.equal(again.status, 'succeeded');
  assert.equal(again.replayed, true, 'the other tab answers from the stored outcome');
  assert.equal(await b.evaluate(() => __tabs.gatewayCalls.length), 0);

  const debits = gateway.chargesByKey();
  assert.deepEqual([...debits], [[key, 1]], 'exactly one debit');
  const s = gateway.stats();
  t.diagnostic(
    `gateway: ${s.requests} POSTs (the original + one resume, replayed: ${s.replays}), ${s.debits} debit; the second tab and the plain retry after reload made 0 calls`,
  );
  assert.equal(s.debits, 1);
  assert.equal(s.replays, 1);
  await b.close();
  assert.deepEqual(
    browser.problems.filter((p) => !ABORTED.test(p)),
    [],
  );
});

test(
  `${ENGINE_LABEL}: a charge failed over to the secondary and cut short there by a reload is resumed at the secondary only; one debit`,
  { timeout: 60_000 },
  async (t) => {
    browser.problems.length = 0;
    const a = await open(browser.page); // on the origin first: it also runs alone (--test-name-pattern)
    await a.evaluate(() => localStorage.clear());
    gateway.reset();
    secondary.reset();
    await open(a);
    const { key, primaryUrl, secondaryUrl } = await a.evaluate(() => ({
      key: __tabs.failover.key,
      primaryUrl: __tabs.failover.primary,
      secondaryUrl: __tabs.failover.secondary,
    }));

    // The primary's circuit is held open (isolate()): the charge fails over to the secondary, which
    // takes 1.5 s. Started, not awaited (see above): the page is reloaded under it.
    secondary.forceNext('slow');
    const t0 = Date.now();
    await a.evaluate(() => {
      __tabs.failover.pay({ primaryOpen: true }).catch(() => {});
    });
    await a.waitForFunction(() => __tabs.failover.calls.length === 1);
    assert.deepEqual(await a.evaluate(() => __tabs.failover.calls.map((c) => c.url)), [secondaryUrl], 'the open circuit sent it to the secondary');
    for (let i = 0; i < 100 && secondary.requests() === 0; i += 1) await sleep(20);
    assert.equal(secondary.requests(), 1, 'the request reached the secondary before the reload');
    const sending = await a.evaluate(() => __tabs.failover.stored());
    assert.equal(sending.status, 'in-flight');
    assert.equal(sending.sendingTo, secondaryUrl, 'before the reload the entry names the secondary');

    const reloadedAfter = Date.now() - t0; // into the secondary's 1.5 s
    await a.reload({ waitUntil: 'load' }); // mid-request at the secondary
    await a.waitForSelector('body[data-ready="true"]', { state: 'attached' });
    assert.equal(await a.evaluate(() => __tabs.failover.key), key, 'the reload kept the key');
    const stored = await a.evaluate(() => __tabs.failover.stored());
    assert.equal(stored.status, 'in-flight', 'the unload did not record its own abort as an outcome');
    assert.equal(stored.sendingTo, secondaryUrl, 'the entry that survived the reload still names the secondary');
    const after = await a.evaluate(() => __tabs.failover.state());
    assert.equal(after.status, 'unknown', 'the interrupted charge reads unknown');
    assert.equal(after.interrupted, true);
    assert.deepEqual(await a.evaluate(() => __tabs.failover.pay()), { status: 'unknown', key }, 'a plain retry is refused');
    assert.equal(await a.evaluate(() => __tabs.failover.calls.length), 0);

    // The secondary finishes the original charge; the resume (a fresh breaker: the primary is
    // healthy now) sends the SAME key to the secondary, where it may have been processed.
    for (let i = 0; i < 100 && secondary.ledger().length === 0; i += 1) await sleep(50);
    const resumed = await a.evaluate(() => __tabs.failover.pay({ resume: true }));
    assert.equal(resumed.status, 'succeeded');
    assert.equal(resumed.key, key);
    assert.equal(resumed.reference, secondary.ledger()[0].id, "the replayed reference is the first charge's");
    assert.deepEqual(await a.evaluate(() => __tabs.failover.calls.map((c) => c.url)), [secondaryUrl], 'the resume went to the secondary only');
    assert.notEqual(primaryUrl, secondaryUrl);
    assert.equal(gateway.requests(), 0, 'the primary saw no request at all');
    assert.deepEqual(gateway.ledger(), [], 'no debit at the primary');
    assert.deepEqual([...secondary.chargesByKey()], [[key, 1]], 'exactly one debit, at the secondary');
    const s = secondary.stats();
    assert.equal(s.requests, 2, 'the original request and the resume');
    assert.equal(s.debits, 1);
    assert.equal(s.replays, 1);
    t.diagnostic(
      `secondary: ${s.requests} POSTs (the original, cut short by the reload ${reloadedAfter} ms in, + one resume, replayed: ${s.replays}), ${s.debits} debit; primary: ${gateway.requests()} requests`,
    );
    assert.deepEqual(
      browser.problems.filter((p) => !ABORTED.test(p)),
      [],
    );
  },
);
