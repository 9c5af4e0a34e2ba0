// The soak: N logical charges from Node through `chargeCustomer` (idempotency store + circuit breaker +
// withRetry) over real HTTP to the fault-injecting local gateway (tests/support/gateway.mjs), many in
// flight, faults on, an outage window in the middle; then reconciliation of every unknown key against the
// gateway's settlement listing, and a full comparison of the client's records with the gateway ledger.
//
// Used by tests/js/soak-quick.test.mjs (5,000 charges, asserts the invariants) and tests/soak/run.mjs
// (`make soak`: 100,000 charges, prints the figures). Loopback only; bounded; stops by itself.
//
// Why chargeCustomer and not createCheckoutClient: the issue asks for the documented pipeline
// (store outside, breaker in the middle, retry inside) with the caller's own gateway function, which is
// what a server-side integration writes; createCheckoutClient wraps resilientFetch with its own store and
// breaker registry and is covered by its own tests.
//
// The invariants (the "figures"):
//   - double charges: no idempotency key (= no logical charge: one key per charge) debited twice, and no
//     debit for a key the client never made;
//   - lost charges: every logical charge ends `succeeded`, `declined` or `not-charged` after
//     reconciliation; a succeeded charge has exactly one debit with the same amount, currency and
//     reference, a declined or not-charged one none, and the client's total equals the ledger's total.
//
// Reconciliation is held to the strict rule: a key the lookup settles as `failed` ("never happened") is
// FINAL — the charge is reported not charged and never resubmitted — and reconcile() starts right after
// the charging phase, while requests the client gave up on may still be processed
// (processAfterGiveUp: held processLateMs, then debited). A "failed" believed too early is then a
// debit nobody knows about: a lost charge. The settle window (reconcile's deferral) is what prevents it.
import { startGateway } from '../support/gateway.mjs';
import { chargeCustomer, reconcile, IdempotencyStore, CircuitBreaker, CircuitOpenError, isTransientError, newIdempotencyKey } from 'steadfast';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The defaults of the quick (5,000) soak; `make soak` scales `charges` and the outage. */
export const DEFAULTS = Object.freeze({
  charges: 5_000,
  concurrency: 200,
  seed: 20261130,
  attemptTimeoutMs: 1_500,
  lookupTimeoutMs: 2_000,
  faults: Object.freeze({
    debitThenTimeout: 0.01,
    debitThenReset: 0.01,
    resetBeforeProcessing: 0.01,
    status500: 0.01,
    status502: 0.01,
    status503: 0.01,
    status504: 0.01,
    status429: 0.01,
    slow: 0.03,
    decline: 0.05,
    processAfterGiveUp: 0.01,
    retryAfterSeconds: 1,
    slowMs: 60,
    timeoutHoldMs: 10_000, // the client's attempt timeout fires long before; the hold timer is then cleared
    processLateMs: 2_800, // processed 1.3 s after the client's 1.5 s attempt timeout gave up, inside its 3 s window
  }),
  // A full outage (every request, GETs too, answered 503) once `at` of the charges have started.
  outages: Object.freeze([Object.freeze({ at: 0.4, durationMs: 1_000 })]),
  policy: Object.freeze({ maxAttempts: 4, baseDelayMs: 10, maxDelayMs: 1_000, maxElapsedMs: 15_000 }),
  breaker: Object.freeze({ windowSize: 20, failureRateThreshold: 0.5, minimumCalls: 10, openDurationMs: 100, probesToClose: 2 }),
  maxRounds: 25,
  /**
   * After the main pass, this many more charges (one attempt each) are all forced into
   * processAfterGiveUp: each ends unknown 1.5 s after it was sent and is debited 1.3 s later, so the
   * first reconcile round always meets "no debit yet" answers that must be deferred, not believed.
   */
  lateCharges: 20,
  // Charges alone on the gateway whose attempt 1 debits and drops and whose attempt 2 is answered
  // by the front (401 an auth proxy, 404 a load balancer, 409 "still processing"): each must stay
  // parked and be settled by reconciliation as the one debit it is — never freed, never charged twice.
  frontCharges: 15,
  /** The settle window given to chargeCustomer: twice the attempt timeout (the core's default rule). */
  settleAfterMs: 3_000,
  /** A logical charge refused by an open circuit is resubmitted (same key) until this many ms after its start. */
  chargeDeadlineMs: 60_000,
  log: () => {},
});

