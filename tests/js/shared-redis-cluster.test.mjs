// A local Redis Cluster (3 primaries + 3 replicas on 127.0.0.1, `redis-cli --cluster create`; every
// replica's link 50 ms late through a delaying forwarder, 200 ms during the failover soaks) driven by two processes, one through
// ioredis `Redis.Cluster` and one through node-redis `createCluster`: records spread over every
// primary, a shared breaker works (one hash tag per breaker), a primary killed (kill -9) mid-soak
// fails over to its replica (without the durability mode: keys debited twice) with 0 double debits and 0 forgotten keys under waitReplicas: 1, and a
// primary that comes back empty is noticed (StoreAmnesiaError) instead of running keys again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, cli } from '../shared/redis-topology.mjs';
import { startLedger, startSoakProcess, judge } from '../shared/soak.mjs';

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const LAG_MS = 50;
/** During the failover soaks: a replica as far behind as a loaded one (the last writes before the kill are lost). */
const SOAK_LAG_MS = 200;
const LEASE_MS = 1500;
const TYPED = new Set(['STORE_UNAVAILABLE', 'STORE_AMNESIA', 'OUTCOME_UNKNOWN', 'DUPLICATE_IN_FLIGHT']);
let cluster;
let ledger;
const pods = [];
const pod = async (adapter, options) => {
  const p = await startSoakProcess({ adapter, seeds: cluster.seeds, ledger: ledger.port, options: { timeoutMs: 2000, inFlightLeaseMs: LEASE_MS, ...options } });
  pods.push(p);
  return p;
};

before(async () => {
  cluster = await startCluster({ lagMs: LAG_MS });
  ledger = await startLedger({ faultRate: 0.05 });
});
after(async () => {
  await Promise.all(pods.map((p) => p.stop()));
  await ledger?.close();
  await cluster?.stop();
});

/** Keys each primary holds under `prefix` (SCAN on the server itself, not through the cluster). */
async function perPrimary(prefix) {
  const counts = [];
  for (const { node } of await cluster.primaries()) {
    let n = 0;
    let cursor = '0';
    do {
      const [next, ...keys] = (await cli(node.server.port, 'SCAN', cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000)).split('\n');
      cursor = next;
      n += keys.filter((k) => k !== '').length;
    } while (cursor !== '0');
    counts.push(n);
  }
  return counts;
}

test('both cluster clients charge from two processes; records spread over every primary; each key debited once', { timeout: 120_000 }, async (t) => {
  const a = await pod('ioredis-cluster', { prefix: 'spread' });
  const b = await pod('node-redis-cluster', { prefix: 'spread' });
  const keys = Array.from({ length: 400 }, (_, i) => `order-${i}`);
  const runs = await Promise.all([a.call('charge', { keys, gapMs: 1 }), b.call('charge', { keys, gapMs: 1 })]);
  const ok = runs.map((r) => Object.values(r.out).filter((o) => 'ok' in o).length);
  t.diagnostic(
    `charged: ${JSON.stringify(ok)} (ioredis Cluster, node-redis createCluster); refusals: ${JSON.stringify(judge({ debits: ledger.debits, outcomes: runs.map((r) => r.out), records: {}, unknown: [] }).codes)}`,
  );
  for (const n of ok) assert.ok(n > 0, 'each client charges');
  assert.equal([...ledger.debits.values()].filter((n) => n > 1).length, 0, 'no key debited twice');
  const counts = await perPrimary('spread');
  t.diagnostic(`keys per primary: ${JSON.stringify(counts)}`);
  assert.equal(counts.length, 3);
  for (const n of counts) assert.ok(n > 0, `every primary holds records: ${JSON.stringify(counts)}`);
  assert.ok(Math.max(...counts) < 0.6 * counts.reduce((x, y) => x + y), `no primary holds most of them: ${JSON.stringify(counts)}`);
  // Reconciliation lists every bucket through either client.
  const listed = await Promise.all([a.call('unknownKeys'), b.call('unknownKeys')]);
  assert.deepEqual([...listed[0]].sort(), [...listed[1]].sort());
});

test('a shared breaker works on a cluster: a trip in one process is seen by the other', { timeout: 60_000 }, async () => {
  const a = await pod('ioredis-cluster', { prefix: 'brk' });
  const b = await pod('node-redis-cluster', { prefix: 'brk' });
  assert.equal(await b.call('breaker', { name: 'gateway', op: 'state' }), 'closed');
  assert.equal(await a.call('breaker', { name: 'gateway', op: 'fail' }), 'open');
  assert.equal(await b.call('breaker', { name: 'gateway', op: 'state' }), 'open', 'the other process sees it open (no CROSSSLOT, no local fallback)');
});

