// Tests for the local test payment gateway (tests/support/gateway.mjs).
// Run: node --test tests/js/gateway.test.mjs
import { test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startGateway, FAULT_NAMES } from '../support/gateway.mjs';
import { manualClock as clockAt } from '../support/clock.mjs';

const GATEWAY_PATH = fileURLToPath(new URL('../support/gateway.mjs', import.meta.url));
// Every test gets a timeout so a broken gateway fails the run instead of hanging it.
const test = (name, fn) => nodeTest(name, { timeout: 20_000 }, fn);
const CHARGE = { amountCents: 4999, currency: 'usd' };

/** POST a charge; returns { status, headers, body } or { error } if the connection failed. */
async function charge(gw, key, body = CHARGE, init = {}) {
  const headers = { 'Content-Type': 'application/json' };
  if (key !== undefined) headers['Idempotency-Key'] = key;
  try {
    const res = await fetch(`${gw.url}/v1/charges`, {
      method: 'POST',
      headers,
      body: typeof body === 'string' ? body : JSON.stringify(body),
      ...init,
    });
    return { status: res.status, headers: res.headers, body: await res.json() };
  } catch (error) {
    return { error };
  }
}

async function getJson(gw, path) {
  const res = await fetch(`${gw.url}${path}`);
  return { status: res.status, headers: res.headers, body: await res.json() };
}

