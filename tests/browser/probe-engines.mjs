// Measures the engine behaviours the README's "Browser support" lists, in each engine, and prints them
// (not a test: engines may change; the suites test the package's handling of them). Needs no build:
//   . scripts/env.sh && node tests/browser/probe-engines.mjs [chromium firefox webkit]
// Everything is served from 127.0.0.1 on an ephemeral port.
import http from 'node:http';
import { launchBrowser } from './harness.mjs';

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const PAGE = `<!doctype html><meta charset="utf-8"><title>probe</title><body><script>
const log = (m) => { const l = JSON.parse(localStorage.getItem('log') || '[]'); l.push(m); localStorage.setItem('log', JSON.stringify(l)); };
addEventListener('beforeunload', () => log('beforeunload'));
addEventListener('pagehide', () => log('pagehide'));
window.slowPost = () => fetch('/slow', { method: 'POST', body: 'x' }).then(() => log('fetch resolved'), (e) => log('fetch rejected: ' + e.name + ': ' + e.message));
</script>`;

const seen = new Map(); // id -> request count
let held = [];
// Every response closes its connection (a fresh connection per request), unless the URL has `ka`:
// then the connection is kept alive and the next request reuses it (section 1b).
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (!url.searchParams.has('ka')) res.setHeader('connection', 'close');
  const [, kind, id] = url.pathname.split('/');
  if (kind === 'drop') {
    seen.set(id, (seen.get(id) ?? 0) + 1);
    if (seen.get(id) <= Number(url.searchParams.get('n'))) return void req.socket.destroy();
    return void res.writeHead(200).end('ok');
  }
  if (kind === 'warm') return void res.writeHead(200).end('warm');
  if (kind === 'count') return void res.writeHead(200, { 'content-type': 'application/json' }).end(String(seen.get(id) ?? 0));
  if (kind === 'hold') {
    held.push(id);
    req.resume();
    return void setTimeout(() => res.writeHead(200).end('{}'), 350);
  }
  if (kind === 'slow') return void setTimeout(() => res.writeHead(200).end('late'), 3_000);
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${server.address().port}`;

const engines = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['chromium', 'firefox', 'webkit'];
for (const engine of engines) {
  const browser = await launchBrowser(engine);
  try {
    const { page } = browser;
    await page.goto(`${base}/`);
    console.log(`${browser.label} ${browser.version}`);
    // 1. A dropped connection: the error, and who re-sends what.
    const drops = await page.evaluate(async () => {
      const out = [];
      for (const [method, n] of [
        ['GET', 1],
        ['GET', 5],
        ['GET', 20],
        ['HEAD', 2],
        ['POST', 1],
        ['PUT', 1],
      ]) {
        const id = Math.random().toString(36).slice(2);
        let js;
        try {
          js = `ok ${(await fetch(`/drop/${id}?n=${n}`, { method, cache: 'no-store', body: method === 'POST' || method === 'PUT' ? 'x' : undefined })).status}`;
        } catch (e) {
          js = `${e.name}: ${e.message}`;
        }
        const requests = await (await fetch(`/count/${id}`, { cache: 'no-store' })).json();
        out.push(`  ${method} dropped ${n}×: fetch → ${js}; the server saw ${requests} request(s)`);
      }
      return out;
    });
    console.log(drops.join('\n'));
    // 1b. The same drop on a REUSED keep-alive connection (warmed by a request just before).
    const reused = await page.evaluate(async () => {
      const out = [];
      for (const method of ['GET', 'POST', 'PUT']) {
        const id = Math.random().toString(36).slice(2);
        await (await fetch('/warm/x?ka=1', { cache: 'no-store' })).text();
        let js;
        try {
          js = `ok ${(await fetch(`/drop/${id}?n=1&ka=1`, { method, cache: 'no-store', body: method === 'GET' ? undefined : 'x' })).status}`;
        } catch (e) {
          js = `${e.name}: ${e.message}`;
        }
        const requests = await (await fetch(`/count/${id}`, { cache: 'no-store' })).json();
        out.push(`  ${method} dropped 1× on a reused connection: fetch → ${js}; the server saw ${requests} request(s)`);
      }
      return out;
    });
    console.log(reused.join('\n'));
    // 2. Requests queued behind the 6-connections-per-host limit, aborted before they were sent.
    held = [];
    const t0 = Date.now();
    await page.evaluate(async () => {
      await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const ac = new AbortController();
          const timer = setTimeout(() => ac.abort(), 200);
          try {
            await (await fetch(`/hold/${i}`, { method: 'POST', body: '{}', signal: ac.signal })).text();
          } catch {
            // aborted: expected
          } finally {
            clearTimeout(timer);
          }
        }),
      );
    });
    await sleep(2_000);
    console.log(
      `  20 POSTs held 350 ms, each aborted at 200 ms: the server received ${held.length} (${held.length - 6} sent after their abort) in ${Date.now() - t0} ms`,
    );
    // 3. Leaving the page while a fetch is in flight: the order of events.
    await page.evaluate(() => {
      localStorage.clear();
      window.slowPost();
    });
    await sleep(300);
    await page.reload();
    await sleep(300);
    console.log(`  reload during a fetch: ${(await page.evaluate(() => JSON.parse(localStorage.getItem('log') ?? '[]'))).join(' → ')}`);
  } finally {
    await browser.close();
  }
}
server.closeAllConnections();
server.close();