/** Two processes charge 300 keys; a primary that has a replica is killed mid-soak; then both retry every key. */
async function failoverSoak(t, options) {
  const a = await pod('ioredis-cluster', options);
  const b = await pod('node-redis-cluster', options);
  ledger.debits.clear();
  const keys = Array.from({ length: 300 }, (_, i) => `${options.prefix}-${i}`);
  cluster.setLag(SOAK_LAG_MS);
  const first = [a.call('charge', { keys, gapMs: 2 }), sleep(20).then(() => b.call('charge', { keys, gapMs: 2 }))];
  await sleep(300);
  const withReplica = [];
  for (const p of await cluster.primaries()) if (/connected_slaves:[1-9]/.test(await cli(p.node.server.port, 'INFO', 'replication'))) withReplica.push(p);
  const t0 = performance.now();
  await cluster.failover(withReplica[0].node);
  t.diagnostic(`kill -9 of a primary: its replica took over in ${Math.round(performance.now() - t0)} ms`);
  const firstPass = await Promise.all(first);
  const retries = await Promise.all([a.call('charge', { keys, gapMs: 1 }), b.call('charge', { keys, gapMs: 1 })]);
  cluster.setLag(LAG_MS);
  await sleep(LEASE_MS + 300);
  // Without waitReplicas a process may find that the promotion went back in time (a bucket's write
  // counter below what it saw, or the write at it replaced): then the store refuses everything, the
  // worklist too.
  const unknown = await a.call('unknownKeys').catch((e) => {
    if (e?.code !== 'STORE_AMNESIA') throw e;
    return [];
  });
  const records = await a.call('peek', { keys });
  const v = judge({ debits: ledger.debits, outcomes: [...firstPass, ...retries].map((r) => r.out), records, unknown });
  t.diagnostic(`cluster failover (waitReplicas ${options.waitReplicas ?? 0}): ${JSON.stringify(v)}`);
  return v;
}

// The durable soak first: it kills one of three primaries that have a replica, so two of the
// three shards still have one for its retries.
test('a primary killed mid-soak (replicas 200 ms behind), waitReplicas: 1: 0 double debits, 0 forgotten, typed refusals', { timeout: 180_000 }, async (t) => {
  const v = await failoverSoak(t, { prefix: 'durable', waitReplicas: 1, waitTimeoutMs: 1000 });
  assert.equal(v.doubles, 0, JSON.stringify(v));
  assert.equal(v.forgotten, 0, JSON.stringify(v));
  for (const code of Object.keys(v.codes)) assert.ok(TYPED.has(code), `refusal ${code} is typed`);
  assert.ok(v.debited > 100, `the soak charged: ${JSON.stringify(v)}`);
});

test('a primary killed mid-soak (replicas 200 ms behind), no durability mode: keys are debited twice', { timeout: 180_000 }, async (t) => {
  const v = await failoverSoak(t, { prefix: 'lossy' });
  assert.ok(v.doubles + v.forgotten > 0, `the failover lost acknowledged records (the lag is real): ${JSON.stringify(v)}`);
});

test('a primary that comes back empty is noticed: StoreAmnesiaError, no key runs again', { timeout: 60_000 }, async () => {
  const a = await pod('ioredis-cluster', { prefix: 'amnesia' });
  const b = await pod('node-redis-cluster', { prefix: 'amnesia' });
  ledger.debits.clear();
  const keys = Array.from({ length: 100 }, (_, i) => `am-${i}`);
  await a.call('charge', { keys });
  await b.call('charge', { keys: ['warm'] });
  const debited = ledger.debits.size;
  const primaries = await cluster.primaries();
  await cli(primaries[0].node.server.port, 'FLUSHALL'); // its data is gone (as an empty restart)
  await sleep(200);
  for (const p of [a, b]) {
    const { out } = await p.call('charge', { keys });
    assert.ok(
      Object.values(out).every((o) => o.ok !== undefined || o.code === 'STORE_AMNESIA' || o.code === 'OUTCOME_UNKNOWN'),
      `every retry replays, is refused as lost data, or is still unknown: ${JSON.stringify(Object.values(out).filter((o) => o.ok === undefined && o.code !== 'STORE_AMNESIA'))}`,
    );
    assert.ok(
      Object.values(out).some((o) => o.code === 'STORE_AMNESIA'),
      'the keys of the emptied primary are refused',
    );
  }
  assert.equal(ledger.debits.size, debited, 'no key ran again');
  assert.equal([...ledger.debits.values()].filter((n) => n > 1).length, 0);
});
