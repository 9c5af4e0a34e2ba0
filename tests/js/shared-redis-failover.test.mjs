// A primary + replica (what a managed Redis with failover is), on 127.0.0.1, with the replica's
// link 50 ms behind (a delaying forwarder: on one machine replication is otherwise instant), and a
// client endpoint that moves to the replica on a manual promotion. Two processes charge the same
// keys against a ledger that debits and sometimes times out after debiting; the primary is killed
// (kill -9) mid-soak and the replica promoted; then both processes retry every key.
//
// Without the durability mode the promotion loses the last writes, and retries of those keys run
// again (double debits: the lag is real). With waitReplicas: 1 nothing acknowledged is lost: 0
// double debits, 0 debited keys forgotten, and every refusal is a typed error. An empty restart is
// noticed (StoreAmnesiaError) instead of running keys again, until acknowledgeAmnesia().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startPrimaryReplica } from '../shared/redis-topology.mjs';
import { startLedger, startSoakProcess, judge } from '../shared/soak.mjs';

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const N = Number(process.env.SOAK_KEYS ?? 300);
const GAP_MS = 4;
const LAG_MS = 50;
const LEASE_MS = 1500;
/** What a charge may be refused with: typed, and each says nothing ran or the outcome is open. */
const TYPED = new Set(['STORE_UNAVAILABLE', 'STORE_AMNESIA', 'OUTCOME_UNKNOWN', 'DUPLICATE_IN_FLIGHT']);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function soak(t, { durable }) {
  const pair = await startPrimaryReplica({ lagMs: LAG_MS });
  const ledger = await startLedger({ faultRate: 0.05 });
  const seeds = [{ host: '127.0.0.1', port: pair.endpoint.port }];
  const options = { prefix: 'soak', inFlightLeaseMs: LEASE_MS, timeoutMs: 1000, ...(durable ? { waitReplicas: 1, waitTimeoutMs: 500 } : {}) };
  const pods = [
    await startSoakProcess({ adapter: 'node-redis', seeds, ledger: ledger.port, options }),
    await startSoakProcess({ adapter: 'ioredis', seeds, ledger: ledger.port, options }),
  ];
  try {
    const keys = Array.from({ length: N }, (_, i) => `order-${i}`);
    const t0 = performance.now();
    const first = [pods[0].call('charge', { keys, gapMs: GAP_MS }), sleep(20).then(() => pods[1].call('charge', { keys, gapMs: GAP_MS }))];
    await sleep((N * GAP_MS) / 2);
    await pair.promote(); // kill -9 the primary, REPLICAOF NO ONE, the endpoint moves
    const firstPass = await Promise.all(first);
    const soakMs = performance.now() - t0;
    // Every process retries every key once more (what clients do after errors).
    const retries = await Promise.all(pods.map((p) => p.call('charge', { keys, gapMs: 1 })));
    await sleep(LEASE_MS + 300); // leases of owners that never reported have lapsed
    // Without waitReplicas a process may find that the promotion went back in time (a bucket's write
    // counter below what it saw, or the write at it replaced): then the store refuses everything, the
    // worklist too.
    const unknown = await pods[0].call('unknownKeys').catch((e) => {
      if (e?.code !== 'STORE_AMNESIA') throw e;
      return [];
    });
    const records = await pods[0].call('peek', { keys });
    const verdict = judge({ debits: ledger.debits, outcomes: [...firstPass, ...retries].map((r) => r.out), records, unknown });
    const ms = firstPass.flatMap((r) => r.ms);
    const figure = {
      durable,
      lagMs: LAG_MS,
      ...verdict,
      chargeMedianMs: Math.round(median(ms) * 10) / 10,
      chargesPerSecond: Math.round((ms.length / soakMs) * 1000),
    };
    t.diagnostic(`primary+replica ${durable ? 'waitReplicas: 1' : 'no durability mode'}: ${JSON.stringify(figure)}`);
    return figure;
  } finally {
    await Promise.all(pods.map((p) => p.stop()));
    await ledger.close();
    await pair.stop();
  }
}

test('primary + replica 50 ms behind, promoted mid-soak: without waiting for the replica, keys are debited twice', { timeout: 120_000 }, async (t) => {
  const v = await soak(t, { durable: false });
  assert.ok(v.doubles + v.forgotten > 0, `the promotion lost acknowledged records (the lag is real): ${JSON.stringify(v)}`);
});

test('primary + replica 50 ms behind, promoted mid-soak, waitReplicas: 1: 0 double debits, 0 forgotten, typed refusals', { timeout: 120_000 }, async (t) => {
  const v = await soak(t, { durable: true });
  assert.equal(v.doubles, 0, `double debits: ${JSON.stringify(v)}`);
  assert.equal(v.forgotten, 0, `debited keys the store forgot: ${JSON.stringify(v)}`);
  for (const code of Object.keys(v.codes)) assert.ok(TYPED.has(code), `refusal ${code} is typed`);
  assert.ok(v.debited > N / 2, `the soak charged (${v.debited} keys debited)`);
});

