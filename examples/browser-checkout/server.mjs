// Serves the checkout page, the steadfast package and a same-origin /v1/charges proxied to a local
// fault-injecting test gateway. Run it and open the printed URL:
//
//   make build && scripts/install-tarball.sh examples && node examples/browser-checkout/server.mjs
//
// FAULTS=status503:2,debitThenTimeout:1 forces faults on the next charges (see tests/support/gateway.mjs).
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startGateway } from '../../tests/support/gateway.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm', '.json': 'application/json' };

/** Start the page server and its gateway on 127.0.0.1 (ephemeral ports unless `port` is given). */
export async function startCheckoutExample({ port = 0, packageDir, gatewayOptions = {} } = {}) {
  const pkg = packageDir ?? dirname(createRequire(import.meta.url).resolve('steadfast/package.json'));
  const gateway = await startGateway(gatewayOptions);
  const server = http.createServer(async (req, res) => {
    try {
      if (req.url === '/v1/charges' && req.method === 'POST') {
        const body = await new Promise((ok, fail) => {
          let b = '';
          req
            .on('data', (c) => (b += c))
            .on('end', () => ok(b))
            .on('error', fail);
        });
        let upstream;
        try {
          upstream = await fetch(`${gateway.url}/v1/charges`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': req.headers['idempotency-key'] ?? '' },
            body,
            signal: AbortSignal.timeout(10_000),
          });
        } catch {
          req.socket.destroy(); // the gateway dropped the connection: so do we
          return;
        }
        const headers = {};
        for (const h of ['content-type', 'retry-after', 'stripe-should-retry', 'idempotent-replayed']) {
          const v = upstream.headers.get(h);
          if (v !== null) headers[h] = v;
        }
        res.writeHead(upstream.status, headers).end(await upstream.text());
        return;
      }
      const path = new URL(req.url, 'http://x').pathname;
      const [root, rel] = path.startsWith('/steadfast/') ? [pkg, path.slice('/steadfast/'.length)] : [HERE, path === '/' ? 'index.html' : path.slice(1)];
      const file = normalize(join(root, rel));
      if (!file.startsWith(normalize(root) + sep) || rel.endsWith('.mjs')) throw Object.assign(new Error('not found'), { code: 'ENOENT' });
      const data = await readFile(file);
      res.writeHead(200, { 'content-type': MIME[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream' }).end(data);
    } catch (e) {
      res.writeHead(e.code === 'ENOENT' || e.code === 'EISDIR' ? 404 : 500).end();
    }
  });
  server.keepAliveTimeout = 1000;
  await new Promise((ok) => server.listen(port, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    gateway,
    async close() {
      server.closeAllConnections();
      await new Promise((ok) => server.close(ok));
      await gateway.close();
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const ex = await startCheckoutExample({ port: Number(process.env.PORT ?? 0) });
  for (const spec of (process.env.FAULTS ?? '').split(',').filter(Boolean)) {
    const [name, n] = spec.split(':');
    ex.gateway.forceNext(name, Number(n ?? 1));
  }
  console.log(`checkout page: ${ex.url}  (gateway ${ex.gateway.url}; Ctrl-C to stop)`);
  process.on('SIGINT', () => ex.close().then(() => process.exit(0)));
}
