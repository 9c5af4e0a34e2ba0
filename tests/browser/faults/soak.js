// The browser soak, driven from inside the page (or a worker, or Node): N logical charges through
// createCheckoutClient against the fault server's gateway with a seeded random mix of every fault
// (debit then drop, debit then hang, reset before processing, 500/503, 429, slow, decline,
// processed after the client gave up), `concurrency` at a time; then reconciliation of every
// unknown, alternating the two ways the README shows: a settlement lookup (a "failed" answer is
// FINAL here: the charge is reported not charged and never re-sent) and checkout.reconcile()
// (re-sends the same key); finally the client's outcomes against the gateway's ledger.
import { controls, settlementLookup } from './cases.js';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export const SOAK_FAULTS = Object.freeze({
  debitThenReset: 0.02,
  debitThenTimeout: 0.02,
  resetBeforeProcessing: 0.02,
  status500: 0.01,
  status503: 0.02,
  status429: 0.01,
  slow: 0.03,
  decline: 0.05,
  processAfterGiveUp: 0.02,
  retryAfterSeconds: 0,
  slowMs: 60,
  timeoutHoldMs: 2_000,
  // Processed 900 ms after it arrived: after the client gave up (300 ms), inside the settle window the
  // client declares (1,500 ms from the attempt's start, which covers up to 300 ms of queueing in the
  // browser's connection pool before the request is even sent).
  processLateMs: 900,
});

/**
 * Run the soak; never throws for a violated invariant: returns the figures (`ok` says whether all
 * invariants held, `violations` lists the first few).
 */