/**
 * Stripe-style classification for the pipeline: `Stripe-Should-Retry` when the gateway sent it (409
 * "key in use" is retryable: an earlier attempt is still being processed), else steadfast's default.
 */
export function transient(error) {
  if (error !== null && typeof error === 'object' && typeof error.shouldRetry === 'boolean') return error.shouldRetry;
  return isTransientError(error);
}

/**
 * The caller's gateway function for chargeCustomer: a real `fetch` POST to the local gateway, the same
 * Idempotency-Key on every attempt, a per-attempt timeout (AbortSignal.timeout, combined with the
 * retry loop's own signal), and non-2xx thrown as an Error carrying `status`, `headers` (for
 * Retry-After) and `shouldRetry`.
 */
export function httpGateway(baseUrl, { attemptTimeoutMs, counters }) {
  const url = `${baseUrl}/v1/charges`;
  return async (charge, ctx) => {
    counters.httpAttempts += 1;
    if (ctx.attempt > 1) counters.retries += 1;
    const timeout = AbortSignal.timeout(attemptTimeoutMs);
    const signal = ctx.signal === undefined ? timeout : AbortSignal.any([ctx.signal, timeout]);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': charge.idempotencyKey },
      body: JSON.stringify({ amountCents: charge.amountCents, currency: charge.currency }),
      signal,
    });
    const text = await res.text();
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (res.ok) {
      if (body === undefined || typeof body.id !== 'string') throw Object.assign(new Error('malformed 2xx body'), { status: 502 });
      return { reference: body.id, amountCents: body.amountCents, currency: body.currency };
    }
    const error = new Error(`HTTP ${res.status} ${body?.error?.code ?? ''}`.trim());
    error.status = res.status;
    error.headers = res.headers;
    error.body = body;
    const should = res.headers.get('stripe-should-retry');
    if (should === 'true' || should === 'false') error.shouldRetry = should === 'true';
    throw error;
  };
}

/** Settlement lookup for reconcile(): a debit → done with the charge; none → failed; anything else throws. */
export function settlementLookup(baseUrl, { lookupTimeoutMs, counters, answers }) {
  return async (key) => {
    counters.lookups += 1;
    const res = await fetch(`${baseUrl}/v1/settlements?idempotencyKey=${encodeURIComponent(key)}`, {
      signal: AbortSignal.timeout(lookupTimeoutMs),
    });
    if (!res.ok) {
      await res.arrayBuffer();
      throw Object.assign(new Error(`settlement lookup HTTP ${res.status}`), { status: res.status });
    }
    const list = await res.json();
    if (!Array.isArray(list)) throw new Error('settlement lookup: not a list');
    const answer =
      list.length === 0
        ? { status: 'failed' }
        : { status: 'done', result: { reference: list[0].id, amountCents: list[0].amountCents, currency: list[0].currency } };
    answers.set(key, answer);
    return answer;
  };
}

/**
 * Wait until the gateway is idle: nothing in flight (slow debits included) and no new request for
 * `quietMs`. Only then may "no settlement" mean "never charged" (a request the client abandoned can
 * still be read and processed by the server a moment later).
 */
export async function waitIdle(gw, { quietMs = 150, pollMs = 25, maxMs = 30_000 } = {}) {
  const t0 = Date.now();
  let last = -1;
  let quietSince = Date.now();
  for (;;) {
    const s = gw.stats();
    if (s.requests !== last || s.inFlight !== 0) {
      last = s.requests;
      quietSince = Date.now();
    } else if (Date.now() - quietSince >= quietMs) {
      return Date.now() - t0;
    }
    if (Date.now() - t0 > maxMs) throw new Error(`gateway not idle after ${maxMs} ms: ${JSON.stringify(s)}`);
    await sleep(pollMs);
  }
}

