// engines: chromium firefox webkit
// Hedging in each browser engine: the packed package in a plain page (import map), served by the
// key-honouring gateway (tests/support/gateway.mjs) whose passthrough also serves the page and a
// slow-tail route. (1) A GET whose first copy hangs is answered by its hedge; the server sees the
// loser's connection closed by the browser, before the first copy's answer was ever written. (2) A
// keyed POST whose first copy debits and hangs is answered by its hedge's replay: one debit. (3) A POST
// without a key is refused before anything leaves. How long each call took is printed, not asserted.
import { test, before, after } from 'node:test';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { counter, makeConsumer, launchBrowser, ENGINE_LABEL } from './harness.mjs';
import { startGateway } from '../support/gateway.mjs';

const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm', '.json': 'application/json' };

const PAGE = `<!doctype html><meta charset="utf-8"><title>hedge</title><link rel="icon" href="data:,">
<script type="importmap">{ "imports": { "steadfast": "/node_modules/steadfast/index.browser.js" } }</script>
<script type="module">
  import { ready, resilientFetch, events, HedgeNotSafeError } from 'steadfast';
  await ready;
  const kinds = [];
  events.onHedge((e) => kinds.push(e.kind + ':' + e.copy));
  const out = {};
  let t = performance.now();
  const get = await resilientFetch('/slow/item', undefined, { hedge: { delayMs: 40 }, breaker: false, budget: false });
  out.get = { status: get.status, text: await get.text(), ms: performance.now() - t, kinds: kinds.splice(0) };
  t = performance.now();
  const post = await resilientFetch('/v1/charges', {
    method: 'POST',
    headers: { 'Idempotency-Key': 'browser-hedge-1', 'content-type': 'application/json' },
    body: JSON.stringify({ amountCents: 1299, currency: 'usd' }),
  }, { hedge: { delayMs: 60 }, breaker: false, budget: false, retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 }, attemptTimeoutMs: 5000 });
  out.post = { status: post.status, replayed: post.headers.get('idempotent-replayed'), ms: performance.now() - t, kinds: kinds.splice(0) };
  out.refused = await resilientFetch('/v1/charges', { method: 'POST', body: '{}' }, { hedge: { delayMs: 10 }, breaker: false, budget: false })
    .then(() => 'sent', (e) => (e instanceof HedgeNotSafeError ? e.code : String(e)));
  globalThis.__hedge = out;
  document.title = 'done';
</script>`;

let app;
let gw;
let browser;
const slow = [];

before(async () => {
  app = await makeConsumer('hedge', { files: { 'index.html': PAGE } });
  const passthrough = (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (path.startsWith('/v1/')) return false;
    if (path.startsWith('/slow/')) {
      // The first request hangs (until the browser lets go, or 5 s); the others answer at once.
      const entry = { n: slow.length, abandoned: false, answered: false };
      slow.push(entry);
      const timer = setTimeout(
        () => {
          entry.answered = true;
          res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store', connection: 'close' });
          res.end(`answer ${entry.n}`);
        },
        entry.n === 0 ? 5_000 : 0,
      );
      res.on('close', () => {
        clearTimeout(timer);
        if (!res.writableEnded) entry.abandoned = true;
      });
      return true;
    }
    const file = normalize(join(app, path === '/' ? 'index.html' : path));
    if (!file.startsWith(app + sep)) {
      res.writeHead(403, { connection: 'close' }).end();
      return true;
    }
    readFile(file).then(
      (body) =>
        res.writeHead(200, { 'content-type': MIME[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store', connection: 'close' }).end(body),
      () => res.writeHead(404, { connection: 'close' }).end(),
    );
    return true;
  };
  // keepAlive off: a browser silently re-sends a request whose reused connection dropped.
  gw = await startGateway({ seed: 5, keepAlive: false, passthrough });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await gw?.close();
});

test(`${ENGINE_LABEL}: a hedge answers a stuck GET and a hung keyed POST (one debit); losers are let go`, { timeout: 60_000 }, async (t) => {
  const check = counter('hedge page');
  gw.forceNext('debitThenTimeout');
  const { page } = browser;
  await page.goto(`${gw.url}/index.html`, { waitUntil: 'load' });
  await page
    .waitForFunction(() => document.title === 'done', null, { timeout: 20_000 })
    .catch((e) => {
      throw new Error(`${e.message}; page problems: ${JSON.stringify(browser.problems)}`);
    });
  const r = await page.evaluate(() => globalThis.__hedge);
  t.diagnostic(JSON.stringify(r));
  t.diagnostic(`${ENGINE_LABEL}: GET answered in ${Math.round(r.get.ms)} ms, POST in ${Math.round(r.post.ms)} ms`);
  check.equal(r.get.status, 200);
  check.equal(r.get.text, 'answer 1', 'the hedge answered the GET');
  check.deepEqual(r.get.kinds, ['started:1', 'won:1', 'cancelled:0']);
  check.equal(slow.length, 2, 'one hedge was sent');
  const start = Date.now();
  while (!slow[0].abandoned && !slow[0].answered && Date.now() - start < 4_000) await new Promise((ok) => setTimeout(ok, 10));
  check.ok(slow[0].abandoned, "the server saw the losing GET's connection closed by the browser");
  check.equal(slow[0].answered, false, "the losing GET's answer was never written: the page had its answer without the tail");
  check.equal(r.post.status, 200);
  check.equal(r.post.replayed, 'true', "the hedge got the first copy's stored answer");
  check.deepEqual(r.post.kinds, ['started:1', 'won:1', 'cancelled:0']);
  check.equal(gw.chargesByKey().get('browser-hedge-1'), 1, 'exactly one debit');
  check.equal(r.refused, 'HEDGE_NOT_SAFE', 'a POST without a key is refused');
  check.deepEqual(browser.problems, [], 'no page errors or console errors');
  check.done(12);
});
