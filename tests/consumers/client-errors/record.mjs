// Drives real client libraries (axios, got, ky, node-fetch, undici, superagent, stripe, the AWS SDK v3,
// braintree, @adyen/api-library) against server.mjs's faults, through the packed steadfast, and records
// for every library × fault: the raw error's shape (what the classifiers can read: name, message, code,
// the status fields, headers, the cause chain and the SDKs' own wrappers), isTransientError(error), and
// what `store.run(key, () => gateway())` leaves (store.peek(key): 'unknown' = parked, null = freed).
//
//   node record.mjs [--write <fixture.json>]      prints the matrix; --write also saves the shapes
//
// No traffic leaves 127.0.0.1: every client is pointed at the local servers, and dns.lookup is replaced by
// one that refuses every name with Node's own ENOTFOUND shape (the `dns` fault), so a library that would
// resolve some other host fails instead of reaching it.
import dns from 'node:dns';
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { IdempotencyStore, isTransientError } from 'steadfast';
import { FAULTS, DNS_HOST, startFaults } from './server.mjs';

const require = createRequire(import.meta.url);
const TIMEOUT_MS = 300;

// --- DNS: Node's getaddrinfo failure, as dns.lookup reports it (lib/internal/errors.js DNSException) ---
const looked = new Set();
const realLookup = dns.lookup;
function refusingLookup(hostname, options, callback) {
  const cb = typeof options === 'function' ? options : callback;
  // An IP literal needs no resolver (net.listen and some agents still pass it through lookup).
  if (net.isIP(hostname)) return realLookup(hostname, options, callback);
  looked.add(hostname);
  const e = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
  Object.assign(e, { errno: -3008, code: 'ENOTFOUND', syscall: 'getaddrinfo', hostname });
  process.nextTick(cb, e);
}
dns.lookup = refusingLookup;
dns.promises.lookup = (hostname) => new Promise((_, reject) => refusingLookup(hostname, {}, (e) => reject(e)));

// --- The libraries, each as a user's gateway function would call it ---------------------------------
const body = { amount: 1000, currency: 'eur', source: 'tok_visa' };
const headers = { 'content-type': 'application/json', 'idempotency-key': 'key-1' };

function urlFor(fault, ports) {
  return fault === 'dns' ? `http://${DNS_HOST}:8080/v1/charges` : `http://127.0.0.1:${ports[fault]}/v1/charges`;
}

