// The local HTTP server the runtimes' program talks to (127.0.0.1 only, an ephemeral port):
//   GET  /flaky/<id>  503 for the first two requests of <id>, then 200 { served: n }
//   POST /charge      a gateway: { reference } per idempotency-key (the same key, the same reference)
//   GET  /seen/<key>  { count }: how many charge requests carried <key>
//   POST /reset/<id>  reads the whole request, then resets the connection (TCP RST): no answer
//   GET  /resets/<id> { count }: how many requests /reset/<id> read
// CORS is open so that the Next.js page (another origin) can call it from the browser.
import { createServer } from 'node:http';

export async function startServer() {
  const flaky = new Map();
  const charges = new Map();
  const resets = new Map();
  const server = createServer((req, res) => {
    const send = (status, body) => {
      res.writeHead(status, {
        'content-type': 'application/json',
        'access-control-allow-origin': '*',
        'access-control-allow-headers': 'content-type, idempotency-key',
        'access-control-allow-methods': 'GET, POST',
      });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url, 'http://127.0.0.1');
    if (req.method === 'OPTIONS') return send(204, {});
    const [, route, id] = url.pathname.split('/');
    if (route === 'flaky') {
      const n = (flaky.get(id) ?? 0) + 1;
      flaky.set(id, n);
      return n <= 2 ? send(503, { served: n }) : send(200, { served: n });
    }
    if (route === 'charge' && req.method === 'POST') {
      const key = req.headers['idempotency-key'];
      const seen = charges.get(key) ?? { count: 0, reference: `ch_${charges.size + 1}` };
      seen.count += 1;
      charges.set(key, seen);
      return send(200, { reference: seen.reference });
    }
    if (route === 'reset') {
      req.resume();
      req.on('end', () => {
        resets.set(id, (resets.get(id) ?? 0) + 1);
        req.socket.resetAndDestroy();
      });
      return undefined;
    }
    if (route === 'resets') return send(200, { count: resets.get(id) ?? 0 });
    if (route === 'seen') return send(200, { count: charges.get(decodeURIComponent(id))?.count ?? 0 });
    return send(404, { error: 'not found' });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}
