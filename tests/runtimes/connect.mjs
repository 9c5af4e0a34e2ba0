// A refused connection against a reset after connecting, from the host's own fetch (no simulated
// errors): Deno runs it, and Node runs it first as the reference (Node's ECONNREFUSED carries a code,
// Deno's only words). argv: <base URL of server.mjs> <a 127.0.0.1 port nobody listens on> <label>.
//   refused   nothing was sent: resilientFetch retries the keyed POST (safe: it never left) and rethrows
//             the network error, never OutcomeUnknownError; the checkout answers unavailable
//             (connection-refused) and frees the key, so the next click tries again
//   reset     the server read the request, then reset the connection: it may have been processed, so
//             resilientFetch reports OutcomeUnknownError and the checkout answers unknown, the key parked
// Prints one JSON line { label, checks } for run.mjs.
import * as steadfast from 'steadfast';

const [base, closedPort, label] = globalThis.Deno?.args ?? globalThis.process.argv.slice(2);
const checks = [];
const check = (name, ok, detail) => checks.push({ name, ok: ok === true, detail: String(detail) });
/** The error's message and its causes', as the host wrote them. */
const said = (e) => {
  const words = [];
  for (let cur = e, depth = 0; cur !== null && typeof cur === 'object' && depth < 4; cur = cur.cause, depth++) {
    words.push(`${cur.name ?? ''}${cur.code ? ` ${cur.code}` : ''}: ${cur.message}`);
  }
  return words.join(' ← ');
};
const retry = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 };
const CHARGE = { amountCents: 700, currency: 'eur' };
await steadfast.ready;
const run = `${label}-${steadfast.newIdempotencyKey()}`;

/** resilientFetch of a keyed POST to `url`, counting the host fetch calls it made. */
async function keyedPost(url, key) {
  let calls = 0;
  const counted = (input, init) => {
    calls += 1;
    return fetch(input, init);
  };
  const error = await steadfast
    .resilientFetch(url, { method: 'POST', body: '{}' }, { breaker: false, budget: false, retry, idempotencyKey: key, fetch: counted })
    .then(
      (r) => new Error(`resolved with HTTP ${r.status}`),
      (e) => e,
    );
  return { error, calls };
}

// 1. Refused: a port nobody listens on.
const refusedUrl = `http://127.0.0.1:${closedPort}/v1/charges`;
{
  const { error, calls } = await keyedPost(refusedUrl, `${run}-refused-fetch`);
  check(
    'refused: resilientFetch retries and rethrows the network error',
    !(error instanceof steadfast.OutcomeUnknownError) && error?.name === 'TypeError' && calls === retry.maxAttempts,
    `${calls} attempts, ${said(error)}`,
  );
  const client = steadfast.createCheckoutClient({ endpoint: refusedUrl, retry, breaker: false });
  const key = `${run}-refused-charge`;
  const out = await client.charge(CHARGE, { idempotencyKey: key });
  const record = client.store.peek(key);
  check(
    'refused: the checkout answers unavailable and frees the key',
    out.status === 'unavailable' && out.reason === 'connection-refused' && out.key === key && record === undefined,
    `${JSON.stringify(out)}, record ${JSON.stringify(record?.status)}`,
  );
  const again = await client.charge(CHARGE, { idempotencyKey: key });
  check('refused: the next charge with the key tries again', again.status === 'unavailable' && again.reason === 'connection-refused', JSON.stringify(again));
}

// 2. Reset: the server reads the whole request, then resets the connection.
{
  const id = `${run}-reset-fetch`;
  const { error, calls } = await keyedPost(`${base}/reset/${id}`, id);
  const seen = await (await fetch(`${base}/resets/${id}`)).json();
  check(
    'reset: resilientFetch reports the outcome unknown',
    error instanceof steadfast.OutcomeUnknownError && seen.count >= 1,
    `${calls} attempts, the server read ${seen.count}; ${error?.name}: ${error?.message} (cause ${said(error?.cause)})`,
  );
  const chargeId = `${run}-reset-charge`;
  const client = steadfast.createCheckoutClient({ endpoint: `${base}/reset/${chargeId}`, retry, breaker: false });
  const out = await client.charge(CHARGE, { idempotencyKey: chargeId });
  const record = client.store.peek(chargeId);
  const read = await (await fetch(`${base}/resets/${chargeId}`)).json();
  check(
    'reset: the checkout answers unknown and parks the key',
    out.status === 'unknown' && out.key === chargeId && record?.status === 'unknown' && read.count >= 1,
    `${JSON.stringify({ status: out.status, key: out.key })}, record ${record?.status}, the server read ${read.count}`,
  );
}

console.log(JSON.stringify({ label, checks }));
