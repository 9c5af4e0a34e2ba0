// A local payment gateway (127.0.0.1) per idempotency dialect, following each provider's public
// documentation as docs/guide/http.md summarises it, and nothing more:
//   stripe   Idempotency-Key raw, <= 255 chars; the first answer (status and body, 5xx included) is
//            saved and replayed with Idempotent-Replayed: true; a key in progress: 409
//            idempotency_error; a key reused with other parameters: 400 idempotency_error.
//   ietf     Idempotency-Key as an sf-string (a bare token is refused 400); in progress 409, reuse 422,
//            both application/problem+json; a replay is the saved answer with no marker.
//   adyen    Idempotency-Key raw, <= 64 chars; a processed key returns the first answer; the
//            response echoes the Idempotency-Key header. (In progress and reuse: not documented.)
//   paypal   PayPal-Request-Id; a known key returns the latest status of the first request.
//   checkout Cko-Idempotency-Key; only 2xx answers are saved (an error is re-attempted); a key in
//            progress: 429.
// Every dialect forgets a key `retentionMs` after its first use: the same key is then a new charge.

import http from 'node:http';

const HEADERS = { stripe: 'idempotency-key', ietf: 'idempotency-key', adyen: 'idempotency-key', paypal: 'paypal-request-id', checkout: 'cko-idempotency-key' };
const MAX_KEY = { stripe: 255, ietf: 255, adyen: 64, paypal: 255, checkout: 255 };

/** The IETF draft's sf-string, parsed (a gateway's side of the wire), or undefined. */
function parseSfString(v) {
  const m = /^"((?:[^"\\]|\\["\\])*)"$/.exec(v.trim());
  return m === null ? undefined : m[1].replace(/\\(["\\])/g, '$1');
}

const problem = (status, type, title) => ({ status, type: 'application/problem+json', body: { type, title, status } });
const stripeError = (status, type, message) => ({ status, type: 'application/json', body: { error: { type, message } } });

/**
 * @param {{ dialect: keyof HEADERS, retentionMs?: number, holdMs?: number, answer?: (n: number) => number }} options
 *   `holdMs`: how long processing takes; `answer(n)`: the status of the n-th processed charge (default 200).
 */
export async function startDialectGateway({ dialect, retentionMs = Infinity, holdMs = 0, answer = () => 200 }) {
  const keys = new Map(); // key -> { firstUsedAt, body, pending: Promise | undefined, saved: { status, type, body } | undefined }
  const seen = { requests: 0, processed: 0, rawKeys: [] };

  const process = async (record) => {
    seen.processed += 1;
    const n = seen.processed;
    await new Promise((r) => setTimeout(r, holdMs)); // never synchronous: record.pending is set first
    const status = answer(n);
    const saved =
      status < 300
        ? { status, type: 'application/json', body: { id: `ch_${n}`, reference: `ch_${n}` } }
        : dialect === 'ietf'
          ? problem(status, 'about:blank', 'failed')
          : stripeError(status, 'api_error', 'failed');
    // Checkout.com saves only what succeeded; the others save the first answer, errors included.
    record.saved = dialect === 'checkout' && status >= 300 ? undefined : saved;
    record.pending = undefined;
    return saved;
  };

  const handle = async (raw, text) => {
    seen.rawKeys.push(raw);
    if (raw === undefined)
      return dialect === 'ietf'
        ? problem(400, 'https://example.test/idempotency-key-missing', 'missing key')
        : stripeError(400, 'invalid_request_error', 'missing key');
    const key = dialect === 'ietf' ? parseSfString(raw) : raw;
    if (key === undefined) return problem(400, 'https://example.test/idempotency-key-syntax', 'not an sf-string');
    if (key.length > MAX_KEY[dialect]) return stripeError(dialect === 'adyen' ? 422 : 400, 'validation', 'key too long');
    const now = Date.now();
    let record = keys.get(key);
    if (record !== undefined && now - record.firstUsedAt >= retentionMs) {
      keys.delete(key); // forgotten: the same key is a new charge now
      record = undefined;
    }
    if (record === undefined) {
      record = { firstUsedAt: now, body: text, pending: undefined, saved: undefined };
      keys.set(key, record);
      record.pending = process(record);
      return record.pending;
    }
    if (record.body !== text) {
      if (dialect === 'stripe') return stripeError(400, 'idempotency_error', 'Keys for idempotent requests can only be used with the same parameters');
      if (dialect === 'ietf') return problem(422, 'https://example.test/idempotency-key-reused', 'key reused');
    }
    if (record.pending !== undefined) {
      if (dialect === 'stripe') return stripeError(409, 'idempotency_error', 'a request with this key is in progress');
      if (dialect === 'ietf') return problem(409, 'https://example.test/idempotency-key-in-progress', 'in progress');
      if (dialect === 'checkout') return stripeError(429, 'request_in_progress', 'too many requests');
      return record.pending; // adyen, paypal: the first request's answer
    }
    if (record.saved === undefined) {
      record.pending = process(record); // checkout: a failed request is re-attempted
      return record.pending;
    }
    return { ...record.saved, replayed: true };
  };

  const server = http.createServer((req, res) => {
    if (req.method === 'OPTIONS') {
      // A browser's CORS preflight (a page on another 127.0.0.1 port): not a charge request.
      res.writeHead(204, {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'POST',
        'access-control-allow-headers': '*',
        'access-control-max-age': '600',
        connection: 'close',
      });
      res.end();
      return;
    }
    seen.requests += 1;
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', async () => {
      const raw = req.headers[HEADERS[dialect]];
      const out = await handle(typeof raw === 'string' ? raw : undefined, text);
      // connection: close: a browser silently re-sends a request whose REUSED connection dropped.
      const headers = { 'content-type': out.type, 'access-control-allow-origin': '*', 'access-control-expose-headers': '*', connection: 'close' };
      if (out.replayed && dialect === 'stripe') headers['idempotent-replayed'] = 'true';
      if (dialect === 'adyen' && raw !== undefined) headers['idempotency-key'] = raw;
      if (!res.destroyed) {
        res.writeHead(out.status, headers);
        res.end(JSON.stringify(out.body));
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}/v1/charges`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
