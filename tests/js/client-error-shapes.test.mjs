// The errors real client libraries throw, as measured against a faulty local server
// (tests/consumers/client-errors/record.mjs recorded them into tests/fixtures/client-error-shapes.json:
// axios, got, ky, node-fetch, undici, superagent, stripe, the AWS SDK v3, braintree, @adyen/api-library),
// rebuilt field by field and judged by the installed package: a failure that may have been processed
// (a reset after the request was read, a hang-up, a client timeout, a 5xx, a 409, a 200 cut off
// mid-body, a browser network error) must park the key; a decline and a throttle free it; a refused
// connection and a name that does not resolve free it where the error still carries Node's code.
// tests/consumers/client-errors/run.sh drives the same libraries live.
// Run: node --test tests/js/client-error-shapes.test.mjs (after scripts/install-tarball.sh)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { IdempotencyStore, isTransientError } from 'steadfast';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/client-error-shapes.json', import.meta.url), 'utf8'));

/** An error (or the plain object some libraries keep as `cause`) with the recorded fields. */
function rebuild(d) {
  if (d === null || d === undefined) return d;
  const e = d.tag === '[object Error]' ? new Error(d.message ?? '') : {};
  const own = (k, v) => Object.defineProperty(e, k, { value: v, writable: true, configurable: true, enumerable: k !== 'message' });
  for (const k of ['name', 'message', 'code', 'errno', 'syscall', 'status', 'statusCode', 'type', 'rawType', 'errorCode', 'retryable']) {
    if (d[k] !== undefined) own(k, d[k]);
  }
  if (d.response) own('response', { status: d.response.status, statusCode: d.response.statusCode, headers: { ...d.response.headers } });
  if (d.headers) own('headers', { ...d.headers });
  if (d.$metadata) own('$metadata', { ...d.$metadata });
  for (const nested of ['cause', 'detail', 'originalError', 'err']) if (d[nested]) own(nested, rebuild(d[nested]));
  if (d.errors) own('errors', d.errors.map(rebuild));
  return e;
}

/** What a store run of a gateway that throws `error` leaves: 'unknown' (parked) or null (freed). */
async function left(error) {
  const store = new IdempotencyStore();
  await store.run('k', () => Promise.reject(error)).catch(() => {});
  return store.peek('k')?.status ?? null;
}

// May have been processed: the key must stay parked.
const MAYBE = new Set(['reset', 'hangup', 'timeout', '500', '502', '503', '504', '409', 'truncated', 'network error']);
// Worth a retry with the same key (a 409 "in progress" and a cut-off body are parked, not necessarily retried).
const RETRIED = new Set(['reset', 'hangup', 'timeout', '500', '502', '503', '504', '429', 'network error']);
// These keep no code for a refused connection or a failed lookup (their own error with the message
// only): parked, the careful side. Braintree keeps no status either: an unlisted one (402, 502) is its
// unexpectedError, as a reset is, so it parks too (Braintree answers a decline with 200 or 422, a result
// and no error); its 429 is its tooManyRequestsError, freed and not retried.
const MESSAGE_ONLY = new Set(['braintree', '@adyen/api-library']);
const PARKED_DECLINE = new Set(['braintree']);

test('the fixture covers every library and fault it was recorded for', () => {
  const libs = Object.keys(fixture.shapes);
  assert.ok(libs.length >= 12, libs.join(', '));
  for (const name of ['axios', 'got', 'ky', 'node-fetch', 'undici', 'superagent', 'stripe', '@aws-sdk/client-s3', 'braintree', '@adyen/api-library']) {
    assert.match(fixture.versions[name] ?? '', /^\d+\.\d+\.\d+/, name);
  }
  for (const lib of libs) if (!lib.startsWith('axios (xhr')) assert.equal(Object.keys(fixture.shapes[lib]).length, 13, lib);
});

for (const [lib, row] of Object.entries(fixture.shapes)) {
  test(`${lib}: every fault that may have been processed parks the key; declines and throttles free it`, async (t) => {
    for (const [fault, shape] of Object.entries(row)) {
      if (shape.resolved) continue; // the library resolved with the response: the gateway's own code judges it
      const error = rebuild(shape);
      const where = `${lib} × ${fault}: ${shape.name} ${shape.code ?? ''} "${shape.message}"`;
      const verdict = await left(error);
      if (MAYBE.has(fault)) assert.equal(verdict, 'unknown', `${where} must park the key`);
      else if (fault === '402' && PARKED_DECLINE.has(lib)) assert.equal(verdict, 'unknown', `${where}: no status, parked`);
      else if (fault === '402' || fault === '429') assert.equal(verdict, null, `${where} must free the key`);
      else if (fault === 'refused' || fault === 'dns') assert.equal(verdict, MESSAGE_ONLY.has(lib) ? 'unknown' : null, where);
      if (RETRIED.has(fault) && !(lib === 'braintree' && fault === '429')) assert.equal(isTransientError(error), true, `${where} is transient`);
      if (fault === '402' && !PARKED_DECLINE.has(lib)) assert.equal(isTransientError(error), false, `${where} is permanent`);
      t.diagnostic(`${fault}: ${verdict ?? 'freed'}`);
    }
  });
}
