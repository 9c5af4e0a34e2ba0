// The fault suite's server: ONE origin (127.0.0.1, ephemeral port) that is at once the Stripe-like
// test gateway (tests/support/gateway.mjs: /v1/charges, /v1/settlements), the control routes the
// cases drive faults and read the ledger through, and a static server for the pages and the
// INSTALLED package. One origin, so a page needs no CORS; control over HTTP, so any engine (and
// any driver: Playwright, WebDriver, none) runs the same page unchanged.
//
// Every response says `Connection: close`: browsers silently re-send a request whose REUSED
// connection dropped, which would hide the "debit then drop" fault from the page.
//
//   GET  /index.html   the cases, run in the page           → globalThis.__suite
//   GET  /worker.html  the same cases in a module Worker    → globalThis.__suite
//   GET  /soak.html?charges=2000                             → globalThis.__suite (+ .figures)
//   GET  /offline.html exposes __offline() / __offlineAfter(key) for a driver that can go offline
//   GET  /node_modules/steadfast/…  the installed package (packageDir)
//   POST /__control/force {fault, count}   POST /__control/reset   POST /__control/configure {seed, faults}
//   POST /__control/release  (process every held processAfterGiveUp request now)
//   GET  /__ledger[?key=]   GET /__stats   GET /__drop (destroys the socket)
//   ANY  /__flaky/<id>?drop=N&fail=M   drop N, then 503 M times, then 200 {id, n, method}
//   GET  /__flaky-count/<id>  → { n, methods, bodies, types } (types: each request's content-type)
//
// CLI (for other drivers): `node tests/browser/faults/server.mjs [packageDir]` prints
// `FAULTS_URL=http://127.0.0.1:<port>` and serves until SIGTERM/SIGINT.
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startGateway } from '../../support/gateway.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/**
 * The settings every case expects: 429 says Retry-After: 1; a processAfterGiveUp request is held
 * until a case releases it (POST /__control/release), so no case depends on a machine's speed.
 */
export const FAULT_SETTINGS = Object.freeze({ retryAfterSeconds: 1, slowMs: 300, timeoutHoldMs: 5_000, processLateMs: 60_000 });

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.ts': 'text/plain',
};

function readJson(req) {
  return new Promise((ok, fail) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      try {
        ok(text === '' ? {} : JSON.parse(text));
      } catch (e) {
        fail(e);
      }
    });
    req.on('error', fail);
  });
}

function reply(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', connection: 'close' });
  res.end(text);
}

/**
 * Start the fault server. `packageDir`: the installed steadfast (default tests/node_modules/steadfast,
 * where scripts/install-tarball.sh puts the packed tarball). Returns { url, gateway, close() }.
 */
export async function startFaultServer({ packageDir = join(ROOT, 'tests', 'node_modules', 'steadfast'), seed = 12 } = {}) {
  const pkg = resolve(packageDir);
  const flaky = new Map(); // id -> { n, methods, bodies, types }
  /** `/__endless`: requests answered with a 200 whose body never ends, and how many the client let go mid-body. */
  const endless = { requests: 0, closed: 0 };
  const MB = Buffer.alloc(1 << 20, 0x61);
  let gw;

  async function serveFile(res, base, rel) {
    const file = normalize(join(base, rel));
    if (file !== base && !file.startsWith(base + sep)) return reply(res, 403, { error: 'outside root' });
    try {
      const body = await readFile(file);
      res.writeHead(200, {
        'content-type': MIME[extname(file)] ?? 'application/octet-stream',
        'content-length': body.length,
        'cache-control': 'no-store',
        connection: 'close',
      });
      res.end(body);
    } catch {
      reply(res, 404, { error: `no ${rel}` });
    }
  }

  async function control(req, res, url) {
    const path = url.pathname;
    if (path === '/__drop') return void req.socket.destroy();
    if (path === '/__stats') return reply(res, 200, gw.stats());
    if (path === '/__ledger') {
      const key = url.searchParams.get('key');
      return reply(res, 200, key === null ? gw.ledger() : gw.ledger().filter((e) => e.idempotencyKey === key));
    }
    if (path === '/__endless-count') return reply(res, 200, endless);
    if (path === '/__endless') {
      // A 200 whose body never ends, as fast as the socket takes it, until the client lets go.
      endless.requests += 1;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.write('{"reference":"ch_endless","pad":"');
      const pump = () => {
        while (!res.destroyed && res.write(MB));
      };
      res.on('drain', pump);
      res.on('close', () => {
        if (!res.writableEnded) endless.closed += 1;
      });
      pump();
      return;
    }
    if (path.startsWith('/__flaky-count/')) {
      const s = flaky.get(path.slice('/__flaky-count/'.length)) ?? { n: 0, methods: [], bodies: [], types: [] };
      return reply(res, 200, s);
    }
    if (path.startsWith('/__flaky/')) {
      const id = path.slice('/__flaky/'.length);
      const s = flaky.get(id) ?? { n: 0, methods: [], bodies: [], types: [] };
      flaky.set(id, s);
      const chunks = [];
      for await (const c of req) chunks.push(c);
      s.n += 1;
      s.methods.push(req.method);
      s.bodies.push(Buffer.concat(chunks).toString('utf8'));
      s.types.push(req.headers['content-type'] ?? null);
      const drop = Number(url.searchParams.get('drop') ?? 0);
      const fail = Number(url.searchParams.get('fail') ?? 0);
      if (s.n <= drop) return void req.socket.destroy();
      if (s.n <= drop + fail) return reply(res, 503, { error: 'injected 503' });
      return reply(res, 200, { id, n: s.n, method: req.method });
    }
    if (req.method !== 'POST') return reply(res, 405, { error: 'POST' });
    const body = await readJson(req);
    if (path === '/__control/force') {
      gw.forceNext(body.fault, body.count ?? 1);
      return reply(res, 200, { ok: true });
    }
    if (path === '/__control/release') return reply(res, 200, { released: gw.releaseHeld() });
    if (path === '/__control/reset') {
      gw.reset();
      flaky.clear();
      endless.requests = 0;
      endless.closed = 0;
      return reply(res, 200, { ok: true });
    }
    if (path === '/__control/configure') {
      gw.configure({ seed: body.seed, faults: { ...FAULT_SETTINGS, ...body.faults } });
      return reply(res, 200, { ok: true });
    }
    return reply(res, 404, { error: `no control route ${path}` });
  }

  const passthrough = (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = decodeURIComponent(url.pathname);
    if (path.startsWith('/v1/')) return false; // the gateway's
    req.on('error', () => {});
    res.on('error', () => {});
    const done = (p) => p.catch((e) => (res.headersSent ? req.socket.destroy() : reply(res, 500, { error: String(e?.message ?? e) })));
    if (path.startsWith('/__')) done(control(req, res, url));
    else if (path.startsWith('/node_modules/steadfast/')) done(serveFile(res, pkg, path.slice('/node_modules/steadfast/'.length)));
    else done(serveFile(res, resolve(HERE), path === '/' ? 'index.html' : path.slice(1)));
    return true;
  };

  gw = await startGateway({ seed, faults: { ...FAULT_SETTINGS }, keepAlive: false, passthrough });
  return { url: gw.url, gateway: gw, close: () => gw.close() };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const server = await startFaultServer(process.argv[2] ? { packageDir: process.argv[2] } : {});
  console.log(`FAULTS_URL=${server.url}`);
  const stop = () => server.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
