// Serves the simulator page and the steadfast package on 127.0.0.1:
//
//   make build && scripts/install-tarball.sh examples && node examples/sim-page/server.mjs
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm' };

/** Start the page server (ephemeral port unless `port` is given). */
export async function startSimPage({ port = 0, packageDir } = {}) {
  const pkg = packageDir ?? dirname(createRequire(import.meta.url).resolve('steadfast/package.json'));
  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    const [root, rel] = path.startsWith('/steadfast/') ? [pkg, path.slice('/steadfast/'.length)] : [HERE, path === '/' ? 'index.html' : path.slice(1)];
    const file = normalize(join(root, rel));
    try {
      if (!file.startsWith(normalize(root) + sep) || file.endsWith('.mjs')) throw new Error('outside');
      const data = await readFile(file);
      res.writeHead(200, { 'content-type': MIME[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream' }).end(data);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((ok) => server.listen(port, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () => {
      server.closeAllConnections();
      return new Promise((ok) => server.close(ok));
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const s = await startSimPage({ port: Number(process.env.PORT ?? 0) });
  console.log(`simulator page: ${s.url}  (Ctrl-C to stop)`);
}
