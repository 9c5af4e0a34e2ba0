// engines: chromium firefox webkit
// No bundler: the packed tarball installed into a plain project whose node_modules the static server
// exposes. (1) The checkout page maps 'steadfast' to /node_modules/steadfast/index.browser.js with an
// import map and imports it from a <script type="module">. (2) A module Web Worker imports the browser
// entry by path (no `window` there). (3) The README's createCheckoutClient example in the page. Run in
// each engine (see harness.mjs). Screenshots: tests/.out/browser-unbundled*-<engine>.png.
import { test, before, after } from 'node:test';
import { counter, makeConsumer, serve, launchBrowser } from './harness.mjs';
import { payTwice, checkWasmServed } from './checkout-page.mjs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FIXTURES, OUT, ENGINE, ENGINE_LABEL } from './harness.mjs';

const IMPORT_MAP = '<script type="importmap">{ "imports": { "steadfast": "/node_modules/steadfast/index.browser.js" } }</script>';
// The stub backend for the checkout-client test: POST /api/charges answers 503 once, then 200.
const charges = [];
function chargesApi(req, body) {
  charges.push({ method: req.method, path: req.url, key: req.headers['idempotency-key'], type: req.headers['content-type'], body });
  if (charges.length === 1) return { status: 503, headers: { 'retry-after': '0' }, body: { error: { type: 'api_error' } } };
  return { status: 200, body: { id: `ch_api_${charges.length}`, amountCents: JSON.parse(body).amountCents } };
}

let app;
let server;
let browser;

before(async () => {
  const html = await readFile(join(FIXTURES, 'index.html'), 'utf8');
  app = await makeConsumer('unbundled', {
    copy: ['checkout.js', 'worker.js', 'worker.html'],
    files: { 'index.html': html.replace('<!-- IMPORT MAP -->', IMPORT_MAP) },
  });
  server = await serve(app, { api: chargesApi });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test(`${ENGINE_LABEL}: plain HTML + import map: retried charge with one key, replay`, { timeout: 60_000 }, async (t) => {
  const check = counter(`unbundled page ${ENGINE}`);
  server.requests.length = 0;
  browser.problems.length = 0;
  t.diagnostic(`${browser.label} ${browser.version}, ${server.url}`);
  const { screenshot } = await payTwice(browser, `${server.url}/index.html`, check, `browser-unbundled-${ENGINE}`);
  t.diagnostic(`screenshot: ${screenshot}`);
  checkWasmServed(server, check);
  const entry = server.requests.find((r) => r.path === '/node_modules/steadfast/index.browser.js');
  check.equal(entry?.type, 'text/javascript; charset=utf-8', 'the import map led to the browser entry');
  check.ok(!server.requests.some((r) => r.path.includes('index.node.js') || r.path.includes('init.node.js')), 'the Node loader was never fetched');
  check.deepEqual(browser.problems, [], 'no page errors, console errors or warnings');
  check.done(17);
});

test(`${ENGINE_LABEL}: module Web Worker: the browser entry loads without window, charges, replays`, { timeout: 60_000 }, async (t) => {
  const check = counter(`worker ${ENGINE}`);
  server.requests.length = 0;
  browser.problems.length = 0;
  const { page } = browser;
  await page.goto(`${server.url}/worker.html`, { waitUntil: 'load' });
  await page.waitForSelector('#outcome[data-status]', { timeout: 15_000 });
  const r = await page.evaluate(() => globalThis.__worker);
  check.ok(r?.ok, `the worker charged: ${JSON.stringify(r)}`);
  check.equal(r.hasWindow, false, 'a worker has no window');
  check.equal(r.hasDocument, false);
  check.equal(r.calls, 2, 'one transient failure (504), then success');
  check.deepEqual(
    r.keys.map((k) => k.attempt),
    [1, 2],
  );
  check.ok(
    r.keys.every((k) => k.key === r.key),
    `every attempt carried ${r.key}`,
  );
  check.deepEqual(r.result, { reference: 'ch_worker_2', amountCents: 2599 });
  check.deepEqual(r.replay, r.result, 'the replay returns the stored result without a third call');
  check.match(r.version, /^\d+\.\d+\.\d+/);
  checkWasmServed(server, check);
  check.deepEqual(browser.problems, [], 'no page errors, console errors or warnings');
  await page.screenshot({ path: join(OUT, `browser-unbundled-worker-${ENGINE}.png`) });
  t.diagnostic(`worker outcome: ${await page.textContent('#outcome')}`);
  check.done(14);
});

// The npm README's browser example, for real: createCheckoutClient with a relative endpoint, the page's own
// fetch, a 503 then a 200 from the server, a double click (two charge() calls at once) and a later click.
// Chromium imports 'steadfast' through the page's import map; in a WebDriver-executed script the import
// map does not apply (the script is not a module of the page), so Firefox and WebKit import the same
// URL the map points at — the same module instance the page loaded.
test(
  `${ENGINE_LABEL}: createCheckoutClient in the page (the README example): one key on the wire, a double click charges once`,
  { timeout: 60_000 },
  async () => {
    const check = counter(`checkout client ${ENGINE}`);
    browser.problems.length = 0;
    charges.length = 0;
    const { page } = browser;
    await page.goto(`${server.url}/index.html`, { waitUntil: 'load' });
    await page.waitForSelector('body[data-ready="true"]', { timeout: 15_000 });
    const specifier = ENGINE === 'chromium' ? 'steadfast' : `${server.url}/node_modules/steadfast/index.browser.js`;
    const r = await page.evaluate(async (specifier) => {
      const { createCheckoutClient, newIdempotencyKey } = await import(specifier);
      const checkout = createCheckoutClient({ endpoint: '/api/charges', retry: { baseDelayMs: 5, maxDelayMs: 20 } });
      const key = newIdempotencyKey();
      const order = { amountCents: 4999, currency: 'usd' };
      const [first, second] = await Promise.all([checkout.charge(order, { idempotencyKey: key }), checkout.charge(order, { idempotencyKey: key })]);
      const later = await checkout.charge(order, { idempotencyKey: key });
      return { key, first, second, later, size: checkout.store.size };
    }, specifier);
    check.deepEqual(r.first, { status: 'succeeded', reference: 'ch_api_2', key: r.key });
    check.deepEqual(r.second, r.first, 'a double click gets the same outcome');
    check.deepEqual(r.later, r.first, 'a later click replays');
    check.equal(charges.length, 2, `two POSTs (503, then 200): ${JSON.stringify(charges)}`);
    check.ok(
      charges.every((c) => c.method === 'POST' && c.path === '/api/charges'),
      'relative endpoint resolved against the page',
    );
    check.ok(
      charges.every((c) => c.key === r.key),
      `every attempt carried ${r.key}`,
    );
    check.ok(charges.every((c) => c.type === 'application/json'));
    check.deepEqual(JSON.parse(charges[1].body), { amountCents: 4999, currency: 'usd' });
    check.equal(r.size, 1);
    check.deepEqual(
      browser.problems.filter((p) => !p.includes('503')),
      [],
      'no page errors or console errors besides the 503 the stub answered',
    );
    check.done(10);
  },
);
