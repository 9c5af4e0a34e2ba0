// A scripted HTTP server on 127.0.0.1 (ephemeral port) for the Rust `fetch` tests inside wasm
// (tests/web_wasm.rs, run by scripts/test-wasm-web.sh in Node and headless Chromium).
//
//   POST /scenario   body: [{ status, headers?, body?, delayMs?, drop? }, …]  →  { id }
//   ANY  /s/<id>     answers with the scenario's next step (the last one repeats); `drop`
//                    destroys the socket with no response (a network error after sending)
//   GET  /log/<id>   → [{ method, key }, …] every request /s/<id> received, in order (key: the
//                    Idempotency-Key, Cko-Idempotency-Key or PayPal-Request-Id header as sent)
//
// CORS is open (the browser runs the tests from wasm-bindgen-test's own origin): preflights are
// answered and never logged, and Retry-After / Stripe-Should-Retry are exposed to fetch.
// Run: `node tests/web/server.mjs` prints `origin http://127.0.0.1:<port>` and serves until killed.
import http from 'node:http';

const scenarios = new Map();
let next = 1;

// `connection: close` on every answer: a browser silently re-sends a request whose REUSED
// keep-alive connection dropped before any response byte (all three engines do it for such
// connections), so a scripted drop is seen by the code under test only on a fresh connection.
const CORS = {
  connection: 'close',
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, QUERY',
  'access-control-allow-headers': 'content-type, idempotency-key, cko-idempotency-key, paypal-request-id',
  'access-control-expose-headers': 'retry-after, stripe-should-retry, idempotent-replayed',
  'access-control-max-age': '600',
};

function readBody(req) {
  return new Promise((ok, fail) => {
    let b = '';
    req
      .on('data', (c) => (b += c))
      .on('end', () => ok(b))
      .on('error', fail);
  });
}

const server = http.createServer(async (req, res) => {
  try {
    const path = new URL(req.url, 'http://x').pathname;
    if (req.method === 'OPTIONS') {
      res.writeHead(204, CORS).end();
      return;
    }
    if (path === '/scenario' && req.method === 'POST') {
      const steps = JSON.parse(await readBody(req));
      if (!Array.isArray(steps) || steps.length === 0) throw new Error('a scenario is a non-empty array');
      const id = String(next++);
      scenarios.set(id, { steps, log: [] });
      res.writeHead(200, { ...CORS, 'content-type': 'application/json' }).end(JSON.stringify({ id }));
      return;
    }
    const [, kind, id] = path.split('/');
    const s = scenarios.get(id);
    if (s === undefined) {
      res.writeHead(404, CORS).end('no such scenario');
      return;
    }
    if (kind === 'log') {
      res.writeHead(200, { ...CORS, 'content-type': 'application/json' }).end(JSON.stringify(s.log));
      return;
    }
    await readBody(req);
    // The key under whichever dialect's header carries it (Idempotency-Key, Cko-Idempotency-Key, PayPal-Request-Id).
    const key = req.headers['idempotency-key'] ?? req.headers['cko-idempotency-key'] ?? req.headers['paypal-request-id'] ?? null;
    s.log.push({ method: req.method, key });
    const step = s.steps[Math.min(s.log.length - 1, s.steps.length - 1)];
    if (step.delayMs) await new Promise((ok) => setTimeout(ok, step.delayMs));
    if (step.drop) {
      req.socket.destroy();
      return;
    }
    res.writeHead(step.status ?? 200, { ...CORS, 'content-type': 'text/plain', ...(step.headers ?? {}) }).end(step.body ?? '');
  } catch (e) {
    res.writeHead(500, CORS).end(String(e));
  }
});
server.keepAliveTimeout = 1000;
server.listen(0, '127.0.0.1', () => {
  console.log(`origin http://127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
