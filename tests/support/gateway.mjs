/**
 * Local test payment gateway (Stripe-like) for steadfast's tests, examples and soak test.
 *
 * WHY THIS EXISTS
 * A retry/idempotency library is only correct if it never charges a customer twice and
 * never gives up on a charge whose outcome is unknown. Mocks cannot prove that; a real
 * HTTP server with real sockets, real timeouts and real server-side idempotency can.
 * This module starts a plain `node:http` server (no dependencies, ESM, Node 20 and 24)
 * on 127.0.0.1, an ephemeral port, and injects faults from a seeded PRNG (reproducible)
 * or deterministically via `forceNext()`.
 *
 * USAGE
 *   const gw = await startGateway({ seed: 7, faults: { status503: 0.1 } });
 *   await fetch(`${gw.url}/v1/charges`, { method: 'POST',
 *     headers: { 'Idempotency-Key': 'order-1' }, body: JSON.stringify({ amountCents: 4999, currency: 'usd' }) });
 *   assert.equal(gw.chargesByKey().get('order-1'), 1);
 *   await gw.close();
 *
 * OPTIONS (all validated; a bad value throws TypeError/RangeError naming the option)
 *   seed              number, default 1. Seeds a mulberry32 PRNG. One PRNG draw per POST /v1/charges
 *                     that carries an Idempotency-Key and is not forced; same seed -> same fault sequence.
 *   faults            object, default {}. Per-request probabilities in [0,1], default 0 each:
 *                       debitThenTimeout      debit + store result, then hold the response (never sent)
 *                                             and destroy the socket after timeoutHoldMs or at close().
 *                       debitThenReset        debit + store result, then destroy the socket, no response.
 *                       resetBeforeProcessing destroy the socket, nothing processed or stored.
 *                       status500/502/503/504 that status, nothing processed or stored.
 *                       status429             429 + `Retry-After: retryAfterSeconds`, nothing processed or stored.
 *                       status401/404         that status from something in front of the gateway (an auth
 *                                             proxy, a load balancer mid-deploy): nothing processed or stored.
 *                       status409             a "still processing this key" answer, nothing processed or stored
 *                                             (what a key-honouring gateway sends while an earlier attempt runs).
 *                       slow                  normal processing, delayed by slowMs (key is "in flight" meanwhile;
 *                                             releaseHeld() finishes it at once).
 *                       decline               402 card_declined, no debit, response stored and replayed.
 *                       processAfterGiveUp    read the request, then hold it UNREGISTERED (as a queue or a
 *                                             retrying proxy would) for processLateMs, then process it
 *                                             normally (idempotency layer, debit) and answer a client that
 *                                             has usually given up by then. Meanwhile a request with the
 *                                             same key is processed fresh, and the late one replays.
 *                     Exactly one fault is chosen per request (one uniform draw against the
 *                     cumulative probabilities), so the probabilities must sum to <= 1.
 *                     Also inside `faults`:
 *                       retryAfterSeconds     integer >= 0, default 1 (Retry-After on 429).
 *                       slowMs                ms >= 0, default 200.
 *                       timeoutHoldMs         ms >= 0, default 30000 (socket always destroyed at close()).
 *                       processLateMs         ms >= 0, default 500 (processAfterGiveUp's hold).
 *   outage            optional { startMs, endMs } (ms since start, gateway clock, [startMs, endMs))
 *                     or a function (elapsedMs) => boolean. During an outage EVERY request
 *                     (any route) gets 503 with no processing and no PRNG draw.
 *   clock             optional () => number (ms), default Date.now. Gateway time: idempotency-key
 *                     expiry (24 h), ledger `at`, and outage elapsed time. Tests pass a fake clock.
 *   shouldRetryHeader boolean, default true. Adds `Stripe-Should-Retry: true` on 409/429/5xx and
 *                     `false` on 400/402/404/422. Successful responses never carry it.
 *   keepAlive         boolean, default true. false: every response says `Connection: close`, so no
 *                     connection is reused. Browsers silently re-send a request whose REUSED
 *                     connection dropped (same key, so the gateway replays): a fault test that must
 *                     see the drop turns keep-alive off.
 *   passthrough       optional (req, res) => boolean, called first for every request: true means it
 *                     answered (static files, test control routes); the gateway then ignores the
 *                     request (no counters, no outage, no fault draw).
 *
 * SEMANTICS (Stripe v1 model, "results are saved only once the endpoint began executing")
 *   - Faults apply only to POST /v1/charges; GET routes only ever see the outage.
 *   - Pre-processing faults (reset, 5xx, 429) hit before the idempotency layer: nothing stored,
 *     a retry with the same key is processed fresh. (Real Stripe also replays 500s that happen
 *     *during* execution; we model only failures in front of the endpoint, e.g. a proxy.)
 *   - Same key + same canonical body -> stored status/body replayed with `Idempotent-Replayed: true`.
 *     Same key + different body -> 422 idempotency_error. Same key still in flight -> 409.
 *   - 400 validation errors are NOT stored (Stripe: params failed validation, endpoint never ran),
 *     so the client may fix the body and retry with the same key. 409s are not stored either.
 *   - A processing fault (slow/decline/debitThen*) drawn for a request that turns out to be a
 *     replay, conflict or validation error is not applied (and not counted in stats).
 *   - forceNext(name, count) queues faults consumed (FIFO) by the next POST /v1/charges requests
 *     that carry a key; forced requests do not consume a PRNG draw. 'none' forces a clean request.
 *
 * GATEWAY OBJECT
 *   url, close(), forceNext(name, count = 1), ledger(), requests(), stats(), chargesByKey(), reset(),
 *   configure({ seed, faults }) (new fault schedule, validated as at start; then reset()),
 *   releaseHeld() (process every held processAfterGiveUp request, and finish every slow one, now).
 */
