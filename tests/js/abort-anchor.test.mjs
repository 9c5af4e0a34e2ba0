// The settle window of an aborted attempt counts from the abort, not from the attempt's start: a
// browser may still send a request it had queued (6 connections per host) just after its fetch was
// aborted (measured in Chromium, Firefox and WebKit: tests/browser/probe-engines.mjs). A fetch that
// only settles when aborted stands in for such a queued request. Only lower bounds are asserted (a
// timer never fires early; a loaded machine only makes the abort later).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resilientFetch, createCheckoutClient, OutcomeUnknownError } from 'steadfast';

/** A fetch that never answers: it rejects only when its signal aborts, like a request still queued. */
function queuedFetch(calls) {
  return (input, init) => {
    calls.push(Date.now());
    return new Promise((_, reject) => {
      init.signal.addEventListener('abort', () => reject(new DOMException('The operation was aborted.', 'AbortError')), { once: true });
    });
  };
}

test('resilientFetch: an attempt aborted at its timeout reports lastAttemptAt = the abort, not the start', async () => {
  const calls = [];
  let error;
  try {
    await resilientFetch(
      'https://gateway.invalid/v1/charges',
      { method: 'POST', headers: { 'idempotency-key': 'k-anchor-1' }, body: '{}' },
      {
        fetch: queuedFetch(calls),
        attemptTimeoutMs: 120,
        breaker: false,
        budget: false,
        retry: { maxAttempts: 1 },
      },
    );
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof OutcomeUnknownError, `got ${error?.name}: ${error?.message}`);
  assert.equal(calls.length, 1);
  assert.ok(error.lastAttemptAt - calls[0] >= 110, `lastAttemptAt ${error.lastAttemptAt - calls[0]} ms after the start: the abort (120 ms), not the start`);
  assert.ok(error.lastAttemptAt <= Date.now());
});

test('checkout: a charge whose attempt was aborted parks its key with the abort time, so the window runs from it', async () => {
  const calls = [];
  const checkout = createCheckoutClient({
    endpoint: 'https://gateway.invalid/v1/charges',
    fetch: queuedFetch(calls),
    attemptTimeoutMs: 120,
    retry: { maxAttempts: 1 },
    breaker: false,
  });
  const out = await checkout.charge({ amountCents: 100, currency: 'usd' }, { idempotencyKey: 'k-anchor-2' });
  assert.deepEqual(out, { status: 'unknown', key: 'k-anchor-2' });
  const record = checkout.store.peek('k-anchor-2');
  assert.equal(record?.status, 'unknown');
  assert.equal(calls.length, 1);
  assert.ok(record.lastAttemptAt - calls[0] >= 110, `parked lastAttemptAt ${record.lastAttemptAt - calls[0]} ms after the start`);
});
