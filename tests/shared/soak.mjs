// The parent side of soak-worker.mjs: a ledger (the gateway: counts debits per key; `faultRate` of
// the calls debit and then answer 504, a timeout the caller cannot tell from a lost request) and
// forked processes to drive.
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { rng } from '../support/rng.mjs';

const WORKER = fileURLToPath(new URL('./soak-worker.mjs', import.meta.url));

export async function startLedger({ faultRate = 0.05, seed = 7 } = {}) {
  const debits = new Map();
  const r = rng(seed);
  const server = createServer((req, res) => {
    const key = new URL(req.url, 'http://x').searchParams.get('key');
    debits.set(key, (debits.get(key) ?? 0) + 1);
    const fault = r() < faultRate;
    res.writeHead(fault ? 504 : 200).end(fault ? '' : `paid ${key}`);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    port: server.address().port,
    debits,
    close: () =>
      new Promise((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
  };
}

export async function startSoakProcess({ adapter, seeds, ledger, options }) {
  const child = fork(WORKER, [], {
    env: {
      ...process.env,
      STEADFAST_ADAPTER: adapter,
      STEADFAST_SEEDS: JSON.stringify(seeds),
      STEADFAST_LEDGER: String(ledger),
      STEADFAST_OPTIONS: JSON.stringify(options ?? {}),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let seq = 0;
  const pending = new Map();
  const exit = new Promise((ok) => child.once('exit', ok));
  let ready;
  const isReady = new Promise((ok) => (ready = ok));
  child.on('message', (m) => {
    if (m.event === 'ready') return ready();
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error) p?.reject(Object.assign(new Error(m.error.message), m.error));
    else p?.resolve(m.result);
  });
  await Promise.race([isReady, exit.then(() => Promise.reject(new Error('soak process exited before ready')))]);
  return {
    call(cmd, args) {
      const id = ++seq;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ id, cmd, args });
      });
    },
    stop() {
      child.kill('SIGKILL');
      return exit;
    },
  };
}

/** What a soak shows: double debits, debited keys the store forgot, and every refusal's code. */
export function judge({ debits, outcomes, records, unknown }) {
  const doubles = [...debits].filter(([, n]) => n > 1).map(([k]) => k);
  const listed = new Set(unknown);
  // A key that was debited must be known: done, or on the reconciliation list (unknown).
  const forgotten = [...debits.keys()].filter((k) => records[k] !== 'done' && !listed.has(k));
  const codes = {};
  for (const o of outcomes) for (const v of Object.values(o)) if (!('ok' in v)) codes[v.code ?? v.name] = (codes[v.code ?? v.name] ?? 0) + 1;
  return { doubles: doubles.length, forgotten: forgotten.length, codes, debited: debits.size };
}