import http from 'node:http';
import { createHash } from 'node:crypto';

export const FAULT_NAMES = Object.freeze([
  'debitThenTimeout',
  'debitThenReset',
  'resetBeforeProcessing',
  'status500',
  'status502',
  'status503',
  'status504',
  'status429',
  'status401',
  'status404',
  'status409',
  'slow',
  'decline',
  'processAfterGiveUp',
]);
const FAULT_SETTINGS = { retryAfterSeconds: 1, slowMs: 200, timeoutHoldMs: 30_000, processLateMs: 500 };
const OPTION_NAMES = ['seed', 'faults', 'outage', 'clock', 'shouldRetryHeader', 'keepAlive', 'passthrough'];
const KEY_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_KEY_LENGTH = 255;
const MAX_BODY_BYTES = 1024 * 1024;
const MAX_TIMER_MS = 2 ** 31 - 1;
// Faults in front of the idempotency layer: nothing processed or stored.
const PRE_PROCESSING = new Set(FAULT_NAMES.filter((f) => f === 'resetBeforeProcessing' || f.startsWith('status')));

/** mulberry32: tiny, fast, good enough for fault schedules. Returns floats in [0, 1). */
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function checkMs(name, v, max = MAX_TIMER_MS) {
  if (typeof v !== 'number') throw new TypeError(`${name} must be a number, got ${typeof v}`);
  if (!Number.isFinite(v) || v < 0 || v > max) throw new RangeError(`${name} must be a finite number in [0, ${max}], got ${v}`);
  return v;
}

