// Redis beyond one node, on 127.0.0.1 only: a TCP forwarder that delays replication (replica lag,
// which one machine otherwise never shows), a switchable client endpoint (what a managed Redis's DNS
// name does on failover), a primary + replica pair with manual promotion, and a Redis Cluster of 3
// primaries + 3 replicas (`redis-cli --cluster create`). Every server is stopped by its pid.
import { execFile } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { promisify } from 'node:util';
import { freePort, startRedis } from './redis-server.mjs';

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const run = promisify(execFile);

/**
 * A forwarder from 127.0.0.1:<port> to `target()`. A connection that speaks replication (its
 * client sends REPLCONF or PSYNC: a replica) gets the server's bytes `lagMs` late, in order; every
 * other connection passes straight through. `retarget(port)` drops every connection and sends new
 * ones to `port`.
 */
export async function startForwarder(targetPort, { lagMs = 0 } = {}) {
  let target = targetPort;
  const sockets = new Set();
  const server = createServer((down) => {
    const up = connect({ port: target, host: '127.0.0.1' });
    sockets.add(down);
    sockets.add(up);
    down.setNoDelay(true); // no Nagle: small replies (WAIT's acks) would wait ~40 ms for a delayed ACK
    up.setNoDelay(true);
    let replica = false;
    let last = 0;
    down.on('data', (d) => {
      if (!replica && /REPLCONF|PSYNC|SYNC/i.test(d.toString('latin1'))) replica = true;
      up.write(d);
    });
    up.on('data', (d) => {
      if (!replica || lagMs === 0) return void down.write(d);
      // Same delay for every chunk, never before the previous one: the stream stays in order.
      const at = Math.max(Date.now() + lagMs, last);
      last = at;
      setTimeout(() => down.destroyed || down.write(d), at - Date.now());
    });
    const close = () => {
      down.destroy();
      up.destroy();
      sockets.delete(down);
      sockets.delete(up);
    };
    for (const s of [down, up]) {
      s.on('error', close);
      s.on('close', close);
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const drop = () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
  };
  return {
    port: server.address().port,
    retarget(port) {
      target = port;
      drop();
    },
    /** From now on, replication bytes are `ms` late (connections already open included). */
    setLag(ms) {
      lagMs = ms;
    },
    drop,
    // Stop accepting first, then drop: a replica that reconnects in between would hold close() open.
    close: () =>
      new Promise((ok) => {
        server.close(() => ok());
        drop();
      }),
  };
}

/** One redis-server (tests/shared/redis-server.mjs) with extra arguments; `kill(signal = 'SIGKILL')` stops it by pid. */
export async function startServer(extra = [], port) {
  const server = await startRedis({ port, args: ['--repl-diskless-sync-delay', '0', ...extra] });
  return { ...server, kill: (signal = 'SIGKILL') => server.stop(signal) };
}

/** redis-cli against 127.0.0.1:<port>; resolves with its trimmed output. */
export async function cli(port, ...args) {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args.map(String)], { timeout: 10_000 });
  return stdout.trim();
}

/**
 * A primary and a replica (`--replicaof`) that receives the primary's stream `lagMs` late, and a
 * client endpoint that points at the primary until `promote()` (kill -9 the primary, REPLICAOF NO
 * ONE on the replica, the endpoint now points at it). `restartEmpty()`: the primary dies and comes
 * back with nothing (no persistence).
 */
export async function startPrimaryReplica({ lagMs = 0 } = {}) {
  let primary = await startServer();
  const link = await startForwarder(primary.port, { lagMs });
  let replica = await startServer(['--replicaof', '127.0.0.1', String(link.port)]);
  for (let i = 0; !/master_link_status:up/.test(await cli(replica.port, 'INFO', 'replication')); i++) {
    if (i > 300) throw new Error('replica did not sync');
    await sleep(20);
  }
  const endpoint = await startForwarder(primary.port);
  return {
    endpoint,
    primary: () => primary,
    replica: () => replica,
    /** Kill -9 the primary and promote the replica; a new replica (as lagged) then joins it. */
    async promote() {
      await primary.kill('SIGKILL');
      await cli(replica.port, 'REPLICAOF', 'NO', 'ONE');
      endpoint.retarget(replica.port);
      link.retarget(replica.port);
      primary = replica;
      replica = await startServer(['--replicaof', '127.0.0.1', String(link.port)]);
    },
    async restartEmpty() {
      const port = primary.port;
      await primary.kill('SIGKILL');
      primary = await startServer([], port);
      endpoint.drop();
    },
    async stop() {
      await endpoint.close();
      await link.close();
      await Promise.all([primary.kill(), replica.kill()]);
    },
  };
}

/**
 * A Redis Cluster: 3 primaries + 3 replicas. Every node announces a forwarder as its address, so a
 * replica's link to its primary runs through one and receives its stream `lagMs` late; clients go
 * through the same forwarders undelayed. `primaries()`: [{ port (announced), node }] now.
 */
export async function startCluster({ lagMs = 0 } = {}) {
  const nodes = [];
  for (let i = 0; i < 6; i++) {
    const port = await freePort();
    const fwd = await startForwarder(port, { lagMs });
    const server = await startServer(
      [
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        '1000',
        '--cluster-announce-ip',
        '127.0.0.1',
        '--cluster-announce-port',
        String(fwd.port),
        '--cluster-announce-bus-port',
        String(port + 10000),
      ],
      port,
    );
    nodes.push({ server, fwd, port: fwd.port });
  }
  await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes'], { timeout: 60_000 });
  const ok = async (replicated = true) => {
    for (let i = 0; i < 500; i++) {
      const infos = await Promise.all(nodes.filter((n) => !n.dead).map((n) => cli(n.server.port, 'CLUSTER', 'INFO').catch(() => '')));
      const repl = await Promise.all(nodes.filter((n) => !n.dead).map((n) => cli(n.server.port, 'INFO', 'replication').catch(() => '')));
      const synced = repl.every((r) => !/role:master/.test(r) || (/connected_slaves:[1-9]/.test(r) && !/state=(wait_bgsave|send_bulk)/.test(r)));
      if (infos.every((s) => s.includes('cluster_state:ok')) && (synced || !replicated)) return;
      await sleep(20);
    }
    throw new Error('cluster did not reach cluster_state:ok');
  };
  await ok();
  const primaries = async () => {
    const live = nodes.find((n) => !n.dead);
    const text = await cli(live.server.port, 'CLUSTER', 'NODES');
    return text
      .split('\n')
      .filter((l) => / master /.test(l.replace(/myself,/, '')) && !/fail/.test(l.split(' ')[2]))
      .map((l) => {
        const port = Number(l.split(' ')[1].split(':')[1].split('@')[0]);
        return { port, node: nodes.find((n) => n.port === port) };
      });
  };
  return {
    nodes,
    seeds: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
    primaries,
    ok,
    setLag: (ms) => nodes.forEach((n) => n.fwd.setLag(ms)),
    /** kill -9 a primary; resolves once its replica has taken over (cluster_state:ok again). */
    async failover(node) {
      node.dead = true;
      await node.server.kill('SIGKILL');
      await sleep(1500);
      await ok(false); // the promoted replica has no replica of its own
    },
    async stop() {
      for (const n of nodes) {
        await n.fwd.close();
        await n.server.kill();
      }
    },
  };
}
