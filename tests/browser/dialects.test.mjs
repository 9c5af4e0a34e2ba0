// engines: chromium firefox webkit
// Each gateway dialect in each browser engine: the packed package in a plain page charges a local
// gateway per dialect (tests/support/dialect-gateway.mjs, on another 127.0.0.1 port: CORS) and must
// show the same behaviour as in Node (tests/js/dialects.test.mjs): the key in the dialect's header
// and syntax, a replay marked where the gateway marks it, an "in progress" answer leaving the charge
// unknown, and no re-send past the retention window. The page's result crosses back as JSON (a
// WebDriver engine would turn an `undefined` field into null, Playwright keeps it): an absent field is
// absent in every engine.
import { test, before, after } from 'node:test';
import { counter, makeConsumer, serve, launchBrowser, ENGINE_LABEL } from './harness.mjs';
import { startDialectGateway } from '../support/dialect-gateway.mjs';

const DIALECTS = ['stripe', 'ietf', 'adyen', 'paypal', 'checkout'];
const PAGE = '<!doctype html><meta charset="utf-8"><title>dialects</title><p id="ready">ready</p>';

let app;
let server;
let browser;

before(async () => {
  app = await makeConsumer('dialects', { files: { 'index.html': PAGE } });
  server = await serve(app);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** Run one dialect's scenarios in the page against `urls` (one gateway per scenario). */
function inPage({ dialect, urls, retentionMs }) {
  return (async () => {
    const s = await import('/node_modules/steadfast/index.browser.js');
    await s.init?.();
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    const CHARGE = { amountCents: 4999, currency: 'usd' };
    const client = (url, d = dialect, extra = {}) => s.createCheckoutClient({ endpoint: url, dialect: d, breaker: false, retry: { maxAttempts: 1 }, ...extra });
    const d = s.gatewayDialect(dialect);
    const out = { dialect: d };
    out.first = await client(urls.plain).charge(CHARGE, { idempotencyKey: 'order-1-"quoted"' });
    out.again = await client(urls.plain).charge(CHARGE, { idempotencyKey: 'order-1-"quoted"' });
    if (d.inProgressStatus !== undefined) {
      const a = client(urls.busy).charge(CHARGE, { idempotencyKey: 'k-busy' });
      await sleep(30);
      out.busy = await client(urls.busy).charge(CHARGE, { idempotencyKey: 'k-busy' });
      out.busyFirst = await a;
    }
    const c = client(urls.old, { base: dialect, retentionMs }, { attemptTimeoutMs: 40 });
    out.old = await c.charge(CHARGE, { idempotencyKey: 'k-old' });
    await sleep(retentionMs + 20);
    const r = await c.reconcile('k-old');
    out.reconciled = { status: r.status, reason: r.reason, name: r.error?.name, code: r.error?.code };
    return JSON.parse(JSON.stringify(out));
  })();
}

for (const dialect of DIALECTS) {
  test(`${ENGINE_LABEL}: ${dialect} dialect against its gateway`, { timeout: 60_000 }, async (t) => {
    const check = counter(`dialect ${dialect}`);
    const retentionMs = 150;
    const plain = await startDialectGateway({ dialect });
    const busy = await startDialectGateway({ dialect, holdMs: 200 });
    const old = await startDialectGateway({ dialect, retentionMs, holdMs: 120 });
    t.after(() => Promise.all([plain.close(), busy.close(), old.close()]));
    browser.problems.length = 0;
    await browser.page.goto(`${server.url}/index.html`, { waitUntil: 'load' });
    const out = await browser.page.evaluate(inPage, { dialect, urls: { plain: plain.url, busy: busy.url, old: old.url }, retentionMs });
    const key = 'order-1-"quoted"';
    check.deepEqual(
      plain.seen.rawKeys,
      [out.dialect.syntax === 'sf-string' ? '"order-1-\\"quoted\\""' : key, out.dialect.syntax === 'sf-string' ? '"order-1-\\"quoted\\""' : key],
      'the header, in the syntax',
    );
    check.equal(out.first.status, 'succeeded');
    check.equal(out.again.reference, out.first.reference, 'the second client got the first charge');
    check.equal(plain.seen.processed, 1, 'charged once');
    check.equal(out.again.replayed, out.dialect.replayHeader === undefined ? undefined : true, 'replayed where the gateway marks it');
    let planned = 8;
    if (out.dialect.inProgressStatus !== undefined) {
      check.equal(out.busy.status, 'unknown', `in progress (${out.dialect.inProgressStatus}) is unknown, never unavailable`);
      check.equal(out.busyFirst.status, 'succeeded');
      planned += 2;
    }
    check.equal(out.old.status, 'unknown');
    check.deepEqual(out.reconciled, { status: 'unknown', reason: 'key-expired', name: 'IdempotencyKeyExpiredError', code: 'IDEMPOTENCY_KEY_EXPIRED' });
    check.equal(old.seen.requests, 1, 'nothing re-sent past retention');
    check.done(planned);
    if (browser.problems.some((p) => !p.includes('Failed to load resource'))) t.diagnostic(`page problems: ${browser.problems.join('; ')}`);
  });
}