async function pool(items, concurrency, work) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/**
 * Run the soak; returns the figures (see `format`). Never throws for an invariant violation: the
 * caller asserts on the figures (and `violations` lists the first few offending charges).
 */
export async function runSoak(options = {}) {
  const cfg = { ...DEFAULTS, ...options };
  const log = cfg.log;
  const t0 = performance.now();
  let outageOn = false;
  const gw = await startGateway({ seed: cfg.seed, faults: cfg.faults, outage: () => outageOn });
  const counters = { httpAttempts: 0, retries: 0, lookups: 0, circuitOpen: 0, deferred: 0, retryAfterViolations: 0, retryAfterChecked: 0, frontFreed: 0 };
  const answers = new Map();
  const retryAfterFloor = Math.min((cfg.faults.retryAfterSeconds ?? 1) * 1000, cfg.policy.maxDelayMs);
  const store = new IdempotencyStore({ isTransient: transient });
  const lateStore = new IdempotencyStore({ isTransient: transient });
  const stores = [lateStore, store];
  const unknownCount = () => stores.reduce((n, s) => n + s.unknownKeys().length, 0);
  const breakerEvents = { open: 0, 'half-open': 0, closed: 0 };
  const breaker = new CircuitBreaker({
    ...cfg.breaker,
    isFailure: transient, // a decline is the gateway working, not failing
    onStateChange: (s) => {
      breakerEvents[s] = (breakerEvents[s] ?? 0) + 1;
    },
  });
  const policy = {
    ...cfg.policy,
    isRetryable: transient,
    onRetry: ({ delayMs, error }) => {
      if (error?.status === 429) {
        counters.retryAfterChecked += 1;
        if (!(delayMs >= retryAfterFloor)) counters.retryAfterViolations += 1;
      }
    },
  };
  const deps = { store, breaker, gateway: httpGateway(gw.url, { attemptTimeoutMs: cfg.attemptTimeoutMs, counters }), policy, settleAfterMs: cfg.settleAfterMs };

  // One key per logical charge, made once, here, at the boundary.
  const charges = Array.from({ length: cfg.charges + cfg.lateCharges + cfg.frontCharges }, (_, i) => ({
    i,
    idempotencyKey: newIdempotencyKey(),
    amountCents: 100 + ((i * 7919) % 99_901),
    currency: 'usd',
    status: 'pending', // → succeeded | declined | unknown | not-charged | error
    result: undefined,
    via: undefined, // 'call' | 'reconcile'
    error: undefined,
  }));

  /** Drive one logical charge until it is succeeded, declined or unknown (parked for reconciliation). */
  const settle = async (c) => {
    const start = Date.now();
    for (;;) {
      try {
        c.result = await chargeCustomer(c, deps);
        c.status = 'succeeded';
        c.via = 'call';
        return;
      } catch (e) {
        if (e instanceof CircuitOpenError && Date.now() - start < cfg.chargeDeadlineMs) {
          // Nothing was sent and the store freed the key: try again later with the SAME key.
          counters.circuitOpen += 1;
          await sleep(Math.max(5, e.retryAfterMs) + Math.random() * 20);
          continue;
        }
        if (e?.status === 402) {
          c.status = 'declined';
          c.error = e.body?.error?.decline_code ?? 'declined';
          return;
        }
        if (store.peek(c.idempotencyKey)?.status === 'unknown') {
          c.status = 'unknown';
          return;
        }
        c.status = 'error';
        c.error = e;
        return;
      }
    }
  };

  // Phase 0: debit-then-drop followed by a front refusal, one charge at a time on the idle gateway so
  // the forced faults are its own (first, so the others' settle windows are still open at reconcile).
  const fronts = ['status401', 'status404', 'status409'];
  for (const [j, c] of charges.slice(cfg.charges + cfg.lateCharges).entries()) {
    gw.forceNext('debitThenReset');
    gw.forceNext(fronts[j % fronts.length]);
    await settle(c);
    // Parked (settled later by reconciliation), or settled now by an answer about the key (a 409 is
    // retried and the gateway replays the debit): never freed, declined or an error.
    if (c.status !== 'unknown' && c.status !== 'succeeded') counters.frontFreed += 1;
  }
  // Phase 1: every charge, `concurrency` at a time; outages switched on by progress.
  let started = 0;
  const outageTimers = [];
  const outagesAt = cfg.outages.map((o) => ({ ...o, startAt: Math.floor(o.at * cfg.charges), fired: false }));
  let outageMsTotal = 0;
  await pool(charges.slice(0, cfg.charges), cfg.concurrency, async (c) => {
    started += 1;
    for (const o of outagesAt) {
      if (!o.fired && started >= o.startAt) {
        o.fired = true;
        outageOn = true;
        const since = Date.now();
        log(`soak: outage on at charge ${started} for ${o.durationMs} ms`);
        outageTimers.push(
          setTimeout(() => {
            outageOn = false;
            outageMsTotal += Date.now() - since;
            log('soak: outage off');
          }, o.durationMs),
        );
      }
    }
    await settle(c);
  });
  for (const t of outageTimers) clearTimeout(t);
  outageOn = false;
  // Phase 1b: the late charges, alone on the gateway so that the forced faults are theirs.
  await waitIdle(gw);
  const late = charges.slice(cfg.charges, cfg.charges + cfg.lateCharges);
  if (late.length > 0) {
    gw.forceNext('processAfterGiveUp', late.length);
    // Their own store, reconciled first: on a loaded machine, looking up a long list of older keys
    // could outlast their lateness.
    const once = { ...deps, store: lateStore, policy: { ...cfg.policy, isRetryable: transient, maxAttempts: 1 } };
    await Promise.all(
      late.map(async (c) => {
        try {
          c.result = await chargeCustomer(c, once);
          c.status = 'succeeded';
          c.via = 'call';
        } catch {
          c.status = lateStore.peek(c.idempotencyKey)?.status === 'unknown' ? 'unknown' : 'error';
        }
      }),
    );
  }
  const phase1Ms = performance.now() - t0;
  const httpAttemptsPhase1 = counters.httpAttempts;
  const idleWaitMs = [];
  const unknownBefore = unknownCount();
  const countBy = (s) => charges.reduce((n, c) => n + (c.status === s ? 1 : 0), 0);
  const errorsPhase1 = countBy('error');
  log(
    `soak: phase 1 done in ${(phase1Ms / 1000).toFixed(1)} s: ${countBy('succeeded')} succeeded, ${countBy('declined')} declined, ${unknownBefore} unknown, ${errorsPhase1} errors`,
  );

  // Phase 2: reconcile unknown keys against the settlement listing at once (requests the client gave up
  // on may still land); a `failed` verdict is final (not charged, never resubmitted); deferred keys are
  // asked again after reconcile's retryAfterMs; repeat until nothing is unknown.
  const byKey = new Map(charges.map((c) => [c.idempotencyKey, c]));
  const lookup = settlementLookup(gw.url, { lookupTimeoutMs: cfg.lookupTimeoutMs, counters, answers });
  const rounds = [];
  let round = 0;
  while (unknownCount() > 0 && round < cfg.maxRounds) {
    round += 1;
    answers.clear();
    const report = { checked: 0, done: 0, failed: 0, deferred: 0, stillUnknown: 0, retryAfterMs: Infinity };
    for (const s of stores) {
      const keys = s.unknownKeys();
      const one = await reconcile(s, lookup, { concurrency: 32 });
      for (const f of ['checked', 'done', 'failed', 'deferred', 'stillUnknown']) report[f] += one[f];
      report.retryAfterMs = Math.min(report.retryAfterMs, one.retryAfterMs ?? Infinity);
      for (const key of keys) {
        const c = byKey.get(key);
        const rec = s.peek(key);
        if (c === undefined) continue;
        if (rec?.status === 'done') {
          c.status = 'succeeded';
          c.result = rec.result;
          c.via = 'reconcile';
        } else if (rec === undefined) {
          c.status = 'not-charged'; // final: the app tells the customer nothing was charged
          c.via = 'reconcile';
        }
      }
    }
    counters.deferred += report.deferred;
    rounds.push({
      round,
      checked: report.checked,
      done: report.done,
      failed: report.failed,
      deferred: report.deferred,
      stillUnknown: report.stillUnknown,
      unknownAfter: unknownCount(),
    });
    log(`soak: reconcile round ${round}: ${JSON.stringify(rounds.at(-1))}`);
    if (unknownCount() > 0) await sleep(Math.min(Number.isFinite(report.retryAfterMs) ? report.retryAfterMs : 250, 5_000) + 20);
  }
  // Every held request has landed before the ledger is read: a debit for a not-charged key is lost.
  idleWaitMs.push(await waitIdle(gw));
  const unknownAfter = unknownCount();

  // Phase 3: the client's records against the gateway's ledger.
  const ledger = gw.ledger();
  const debits = new Map();
  for (const e of ledger) {
    const list = debits.get(e.idempotencyKey);
    if (list) list.push(e);
    else debits.set(e.idempotencyKey, [e]);
  }
  let keysDebitedTwice = 0;
  let foreignDebits = 0;
  for (const [key, list] of debits) {
    if (list.length > 1) keysDebitedTwice += 1;
    if (!byKey.has(key)) foreignDebits += list.length;
  }
  const violations = [];
  let lost = 0;
  let chargesDebitedTwice = 0;
  let clientTotal = 0;
  for (const c of charges) {
    const d = debits.get(c.idempotencyKey) ?? [];
    if (d.length > 1) chargesDebitedTwice += 1;
    let why;
    if (c.status === 'succeeded') {
      clientTotal += c.amountCents;
      const r = c.result;
      if (d.length !== 1) why = `succeeded but ${d.length} debits`;
      else if (r?.reference !== d[0].id || r?.amountCents !== c.amountCents || d[0].amountCents !== c.amountCents || d[0].currency !== c.currency) {
        why = `succeeded but client ${JSON.stringify(r)} vs ledger ${JSON.stringify(d[0])}`;
      }
    } else if (c.status === 'declined') {
      if (d.length !== 0) why = `declined but ${d.length} debits`;
    } else if (c.status === 'not-charged') {
      if (d.length !== 0) why = `reconciled as never charged, but ${d.length} debits (a "failed" believed too early)`;
    } else {
      why = `ended ${c.status}${c.error ? `: ${c.error?.message ?? c.error}` : ''} (${d.length} debits)`;
    }
    if (why !== undefined) {
      lost += 1;
      if (violations.length < 10) violations.push({ key: c.idempotencyKey, amountCents: c.amountCents, why });
    }
  }
  const ledgerTotal = ledger.reduce((n, e) => n + e.amountCents, 0);
  const stats = gw.stats();
  await gw.close();
  const wallMs = performance.now() - t0;

  return {
    charges: charges.length,
    lateCharges: cfg.lateCharges,
    frontCharges: cfg.frontCharges,
    frontFreed: counters.frontFreed,
    concurrency: cfg.concurrency,
    seed: cfg.seed,
    wallMs,
    phase1Ms,
    httpAttempts: counters.httpAttempts,
    httpAttemptsPhase1,
    retries: counters.retries,
    settlementLookups: counters.lookups,
    gatewayRequests: stats.requests,
    succeeded: countBy('succeeded'),
    succeededViaReconcile: charges.reduce((n, c) => n + (c.via === 'reconcile' ? 1 : 0), 0),
    declined: countBy('declined'),
    notCharged: countBy('not-charged'),
    unknownBefore,
    unknownAfter,
    errorsPhase1,
    errors: countBy('error'),
    reconcileRounds: rounds,
    deferred: counters.deferred,
    circuitOpenRejections: counters.circuitOpen,
    breakerTransitions: breakerEvents,
    retryAfter: { checked: counters.retryAfterChecked, violations: counters.retryAfterViolations, floorMs: retryAfterFloor },
    outageMs: outageMsTotal,
    idleWaitMs,
    gateway: {
      debits: stats.debits,
      replays: stats.replays,
      conflicts: stats.conflicts,
      mismatches: stats.mismatches,
      validationErrors: stats.validationErrors,
      outage503: stats.outage503,
      faults: stats.faults,
    },
    ledgerEntries: ledger.length,
    doubleCharges: keysDebitedTwice + foreignDebits,
    keysDebitedTwice,
    chargesDebitedTwice,
    foreignDebits,
    lost,
    clientTotalCents: clientTotal,
    ledgerTotalCents: ledgerTotal,
    storeSize: store.size + lateStore.size,
    violations,
  };
}

