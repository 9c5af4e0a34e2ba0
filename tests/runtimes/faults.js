// Real faults from the local server (server.mjs) through the packed package, in every runtime that
// runs program.js: each fault is met by the host's own fetch (raw), by resilientFetch with an
// Idempotency-Key, by a checkout client's charge() and by chargeCustomer over an IdempotencyStore
// whose gateway calls fetch, and the key's verdict is checked for each. Plain JavaScript, no
// imports, no Node APIs: the same file runs in every host.
//
//   refused      nothing listens on the port: never sent, so the key is free and a retry is allowed
//   dns          a name that does not resolve: never sent, the key free
//   reset        the server read the whole request, then reset the connection: may have been processed
//   cut-reset    `200` and its headers, then a reset mid-body: may have been processed, never a success
//   cut-close    the same, then a close short of Content-Length
//   cut-chunked  the same, a chunked body closed before its last chunk
//   hang         the server never answers; the client's attempt timeout fires: may have been processed
//   early        the server resets as soon as the request's head arrived, its large body unread:
//                ambiguous, so never judged "not sent"
//
// A runtime whose fetch cannot tell a failure that never sent from one that may have (Cloudflare
// Workers: "Network connection lost." for a refused connection and a reset alike) names those faults
// in `cannotTell`: they must then be unknown, in every API, like the rest.
//
// `faultMatrix` answers { checks, shapes }: checks as program.js's ({ name, ok, detail }), and the
// raw error each fault gave the host's fetch (name, code and message, down the cause chain).

const ATTEMPT_TIMEOUT_MS = 300;
const RETRY = { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 };
const CHARGE = { amountCents: 700, currency: 'eur' };
/** A body too large to sit in the socket buffers: the early reset meets the client still writing. */
const LARGE = 'x'.repeat(4 * 1024 * 1024);

/** The error and its causes, as the host wrote them: `TypeError: fetch failed ← Error ECONNREFUSED: …`. */
export function said(e) {
  const words = [];
  for (let cur = e, depth = 0; cur !== null && typeof cur === 'object' && depth < 5; cur = cur.cause, depth++) {
    let name;
    let code;
    let message;
    try {
      ({ name, code, message } = cur);
    } catch {
      name = '(unreadable)';
    }
    words.push(`${name ?? ''}${typeof code === 'string' || typeof code === 'number' ? ` ${code}` : ''}: ${message}`);
  }
  if (e !== null && typeof e !== 'object') words.push(`${typeof e} ${String(e)}`);
  return words.join(' ← ');
}

/** Each fault: where to send it, whether it provably never left (`notSent`), and how the server counts what reached it. */
function faultsOf(base, closed, run) {
  const counted = (route, how = '') => ({
    url: (id) => `${base}/${route}/${id}${how}`,
    hits: (id) => (route === 'reset' ? `${base}/resets/${id}` : `${base}/hits/${route}/${id}`),
  });
  return [
    { fault: 'refused', url: (id) => `http://127.0.0.1:${closed}/v1/charges/${id}`, notSent: true },
    { fault: 'dns', url: (id) => `http://nonexistent.invalid/v1/charges/${id}`, notSent: true },
    { fault: 'reset', ...counted('reset') },
    { fault: 'cut-reset', ...counted('cut', '?how=reset'), head: true },
    { fault: 'cut-close', ...counted('cut', '?how=close'), head: true },
    { fault: 'cut-chunked', ...counted('cut', '?how=chunked'), head: true },
    { fault: 'hang', ...counted('hang'), timeout: true },
    { fault: 'early', ...counted('early'), large: true },
  ].map((f) => ({ ...f, id: (what) => `${run}-${f.fault}-${what}` }));
}

/** POST `body` to `url` with the host's fetch, and read the answer's body: what the host reports. */
async function raw(url, body, timeout) {
  const signal = timeout ? AbortSignal.timeout(ATTEMPT_TIMEOUT_MS) : undefined;
  let response;
  try {
    response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal });
  } catch (e) {
    return { stage: 'fetch', error: e };
  }
  try {
    const text = await response.text();
    return { stage: 'answered', status: response.status, text };
  } catch (e) {
    return { stage: 'body', status: response.status, error: e };
  }
}

/** Settle a promise into { value } or { error }. */
const settle = (p) =>
  p.then(
    (value) => ({ value }),
    (error) => ({ error }),
  );

