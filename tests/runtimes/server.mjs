// The local HTTP server the runtimes' program talks to (127.0.0.1 only, an ephemeral port):
//   GET  /flaky/<id>  503 for the first two requests of <id>, then 200 { served: n }
//   POST /charge      a gateway: { reference } per idempotency-key (the same key, the same reference)
//   GET  /seen/<key>  { count }: how many charge requests carried <key>
//   POST /reset/<id>  reads the whole request, then resets the connection (TCP RST): no answer
//   GET  /resets/<id> { count }: how many requests /reset/<id> read
// The real faults of faults.js (each counts what reached it, read back with /hits/<route>/<id>):
//   POST /cut/<id>?how=reset|close|chunked  reads the whole request, sends `200` and its headers
//                     (Content-Length 64) and 20 bytes of the body, then resets the connection (reset:
//                     after 150 ms, once the client has read the headers) or closes it (close: a FIN
//                     short of the length; chunked: the same 20 bytes as one chunk of a chunked body,
//                     then a FIN before its last chunk)
//   POST /hang/<id>   reads the whole request and never answers (the socket is destroyed at close())
//   POST /early/<id>  resets the connection as soon as the request's head arrived, its body unread
//   GET  /hits/<route>/<id> { count }: how many requests reached /<route>/<id>
// CORS is open so that the Next.js page (another origin) can call it from the browser.
import { createServer } from 'node:http';

/** The head and the first 20 bytes of a JSON answer that names a charge: never completed. */
const HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\naccess-control-allow-origin: *\r\nconnection: close\r\n';
const PART = '{"reference":"ch_cut';
const CUT = { length: `${HEAD}content-length: 64\r\n\r\n${PART}`, chunked: `${HEAD}transfer-encoding: chunked\r\n\r\n14\r\n${PART}\r\n` };

export async function startServer() {
  const flaky = new Map();
  const charges = new Map();
  const resets = new Map();
  const hits = new Map();
  const hit = (route, id) => hits.set(`${route}/${id}`, (hits.get(`${route}/${id}`) ?? 0) + 1);
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
    const [, route, id, more] = url.pathname.split('/');
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
    if (route === 'cut') {
      req.resume();
      req.on('end', () => {
        hit(route, id);
        const socket = req.socket;
        const how = url.searchParams.get('how');
        socket.write(how === 'chunked' ? CUT.chunked : CUT.length);
        if (how === 'reset') setTimeout(() => socket.resetAndDestroy(), 150);
        else socket.end();
      });
      return undefined;
    }
    if (route === 'hang') {
      req.resume();
      req.on('end', () => hit(route, id));
      return undefined;
    }
    if (route === 'early') {
      hit(route, id);
      req.socket.resetAndDestroy();
      return undefined;
    }
    if (route === 'hits') return send(200, { count: hits.get(`${id}/${more}`) ?? 0 });
    if (route === 'resets') return send(200, { count: resets.get(id) ?? 0 });
    if (route === 'seen') return send(200, { count: charges.get(decodeURIComponent(id))?.count ?? 0 });
    return send(404, { error: 'not found' });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections(); // the hung requests
      }),
  };
}
