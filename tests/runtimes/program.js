// The small program every runtime runs (Deno, Bun, Bun --compile, workerd, a Next.js client component,
// Node route and edge route), against the local server of server.mjs at `base` (http://127.0.0.1:<port>).
// It gets the package's namespace (`import * as steadfast from 'steadfast'`, resolved by the host's own
// export conditions) and answers a list of checks, each { name, ok, detail }; run.mjs asserts them all.
// Plain JavaScript, no imports, no Node APIs: the same file runs in every host.

/** A breaker made at module level, before anything awaited: construction never needs the core. */
export function moduleLevel(steadfast) {
  return new steadfast.CircuitBreaker({ failureThreshold: 2, openDurationMs: 60_000 });
}

export async function program(steadfast, base, label, early) {
  const checks = [];
  const check = (name, ok, detail) => checks.push({ name, ok: ok === true, detail: String(detail) });
  const fail = (e) => `${e?.name}: ${e?.message}`;
  await steadfast.ready;
  check('ready', true, `core ${steadfast.version()}`);
  const run = `${label}-${steadfast.newIdempotencyKey()}`; // the server counts per id: one per run

  // 1. withRetry over 503s: the server answers 503 twice, then 200.
  let calls = 0;
  try {
    const body = await steadfast.withRetry(
      async () => {
        calls += 1;
        const r = await fetch(`${base}/flaky/${run}-retry`);
        if (r.status === 503) throw Object.assign(new Error('HTTP 503'), { status: 503 });
        return r.json();
      },
      { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5 },
    );
    check('withRetry retries 503s', calls === 3 && body.served === 3, `${calls} calls, served ${body.served}`);
  } catch (e) {
    check('withRetry retries 503s', false, fail(e));
  }

  // 2. An open breaker refuses without calling: two failures open it (the one made at module level).
  const breaker = early ?? moduleLevel(steadfast);
  let ran = 0;
  for (let i = 0; i < 2; i += 1) await breaker.execute(() => Promise.reject(new Error('gateway down'))).catch(() => {});
  const refused = await breaker.execute(() => (ran += 1)).catch((e) => e);
  check(
    'open breaker refuses',
    refused instanceof steadfast.CircuitOpenError && steadfast.isSteadfastError(refused, 'CIRCUIT_OPEN') && ran === 0 && refused.retryAfterMs > 0,
    `${breaker.currentState}, ${refused?.name}, retryAfterMs ${refused?.retryAfterMs}, ran ${ran}`,
  );

  // 3. chargeCustomer twice with one key: the second is a replay; the gateway was asked once.
  try {
    const deps = {
      store: new steadfast.IdempotencyStore(),
      breaker: new steadfast.CircuitBreaker({ failureThreshold: 5, openDurationMs: 1_000 }),
      gateway: async (charge) => {
        const r = await fetch(`${base}/charge`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': charge.idempotencyKey },
          body: JSON.stringify({ amountCents: charge.amountCents, currency: charge.currency }),
        });
        return r.json();
      },
      policy: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
    };
    const key = `${run}-charge`;
    const charge = { idempotencyKey: key, amountCents: 1999, currency: 'eur' };
    const first = await steadfast.chargeCustomer(charge, deps);
    const again = await steadfast.chargeCustomer(charge, deps);
    const seen = await (await fetch(`${base}/seen/${encodeURIComponent(key)}`)).json();
    check(
      'chargeCustomer replays',
      first.reference === again.reference && seen.count === 1,
      `${first.reference} / ${again.reference}, gateway saw ${seen.count}`,
    );
  } catch (e) {
    check('chargeCustomer replays', false, fail(e));
  }

  // 4. resilientFetch against the local server: 503, 503, 200.
  try {
    const r = await steadfast.resilientFetch(`${base}/flaky/${run}-fetch`, undefined, { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 } });
    const body = await r.json();
    check('resilientFetch retries 503s', r.status === 200 && body.served === 3, `HTTP ${r.status}, served ${body.served}`);
  } catch (e) {
    check('resilientFetch retries 503s', false, fail(e));
  }
  return checks;
}