/** Human-readable figures. */
export function format(f) {
  const n = (x) => x.toLocaleString('en-US');
  const lines = [
    `soak: ${n(f.charges)} logical charges (${n(f.lateCharges)} of them processed after the client gave up), ${f.concurrency} in flight, seed ${f.seed}, Node ${process.versions.node}`,
    `  wall time                 ${(f.wallMs / 1000).toFixed(1)} s (charging ${(f.phase1Ms / 1000).toFixed(1)} s, ${n(Math.round(f.charges / (f.phase1Ms / 1000)))} charges/s)`,
    `  charges attempted         ${n(f.charges)}`,
    `  HTTP attempts (client)    ${n(f.httpAttempts)} (${n(f.httpAttemptsPhase1)} in the first pass, ${n(f.retries)} retries), + ${n(f.settlementLookups)} settlement lookups; gateway saw ${n(f.gatewayRequests)} requests`,
    `  succeeded                 ${n(f.succeeded)} (${n(f.succeededViaReconcile)} settled by reconciliation)`,
    `  declined                  ${n(f.declined)}`,
    `  not charged               ${n(f.notCharged)}   (reconcile: no debit after the settle window; final, never resubmitted)`,
    `  unknown before reconcile  ${n(f.unknownBefore)}`,
    `  unknown after reconcile   ${n(f.unknownAfter)}   (${f.reconcileRounds.length} rounds; ${n(f.notCharged)} settled as never charged, final; ${n(f.deferred)} "failed" answers deferred inside the settle window)`,
    `  other errors              ${n(f.errors)}`,
    `  debit, drop, then 401/404/409 from the front: ${n(f.frontCharges)} charges, ${n(f.frontFreed)} freed (must be 0)`,
    `  double charges            ${n(f.doubleCharges)}   (keys debited twice ${f.keysDebitedTwice}, logical charges debited twice ${f.chargesDebitedTwice}, debits for unknown keys ${f.foreignDebits})`,
    `  lost charges              ${n(f.lost)}   (client total ${n(f.clientTotalCents)} ¢ vs ledger total ${n(f.ledgerTotalCents)} ¢, ${n(f.ledgerEntries)} ledger entries)`,
    `  faults injected           ${Object.entries(f.gateway.faults)
      .map(([k, v]) => `${k} ${n(v)}`)
      .join(', ')}`,
    `  outage                    ${f.outageMs} ms, ${n(f.gateway.outage503)} requests answered 503; breaker ${JSON.stringify(f.breakerTransitions)}, ${n(f.circuitOpenRejections)} CircuitOpenError (resubmitted)`,
    `  gateway                   ${n(f.gateway.debits)} debits, ${n(f.gateway.replays)} replays, ${n(f.gateway.conflicts)} 409 in-flight conflicts, ${f.gateway.mismatches} key mismatches`,
    `  Retry-After on 429        ${n(f.retryAfter.checked)} retries checked, ${f.retryAfter.violations} slept less than ${f.retryAfter.floorMs} ms`,
    `  idle wait before ledger   ${f.idleWaitMs.join(', ')} ms`,
  ];
  for (const r of f.reconcileRounds)
    lines.push(
      `    round ${r.round}: checked ${r.checked}, done ${r.done}, failed ${r.failed}, deferred ${r.deferred}, still unknown ${r.stillUnknown} → unknown ${r.unknownAfter}`,
    );
  for (const v of f.violations) lines.push(`  VIOLATION ${v.key} ${v.amountCents}: ${v.why}`);
  return lines.join('\n');
}