export async function runSoak(sf, { base, charges = 2_000, concurrency = 24, seed = 20261201, maxRounds = 40, lateCharges = 20 } = {}) {
  const c = controls(base);
  const t0 = performance.now();
  await c.configure({ seed, faults: SOAK_FAULTS });
  let attempts = 0;
  const client = (maxAttempts, extra = {}) =>
    sf.createCheckoutClient({
      endpoint: `${base}/v1/charges`,
      attemptTimeoutMs: 300,
      settleAfterMs: 1_500,
      retry: { maxAttempts, baseDelayMs: 5, maxDelayMs: 50 },
      breaker: { windowSize: 20, minimumCalls: 10, failureRateThreshold: 0.5, openDurationMs: 100 },
      onAttempt: () => {
        attempts += 1;
      },
      ...extra,
    });
  const checkout = client(2);
  // The late charges: one attempt each, all forced into processAfterGiveUp after the main pass, so
  // that reconciliation always starts while their debits are still on the way.
  const lateClient = client(1, { breaker: false }); // every one of them times out: no breaker to trip
  const clients = [lateClient, checkout]; // the late ones first: their debits are still on the way
  const total = charges + lateCharges;
  const list = Array.from({ length: total }, (_, i) => ({
    key: sf.newIdempotencyKey(),
    amountCents: 100 + ((i * 7919) % 99_901),
    status: 'pending', // succeeded | declined | unknown | not-charged | error
    reference: undefined,
    via: undefined,
  }));
  const byKey = new Map(list.map((x) => [x.key, x]));
  const counts = { unavailable: 0, rejected: 0 };
  const first = { succeeded: 0, declined: 0, unknown: 0 };

  const settle = async (x, via = checkout) => {
    const giveUpAt = Date.now() + 30_000;
    for (;;) {
      let out;
      try {
        out = await via.charge({ amountCents: x.amountCents, currency: 'usd' }, { idempotencyKey: x.key });
      } catch (e) {
        counts.rejected += 1; // charge() must never reject for a network or gateway condition
        x.status = 'error';
        x.error = String(e?.message ?? e);
        return;
      }
      if (out.status === 'unavailable') {
        counts.unavailable += 1; // nothing was sent, the key is free: the same key again, later
        if (Date.now() < giveUpAt) {
          await sleep(Math.min(out.retryAfterMs, 100) + 5);
          continue;
        }
        // The app gives up: nothing was sent, so nothing may have been charged (checked below).
        Object.assign(x, { status: 'not-charged', via: 'unavailable' });
        return;
      }
      x.status = out.status;
      x.reference = out.reference;
      x.via = 'charge';
      if (out.status in first) first[out.status] += 1;
      return;
    }
  };
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < charges) await settle(list[next++]);
    }),
  );
  await c.waitIdle(50);
  await c.force('processAfterGiveUp', lateCharges);
  // Five at a time: fewer than the browser's six connections per origin, so none waits in its queue.
  const late = list.slice(charges);
  for (let i = 0; i < late.length; i += 5) await Promise.all(late.slice(i, i + 5).map((x) => settle(x, lateClient)));
  const chargingMs = performance.now() - t0;
  const unknownBefore = list.filter((x) => x.status === 'unknown').length;

  // Reconciliation: odd rounds ask the ledger (a 'failed' answer inside the settle window is deferred),
  // even rounds re-send the same key. Immediately: given-up requests may still be landing.
  const lookup = settlementLookup(base);
  const rounds = [];
  let deferred = 0;
  const unknownCount = () => clients.reduce((n, k) => n + k.store.unknownKeys().length, 0);
  for (let round = 1; round <= maxRounds && unknownCount() > 0; round++) {
    if (round % 2 === 1) {
      const r = { checked: 0, done: 0, failed: 0, deferred: 0, stillUnknown: 0, retryAfterMs: Infinity };
      for (const k of clients) {
        const keys = k.store.unknownKeys();
        const before = new Map(keys.map((key) => [key, k.store.peek(key)]));
        const one = await sf.reconcile(k.store, lookup, { concurrency: 8 });
        for (const f of ['checked', 'done', 'failed', 'deferred', 'stillUnknown']) r[f] += one[f];
        r.retryAfterMs = Math.min(r.retryAfterMs, one.retryAfterMs ?? Infinity);
        for (const key of keys) {
          const x = byKey.get(key);
          const rec = k.store.peek(key);
          if (rec?.status === 'done') Object.assign(x, { status: 'succeeded', reference: rec.result.reference, via: 'lookup' });
          else if (rec === undefined) Object.assign(x, { status: 'not-charged', via: 'lookup', record: before.get(key), decidedBy: Date.now() });
        }
      }
      deferred += r.deferred;
      rounds.push({ round, kind: 'lookup', checked: r.checked, done: r.done, failed: r.failed, deferred: r.deferred, stillUnknown: r.stillUnknown });
      if (r.deferred > 0) await sleep(Math.min(r.retryAfterMs, 1_000) + 10);
    } else {
      const outs = [...(await checkout.reconcile()), ...(await lateClient.reconcile())];
      const tally = {};
      for (const out of outs) {
        tally[out.status] = (tally[out.status] ?? 0) + 1;
        const x = byKey.get(out.key);
        if (out.status !== 'unknown') Object.assign(x, { status: out.status, reference: out.reference, via: 'resubmit' });
      }
      rounds.push({ round, kind: 'resubmit', ...tally });
      await sleep(50);
    }
  }
  const unknownAfter = unknownCount();
  await c.waitIdle(200, 20_000); // every held request has landed before the ledger is read
  const ledger = await c.ledger();
  const stats = await c.stats();

  const debits = new Map();
  for (const e of ledger) debits.set(e.idempotencyKey, [...(debits.get(e.idempotencyKey) ?? []), e]);
  let doubles = 0;
  let foreign = 0;
  for (const [key, d] of debits) {
    if (d.length > 1) doubles += 1;
    if (!byKey.has(key)) foreign += d.length;
  }
  const violations = [];
  let lost = 0;
  let clientCents = 0;
  for (const x of list) {
    const d = debits.get(x.key) ?? [];
    let why;
    if (x.status === 'succeeded') {
      clientCents += x.amountCents;
      if (d.length !== 1 || d[0].id !== x.reference || d[0].amountCents !== x.amountCents) why = `succeeded ${x.reference} but ledger ${JSON.stringify(d)}`;
    } else if (x.status === 'declined' || x.status === 'not-charged') {
      if (d.length !== 0) {
        const r = x.record;
        const timing = r
          ? `; last attempt at +0, window ${r.settleAfterMs} ms, attempts ${r.attempts}, believed by +${x.decidedBy - r.lastAttemptAt} ms, debited at +${d[0].at - r.lastAttemptAt} ms`
          : '';
        why = `${x.status} (via ${x.via}) but ${d.length} debits${timing}`;
      }
    } else {
      why = `ended ${x.status}${x.error ? `: ${x.error}` : ''}`;
    }
    if (why !== undefined) {
      lost += 1;
      if (violations.length < 10) violations.push({ key: x.key, why });
    }
  }
  const ledgerCents = ledger.reduce((n, e) => n + e.amountCents, 0);
  const count = (s) => list.filter((x) => x.status === s).length;
  const figures = {
    charges: total,
    lateCharges,
    concurrency,
    seed,
    wallMs: Math.round(performance.now() - t0),
    chargingMs: Math.round(chargingMs),
    httpAttempts: attempts,
    gatewayRequests: stats.requests,
    firstPass: first,
    unavailableRetried: counts.unavailable,
    rejected: counts.rejected,
    unknownBefore,
    unknownAfter,
    deferred,
    rounds,
    succeeded: count('succeeded'),
    succeededViaReconcile: list.filter((x) => x.status === 'succeeded' && x.via !== 'charge').length,
    declined: count('declined'),
    notCharged: count('not-charged'),
    doubleCharges: doubles + foreign,
    lost,
    clientCents,
    ledgerCents,
    faults: stats.faults,
    replays: stats.replays,
    conflicts: stats.conflicts,
    violations,
  };
  figures.ok =
    doubles + foreign === 0 &&
    lost === 0 &&
    unknownAfter === 0 &&
    counts.rejected === 0 &&
    clientCents === ledgerCents &&
    figures.succeeded + figures.declined + figures.notCharged === total;
  await c.configure({ seed: 12, faults: {} }); // leave the gateway as the cases expect it
  return figures;
}

