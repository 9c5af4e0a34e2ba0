// Issue 17 in Chromium: the tab and storage cases. Another script of the same origin (here: a second
// tab the test drives) posts hostile messages on the breaker's BroadcastChannel and writes forged
// entries into localStorage. A message can open the breaker at most openDurationMs ahead, bad ones
// are ignored and reported (never an uncaught exception in the handler), a tab opened later is not
// re-served a forged deadline, and persistentCheckoutKey does not trust or keep junk in storage.
/* global __t */ // the page's test hook, evaluated in Chromium
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { makeConsumer, launchBrowser } from './harness.mjs';
import { serveOrigin } from '../shared/origin-server.mjs';
import { startGateway } from '../support/gateway.mjs';

const PAGE = `import * as steadfast from 'steadfast';
const remote = [];
const breaker = new steadfast.CircuitBreaker({ failureThreshold: 2, openDurationMs: 3000, onStateChange: (s) => tabs.onStateChange(s) });
const tabs = steadfast.shareBreakerAcrossTabs(breaker, { channel: 'steadfast-tamper', onRemote: (e) => remote.push(e) });
globalThis.__t = { steadfast, breaker, remote, errors: [] };
addEventListener('error', (e) => __t.errors.push(String(e.message)));
addEventListener('unhandledrejection', (e) => __t.errors.push(String(e.reason)));
document.body.dataset.ready = 'true';
`;
const HTML = `<!doctype html><meta charset="utf-8"><title>tamper</title>
<script type="importmap">{ "imports": { "steadfast": "/node_modules/steadfast/index.browser.js" } }</script>
<script type="module" src="/page.js"></script><body></body>`;
let gateway;
let server;
let browser;

before(async () => {
  const app = await makeConsumer('shared-tamper', { files: { 'index.html': HTML, 'page.js': PAGE } });
  gateway = await startGateway({ seed: 9 });
  server = await serveOrigin(app, gateway.url);
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.close();
  await gateway?.close();
});