test('the cost of waitReplicas: 1 per charge and in throughput (printed), replica on time and 50 ms behind', { timeout: 120_000 }, async (t) => {
  const rows = [];
  for (const lagMs of [0, LAG_MS]) {
    for (const durable of [false, true]) {
      const pair = await startPrimaryReplica({ lagMs });
      const ledger = await startLedger({ faultRate: 0 });
      const seeds = [{ host: '127.0.0.1', port: pair.endpoint.port }];
      const options = { prefix: 'bench', timeoutMs: 2000, ...(durable ? { waitReplicas: 1, waitTimeoutMs: 1000 } : {}) };
      const pod = await startSoakProcess({ adapter: 'node-redis', seeds, ledger: ledger.port, options });
      try {
        await pod.call('charge', { keys: ['warm-up'] });
        const keys = Array.from({ length: N }, (_, i) => `bench-${i}`);
        const t0 = performance.now();
        const { out, ms } = await pod.call('charge', { keys, gapMs: 1 });
        const wall = performance.now() - t0;
        assert.equal(Object.values(out).filter((o) => 'ok' in o).length, N, 'every charge succeeded');
        const one = await pod.call('chargeEach', { keys: Array.from({ length: 30 }, (_, i) => `alone-${i}`) });
        rows.push({
          lagMs,
          waitReplicas: durable ? 1 : 0,
          aloneMedianMs: Math.round(median(one.ms) * 10) / 10,
          underLoadMedianMs: Math.round(median(ms) * 10) / 10,
          chargesPerSecond: Math.round((N / wall) * 1000),
        });
      } finally {
        await pod.stop();
        await ledger.close();
        await pair.stop();
      }
    }
  }
  for (const r of rows) t.diagnostic(`cost: ${JSON.stringify(r)}`);
  const at = (lag, w) => rows.find((r) => r.lagMs === lag && r.waitReplicas === w);
  // The wait is real: behind a 50 ms link, a durable charge alone (begin and completion both wait)
  // takes at least two lags; under load, grouped waits keep the throughput far above one charge per lag.
  assert.ok(at(LAG_MS, 1).aloneMedianMs >= 2 * LAG_MS, JSON.stringify(rows));
  assert.ok(at(LAG_MS, 1).chargesPerSecond > 1000 / LAG_MS, JSON.stringify(rows));
});

test('an empty restart is noticed: StoreAmnesiaError in every process, nothing runs again, until acknowledgeAmnesia()', { timeout: 60_000 }, async () => {
  const pair = await startPrimaryReplica();
  const ledger = await startLedger({ faultRate: 0.2 });
  const seeds = [{ host: '127.0.0.1', port: pair.endpoint.port }];
  const options = { prefix: 'restart', timeoutMs: 1000 };
  const pods = [
    await startSoakProcess({ adapter: 'node-redis', seeds, ledger: ledger.port, options }),
    await startSoakProcess({ adapter: 'ioredis', seeds, ledger: ledger.port, options }),
  ];
  try {
    const keys = Array.from({ length: 40 }, (_, i) => `order-${i}`);
    await pods[0].call('charge', { keys });
    await pods[1].call('charge', { keys: ['warm'] }); // the second process knows the epoch too
    const debited = ledger.debits.size;
    await pair.restartEmpty();
    await sleep(300); // clients reconnect
    for (const pod of pods) {
      const { out } = await pod.call('charge', { keys });
      const codes = new Set(Object.values(out).map((o) => o.code));
      assert.deepEqual([...codes], ['STORE_AMNESIA'], 'every retry is refused as lost data');
      await assert.rejects(pod.call('unknownKeys'), (e) => e.code === 'STORE_AMNESIA', 'the emptied worklist is not answered as empty');
    }
    assert.equal([...ledger.debits.values()].filter((n) => n > 1).length, 0, 'no key ran again');
    assert.equal(ledger.debits.size, debited, 'nothing new was debited');
    // A process started after the restart with firstUse: 'refuse' does not take the empty Redis for new.
    const fresh = await startSoakProcess({ adapter: 'node-redis', seeds, ledger: ledger.port, options: { ...options, firstUse: 'refuse' } });
    pods.push(fresh);
    assert.equal((await fresh.call('charge', { keys: ['order-0'] })).out['order-0'].code, 'STORE_AMNESIA');
    // The operator reconciled the lost keys with the gateway and acknowledges: every process runs again.
    const { generation } = await pods[0].call('acknowledge');
    assert.equal(generation, 2);
    await sleep(1100); // other processes look at a latched amnesia again at most once a second
    assert.deepEqual((await pods[1].call('charge', { keys: ['new-order'] })).out['new-order'], { ok: 'paid new-order' });
    assert.ok('ok' in (await fresh.call('charge', { keys: ['newer-order'] })).out['newer-order']);
  } finally {
    await Promise.all(pods.map((p) => p.stop()));
    await ledger.close();
    await pair.stop();
  }
});
