// A private redis-server for the shared-state tests: 127.0.0.1, a free port, no persistence
// (--save '' --appendonly no), its own working directory; stopped by its pid. scripts/bootstrap.sh
// installs redis-server (apt) when it is missing.
import { spawn, execFileSync } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, after } from 'node:test';

export function redisServerPath() {
  try {
    return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error("redis-server not found: run 'make setup' (scripts/bootstrap.sh installs it with apt)");
  }
}

/** A free TCP port on 127.0.0.1 (the runtimes test uses it too). */
export async function freePort() {
  const s = createServer();
  await new Promise((ok) => s.listen(0, '127.0.0.1', ok));
  const { port } = s.address();
  await new Promise((ok) => s.close(ok));
  return port;
}

function ping(port) {
  return new Promise((resolve) => {
    const sock = connect({ port, host: '127.0.0.1' }, () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      sock.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    sock.on('error', () => resolve(false));
    sock.setTimeout(200, () => {
      sock.destroy();
      resolve(false);
    });
  });
}

/** Start redis-server; returns { port, url, pid, pause(), resume(), stop() }. */
export async function startRedis() {
  const bin = redisServerPath();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'steadfast-redis-'));
  const child = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--loglevel', 'warning'],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  let exited = false;
  const exit = new Promise((ok) => child.once('exit', () => ok((exited = true))));
  for (let i = 0; ; i += 1) {
    if (await ping(port)) break;
    if (exited || i > 100) throw new Error(`redis-server did not start on 127.0.0.1:${port}`);
    await new Promise((ok) => setTimeout(ok, 20));
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid,
    /** SIGSTOP: the server hangs (connections stay open, nothing answers). */
    pause: () => process.kill(child.pid, 'SIGSTOP'),
    resume: () => process.kill(child.pid, 'SIGCONT'),
    /** Stop by pid (SIGCONT first in case it is paused); resolves when it has exited. */
    async stop(signal = 'SIGTERM') {
      if (!exited) {
        try {
          process.kill(child.pid, 'SIGCONT');
          process.kill(child.pid, signal);
        } catch {
          // already gone
        }
        await exit;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A connected client of the given kind ('node-redis' | 'ioredis'), quiet about connection errors. */
export async function connectClient(kind, port, onError = () => {}) {
  if (kind === 'ioredis') {
    const { Redis } = await import('ioredis');
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => 50 });
    client.on('error', onError);
    await client.connect();
    return { client, close: () => client.disconnect() };
  }
  const { createClient } = await import('redis');
  const client = createClient({ url: `redis://127.0.0.1:${port}`, socket: { reconnectStrategy: () => 50, connectTimeout: 500 } });
  client.on('error', onError);
  await client.connect();
  return {
    client,
    // destroy(), not close(): close() waits for a reconnect that never comes once the server is gone.
    close: async () => client.destroy(),
  };
}

/**
 * For one node:test file: a private redis-server and a node-redis client, started before its tests
 * and stopped after them. Returns `{ server, conn }`, filled in by the before hook.
 */
export function redisForTests() {
  const r = { server: undefined, conn: undefined };
  before(async () => {
    r.server = await startRedis();
    r.conn = await connectClient('node-redis', r.server.port);
  });
  after(async () => {
    await r.conn?.close();
    await r.server?.stop();
  });
  return r;
}