async function open(page) {
  await page.goto(`${server.url}/index.html`, { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached', timeout: 15_000 });
  return page;
}

test('hostile BroadcastChannel messages: clamped to now + openDurationMs, junk ignored and reported, nothing thrown', { timeout: 60_000 }, async () => {
  browser.problems.length = 0;
  const victim = await open(browser.page);
  const attacker = await open(await browser.context.newPage());
  await attacker.evaluate(() => {
    const c = new BroadcastChannel('steadfast-tamper');
    for (const m of [{ type: 'open', until: NaN }, { type: 'open', until: 'soon' }, { type: 'open', until: Infinity }, { type: 'close' }, null, 'open'])
      c.postMessage(m);
    c.close();
  });
  await victim.waitForFunction(() => __t.remote.filter((e) => e.type === 'invalid').length === 6, null, { timeout: 5_000 });
  assert.equal(await victim.evaluate(() => __t.breaker.currentState), 'closed');
  const sentAt = await attacker.evaluate(() => {
    const c = new BroadcastChannel('steadfast-tamper');
    c.postMessage({ type: 'open', until: 1e300 });
    c.close();
    return Date.now();
  });
  await victim.waitForFunction(() => __t.breaker.currentState === 'open', null, { timeout: 5_000 });
  const until = await victim.evaluate(() => __t.breaker.toJSON().openUntil);
  assert.ok(until - sentAt <= 3000 + 50, `open at most openDurationMs ahead, got ${until - sentAt} ms`);
  // A tab opened now is re-served the clamped deadline, not 1e300.
  const late = await open(await browser.context.newPage());
  await late.waitForFunction(() => __t.breaker.currentState === 'open', null, { timeout: 5_000 });
  // (Every open tab answers its hello, the attacker's page too: each answer is clamped on arrival.)
  const lateAhead = await late.evaluate(() => __t.breaker.toJSON().openUntil - Date.now());
  assert.ok(lateAhead <= 3000, `the late tab is open at most openDurationMs ahead, got ${lateAhead} ms`);
  // And after openDurationMs it probes again: the forged message did not hold it open for good.
  await victim.waitForFunction(() => __t.breaker.currentState === 'half-open', null, { timeout: 6_000, polling: 100 });
  assert.deepEqual(await victim.evaluate(() => __t.errors), []);
  await attacker.close();
  await late.close();
  assert.deepEqual(browser.problems, []);
});

test('a forged close from another tab never closes an open breaker; the tab whose probe succeeded can', { timeout: 60_000 }, async () => {
  browser.problems.length = 0;
  const victim = await open(browser.page);
  const prober = await open(await browser.context.newPage());
  const attacker = await open(await browser.context.newPage());
  await victim.evaluate(async () => {
    __t.remote.length = 0;
    const down = () => Promise.reject(new TypeError('Failed to fetch'));
    for (let i = 0; i < 2; i++) await __t.breaker.execute(down).catch(() => {});
  });
  await prober.waitForFunction(() => __t.breaker.currentState === 'open', null, { timeout: 5_000 });
  await attacker.evaluate(() => {
    const c = new BroadcastChannel('steadfast-tamper');
    const lease = '0'.repeat(32);
    for (const m of [{ type: 'closed' }, { type: 'probe', lease }, { type: 'closed', lease, proof: 'x' }]) c.postMessage(m);
    c.close();
  });
  await victim.waitForFunction(() => __t.remote.filter((e) => e.type === 'invalid').length >= 3, null, { timeout: 5_000 });
  assert.equal(await victim.evaluate(() => __t.breaker.currentState), 'open', 'still open: a message cannot close it during its cooldown');
  // After the cooldown the prober's probe succeeds: its proven close reaches the victim.
  await prober.waitForFunction(() => __t.breaker.currentState === 'half-open', null, { timeout: 6_000, polling: 100 });
  await victim.waitForFunction(() => __t.breaker.currentState === 'half-open', null, { timeout: 2_000, polling: 50 });
  assert.equal(await prober.evaluate(() => __t.breaker.execute(async () => 'ok')), 'ok');
  await victim.waitForFunction(() => __t.breaker.currentState === 'closed', null, { timeout: 5_000 });
  assert.deepEqual(await victim.evaluate(() => __t.errors), []);
  await prober.close();
  await attacker.close();
  assert.deepEqual(browser.problems, []);
});

test('a snapshot in localStorage with a far-future openUntil restores clamped', { timeout: 30_000 }, async () => {
  const page = await open(browser.page);
  const r = await page.evaluate(() => {
    localStorage.setItem(
      'breaker',
      JSON.stringify({ version: 1, kind: 'consecutive', state: 'open', openUntil: 1e300, probeSuccesses: 0, consecutiveFailures: 0, window: [] }),
    );
    const b = new __t.steadfast.CircuitBreaker({ failureThreshold: 2, openDurationMs: 1000, state: JSON.parse(localStorage.getItem('breaker')) });
    return { ahead: b.toJSON().openUntil - Date.now(), state: b.currentState };
  });
  assert.equal(r.state, 'open');
  assert.ok(r.ahead <= 1000, `clamped to openDurationMs, got ${r.ahead}`);
});

test('persistentCheckoutKey in localStorage: forged entries are not trusted, stale ones are pruned, the count is bounded', { timeout: 30_000 }, async () => {
  const page = await open(browser.page);
  const r = await page.evaluate(async () => {
    localStorage.clear();
    const now = Date.now();
    localStorage.setItem(
      'steadfast:checkout:cart-1',
      JSON.stringify({ key: 'attacker-key', status: 'succeeded', createdAt: now, outcome: { status: 'succeeded', reference: 'ch_fake' } }),
    );
    localStorage.setItem('steadfast:checkout:cart-2', JSON.stringify({ key: 'k\n', status: 'new', createdAt: now }));
    localStorage.setItem('steadfast:checkout:cart-3', JSON.stringify({ key: 'old', status: 'new', createdAt: now - 3 * 86_400_000 }));
    // As old but maybe charged: kept (only settling it or clear() ends it).
    localStorage.setItem('steadfast:checkout:cart-4', JSON.stringify({ key: 'old-unknown', status: 'unknown', createdAt: now - 3 * 86_400_000 }));
    for (let i = 0; i < 130; i++)
      localStorage.setItem(`steadfast:checkout:filler-${i}`, JSON.stringify({ key: `f${i}`, status: 'new', createdAt: now - 10_000 + i }));
    const one = await __t.steadfast.persistentCheckoutKey({ cartId: 'cart-1' });
    const two = await __t.steadfast.persistentCheckoutKey({ cartId: 'cart-2' });
    const ours = Object.keys(localStorage).filter((k) => k.startsWith('steadfast:checkout:'));
    return {
      one: one.key,
      oneState: (await one.state()).status,
      two: two.key,
      cart3: localStorage.getItem('steadfast:checkout:cart-3'),
      cart4: localStorage.getItem('steadfast:checkout:cart-4') !== null,
      count: ours.length,
    };
  });
  assert.notEqual(r.one, 'attacker-key');
  assert.equal(r.oneState, 'new', 'a forged "succeeded" is not replayed');
  assert.notEqual(r.two, 'k\n');
  assert.equal(r.cart3, null, 'a never-sent entry older than a day is pruned');
  assert.equal(r.cart4, true, 'an unknown entry is never aged out');
  assert.ok(r.count <= 101, `bounded: ${r.count} entries`);
});