/** The figures as lines, for logs. */
export function formatSoak(f, where) {
  const n = (v) => v.toLocaleString('en-US');
  return [
    `browser soak (${where}): ${n(f.charges)} logical charges (${f.lateCharges} processed after the client gave up), ${f.concurrency} at a time, seed ${f.seed}: ${(f.wallMs / 1000).toFixed(1)} s (charging ${(f.chargingMs / 1000).toFixed(1)} s, ${n(Math.round(f.charges / (f.chargingMs / 1000)))} charges/s)`,
    `  HTTP attempts ${n(f.httpAttempts)}, gateway requests ${n(f.gatewayRequests)} (with lookups and control), replays ${n(f.replays)}, 409s ${n(f.conflicts)}`,
    `  first pass: ${n(f.firstPass.succeeded)} succeeded, ${n(f.firstPass.declined)} declined, ${n(f.firstPass.unknown)} unknown; ${n(f.unavailableRetried)} unavailable answers re-sent with the same key; ${f.rejected} rejections`,
    `  unknown ${n(f.unknownBefore)} → ${n(f.unknownAfter)} after ${f.rounds.length} reconcile rounds (${n(f.deferred)} "failed" answers deferred inside the settle window)`,
    `  final: ${n(f.succeeded)} succeeded (${n(f.succeededViaReconcile)} via reconciliation), ${n(f.declined)} declined, ${n(f.notCharged)} not charged`,
    `  double charges ${f.doubleCharges}, lost ${f.lost}; client ${n(f.clientCents)} ¢ vs ledger ${n(f.ledgerCents)} ¢`,
    `  faults: ${Object.entries(f.faults)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    ...f.rounds.map((r) => `    round ${JSON.stringify(r)}`),
    ...f.violations.map((v) => `  VIOLATION ${v.key}: ${v.why}`),
  ].join('\n');
}
