// The fingerprint is of the request as sent: one canonical text of the charge's JSON data, the same
// in JS, in Redis (its SHA-256/128 digest) and in Rust (tests/core_canonical.rs checks the same
// fixture). Charges whose JSON form would differ from their own fields — class instances, toJSON,
// getters, boxed values — are refused with a typed error before anything is sent. A field declared
// volatile (a per-attempt SDK nonce) is sent but cannot change the key's fingerprint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import {
  chargeFingerprint,
  chargeCustomer,
  createCheckoutClient,
  createRedisIdempotencyStore,
  CircuitBreaker,
  IdempotencyStore,
  IdempotencyKeyReuseError,
  isSteadfastError,
} from 'steadfast';
import { redisForTests } from '../shared/redis-server.mjs';

const { cases } = JSON.parse(await readFile(new URL('../fixtures/fingerprints.json', import.meta.url), 'utf8'));
const policy = { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 };
const breaker = () => new CircuitBreaker({ failureThreshold: 5, openDurationMs: 1000 });
const redis = redisForTests();

test('chargeFingerprint writes the fixture text for every case', () => {
  assert.ok(cases.length >= 8);
  for (const c of cases) {
    const options = c.volatileFields === undefined ? undefined : { volatileFields: c.volatileFields };
    assert.equal(chargeFingerprint(c.charge, options), c.canonical, c.name);
  }
});

test('chargeCustomer through a Redis store keeps the fixture digest for every case', async () => {
  const prefix = `fp-${Date.now()}`;
  const store = createRedisIdempotencyStore({ client: redis.conn.client, prefix, timeoutMs: 5000, buckets: 1 });
  for (const c of cases) {
    const deps = { store, breaker: breaker(), policy, gateway: async () => 'ok', volatileFields: c.volatileFields };
    assert.equal(await chargeCustomer(c.charge, deps), 'ok', c.name);
    const stored = await redis.conn.client.sendCommand(['HGET', `${prefix}:{idem:0}:r:${c.charge.idempotencyKey}`, 'fp']);
    assert.equal(stored, c.digest, c.name);
  }
});

