// The runtime fault matrix in Node 24: real faults from tests/runtimes/server.mjs (and a port nobody
// listens on, and a name that does not resolve) through the installed package, with the verdict on
// the key for each (tests/runtimes/faults.js, which scripts/test-runtimes.sh runs in Deno, Bun,
// workerd and Next.js too). Then the errors the other runtimes' fetch was measured to give, by shape,
// through chargeCustomer and a checkout client: Deno's body cut off mid-stream and every network
// failure of Cloudflare Workers must park the key, never free it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as steadfast from 'steadfast';
import { startServer } from '../runtimes/server.mjs';
import { faultMatrix } from '../runtimes/faults.js';
import { freePort } from '../shared/redis-server.mjs';

const { CircuitBreaker, IdempotencyStore, OutcomeUnknownError, chargeCustomer, createCheckoutClient, isFetchNetworkError, isTransientError } = steadfast;

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

/** A port nothing listens on (bound, then closed). */
const deadPort = freePort;

test('the fault matrix in Node 24: only a failure that proves nothing was sent frees the key', { timeout: 60_000 }, async (t) => {
  const { checks, shapes } = await faultMatrix(steadfast, { base: server.base, closed: String(await deadPort()), label: 'node' });
  for (const s of shapes) t.diagnostic(`${s.fault} → ${s.stage}${s.status === undefined ? '' : ` HTTP ${s.status}`}: ${s.error} → ${s.expected}`);
  assert.equal(checks.length, 32, '8 faults × (host fetch, resilientFetch, checkout, chargeCustomer)');
  for (const c of checks) {
    await t.test(c.name, () => assert.ok(c.ok, c.detail));
  }
  // Node's own words, pinned: the codes the core's not-sent rule reads.
  const by = Object.fromEntries(shapes.map((s) => [s.fault, s]));
  assert.match(by.refused.error, /^TypeError: fetch failed ← Error ECONNREFUSED/);
  assert.match(by.dns.error, /^TypeError: fetch failed ← Error ENOTFOUND/);
  assert.match(by.reset.error, /ECONNRESET/);
  assert.equal(by['cut-close'].stage, 'body');
});

/**
 * The errors measured in the other runtimes (tests/runtimes/run.mjs prints them): Deno 2.9 rejects
 * the read of a body whose connection dropped after a 200 head with this TypeError, no code, no
 * cause; workerd (wrangler 4) rejects fetch and body reads with a plain Error and no code.
 */
const MEASURED = {
  'Deno, a body cut off mid-stream': () => new TypeError('error reading a body from connection'),
  'workerd, a reset, a cut body, a refused connection': () => Object.assign(new Error('Network connection lost.'), { retryable: true, remote: true }),
  'workerd, an unresolvable name': () => Object.assign(new Error('internal error; reference = d62pf0b5094tk82mnaqtnk5a'), { remote: true }),
};

for (const [what, make] of Object.entries(MEASURED)) {
  test(`${what}: a fetch network error, so chargeCustomer parks the key and refuses the same charge`, async () => {
    const store = new IdempotencyStore();
    let calls = 0;
    const deps = {
      store,
      breaker: new CircuitBreaker({ failureThreshold: 50, openDurationMs: 1_000 }),
      gateway: async () => {
        calls += 1;
        throw make();
      },
      policy: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    };
    const charge = { idempotencyKey: 'k-measured', amountCents: 700, currency: 'eur' };
    await assert.rejects(chargeCustomer(charge, deps), OutcomeUnknownError);
    assert.equal(calls, 2, 'retried: transient');
    assert.equal(store.peek('k-measured')?.status, 'unknown');
    await assert.rejects(chargeCustomer(charge, deps), OutcomeUnknownError);
    assert.equal(calls, 2, 'the parked key refuses the same charge: nothing sent');
    assert.equal(isFetchNetworkError(make()), true);
    assert.equal(isTransientError(make()), true);
  });

  test(`${what}: a checkout charge whose body read fails so is unknown, the key parked`, async () => {
    const fetch = async () =>
      new Response(new ReadableStream({ pull: (c) => c.error(make()) }), { status: 200, headers: { 'content-type': 'application/json' } });
    const client = createCheckoutClient({ endpoint: 'http://127.0.0.1:1/v1/charges', fetch, breaker: false, retry: { maxAttempts: 1 } });
    const out = await client.charge({ amountCents: 700, currency: 'eur' }, { idempotencyKey: 'k-checkout' });
    assert.equal(out.status, 'unknown');
    assert.equal(client.store.peek('k-checkout')?.status, 'unknown');
  });
}

test('only those words, with those names: lookalikes are not network errors', () => {
  for (const e of [
    new Error('Network connection lost'), // workerd's has its period
    new Error('internal error'),
    new Error('error reading a body from connection'), // Deno's is a TypeError
    new RangeError('Network connection lost.'),
    { name: 'Error', message: 'Network connection lost.' }, // not an Error
  ]) {
    assert.equal(isFetchNetworkError(e), false, `${e.name}: ${e.message}`);
  }
  // Deno's words with more after them (hyper writes the cause after a colon in some versions).
  assert.equal(isFetchNetworkError(new TypeError('error reading a body from connection: connection reset')), true);
});