function validateOptions(options) {
  if (options === undefined) options = {};
  if (!isPlainObject(options)) throw new TypeError('options must be an object');
  for (const k of Object.keys(options)) {
    if (!OPTION_NAMES.includes(k)) {
      const hint = k in FAULT_SETTINGS || FAULT_NAMES.includes(k) ? ` (did you mean options.faults.${k}?)` : '';
      throw new TypeError(`unknown option ${k}${hint}`);
    }
  }
  const seed = options.seed ?? 1;
  if (typeof seed !== 'number') throw new TypeError('seed must be a number');
  if (!Number.isFinite(seed)) throw new RangeError(`seed must be finite, got ${seed}`);

  const faults = options.faults ?? {};
  if (!isPlainObject(faults)) throw new TypeError('faults must be an object');
  const probabilities = {};
  const settings = { ...FAULT_SETTINGS };
  let total = 0;
  for (const [k, v] of Object.entries(faults)) {
    if (k === 'retryAfterSeconds') {
      if (typeof v !== 'number') throw new TypeError('faults.retryAfterSeconds must be a number');
      if (!Number.isInteger(v) || v < 0) throw new RangeError(`faults.retryAfterSeconds must be an integer >= 0, got ${v}`);
      settings.retryAfterSeconds = v;
    } else if (k === 'slowMs' || k === 'timeoutHoldMs' || k === 'processLateMs') {
      settings[k] = checkMs(`faults.${k}`, v);
    } else if (FAULT_NAMES.includes(k)) {
      if (typeof v !== 'number') throw new TypeError(`faults.${k} must be a number`);
      if (!(v >= 0 && v <= 1)) throw new RangeError(`faults.${k} must be a probability in [0, 1], got ${v}`);
      probabilities[k] = v;
      total += v;
    } else {
      throw new TypeError(`unknown fault faults.${k}; known: ${FAULT_NAMES.join(', ')}`);
    }
  }
  if (total > 1 + 1e-9) throw new RangeError(`faults probabilities must sum to <= 1, got ${total}`);

  const outage = options.outage;
  if (outage !== undefined && typeof outage !== 'function') {
    if (!isPlainObject(outage)) throw new TypeError('outage must be { startMs, endMs } or a function');
    checkMs('outage.startMs', outage.startMs, Number.MAX_SAFE_INTEGER);
    checkMs('outage.endMs', outage.endMs, Number.MAX_SAFE_INTEGER);
    if (outage.endMs < outage.startMs) throw new RangeError('outage.endMs must be >= outage.startMs');
  }
  const clock = options.clock ?? Date.now;
  if (typeof clock !== 'function') throw new TypeError('clock must be a function returning milliseconds');
  const shouldRetryHeader = options.shouldRetryHeader ?? true;
  if (typeof shouldRetryHeader !== 'boolean') throw new TypeError('shouldRetryHeader must be a boolean');
  const keepAlive = options.keepAlive ?? true;
  if (typeof keepAlive !== 'boolean') throw new TypeError('keepAlive must be a boolean');
  const passthrough = options.passthrough;
  if (passthrough !== undefined && typeof passthrough !== 'function') throw new TypeError('passthrough must be a function (req, res) => boolean');
  return { seed, probabilities, settings, outage, clock, shouldRetryHeader, keepAlive, passthrough };
}

/** JSON with object keys sorted recursively, so {a,b} and {b,a} fingerprint the same. */
function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isPlainObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function fingerprint(parsed, rawText) {
  const canonical = parsed.ok ? `json:${canonicalJson(parsed.value)}` : `raw:${rawText}`;
  return createHash('sha256').update(canonical).digest('base64');
}

function errorBody(type, code, message, extra = {}) {
  return { error: { type, code, message, ...extra } };
}