/** Two different charges that the old canonical text could not tell apart (it walked own fields, not what is sent). */
class Order {
  #amount;
  constructor(amount) {
    this.#amount = amount;
  }
  get amountCents() {
    return this.#amount;
  }
  get currency() {
    return 'usd';
  }
  toJSON() {
    return { amountCents: this.#amount, currency: 'usd' };
  }
}

test('a charge whose JSON form differs from its own fields is refused before anything is sent, naming the field', async () => {
  const refused = [
    [new Order(1000), 'charge', 'an Order'],
    [{ amountCents: 1000, currency: 'usd', toJSON: () => ({ amountCents: 1 }) }, 'charge', 'an object with toJSON()'],
    [{ amountCents: 1000, currency: 'usd', customer: { id: 'c', since: new Date(0) } }, 'charge.customer.since', 'a Date'],
    [{ amountCents: 1000, currency: 'usd', total: new Number(1000) }, 'charge.total', 'a Number'],
    [
      { amountCents: 1000, currency: 'usd', items: [Object.defineProperty({}, 'sku', { get: () => 'A', enumerable: true })] },
      'charge.items[0].sku',
      'a getter',
    ],
    [{ amountCents: 1000, currency: 'usd', tax: NaN }, 'charge.tax', 'NaN'],
    [{ amountCents: 1000, currency: 'usd', big: 10n }, 'charge.big', '10n'],
    [{ amountCents: 1000, currency: 'usd', onPaid: () => {} }, 'charge.onPaid', 'a function'],
  ];
  for (const [charge, option, what] of refused) {
    const check = (e) => {
      assert.ok(e instanceof TypeError, String(e));
      assert.ok(isSteadfastError(e, 'INVALID_OPTION'));
      assert.equal(e.option, option);
      assert.match(e.message, /plain JSON data/);
      assert.ok(e.message.endsWith(`got ${what}`), e.message);
      return true;
    };
    assert.throws(() => chargeFingerprint(charge), check);
    let sent = 0;
    const client = createCheckoutClient({ endpoint: 'https://pay.example/v1/charges', fetch: async () => (sent += 1), retry: policy });
    await assert.rejects(client.charge(charge, { idempotencyKey: 'k-checkout' }), check);
    // chargeCustomer takes the key on the charge (an own field, also on the class instance).
    const keyed = Object.assign(charge, { idempotencyKey: 'k-plain' });
    const deps = { store: new IdempotencyStore(), breaker: breaker(), policy, gateway: async () => (sent += 1) };
    await assert.rejects(chargeCustomer(keyed, deps), check);
    assert.equal(sent, 0, 'nothing was sent');
  }
  // Before: the two orders of different amounts had one fingerprint ("{}"), and the second replayed the first's success.
  assert.notEqual(JSON.stringify(new Order(1000)), JSON.stringify(new Order(100_000)));
});

test('volatile fields are sent but cannot change the fingerprint; every other field still binds the key', async () => {
  const sent = [];
  const client = createCheckoutClient({
    endpoint: 'https://pay.example/v1/charges',
    volatileFields: ['sdkNonce'],
    retry: policy,
    fetch: async (req, init) => {
      sent.push(JSON.parse(init?.body ?? (await req.text())));
      return new Response('{"id":"ch_1"}', { status: 200 });
    },
  });
  const first = await client.charge({ amountCents: 4999, currency: 'usd', sdkNonce: 'n-1' }, { idempotencyKey: 'k-vol' });
  assert.equal(first.status, 'succeeded');
  // A retry of the same charge by an SDK that makes a new nonce per attempt: the same order, replayed.
  const again = await client.charge({ amountCents: 4999, currency: 'usd', sdkNonce: 'n-2' }, { idempotencyKey: 'k-vol' });
  assert.deepEqual([again.status, again.reference], ['succeeded', 'ch_1']);
  assert.deepEqual(sent, [{ amountCents: 4999, currency: 'usd', sdkNonce: 'n-1' }], 'sent once, nonce included');
  // Another amount under the key is still refused.
  await assert.rejects(client.charge({ amountCents: 100_000, currency: 'usd', sdkNonce: 'n-3' }, { idempotencyKey: 'k-vol' }), IdempotencyKeyReuseError);
  // chargeCustomer, with and without the option.
  const store = new IdempotencyStore();
  const deps = { store, breaker: breaker(), policy, gateway: async (c) => `paid ${c.amountCents}`, volatileFields: ['sdkNonce'] };
  assert.equal(await chargeCustomer({ idempotencyKey: 'k-cc', amountCents: 10, currency: 'usd', sdkNonce: 'a' }, deps), 'paid 10');
  assert.equal(await chargeCustomer({ idempotencyKey: 'k-cc', amountCents: 10, currency: 'usd', sdkNonce: 'b' }, deps), 'paid 10');
  await assert.rejects(
    chargeCustomer({ idempotencyKey: 'k-cc', amountCents: 10, currency: 'usd', sdkNonce: 'c' }, { ...deps, volatileFields: undefined }),
    IdempotencyKeyReuseError,
  );
  assert.throws(
    () => createCheckoutClient({ endpoint: 'https://pay.example/v1/charges', volatileFields: 'sdkNonce' }),
    (e) => e instanceof TypeError && e.option === 'volatileFields',
  );
});

/** A charge's canonical text written out apart from the package: keys sorted by code unit, JSON values. */
function oracle(value) {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : oracle(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${oracle(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Random plain-data charges: escapes, non-ASCII, lone surrogates, integer-like keys, holes, texts past any buffer. */
function randomCharges(count, seed) {
  let s = seed;
  const rand = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const ATOMS = ['a', 'Z', ' ', '"', '\\', '\n', '\u0001', '\u007f', 'é', '😀', '\uD800', '\uDFFF', '～', '/', '<'];
  const text = () =>
    rand() < 0.02 ? 'x'.repeat(5000 + Math.floor(rand() * 3000)) : Array.from({ length: Math.floor(rand() * 12) }, () => pick(ATOMS)).join('');
  const KEYS = ['amountCents', 'currency', 'b', 'B', '10', '2', 'é', '😀', 'meta', 'items', 'a"b', 'idempotencyKey'];
  const value = (depth) => {
    const r = rand();
    if (depth > 3 || r < 0.3) return text();
    if (r < 0.45) return pick([0, -0, 1, -7, 2.5, 1e21, 5e-7, 9007199254740991, 123456789.125]);
    if (r < 0.55) return pick([true, false, null, undefined]);
    if (r < 0.75) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
    const o = rand() < 0.1 ? Object.create(null) : {};
    for (let i = Math.floor(rand() * 5); i > 0; i--) o[pick(KEYS)] = value(depth + 1);
    return o;
  };
  return Array.from({ length: count }, (_, i) => {
    const charge = { idempotencyKey: `k-${seed}-${i}`, amountCents: 1 + Math.floor(rand() * 1e6), currency: pick(['usd', 'eur', 'jpy']) };
    const extra = KEYS.filter((k) => !['idempotencyKey', 'amountCents', 'currency'].includes(k));
    for (let f = Math.floor(rand() * 5); f > 0; f--) charge[pick(extra)] = value(1);
    return charge;
  });
}

test('the bytes chargeCustomer hashes in the in-process store are the canonical text, for any plain charge', async () => {
  // chargeCustomer writes the charge's canonical bytes straight into the core; store.run with
  // chargeFingerprint's text must find the same record (a replay), and the text must be the
  // oracle's. 2,000 random charges, some texts past the store's input buffer and the text buffer.
  const store = new IdempotencyStore();
  const deps = { store, breaker: breaker(), policy, gateway: async (c) => `paid ${c.idempotencyKey}` };
  for (const charge of randomCharges(2000, 7)) {
    const { idempotencyKey, ...request } = charge;
    const text = chargeFingerprint(charge);
    assert.equal(text, oracle(request), JSON.stringify(charge).slice(0, 200));
    assert.equal(await chargeCustomer(charge, deps), `paid ${idempotencyKey}`);
    let ran = false;
    const replay = await store.run(idempotencyKey, async () => (ran = true), { fingerprint: text });
    assert.equal(replay, `paid ${idempotencyKey}`, `${idempotencyKey}: the text's fingerprint is the record's`);
    assert.equal(ran, false);
    await assert.rejects(
      store.run(idempotencyKey, async () => 'x', { fingerprint: `${text} ` }),
      IdempotencyKeyReuseError,
    );
  }
});

test('a Proxy charge that runs code mid-read cannot change what another charge or its own key is bound to', async () => {
  const store = new IdempotencyStore();
  const deps = { store, breaker: breaker(), policy, gateway: async () => 'ok' };
  const nested = [];
  const plain = { idempotencyKey: 'k-proxy', amountCents: 500, currency: 'usd', note: 'one' };
  const proxy = new Proxy(plain, {
    ownKeys(target) {
      // Mid-walk: another text and another charge through the same store.
      nested.push(chargeFingerprint({ amountCents: 1, currency: 'eur' }));
      nested.push(store.run('k-inner', async () => 'inner', { fingerprint: 'f' }).then(String, (e) => e.code));
      return Reflect.ownKeys(target);
    },
  });
  assert.equal(await chargeCustomer(proxy, deps), 'ok');
  assert.equal(nested[0], '{"amountCents":1,"currency":"eur"}', 'the nested text is whole');
  assert.equal(await nested[1], 'INVALID_OPTION', 'a store call from inside the read is refused, nothing overwritten');
  assert.equal(store.peek('k-inner'), undefined);
  // The outer charge is bound to its own text: the plain twin replays, another note is refused.
  assert.equal(await store.run('k-proxy', async () => 'again', { fingerprint: chargeFingerprint(plain) }), 'ok');
  assert.equal(chargeFingerprint(proxy), chargeFingerprint(plain));
  assert.equal(nested.length, 4);
  assert.equal(nested[2], '{"amountCents":1,"currency":"eur"}', 'a text asked for during a text is whole too');
});