async function clients() {
  const { default: axios, AxiosError } = await import('axios');
  const { default: got } = await import('got');
  const { default: ky } = await import('ky');
  const { default: nodeFetch } = await import('node-fetch');
  const undici = await import('undici');
  const { default: superagent } = await import('superagent');
  const { default: Stripe } = await import('stripe');
  const { S3Client, PutObjectCommand } = await import('@aws-sdk/client-s3');
  const braintree = require('braintree');
  const adyen = require('@adyen/api-library');

  const hostPort = (fault, ports) => (fault === 'dns' ? [DNS_HOST, 8080] : ['127.0.0.1', ports[fault]]);
  return {
    'axios (http adapter)': (f, p) => axios.post(urlFor(f, p), body, { headers, timeout: TIMEOUT_MS }),
    'axios (fetch adapter)': (f, p) => axios.post(urlFor(f, p), body, { headers, adapter: 'fetch', signal: AbortSignal.timeout(TIMEOUT_MS) }),
    // The browser adapter's network error, as lib/adapters/xhr.js makes it (XMLHttpRequest's onerror:
    // a ProgressEvent, no message): Node has no XMLHttpRequest, so the same constructor call.
    'axios (xhr adapter, as a browser reports a network error)': async () => {
      const err = new AxiosError('Network Error', AxiosError.ERR_NETWORK, { url: '/v1/charges', method: 'post' }, {});
      err.event = null;
      throw err;
    },
    got: (f, p) => got.post(urlFor(f, p), { json: body, headers, timeout: { request: TIMEOUT_MS }, retry: { limit: 0 } }).json(),
    ky: (f, p) => ky.post(urlFor(f, p), { json: body, headers, timeout: TIMEOUT_MS, retry: 0 }).json(),
    'node-fetch': async (f, p) => {
      const res = await nodeFetch(urlFor(f, p), { method: 'POST', body: JSON.stringify(body), headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
      return { status: res.status, body: await res.json() };
    },
    'undici request()': async (f, p) => {
      const res = await undici.request(urlFor(f, p), {
        method: 'POST',
        body: JSON.stringify(body),
        headers,
        headersTimeout: TIMEOUT_MS,
        bodyTimeout: TIMEOUT_MS,
      });
      return { status: res.statusCode, body: await res.body.json() };
    },
    superagent: (f, p) => superagent.post(urlFor(f, p)).set(headers).send(body).timeout(TIMEOUT_MS),
    stripe: (f, p) => {
      const [host, port] = hostPort(f, p);
      const stripe = new Stripe('sk_test_local', { host, port, protocol: 'http', maxNetworkRetries: 0, timeout: TIMEOUT_MS, telemetry: false });
      return stripe.charges.create(body, { idempotencyKey: 'key-1' });
    },
    'AWS SDK v3 (S3)': (f, p) => {
      const [host, port] = hostPort(f, p);
      const s3 = new S3Client({
        endpoint: `http://${host}:${port}`,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' },
        maxAttempts: 1,
        requestHandler: { requestTimeout: TIMEOUT_MS, connectionTimeout: TIMEOUT_MS, throwOnRequestTimeout: true },
      });
      return s3.send(new PutObjectCommand({ Bucket: 'charges', Key: 'key-1', Body: JSON.stringify(body) }));
    },
    braintree: (f, p) => {
      const [host, port] = hostPort(f, p);
      const gateway = new braintree.BraintreeGateway({
        environment: new braintree.Environment(host, port, `http://${host}:${port}`, false),
        merchantId: 'merchant',
        publicKey: 'public',
        privateKey: 'private',
      });
      gateway.config.timeout = TIMEOUT_MS; // the constructor keeps its own 60 s
      return gateway.transaction.sale({ amount: '10.00', paymentMethodNonce: 'fake-valid-nonce', options: { submitForSettlement: true } });
    },
    '@adyen/api-library': (f, p, tlsPorts) => {
      const client = new adyen.Client({ apiKey: 'local', environment: 'TEST' });
      client.config.certificatePath = 'unencrypted'; // the local HTTPS twin's self-signed certificate
      client.config.connectionTimeoutMillis = TIMEOUT_MS;
      const api = new adyen.CheckoutAPI(client).PaymentsApi;
      const [host, port] = f === 'dns' ? [DNS_HOST, 8443] : ['127.0.0.1', tlsPorts[f]];
      api.baseUrl = `https://${host}:${port}/v72`;
      return api.payments(
        { amount: { currency: 'EUR', value: 1000 }, reference: 'order-1', merchantAccount: 'Local', paymentMethod: { type: 'scheme' } },
        { idempotencyKey: 'key-1' },
      );
    },
  };
}

// --- What the classifiers can read of an error ------------------------------------------------------
const PORTS = /(127\.0\.0\.1|localhost|\[::1\]|::1):\d+/g;
const clean = (s) => (typeof s === 'string' ? s.replace(PORTS, '$1:PORT').slice(0, 300) : s);
const HEADERS = ['retry-after', 'stripe-should-retry'];

function pickHeaders(h) {
  if (h === null || typeof h !== 'object') return undefined;
  const out = {};
  for (const name of HEADERS) {
    const v = typeof h.get === 'function' ? h.get(name) : h[name];
    if (typeof v === 'string') out[name] = v;
  }
  return Object.keys(out).length ? out : {};
}

/** Primitive own and inherited-getter fields worth keeping (no bodies, no stacks). */
const FIELDS = ['name', 'message', 'code', 'errno', 'syscall', 'status', 'statusCode', 'type', 'rawType', 'errorCode', 'retryable', 'event'];

function describe(e, depth = 0) {
  if (e === null || e === undefined) return e;
  if (typeof e !== 'object' && typeof e !== 'function') return { primitive: String(e) };
  if (depth > 4) return { truncated: true };
  const d = { tag: Object.prototype.toString.call(e), ctor: e.constructor?.name };
  for (const f of FIELDS) {
    const v = e[f];
    if (['string', 'number', 'boolean'].includes(typeof v)) d[f] = clean(v);
  }
  d.own = Object.getOwnPropertyNames(e)
    .filter((n) => n !== 'stack')
    .sort();
  if (e.response && typeof e.response === 'object') {
    const r = e.response;
    d.response = { status: r.status, statusCode: r.statusCode, headers: pickHeaders(r.headers) };
  }
  if (e.headers && typeof e.headers === 'object') d.headers = pickHeaders(e.headers);
  if (e.$metadata && typeof e.$metadata === 'object') d.$metadata = { httpStatusCode: e.$metadata.httpStatusCode };
  if (e.$response && typeof e.$response === 'object') d.$response = { statusCode: e.$response.statusCode };
  for (const nested of ['cause', 'detail', 'originalError', 'err']) {
    if (e[nested] !== undefined && typeof e[nested] === 'object') d[nested] = describe(e[nested], depth + 1);
  }
  if (Array.isArray(e.errors)) d.errors = e.errors.slice(0, 2).map((x) => describe(x, depth + 1));
  return d;
}

// --- One library × one fault ------------------------------------------------------------------------
async function once(call, fault, ports, tlsPorts) {
  let raw;
  let resolved;
  const gateway = async () => {
    let timer;
    // A library that never settles is a finding too (recorded as such), not a hung recorder.
    const hung = new Promise(
      (_, reject) => (timer = setTimeout(() => reject(Object.assign(new Error('recorder: the library never settled'), { code: 'RECORDER_HUNG' })), 5_000)),
    );
    try {
      return await Promise.race([call(fault, ports, tlsPorts), hung]);
    } catch (e) {
      raw = e;
      throw e;
    } finally {
      clearTimeout(timer);
    }
  };
  const store = new IdempotencyStore();
  const key = `charge-${fault}`;
  try {
    resolved = await store.run(key, gateway);
  } catch {
    // raw holds what the gateway threw
  }
  const slot = store.peek(key);
  const left = slot === undefined ? null : slot.status;
  if (raw === undefined) return { threw: false, resolved: clean(JSON.stringify(resolved ?? null)).slice(0, 80), left };
  return { threw: true, shape: describe(raw), isTransient: isTransientError(raw), left };
}

function selfSignedCert() {
  const dir = mkdtempSync(join(tmpdir(), 'steadfast-tls-'));
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-days', '1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
}

const only = process.env.ONLY; // a library name, to record just that one
const servers = await startFaults(selfSignedCert());
const matrix = {};
try {
  for (const [lib, call] of Object.entries(await clients())) {
    if (only && lib !== only) continue;
    matrix[lib] = {};
    const faults = lib.startsWith('axios (xhr') ? ['network error'] : FAULTS;
    for (const fault of faults) matrix[lib][fault] = await once(call, fault, servers.ports, servers.tlsPorts);
  }
} finally {
  await servers.close();
}
const strange = [...looked].filter((h) => h !== DNS_HOST);
if (strange.length) throw new Error(`a library tried to resolve ${strange.join(', ')} (refused, not sent)`);

for (const [lib, row] of Object.entries(matrix)) {
  for (const [fault, r] of Object.entries(row)) {
    const what = r.threw
      ? `${r.shape.ctor ?? r.shape.name}${r.shape.code ? ` code=${r.shape.code}` : ''}${(r.shape.status ?? r.shape.statusCode) ? ` status=${r.shape.status ?? r.shape.statusCode}` : ''} "${r.shape.message}"`
      : `resolved ${r.resolved}`;
    console.log(`${lib.padEnd(28)} ${fault.padEnd(10)} transient=${String(r.isTransient ?? '-').padEnd(5)} left=${String(r.left).padEnd(8)} ${what}`);
  }
}
const write = process.argv.indexOf('--write');
if (write > 0) {
  const versions = {};
  for (const name of ['axios', 'got', 'ky', 'node-fetch', 'undici', 'superagent', 'stripe', '@aws-sdk/client-s3', 'braintree', '@adyen/api-library']) {
    try {
      versions[name] = JSON.parse(readFileSync(join(process.cwd(), 'node_modules', name, 'package.json'), 'utf8')).version;
    } catch {
      versions[name] = 'unknown';
    }
  }
  const shapes = {};
  for (const [lib, row] of Object.entries(matrix)) {
    shapes[lib] = {};
    for (const [fault, r] of Object.entries(row)) shapes[lib][fault] = r.threw ? r.shape : { resolved: true };
  }
  writeFileSync(process.argv[write + 1], `${JSON.stringify({ node: process.version, versions, shapes }, null, 1)}\n`);
  console.log(`record: wrote ${process.argv[write + 1]}`);
}
console.log(`record: ${Object.keys(matrix).length} libraries`);