async function waitFor(predicate, timeoutMs = 2000) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('waitFor timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Start a gateway and close it when the test ends. */
async function gateway(t, options) {
  const gw = await startGateway(options);
  t.after(() => gw.close());
  return gw;
}

/** This file's clocks start at 1_700_000_000_000 ms unless a test says otherwise. */
const fakeClock = (start = 1_700_000_000_000) => clockAt(start);

test('listens on 127.0.0.1 with an ephemeral port', async (t) => {
  const gw = await gateway(t);
  assert.match(gw.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.notEqual(gw.port, 0);
});

test('validates options and names the bad one', async () => {
  const cases = [
    [{ seed: 'x' }, TypeError, /seed/],
    [{ seed: Infinity }, RangeError, /seed/],
    [{ faults: { status500: 1.5 } }, RangeError, /faults\.status500/],
    [{ faults: { status500: '0.1' } }, TypeError, /faults\.status500/],
    [{ faults: { status500: 0.6, status503: 0.6 } }, RangeError, /sum/],
    [{ faults: { explode: 0.1 } }, TypeError, /faults\.explode/],
    [{ faults: { retryAfterSeconds: 1.5 } }, RangeError, /retryAfterSeconds/],
    [{ faults: { slowMs: -1 } }, RangeError, /slowMs/],
    [{ faults: { timeoutHoldMs: NaN } }, RangeError, /timeoutHoldMs/],
    [{ outage: { startMs: 10, endMs: 5 } }, RangeError, /outage\.endMs/],
    [{ outage: 'soon' }, TypeError, /outage/],
    [{ clock: 5 }, TypeError, /clock/],
    [{ shouldRetryHeader: 'yes' }, TypeError, /shouldRetryHeader/],
    [{ slowMs: 5 }, TypeError, /slowMs.*faults\.slowMs/],
    [{ fault: {} }, TypeError, /unknown option fault/],
  ];
  for (const [options, ErrorType, message] of cases) {
    const started = startGateway(options);
    started.then(
      (gw) => gw.close(),
      () => {},
    ); // never leak a server if validation regresses
    await assert.rejects(started, (err) => err instanceof ErrorType && message.test(err.message), JSON.stringify(options));
  }
});

test('successful charge: 200, ledger, chargesByKey, GET charge and settlements', async (t) => {
  const gw = await gateway(t);
  const r = await charge(gw, 'order-1', { ...CHARGE, description: 'coffee' });
  assert.equal(r.status, 200);
  assert.match(r.body.id, /^ch_/);
  assert.deepEqual(r.body, { id: r.body.id, reference: r.body.id, amountCents: 4999, currency: 'usd', status: 'succeeded' });
  assert.equal(r.headers.get('idempotent-replayed'), null);
  assert.equal(r.headers.get('stripe-should-retry'), null);

  const ledger = gw.ledger();
  assert.equal(ledger.length, 1);
  assert.equal(ledger[0].idempotencyKey, 'order-1');
  assert.equal(ledger[0].id, r.body.id);
  assert.equal(typeof ledger[0].at, 'number');
  assert.deepEqual([...gw.chargesByKey()], [['order-1', 1]]);

  const got = await getJson(gw, `/v1/charges/${r.body.id}`);
  assert.equal(got.status, 200);
  assert.deepEqual(got.body, r.body);
  const missing = await getJson(gw, '/v1/charges/ch_nope');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.code, 'resource_missing');

  await charge(gw, 'order-2', { amountCents: 100, currency: 'eur' });
  const all = await getJson(gw, '/v1/settlements');
  assert.deepEqual(
    all.body.map((s) => [s.idempotencyKey, s.amountCents, s.currency]),
    [
      ['order-1', 4999, 'usd'],
      ['order-2', 100, 'eur'],
    ],
  );
  const one = await getJson(gw, '/v1/settlements?idempotencyKey=order-2');
  assert.equal(one.body.length, 1);
  assert.deepEqual(Object.keys(one.body[0]).sort(), ['amountCents', 'at', 'currency', 'id', 'idempotencyKey']);
  const none = await getJson(gw, '/v1/settlements?idempotencyKey=never-sent');
  assert.deepEqual(none.body, []);
  assert.equal(gw.requests(), 7);
});

test('unknown routes and methods get 404 JSON', async (t) => {
  const gw = await gateway(t);
  for (const [method, path] of [
    ['GET', '/'],
    ['GET', '/v1/charges'],
    ['DELETE', '/v1/charges/ch_1'],
    ['POST', '/v1/refunds'],
    ['PUT', '/v1/settlements'],
  ]) {
    const res = await fetch(`${gw.url}${path}`, { method });
    assert.equal(res.status, 404, `${method} ${path}`);
    assert.equal((await res.json()).error.type, 'invalid_request_error');
  }
});

test('POST without Idempotency-Key is rejected with 400 and never debits', async (t) => {
  const gw = await gateway(t);
  const r = await charge(gw, undefined);
  assert.equal(r.status, 400);
  assert.equal(r.body.error.type, 'invalid_request_error');
  assert.equal(r.body.error.code, 'idempotency_key_required');
  assert.equal((await charge(gw, 'x'.repeat(256))).body.error.code, 'idempotency_key_too_long');
  assert.equal(gw.ledger().length, 0);
});

test('same key + same body replays the stored response without a new debit', async (t) => {
  const gw = await gateway(t);
  const first = await charge(gw, 'k1', { amountCents: 500, currency: 'usd', metadata: { a: 1, b: 2 } });
  // Same JSON with different key order is the same request.
  const second = await charge(gw, 'k1', '{"metadata":{"b":2,"a":1},"currency":"usd","amountCents":500}');
  assert.equal(second.status, 200);
  assert.equal(second.headers.get('idempotent-replayed'), 'true');
  assert.deepEqual(second.body, first.body);
  assert.equal(gw.ledger().length, 1);
  assert.equal(gw.chargesByKey().get('k1'), 1);
  assert.equal(gw.stats().replays, 1);
});

test('same key + different body is a 422 idempotency_error', async (t) => {
  const gw = await gateway(t);
  await charge(gw, 'k1');
  const r = await charge(gw, 'k1', { ...CHARGE, amountCents: 5000 });
  assert.equal(r.status, 422);
  assert.equal(r.body.error.type, 'idempotency_error');
  assert.equal(r.headers.get('stripe-should-retry'), 'false');
  assert.equal(gw.ledger().length, 1);
  assert.equal(gw.stats().mismatches, 1);
});

test('same key while the first request is in flight is a 409, then replays', async (t) => {
  const gw = await gateway(t, { faults: { slowMs: 1000 } });
  gw.forceNext('slow');
  const firstP = charge(gw, 'k1');
  await waitFor(() => gw.stats().inFlight === 1);
  const second = await charge(gw, 'k1');
  assert.equal(second.status, 409);
  assert.equal(second.body.error.code, 'idempotency_key_in_use');
  assert.equal(second.headers.get('stripe-should-retry'), 'true');
  const first = await firstP;
  assert.equal(first.status, 200);
  const third = await charge(gw, 'k1');
  assert.equal(third.headers.get('idempotent-replayed'), 'true');
  assert.equal(third.body.id, first.body.id);
  assert.equal(gw.chargesByKey().get('k1'), 1);
  assert.equal(gw.stats().conflicts, 1);
});

test('slow fault delays processing by slowMs', async (t) => {
  const gw = await gateway(t, { faults: { slowMs: 250 } });
  gw.forceNext('slow');
  const started = performance.now();
  const r = await charge(gw, 'k1');
  assert.equal(r.status, 200);
  assert.ok(performance.now() - started >= 240, 'response came back too early');
  assert.equal(gw.stats().faults.slow, 1);
  assert.equal(gw.ledger().length, 1);
});

test('releaseHeld() finishes a slow request at once; until then its key answers 409', async (t) => {
  const gw = await gateway(t, { faults: { slowMs: 30_000 } });
  gw.forceNext('slow');
  const started = performance.now();
  const first = charge(gw, 'k1');
  let inFlight;
  for (let i = 0; i < 200; i += 1) {
    inFlight = await charge(gw, 'k1');
    if (inFlight.status === 409) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.equal(inFlight.status, 409, 'the held request keeps its key in flight');
  assert.equal(gw.ledger().length, 0, 'nothing debited while held');
  assert.equal(gw.releaseHeld(), 1);
  const r = await first;
  assert.equal(r.status, 200);
  assert.ok(performance.now() - started < 10_000, 'released long before slowMs');
  assert.equal(gw.ledger().length, 1);
  assert.equal(gw.stats().pendingTimers, 0, "the slow request's timer is cancelled");
  assert.equal(gw.releaseHeld(), 0);
});

test('idempotency keys expire after 24 h of gateway clock time', async (t) => {
  const clock = fakeClock();
  const gw = await gateway(t, { clock });
  const first = await charge(gw, 'k1');
  assert.equal(gw.ledger()[0].at, clock());
  clock.advance(24 * 3600_000 - 1);
  const replay = await charge(gw, 'k1', { ...CHARGE, amountCents: 1 });
  assert.equal(replay.status, 422, 'key must still be remembered just before 24 h');
  clock.advance(1);
  const fresh = await charge(gw, 'k1', { ...CHARGE, amountCents: 1 });
  assert.equal(fresh.status, 200);
  assert.equal(fresh.headers.get('idempotent-replayed'), null);
  assert.notEqual(fresh.body.id, first.body.id);
  assert.equal(gw.chargesByKey().get('k1'), 2);
  assert.equal(gw.stats().storedKeys, 1);
  // Expired keys are also swept when other keys arrive (memory stays bounded in soak runs).
  clock.advance(24 * 3600_000);
  await charge(gw, 'k2');
  assert.equal(gw.stats().storedKeys, 1);
});

test('validation errors are 400 and not stored (same key may be retried with a fixed body)', async (t) => {
  const gw = await gateway(t);
  const bad = [
    '{not json',
    '[1,2]',
    { amountCents: 0, currency: 'usd' },
    { amountCents: 1.5, currency: 'usd' },
    { amountCents: '100', currency: 'usd' },
    { amountCents: 100, currency: 'us' },
    { amountCents: 100 },
  ];
  for (const body of bad) {
    const r = await charge(gw, 'k1', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error.type, 'invalid_request_error');
    assert.equal(r.headers.get('stripe-should-retry'), 'false');
  }
  const ok = await charge(gw, 'k1');
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('idempotent-replayed'), null);
  assert.equal(gw.ledger().length, 1);
  assert.equal(gw.stats().validationErrors, bad.length);
});

test('decline: 402 card_declined, no debit, stored and replayed', async (t) => {
  const gw = await gateway(t);
  gw.forceNext('decline');
  const r = await charge(gw, 'k1');
  assert.equal(r.status, 402);
  assert.deepEqual(r.body.error.type, 'card_error');
  assert.equal(r.body.error.code, 'card_declined');
  assert.equal(r.body.error.decline_code, 'generic_decline');
  const again = await charge(gw, 'k1');
  assert.equal(again.status, 402);
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  assert.equal(gw.ledger().length, 0);
  assert.equal(gw.stats().faults.decline, 1);
});

test('5xx faults: no debit, not stored, Stripe-Should-Retry header, retry processed fresh', async (t) => {
  const gw = await gateway(t);
  for (const status of [500, 502, 503, 504]) {
    const key = `k${status}`;
    gw.forceNext(`status${status}`);
    const r = await charge(gw, key);
    assert.equal(r.status, status);
    assert.equal(r.headers.get('stripe-should-retry'), 'true');
    assert.equal(gw.chargesByKey().get(key), undefined);
    const retry = await charge(gw, key);
    assert.equal(retry.status, 200);
    assert.equal(retry.headers.get('idempotent-replayed'), null);
    assert.equal(gw.chargesByKey().get(key), 1);
    assert.equal(gw.stats().faults[`status${status}`], 1);
  }
});

test('shouldRetryHeader: false omits Stripe-Should-Retry', async (t) => {
  const gw = await gateway(t, { shouldRetryHeader: false });
  gw.forceNext('status503');
  const r = await charge(gw, 'k1');
  assert.equal(r.status, 503);
  assert.equal(r.headers.get('stripe-should-retry'), null);
});

test('429 carries Retry-After, no debit, not stored', async (t) => {
  const gw = await gateway(t, { faults: { retryAfterSeconds: 7 } });
  gw.forceNext('status429');
  const r = await charge(gw, 'k1');
  assert.equal(r.status, 429);
  assert.equal(r.headers.get('retry-after'), '7');
  assert.equal(gw.ledger().length, 0);
  assert.equal((await charge(gw, 'k1')).status, 200);
  assert.equal(gw.chargesByKey().get('k1'), 1);
});

test('resetBeforeProcessing: connection dies, nothing debited, retry processed fresh', async (t) => {
  const gw = await gateway(t);
  gw.forceNext('resetBeforeProcessing');
  const r = await charge(gw, 'k1');
  assert.ok(r.error instanceof TypeError, 'fetch should fail');
  assert.equal(gw.ledger().length, 0);
  const retry = await charge(gw, 'k1');
  assert.equal(retry.status, 200);
  assert.equal(retry.headers.get('idempotent-replayed'), null);
  assert.equal(gw.stats().faults.resetBeforeProcessing, 1);
});

test('debitThenReset: debited, no response; retry with same key replays the success', async (t) => {
  const gw = await gateway(t);
  gw.forceNext('debitThenReset');
  const r = await charge(gw, 'k1');
  assert.ok(r.error instanceof TypeError, 'fetch should fail');
  assert.equal(gw.ledger().length, 1);
  const retry = await charge(gw, 'k1');
  assert.equal(retry.status, 200);
  assert.equal(retry.headers.get('idempotent-replayed'), 'true');
  assert.equal(retry.body.id, gw.ledger()[0].id);
  assert.equal(gw.chargesByKey().get('k1'), 1);
});

test('debitThenTimeout: client times out, charge was debited, retry replays it', async (t) => {
  const gw = await gateway(t);
  gw.forceNext('debitThenTimeout');
  const r = await charge(gw, 'k1', CHARGE, { signal: AbortSignal.timeout(150) });
  assert.equal(r.error?.name, 'TimeoutError');
  assert.equal(gw.ledger().length, 1);
  const retry = await charge(gw, 'k1');
  assert.equal(retry.status, 200);
  assert.equal(retry.headers.get('idempotent-replayed'), 'true');
  assert.equal(gw.chargesByKey().get('k1'), 1);
  await waitFor(() => gw.stats().pendingTimers === 0); // client abort released the hold timer
});

test('debitThenTimeout: socket destroyed after timeoutHoldMs', async (t) => {
  const gw = await gateway(t, { faults: { timeoutHoldMs: 100 } });
  gw.forceNext('debitThenTimeout');
  const started = performance.now();
  const r = await charge(gw, 'k1', CHARGE, { signal: AbortSignal.timeout(5000) });
  const elapsed = performance.now() - started;
  assert.ok(r.error instanceof TypeError, `expected a connection error, got ${r.error?.name}`);
  assert.ok(elapsed >= 90 && elapsed < 4000, `elapsed ${elapsed}`);
  assert.equal(gw.ledger().length, 1);
});

test('outage window: every request gets 503 with no processing', async (t) => {
  const clock = fakeClock();
  const gw = await gateway(t, { clock, outage: { startMs: 1000, endMs: 2000 } });
  assert.equal((await charge(gw, 'a')).status, 200);
  clock.advance(1000);
  const during = await charge(gw, 'b');
  assert.equal(during.status, 503);
  assert.equal(during.headers.get('stripe-should-retry'), 'true');
  assert.equal((await getJson(gw, '/v1/settlements')).status, 503);
  assert.equal((await charge(gw, undefined)).status, 503);
  clock.advance(999);
  assert.equal((await charge(gw, 'b')).status, 503);
  clock.advance(1);
  assert.equal((await charge(gw, 'b')).status, 200);
  assert.deepEqual(
    gw.ledger().map((e) => e.idempotencyKey),
    ['a', 'b'],
  );
  assert.equal(gw.stats().outage503, 4);
});

test('outage as a function of elapsed time', async (t) => {
  let down = false;
  const seen = [];
  const gw = await gateway(t, {
    outage: (elapsed) => {
      seen.push(elapsed);
      return down;
    },
  });
  assert.equal((await charge(gw, 'a')).status, 200);
  down = true;
  assert.equal((await charge(gw, 'b')).status, 503);
  assert.ok(seen.every((ms) => typeof ms === 'number' && ms >= 0));
  assert.equal(gw.ledger().length, 1);
});

test('forceNext: FIFO, count, overrides probabilities, validates arguments', async (t) => {
  const gw = await gateway(t, { faults: { status500: 1 } });
  gw.forceNext('status429', 2);
  gw.forceNext('none');
  gw.forceNext('decline');
  const statuses = [];
  for (let i = 0; i < 5; i += 1) statuses.push((await charge(gw, `k${i}`)).status);
  assert.deepEqual(statuses, [429, 429, 200, 402, 500]);
  assert.throws(() => gw.forceNext('explode'), RangeError);
  assert.throws(() => gw.forceNext(500), TypeError);
  assert.throws(() => gw.forceNext('slow', 0), RangeError);
  assert.deepEqual([...FAULT_NAMES].sort(), [
    'debitThenReset',
    'debitThenTimeout',
    'decline',
    'processAfterGiveUp',
    'resetBeforeProcessing',
    'slow',
    'status401',
    'status404',
    'status409',
    'status429',
    'status500',
    'status502',
    'status503',
    'status504',
  ]);
});

async function faultSequence(seed) {
  const gw = await startGateway({ seed, faults: { status500: 0.2, status429: 0.1, decline: 0.2, resetBeforeProcessing: 0.1 } });
  try {
    const out = [];
    for (let i = 0; i < 40; i += 1) {
      const r = await charge(gw, `k${i}`);
      out.push(r.error ? 'reset' : r.status);
    }
    return { out, stats: gw.stats() };
  } finally {
    await gw.close();
  }
}

test('seeded determinism: same seed, same fault sequence; different seed, different sequence', async () => {
  const a = await faultSequence(42);
  const b = await faultSequence(42);
  const c = await faultSequence(43);
  assert.deepEqual(a.out, b.out);
  assert.deepEqual(a.stats.faults, b.stats.faults);
  assert.notDeepEqual(a.out, c.out);
  for (const kind of [200, 500, 429, 402, 'reset']) assert.ok(a.out.includes(kind), `seed 42 never produced ${kind}`);
});

test('reset() forgets ledger, keys, counters and re-seeds', async (t) => {
  const gw = await gateway(t, { faults: { decline: 0.5 } });
  const before = [];
  for (let i = 0; i < 10; i += 1) before.push((await charge(gw, `k${i}`)).status);
  gw.forceNext('status500');
  gw.reset();
  assert.equal(gw.ledger().length, 0);
  assert.equal(gw.requests(), 0);
  assert.equal(gw.chargesByKey().size, 0);
  const after = [];
  for (let i = 0; i < 10; i += 1) after.push((await charge(gw, `k${i}`)).status);
  assert.deepEqual(after, before, 'same sequence again, keys forgotten, forced fault dropped');
});

test('200+ concurrent charges with distinct keys all succeed exactly once', async (t) => {
  const gw = await gateway(t);
  const results = await Promise.all(Array.from({ length: 250 }, (_, i) => charge(gw, `c${i}`)));
  assert.ok(
    results.every((r) => r.status === 200),
    'all 200',
  );
  assert.equal(gw.ledger().length, 250);
  assert.ok([...gw.chargesByKey().values()].every((n) => n === 1));
  assert.equal(new Set(results.map((r) => r.body.id)).size, 250);
});

test('50 concurrent requests with one key debit once', async (t) => {
  const gw = await gateway(t, { faults: { slowMs: 500 } });
  gw.forceNext('slow');
  const results = await Promise.all(Array.from({ length: 50 }, () => charge(gw, 'same')));
  const statuses = results.map((r) => r.status);
  assert.equal(statuses.filter((s) => s === 200).length + statuses.filter((s) => s === 409).length, 50);
  assert.ok(statuses.includes(409));
  assert.equal(gw.chargesByKey().get('same'), 1);
});

test('sequential charges leave no timers or in-flight keys behind', async (t) => {
  const gw = await gateway(t, { faults: { slowMs: 1, slow: 0.3, debitThenTimeout: 0.05, timeoutHoldMs: 5 } });
  for (let i = 0; i < 1000; i += 1) await charge(gw, `s${i}`);
  await waitFor(() => gw.stats().pendingTimers === 0);
  const s = gw.stats();
  assert.equal(s.inFlight, 0);
  assert.equal(s.debits, 1000);
  assert.ok(s.faults.slow > 0 && s.faults.debitThenTimeout > 0);
});

test('malformed HTTP and oversized bodies do not crash the gateway', async (t) => {
  const gw = await gateway(t);
  const reply = await new Promise((resolve, reject) => {
    const socket = net.connect(gw.port, '127.0.0.1', () => socket.write('THIS IS NOT HTTP\r\n\r\n'));
    let data = '';
    socket.on('data', (d) => {
      data += d;
    });
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
  });
  assert.match(reply, /^HTTP\/1\.1 400/);
  const big = await charge(gw, 'big', { ...CHARGE, pad: 'x'.repeat(2 * 1024 * 1024) });
  assert.ok(big.status === 413 || big.error, 'oversized body rejected');
  assert.equal((await charge(gw, 'k1')).status, 200);
  assert.equal(gw.ledger().length, 1);
});

test('close() is idempotent, destroys held sockets and clears timers', async (t) => {
  const gw = await gateway(t);
  gw.forceNext('debitThenTimeout');
  const pending = charge(gw, 'k1');
  await waitFor(() => gw.ledger().length === 1);
  assert.equal(gw.stats().pendingTimers, 1);
  await Promise.all([gw.close(), gw.close()]);
  assert.equal(gw.stats().pendingTimers, 0);
  assert.ok((await pending).error instanceof TypeError);
  await assert.rejects(fetch(`${gw.url}/v1/settlements`));
});

test('close() clears pending slow-processing timers', async (t) => {
  const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timeouts();
  const gw = await gateway(t, { faults: { slowMs: 60_000 } });
  gw.forceNext('slow');
  const pending = charge(gw, 'k1');
  await waitFor(() => gw.stats().inFlight === 1);
  assert.equal(gw.stats().pendingTimers, 1);
  await gw.close();
  assert.equal(gw.stats().pendingTimers, 0);
  await new Promise((r) => setImmediate(r));
  assert.ok(timeouts() <= before, `timers still active: ${timeouts()} > ${before}`);
  assert.ok((await pending).error instanceof TypeError);
  assert.equal(gw.ledger().length, 0);
});

test('close() with a held response lets the process exit promptly', async () => {
  const script = `
    import { startGateway } from ${JSON.stringify(GATEWAY_PATH)};
    const gw = await startGateway();
    gw.forceNext('debitThenTimeout');
    fetch(gw.url + '/v1/charges', { method: 'POST', headers: { 'Idempotency-Key': 'k' },
      body: JSON.stringify({ amountCents: 1, currency: 'usd' }) }).catch(() => {});
    while (gw.ledger().length === 0) await new Promise((r) => setTimeout(r, 5));
    await gw.close();
    console.log('closed');
  `;
  const started = Date.now();
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const code = await new Promise((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(killer);
  assert.equal(code, 0, out);
  assert.match(out, /closed/);
  assert.ok(Date.now() - started < 5000, `child took ${Date.now() - started} ms to exit (hold is 30 s)`);
});

test('processAfterGiveUp: held unregistered, a same-key request meanwhile is processed fresh, the late one replays', async (t) => {
  const gw = await gateway(t, { faults: { processLateMs: 300 } });
  gw.forceNext('processAfterGiveUp');
  const ac = new AbortController();
  const first = charge(gw, 'late-1', CHARGE, { signal: ac.signal });
  await waitFor(() => gw.stats().lateHeld === 1);
  assert.equal(gw.stats().inFlight, 1, 'a held request counts as in flight: it will debit');
  ac.abort(); // the client gives up
  assert.ok((await first).error, 'the client saw no answer');
  assert.equal(gw.ledger().length, 0, 'nothing debited yet');
  const again = await charge(gw, 'late-1'); // a resubmission with the same key, while the first is held
  assert.equal(again.status, 200);
  assert.equal(gw.ledger().length, 1);
  await waitFor(() => gw.stats().lateHeld === 0, 2_000);
  await waitFor(() => gw.stats().replays === 1, 2_000);
  assert.equal(gw.chargesByKey().get('late-1'), 1, 'the late request replayed: one debit');
  assert.equal(gw.stats().faults.processAfterGiveUp, 1);
});

test('processAfterGiveUp alone: the debit lands after the client gave up', async (t) => {
  const gw = await gateway(t, { faults: { processLateMs: 100 } });
  gw.forceNext('processAfterGiveUp');
  const out = await charge(gw, 'late-2', CHARGE, { signal: AbortSignal.timeout(30) });
  assert.ok(out.error);
  assert.equal(gw.ledger().length, 0);
  await waitFor(() => gw.ledger().length === 1, 2_000);
  assert.equal(gw.ledger()[0].idempotencyKey, 'late-2');
});

test('keepAlive: false closes every connection; passthrough answers its own routes uncounted; configure() swaps the schedule', async (t) => {
  const gw = await gateway(t, {
    keepAlive: false,
    passthrough: (req, res) => {
      if (!req.url.startsWith('/__ping')) return false;
      res.writeHead(204).end();
      return true;
    },
  });
  const ping = await fetch(`${gw.url}/__ping`);
  assert.equal(ping.status, 204);
  assert.equal(gw.requests(), 0, "a passthrough request is not the gateway's");
  const out = await charge(gw, 'ka-1');
  assert.equal(out.status, 200);
  assert.equal(out.headers.get('connection'), 'close');
  gw.configure({ seed: 3, faults: { status503: 1 } });
  assert.equal(gw.ledger().length, 0, 'configure() resets');
  assert.equal((await charge(gw, 'ka-2')).status, 503);
  assert.throws(() => gw.configure({ faults: { status503: 2 } }), RangeError);
  await assert.rejects(startGateway({ keepAlive: 'no' }), TypeError);
});