/** Returns null if the charge body is valid, else a 400 error body. */
function validateCharge(parsed) {
  if (!parsed.ok) return errorBody('invalid_request_error', 'invalid_json', 'Request body is not valid JSON.');
  const b = parsed.value;
  if (!isPlainObject(b)) return errorBody('invalid_request_error', 'parameter_invalid', 'Body must be a JSON object.');
  if (!Number.isSafeInteger(b.amountCents) || b.amountCents <= 0) {
    return errorBody('invalid_request_error', 'parameter_invalid_integer', 'amountCents must be a positive integer.', { param: 'amountCents' });
  }
  if (typeof b.currency !== 'string' || !/^[A-Za-z]{3}$/.test(b.currency)) {
    return errorBody('invalid_request_error', 'parameter_invalid_string', 'currency must be a 3-letter ISO code.', { param: 'currency' });
  }
  return null;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Start a gateway on 127.0.0.1 with an ephemeral port.
 * @param {object} [options] see the header comment.
 * @returns {Promise<object>} the gateway object.
 */
export async function startGateway(options) {
  const opts = validateOptions(options);
  let { probabilities, settings } = opts;
  const { clock } = opts;
  let faultOrder = FAULT_NAMES.filter((n) => probabilities[n] > 0);

  let random;
  let forced; // FIFO of fault names ('none' allowed)
  let ledgerEntries;
  let byId; // charge id -> ledger entry
  let byKey; // idempotency key -> ledger entries
  let records; // idempotency key -> { state: 'processing'|'done', fingerprint, createdAt, status, body }
  let processing; // keys currently in flight (so stats() is O(1))
  let counters;
  let chargeSeq;
  let requestSeq = 0;
  const startedAt = clock();
  const timers = new Set(); // every pending setTimeout, cleared by close()
  const held = new Set(); // processAfterGiveUp and slow requests waiting: { timer, run }
  const sockets = new Set();
  let closing = null;

  function resetState() {
    random = mulberry32(opts.seed);
    forced = [];
    ledgerEntries = [];
    byId = new Map();
    byKey = new Map();
    records = new Map();
    processing = new Set();
    chargeSeq = 0;
    counters = { requests: 0, replays: 0, conflicts: 0, mismatches: 0, validationErrors: 0, outage503: 0, debits: 0, lateHeld: 0, faults: {} };
    for (const n of FAULT_NAMES) counters.faults[n] = 0;
  }
  resetState();

  function later(ms, fn) {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
    return t;
  }
  function cancel(t) {
    clearTimeout(t);
    timers.delete(t);
  }

  function inOutage() {
    if (!opts.outage) return false;
    const elapsed = clock() - startedAt;
    if (typeof opts.outage === 'function') return Boolean(opts.outage(elapsed));
    return elapsed >= opts.outage.startMs && elapsed < opts.outage.endMs;
  }

  function drawFault() {
    if (forced.length > 0) return forced.shift();
    if (faultOrder.length === 0) return 'none';
    const u = random();
    let acc = 0;
    for (const name of faultOrder) {
      acc += probabilities[name];
      if (u < acc) return name;
    }
    return 'none';
  }

  function send(res, status, body, extraHeaders = {}) {
    if (res.destroyed || res.headersSent) return;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const headers = {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
      'Request-Id': `req_${requestSeq}`,
      ...(opts.keepAlive ? {} : { Connection: 'close' }),
      ...extraHeaders,
    };
    if (opts.shouldRetryHeader && status >= 400) {
      headers['Stripe-Should-Retry'] = status === 409 || status === 429 || status >= 500 ? 'true' : 'false';
    }
    res.writeHead(status, headers);
    res.end(text);
  }

  /** Drop expired, finished records from the front of the (insertion-ordered) map. */
  function sweepExpired(now) {
    for (const [key, rec] of records) {
      if (rec.state !== 'done' || now - rec.createdAt < KEY_TTL_MS) break;
      records.delete(key);
    }
  }

  function debit(key, body) {
    chargeSeq += 1;
    const id = `ch_${String(chargeSeq).padStart(8, '0')}`;
    const entry = { idempotencyKey: key, id, amountCents: body.amountCents, currency: body.currency, at: clock() };
    ledgerEntries.push(entry);
    byId.set(id, entry);
    const list = byKey.get(key);
    if (list) list.push(entry);
    else byKey.set(key, [entry]);
    counters.debits += 1;
    return chargeObject(entry);
  }

  function chargeObject(e) {
    return { id: e.id, reference: e.id, amountCents: e.amountCents, currency: e.currency, status: 'succeeded' };
  }

  function finish(key, rec, status, body) {
    processing.delete(key);
    rec.state = 'done';
    rec.status = status;
    rec.body = JSON.stringify(body);
  }

  async function handleCharge(req, res) {
    const raw = await readBody(req);
    return processCharge(req, res, raw, undefined);
  }

  /** `late`: a processAfterGiveUp request coming back after its hold (processed with no new fault). */
  async function processCharge(req, res, raw, late) {
    if (raw === null) return send(res, 413, errorBody('invalid_request_error', 'body_too_large', 'Request body too large.'), { Connection: 'close' });
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string' || key.length === 0) {
      return send(res, 400, errorBody('invalid_request_error', 'idempotency_key_required', 'POST requests require an Idempotency-Key header.'));
    }
    if (key.length > MAX_KEY_LENGTH) {
      return send(res, 400, errorBody('invalid_request_error', 'idempotency_key_too_long', `Idempotency-Key must be at most ${MAX_KEY_LENGTH} characters.`));
    }

    const fault = late ?? drawFault();
    if (fault === 'processAfterGiveUp' && late === undefined) {
      // Held before the idempotency layer: the key is not registered while it waits.
      counters.faults.processAfterGiveUp += 1;
      counters.lateHeld += 1;
      const entry = {
        run: () => {
          held.delete(entry);
          cancel(entry.timer);
          counters.lateHeld -= 1;
          void processCharge(req, res, raw, 'none');
        },
      };
      entry.timer = later(settings.processLateMs, entry.run);
      held.add(entry);
      return;
    }
    if (PRE_PROCESSING.has(fault)) {
      counters.faults[fault] += 1;
      if (fault === 'resetBeforeProcessing') return void req.socket.destroy();
      if (fault === 'status429') {
        return send(res, 429, errorBody('rate_limit_error', 'rate_limit', 'Too many requests.'), { 'Retry-After': String(settings.retryAfterSeconds) });
      }
      const status = Number(fault.slice('status'.length));
      return send(res, status, errorBody('api_error', `upstream_${status}`, `Injected ${status}.`));
    }

    let parsed;
    try {
      parsed = { ok: true, value: JSON.parse(raw) };
    } catch {
      parsed = { ok: false };
    }
    const fp = fingerprint(parsed, raw);
    const now = clock();
    sweepExpired(now);
    let rec = records.get(key);
    if (rec && rec.state === 'done' && now - rec.createdAt >= KEY_TTL_MS) {
      records.delete(key);
      rec = undefined;
    }
    if (rec) {
      if (rec.state === 'processing') {
        counters.conflicts += 1;
        return send(res, 409, errorBody('idempotency_error', 'idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed.'));
      }
      if (rec.fingerprint !== fp) {
        counters.mismatches += 1;
        return send(
          res,
          422,
          errorBody('idempotency_error', 'idempotency_key_reused', 'Keys for idempotent requests can only be used with the same parameters.'),
        );
      }
      counters.replays += 1;
      return send(res, rec.status, rec.body, { 'Idempotent-Replayed': 'true' });
    }

    // Stripe: parameters that fail validation mean the endpoint never ran, so nothing is stored.
    const invalid = validateCharge(parsed);
    if (invalid) {
      counters.validationErrors += 1;
      return send(res, 400, invalid);
    }

    rec = { state: 'processing', fingerprint: fp, createdAt: now, status: 0, body: '' };
    records.set(key, rec);
    processing.add(key);
    const body = parsed.value;
    if (fault !== 'none') counters.faults[fault] += 1;

    if (fault === 'decline') {
      const declined = errorBody('card_error', 'card_declined', 'Your card was declined.', { decline_code: 'generic_decline' });
      finish(key, rec, 402, declined);
      return send(res, 402, declined);
    }
    if (fault === 'slow') {
      const entry = {
        run: () => {
          held.delete(entry);
          cancel(entry.timer);
          const charge = debit(key, body);
          finish(key, rec, 200, charge);
          send(res, 200, charge);
        },
      };
      entry.timer = later(settings.slowMs, entry.run);
      held.add(entry);
      return;
    }
    const charge = debit(key, body);
    finish(key, rec, 200, charge);
    if (fault === 'debitThenReset') return void req.socket.destroy();
    if (fault === 'debitThenTimeout') {
      const t = later(settings.timeoutHoldMs, () => req.socket.destroy());
      res.on('close', () => cancel(t)); // client gave up first: drop the timer
      return;
    }
    return send(res, 200, charge);
  }

  function handleGet(url, res) {
    if (url.pathname === '/v1/settlements') {
      const key = url.searchParams.get('idempotencyKey');
      const list = key === null ? ledgerEntries : (byKey.get(key) ?? []);
      return send(
        res,
        200,
        list.map((e) => ({ ...e })),
      );
    }
    const m = /^\/v1\/charges\/([^/]+)$/.exec(url.pathname);
    const entry = m ? byId.get(decodeURIComponent(m[1])) : undefined;
    if (entry) return send(res, 200, chargeObject(entry));
    if (m) return send(res, 404, errorBody('invalid_request_error', 'resource_missing', `No such charge: ${m[1]}`));
    return notFound(res);
  }

  function notFound(res) {
    send(res, 404, errorBody('invalid_request_error', 'route_not_found', 'Unrecognized request URL.'));
  }

  async function onRequest(req, res) {
    if (opts.passthrough !== undefined) {
      try {
        if (opts.passthrough(req, res) === true) return;
      } catch (err) {
        if (!res.headersSent) send(res, 500, errorBody('api_error', 'passthrough_error', String(err?.message ?? err)));
        return;
      }
    }
    requestSeq += 1;
    counters.requests += 1;
    req.on('error', () => {}); // aborted uploads must not become uncaught errors
    res.on('error', () => {});
    try {
      if (inOutage()) {
        counters.outage503 += 1;
        req.resume();
        return send(res, 503, errorBody('api_error', 'service_unavailable', 'Gateway outage.'));
      }
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (req.method === 'POST' && url.pathname === '/v1/charges') return await handleCharge(req, res);
      req.resume();
      if (req.method === 'GET') return handleGet(url, res);
      return notFound(res);
    } catch (err) {
      // A bug or malformed input must never crash the gateway (and the test run with it).
      if (!res.headersSent && !res.destroyed) send(res, 500, errorBody('api_error', 'internal_error', String(err?.message ?? err)));
      else req.socket?.destroy();
    }
  }

  const server = http.createServer(onRequest);
  server.keepAliveTimeout = opts.keepAlive ? 5_000 : 0; // > 0 so keep-alive works; undici's client default is 4 s
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (err, socket) => {
    if (socket.writable && err.code !== 'ECONNRESET') {
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    } else {
      socket.destroy();
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address();

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    /** Stop listening, destroy every socket (held responses included), clear every timer. */
    close() {
      if (!closing) {
        closing = new Promise((resolve) => {
          for (const t of timers) clearTimeout(t);
          timers.clear();
          server.close(() => resolve());
          for (const s of sockets) s.destroy();
          sockets.clear();
        });
      }
      return closing;
    },
    /** Force the next `count` POST /v1/charges requests (with a key) to get `faultName` ('none' = clean). */
    forceNext(faultName, count = 1) {
      if (typeof faultName !== 'string') throw new TypeError('faultName must be a string');
      if (faultName !== 'none' && !FAULT_NAMES.includes(faultName)) {
        throw new RangeError(`faultName must be one of none, ${FAULT_NAMES.join(', ')}; got ${faultName}`);
      }
      if (!Number.isInteger(count) || count < 1) throw new RangeError(`count must be a positive integer, got ${count}`);
      for (let i = 0; i < count; i += 1) forced.push(faultName);
    },
    /** Copies of every debit, in order: { idempotencyKey, id, amountCents, currency, at }. */
    ledger: () => ledgerEntries.map((e) => ({ ...e })),
    /** Number of HTTP requests received (all routes). */
    requests: () => counters.requests,
    /**
     * Counters, per-fault counts (applied faults only), and current in-flight/stored key counts.
     * `inFlight` counts processAfterGiveUp requests still held (`lateHeld`): they will debit.
     */
    stats() {
      return {
        ...counters,
        faults: { ...counters.faults },
        inFlight: processing.size + counters.lateHeld,
        storedKeys: records.size,
        openSockets: sockets.size,
        pendingTimers: timers.size,
      };
    },
    /** Map idempotencyKey -> number of debits. A correct client never makes a value > 1. */
    chargesByKey: () => new Map([...byKey].map(([k, list]) => [k, list.length])),
    /** Forget ledger, keys, counters and forced faults; re-seed the PRNG. Call while idle. */
    reset: () => resetState(),
    /** Process every held processAfterGiveUp request and finish every slow one now (in arrival order); returns how many. */
    releaseHeld() {
      const list = [...held];
      for (const entry of list) entry.run();
      return list.length;
    },
    /** A new fault schedule ({ seed, faults }, validated like startGateway's), then reset(). Call while idle. */
    configure(next) {
      const v = validateOptions({ seed: next?.seed ?? opts.seed, faults: next?.faults ?? {} });
      opts.seed = v.seed;
      probabilities = v.probabilities;
      settings = v.settings;
      faultOrder = FAULT_NAMES.filter((n) => probabilities[n] > 0);
      resetState();
    },
  };
}