export async function faultMatrix(steadfast, { base, closed, label, cannotTell = [] }) {
  const checks = [];
  const shapes = [];
  const check = (name, ok, detail) => checks.push({ name, ok: ok === true, detail: String(detail) });
  await steadfast.ready;
  const run = `${label}-${steadfast.newIdempotencyKey()}`;
  /** How many requests for `id` reached the server (1 for a fault that never reaches it: nothing to count). */
  const reached = async (f, id) => (f.hits === undefined ? 1 : (await (await fetch(f.hits(id))).json()).count);
  const isUnknown = (e) => e instanceof steadfast.OutcomeUnknownError;

  for (const f of faultsOf(base, closed, run)) {
    const free = f.notSent === true && !cannotTell.includes(f.fault);
    const verdict = free ? 'free' : 'unknown';
    const note = () => (f.large ? { note: LARGE } : {});
    const body = () => JSON.stringify({ ...CHARGE, ...note() });

    // The host's own fetch: the raw shape of the failure, at the stage it comes (the call, or the body).
    {
      const r = await raw(f.url(f.id('raw')), body(), f.timeout);
      const error = r.error === undefined ? '' : said(r.error);
      shapes.push({ fault: f.fault, expected: verdict, stage: r.stage, status: r.status, error });
      const classified =
        r.error === undefined ? '' : `; isTransientError ${steadfast.isTransientError(r.error)}, isFetchNetworkError ${steadfast.isFetchNetworkError(r.error)}`;
      check(
        `${f.fault}: the host's fetch ${f.head ? 'resolves HTTP 200, its body rejects' : 'rejects'}`,
        f.head ? r.stage === 'body' && r.status === 200 : r.stage === 'fetch',
        `${r.stage}${r.status === undefined ? '' : ` HTTP ${r.status}`}: ${r.error === undefined ? JSON.stringify(r.text) : error}${classified}`,
      );
    }

    // resilientFetch, a keyed POST. A head that arrived resolves it (the body is the caller's to read,
    // and its failure must read as a network error, so that a store or withRetry around it parks the key).
    {
      const key = f.id('fetch');
      let calls = 0;
      const counting = (input, init) => {
        calls += 1;
        return fetch(input, init);
      };
      const options = { breaker: false, budget: false, retry: RETRY, idempotencyKey: key, fetch: counting };
      if (f.timeout) options.attemptTimeoutMs = ATTEMPT_TIMEOUT_MS;
      const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: body() };
      const got = await settle(steadfast.resilientFetch(f.url(key), init, options));
      const read = got.value === undefined ? undefined : await settle(got.value.text());
      const seen = await reached(f, key);
      let name;
      let ok;
      if (f.head) {
        name = 'resilientFetch resolves the head, its body fails as a network error';
        ok = got.value?.status === 200 && read.error !== undefined && steadfast.isTransientError(read.error);
      } else if (free) {
        name = 'resilientFetch retries it and rethrows, never OutcomeUnknownError';
        ok = got.error !== undefined && !isUnknown(got.error) && calls === RETRY.maxAttempts;
      } else {
        name = 'resilientFetch rejects OutcomeUnknownError';
        ok = isUnknown(got.error) && seen >= 1;
      }
      const outcome =
        got.error !== undefined
          ? said(got.error)
          : `HTTP ${got.value.status}, body ${read.error === undefined ? JSON.stringify(read.value) : `rejects ${said(read.error)}`}`;
      check(`${f.fault}: ${name}`, ok, `${calls} attempts, the server saw ${seen}: ${outcome}`);
    }

    // The checkout client: charge() reads the body inside the attempt.
    {
      const key = f.id('checkout');
      const options = { endpoint: f.url(key), retry: RETRY, breaker: false };
      if (f.timeout) options.attemptTimeoutMs = ATTEMPT_TIMEOUT_MS;
      const client = steadfast.createCheckoutClient(options);
      const got = await settle(client.charge({ ...CHARGE, ...note() }, { idempotencyKey: key }));
      const out = got.value ?? {};
      const record = client.store.peek(key);
      const seen = await reached(f, key);
      const ok = free
        ? out.status === 'unavailable' && out.reason === 'connection-refused' && out.key === key && record === undefined
        : out.status === 'unknown' && out.key === key && record?.status === 'unknown' && seen >= 1;
      check(
        `${f.fault}: checkout charge() ${free ? 'is unavailable, the key free' : 'is unknown, the key parked'}`,
        ok,
        `${got.error === undefined ? JSON.stringify({ status: out.status, reason: out.reason }) : `rejected ${said(got.error)}`}, record ${record?.status}, the server saw ${seen}`,
      );
    }

    // chargeCustomer over an IdempotencyStore, its gateway calling fetch and reading the JSON; then
    // the same charge again: a free key sends it again, a parked one refuses (OutcomeUnknownError).
    {
      const key = f.id('charge');
      let sent = 0;
      const deps = {
        store: new steadfast.IdempotencyStore(),
        breaker: new steadfast.CircuitBreaker({ failureThreshold: 50, openDurationMs: 1_000 }),
        gateway: async (charge) => {
          sent += 1;
          const init = { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': charge.idempotencyKey }, body: body() };
          if (f.timeout) init.signal = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
          return (await fetch(f.url(key), init)).json();
        },
        policy: RETRY,
      };
      const charge = { ...CHARGE, idempotencyKey: key };
      const first = await settle(steadfast.chargeCustomer(charge, deps));
      const record = deps.store.peek(key);
      const before = sent;
      const again = await settle(steadfast.chargeCustomer(charge, deps));
      const resent = sent > before;
      const ok = free
        ? first.error !== undefined && record === undefined && resent
        : isUnknown(first.error) && record?.status === 'unknown' && !resent && isUnknown(again.error);
      check(
        `${f.fault}: chargeCustomer ${free ? 'frees the key, the same charge is sent again' : 'parks the key unknown, the same charge is refused'}`,
        ok,
        `${first.error === undefined ? `resolved ${JSON.stringify(first.value)}` : said(first.error)}; record ${record?.status}; again: ${resent ? 'sent' : 'not sent'}, ${again.error === undefined ? 'resolved' : again.error.name}`,
      );
    }
  }
  return { checks, shapes };
}
