// One origin for the browser tests of shared state: static files from `root` (the consumer project
// with the packed package in node_modules) and /v1/* proxied to the test gateway, so the page's
// fetches are same-origin (no CORS) and the gateway still sees every request. `more` adds other
// gateways under other prefixes ({ '/v2/': url }): /v2/charges goes to that gateway's /v1/charges
// (a second gateway, e.g. a checkout client's secondaryEndpoint, on the same origin).
import { createServer, request } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
};

export async function serveOrigin(root, gatewayUrl, more = {}) {
  const base = resolve(root);
  const proxies = [['/v1/', new URL(gatewayUrl)], ...Object.entries(more).map(([prefix, u]) => [prefix, new URL(u)])];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    const proxy = proxies.find(([prefix]) => url.pathname.startsWith(prefix));
    if (proxy !== undefined) {
      const [prefix, gw] = proxy;
      const path = `/v1/${req.url.slice(prefix.length)}`; // every gateway serves /v1/
      const up = request({ host: gw.hostname, port: gw.port, method: req.method, path, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy()); // a reload aborts the browser's request: abort upstream too
      req.pipe(up);
      return;
    }
    if (url.pathname === '/favicon.ico') return void res.writeHead(204).end();
    const file = normalize(join(base, decodeURIComponent(url.pathname.endsWith('/') ? `${url.pathname}index.html` : url.pathname)));
    if (file !== base && !file.startsWith(base + sep)) return void res.writeHead(403).end();
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': MIME[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' }).end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise((ok, fail) => server.once('error', fail).listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections();
        server.close(ok);
      }),
  };
}
