// IdempotencyStore and newIdempotencyKey through the built package imported by name. Time is the
// `clock` option, moved by hand.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  IdempotencyStore,
  newIdempotencyKey,
  DuplicateRequestError,
  OutcomeUnknownError,
  IdempotencyKeyReuseError,
  IdempotencyStateError,
  CircuitOpenError,
  SteadfastError,
  isSteadfastError,
  createSharedIdempotencyStore,
} from 'steadfast';
import { manualClock as clockAt } from '../support/clock.mjs';

/** This file's clocks start at 1_700_000_000_000 ms unless a test says otherwise. */
const manualClock = (start = 1_700_000_000_000) => clockAt(start);

/** A charge function that counts its calls. */
function charger(impl = async () => ({ reference: 'ch_1', amountCents: 4999 })) {
  const f = async (...args) => {
    f.calls++;
    return impl(...args);
  };
  f.calls = 0;
  return f;
}

const timeout = () => Object.assign(new Error('socket hang up: ETIMEDOUT'), { code: 'ETIMEDOUT' });
const declined = () => Object.assign(new Error('card_declined'), { status: 402 });

describe('seed behaviours', () => {
  test('same key executes the charge once and replays the result', async () => {
    const store = new IdempotencyStore();
    const charge = charger();
    const first = await store.run('order-1', charge);
    const second = await store.run('order-1', charge);
    assert.equal(charge.calls, 1);
    assert.equal(second, first, 'the very same result object is replayed');
    assert.deepEqual(store.peek('order-1'), { status: 'done', result: first });
    // other keys are independent
    await store.run('order-2', charge);
    assert.equal(charge.calls, 2);
    assert.equal(store.size, 2);
  });

  test('a concurrent duplicate is rejected, not replayed', async () => {
    const clock = manualClock();
    const store = new IdempotencyStore({ clock });
    let finish;
    const charge = charger(() => new Promise((r) => (finish = r)));
    const first = store.run('order-1', charge);
    assert.deepEqual(store.peek('order-1'), { status: 'in-flight', startedAt: clock() });
    clock.advance(5);
    const dup = await store.run('order-1', charge).then(
      () => assert.fail('the duplicate must be rejected'),
      (e) => e,
    );
    assert.ok(dup instanceof DuplicateRequestError);
    assert.ok(dup instanceof SteadfastError);
    assert.equal(dup.name, 'DuplicateRequestError');
    assert.equal(dup.code, 'DUPLICATE_IN_FLIGHT');
    assert.equal(dup.key, 'order-1');
    assert.equal(dup.startedAt, clock() - 5);
    assert.match(dup.message, /order-1.*in flight/);
    assert.equal(charge.calls, 1);
    finish({ reference: 'ch_9' });
    assert.deepEqual(await first, { reference: 'ch_9' });
    // once done, the same key replays
    assert.deepEqual(await store.run('order-1', charge), { reference: 'ch_9' });
    assert.equal(charge.calls, 1);
  });

  test('a timeout leaves the key in unknown, blocking blind retries', async () => {
    const clock = manualClock();
    const store = new IdempotencyStore({ clock });
    const t = timeout();
    const charge = charger(async () => {
      throw t;
    });
    await assert.rejects(
      store.run('order-1', charge),
      (e) => e.code === 'OUTCOME_UNKNOWN' && e.key === 'order-1' && e.cause === t,
      'parked: the original error is the cause',
    );
    const rec = store.peek('order-1');
    assert.equal(rec.status, 'unknown');
    assert.equal(rec.startedAt, clock());
    assert.equal(typeof rec.error, 'string');
    assert.match(rec.error, /ETIMEDOUT/);
    clock.advance(1000);
    const blocked = await store.run('order-1', charge).then(
      () => assert.fail('must not run'),
      (e) => e,
    );
    assert.ok(blocked instanceof OutcomeUnknownError);
    assert.equal(blocked.code, 'OUTCOME_UNKNOWN');
    assert.equal(blocked.key, 'order-1');
    assert.equal(blocked.startedAt, clock() - 1000);
    assert.match(blocked.message, /reconcile before retrying/);
    assert.equal(charge.calls, 1, 'no blind retry');
    assert.deepEqual(store.unknownKeys(), ['order-1']);
  });

  test('a definitive rejection frees the key for a legitimate retry', async () => {
    const store = new IdempotencyStore();
    const d = declined();
    let fail = true;
    const charge = charger(async () => {
      if (fail) throw d;
      return 'charged';
    });
    await assert.rejects(store.run('order-1', charge), (e) => e === d);
    assert.equal(store.peek('order-1'), undefined);
    assert.equal(store.size, 0);
    fail = false;
    assert.equal(await store.run('order-1', charge), 'charged');
    assert.equal(charge.calls, 2);
  });
});

describe('what parks a key as unknown', () => {
  const parked = [
    ['ETIMEDOUT', () => timeout()],
    ['ECONNRESET', () => Object.assign(new Error('reset'), { code: 'ECONNRESET' })],
    ['503', () => Object.assign(new Error('503'), { status: 503 })],
    ['TimeoutError (AbortSignal.timeout)', () => new DOMException('timed out', 'TimeoutError')],
    ['AbortError', () => new DOMException('aborted', 'AbortError')],
    ['undici fetch failed, nested cause', () => new TypeError('fetch failed', { cause: { code: 'UND_ERR_SOCKET', cause: { code: 'ECONNRESET' } } })],
    // A gateway function that wraps what it caught in an error of its own (an SDK's, an app's):
    // the wrapped failure still says the request may have been processed.
    ['a wrapped TimeoutError', () => new Error('charge failed', { cause: new DOMException('timed out', 'TimeoutError') })],
    ['a wrapped browser fetch error', () => new Error('charge failed', { cause: new TypeError('Failed to fetch') })],
    [
      'a wrapped Workers fetch error, two levels down',
      () => new Error('payment', { cause: new Error('gateway', { cause: new Error('Network connection lost.') }) }),
    ],
    ['a wrapped OutcomeUnknownError', () => new Error('charge failed', { cause: new OutcomeUnknownError('inner', 0) })],
    ['a wrapped 503', () => new Error('charge failed', { cause: Object.assign(new Error('503'), { status: 503 }) })],
  ];
  for (const [name, make] of parked) {
    test(`${name} → unknown`, async () => {
      const store = new IdempotencyStore();
      await assert.rejects(store.run('k', async () => Promise.reject(make())));
      assert.equal(store.peek('k')?.status, 'unknown');
    });
  }

  const freed = [
    ['400', () => Object.assign(new Error('400'), { status: 400 })],
    ['402 declined', () => declined()],
    ['a plain Error', () => new Error('bug')],
    ['CircuitOpenError (nothing was sent)', () => new CircuitOpenError(1000)],
    [
      'a wrapped refused connection (nothing was sent)',
      () => new Error('charge failed', { cause: new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }) }),
    ],
    ['a wrapped 402 decline', () => new Error('charge failed', { cause: declined() })],
    ['an error whose cause is a plain Error', () => new Error('bug', { cause: new Error('deeper bug') })],
  ];
  for (const [name, make] of freed) {
    test(`${name} → freed, not unknown`, async () => {
      const store = new IdempotencyStore();
      await assert.rejects(store.run('k', async () => Promise.reject(make())));
      assert.equal(store.peek('k'), undefined);
      assert.deepEqual(store.unknownKeys(), []);
    });
  }

  test('a synchronous throw from fn is handled like a rejection', async () => {
    const store = new IdempotencyStore();
    const p = store.run('k', () => {
      throw timeout();
    });
    assert.ok(p instanceof Promise);
    await assert.rejects(p, (e) => e.code === 'OUTCOME_UNKNOWN' && e.cause.code === 'ETIMEDOUT');
    assert.equal(store.peek('k').status, 'unknown');
  });

  test('the isTransient option can only make the store more careful; a throwing isTransient is treated as unknown (the safe side)', async () => {
    const store = new IdempotencyStore({ isTransient: (e) => e.message === 'maybe' });
    await assert.rejects(
      store.run('a', async () => Promise.reject(new Error('maybe'))),
      { code: 'OUTCOME_UNKNOWN' },
    );
    await assert.rejects(
      store.run('b', async () => Promise.reject(timeout())),
      { code: 'OUTCOME_UNKNOWN' },
    );
    await assert.rejects(
      store.run('c', async () => Promise.reject(new Error('declined'))),
      { message: 'declined' },
    );
    assert.equal(store.peek('a').status, 'unknown', 'the option parks an error of its own shape');
    assert.equal(store.peek('b').status, 'unknown', 'a timeout may have been processed, whatever the option says');
    assert.equal(store.peek('c'), undefined, 'what neither the shape nor the option calls transient frees the key');
    const throwing = new IdempotencyStore({
      isTransient: () => {
        throw new Error('classifier bug');
      },
    });
    await assert.rejects(
      throwing.run('c', async () => Promise.reject(new Error('x'))),
      (e) => e.code === 'OUTCOME_UNKNOWN' && e.cause.message === 'x',
    );
    assert.equal(throwing.peek('c').status, 'unknown');
  });
});

describe('a failure that cannot be turned into text', () => {
  // A null-prototype object and a throwing toString: String(error) throws. The record must still be
  // completed (it was left in flight for good: every later run of the key was DUPLICATE_IN_FLIGHT).
  const hostile = [
    ['null prototype', () => Object.create(null)],
    [
      'throwing toString',
      () => ({
        toString() {
          throw new Error('no');
        },
      }),
    ],
    ['transient, null prototype', () => Object.assign(Object.create(null), { code: 'ETIMEDOUT' })],
  ];
  for (const [name, make] of hostile) {
    test(`${name}: the caller gets that very value and the key leaves "in flight"`, async () => {
      for (const store of [new IdempotencyStore(), createSharedIdempotencyStore()]) {
        const thrown = make();
        // Freed: that very value; parked: an OutcomeUnknownError whose cause is that very value.
        await assert.rejects(
          store.run('k', async () => Promise.reject(thrown)),
          (e) => e === thrown || (e.code === 'OUTCOME_UNKNOWN' && e.cause === thrown),
        );
        const status = (await store.peek('k'))?.status;
        assert.notEqual(status, 'in-flight', name);
        assert.equal(status, name.startsWith('transient') ? 'unknown' : undefined, name);
      }
    });
  }
});

describe('fingerprints', () => {
  test('a different fingerprint for a known key rejects with IdempotencyKeyReuseError; the same one replays', async () => {
    const store = new IdempotencyStore();
    const charge = charger();
    await store.run('order-1', charge, { fingerprint: '4999 usd' });
    const e = await store.run('order-1', charge, { fingerprint: '5999 usd' }).then(
      () => assert.fail('must reject'),
      (x) => x,
    );
    assert.ok(e instanceof IdempotencyKeyReuseError);
    assert.equal(e.name, 'IdempotencyKeyReuseError');
    assert.equal(e.code, 'KEY_REUSED');
    assert.equal(e.key, 'order-1');
    assert.equal(charge.calls, 1);
    assert.deepEqual(await store.run('order-1', charge, { fingerprint: '4999 usd' }), { reference: 'ch_1', amountCents: 4999 });
    assert.equal(charge.calls, 1);
  });

  test('a mismatch is reported whatever the state: in flight or unknown', async () => {
    const store = new IdempotencyStore();
    let finish;
    const pending = store.run('a', () => new Promise((r) => (finish = r)), { fingerprint: 'x' });
    await assert.rejects(
      store.run('a', async () => 1, { fingerprint: 'y' }),
      IdempotencyKeyReuseError,
    );
    await assert.rejects(
      store.run('a', async () => 1, { fingerprint: 'x' }),
      DuplicateRequestError,
    );
    finish(1);
    await pending;
    await assert.rejects(store.run('b', async () => Promise.reject(timeout()), { fingerprint: 'x' }));
    await assert.rejects(
      store.run('b', async () => 1, { fingerprint: 'y' }),
      IdempotencyKeyReuseError,
    );
    await assert.rejects(
      store.run('b', async () => 1, { fingerprint: 'x' }),
      OutcomeUnknownError,
    );
  });

  test('a freed key takes a new fingerprint', async () => {
    const store = new IdempotencyStore();
    await assert.rejects(store.run('a', async () => Promise.reject(declined()), { fingerprint: 'x' }));
    assert.equal(await store.run('a', async () => 'y', { fingerprint: 'y' }), 'y');
  });

  test('fingerprints of any length and script bind their key, through memory growth in between', async () => {
    const store = new IdempotencyStore();
    const charge = charger();
    // Beyond ASCII, and long: a text far larger than any buffer sized for the last one.
    const texts = ['Zoë · 東京 · 😀', 'x'.repeat(100_000), `${'é'.repeat(50_000)}!`, ''];
    for (const [i, fingerprint] of texts.entries()) await store.run(`k-${i}`, charge, { fingerprint });
    assert.equal(charge.calls, texts.length);
    // Thousands of records later (the wasm memory grows under them), each key still knows its text.
    for (let i = 0; i < 20_000; i++) await store.run(`fill-${i}`, async () => i, { fingerprint: `{"n":${i}}` });
    for (const [i, fingerprint] of texts.entries()) {
      assert.deepEqual(await store.run(`k-${i}`, charge, { fingerprint }), { reference: 'ch_1', amountCents: 4999 }, `k-${i} replays`);
      const other = fingerprint.length === 0 ? 'x' : `${fingerprint.slice(0, -1)}?`;
      await assert.rejects(store.run(`k-${i}`, charge, { fingerprint: other }), IdempotencyKeyReuseError, `k-${i} refuses another text`);
    }
    assert.equal(charge.calls, texts.length);
    assert.equal(await store.run('fill-19999', async () => -1, { fingerprint: '{"n":19999}' }), 19999);
  });

  test('a key and its fingerprint text are told apart where they meet', async () => {
    // The key and the text cross into the core as one UTF-8 run: the record must split it at the
    // key's end, whatever the text begins with (non-ASCII included).
    const store = new IdempotencyStore();
    const charge = charger();
    await store.run('order-ab', charge, { fingerprint: 'c' });
    await store.run('order-a', charge, { fingerprint: 'bc' });
    // The core applies the key rule to the key's first key.length bytes: whatever character
    // leaves ASCII, and whatever text follows, those bytes fail it and nothing is stored.
    const before = store.size;
    for (const [key, fingerprint] of [
      ['order-é', 'éé'],
      ['é', 'a'],
      ['aé', 'b'],
      ['order-\uD800', 'x'],
      ['\uDC00order', 'x'],
      ['order-😀', ''],
      ['order\n', 'a'],
      ['order ', 'a'],
    ]) {
      await assert.rejects(
        store.run(key, charge, fingerprint === '' ? undefined : { fingerprint }),
        (e) => e instanceof RangeError && e.code === 'INVALID_KEY' && e.key === key,
        `${JSON.stringify(key)} is refused by the key rule`,
      );
    }
    assert.equal(store.size, before, 'a refused key leaves no record');
    await store.run('order-x', charge, { fingerprint: 'é😀' });
    assert.equal(charge.calls, 3, 'three valid keys, three runs');
    assert.deepEqual(await store.run('order-ab', charge, { fingerprint: 'c' }), { reference: 'ch_1', amountCents: 4999 });
    assert.deepEqual(await store.run('order-x', charge, { fingerprint: 'é😀' }), { reference: 'ch_1', amountCents: 4999 });
    await assert.rejects(store.run('order-ab', charge, { fingerprint: 'bc' }), IdempotencyKeyReuseError);
    await assert.rejects(store.run('order-a', charge, { fingerprint: 'c' }), IdempotencyKeyReuseError);
    await assert.rejects(store.run('order-x', charge, { fingerprint: 'é' }), IdempotencyKeyReuseError);
    assert.equal(charge.calls, 3);
  });

  test('a non-string fingerprint is a TypeError', async () => {
    const store = new IdempotencyStore();
    await assert.rejects(
      store.run('a', async () => 1, { fingerprint: 42 }),
      (e) => e instanceof TypeError && e.code === 'INVALID_OPTION' && /fingerprint/.test(e.message) && /42/.test(e.message),
    );
    assert.equal(store.peek('a'), undefined);
  });
});

describe('TTL', () => {
  test('a done key replays for ttlMs, then runs again', async () => {
    const clock = manualClock();
    const store = new IdempotencyStore({ ttlMs: 1000, clock });
    let n = 0;
    const charge = async () => `result ${++n}`;
    assert.equal(await store.run('k', charge), 'result 1');
    clock.advance(999);
    assert.equal(await store.run('k', charge), 'result 1');
    assert.equal(store.peek('k').status, 'done');
    clock.advance(1);
    assert.equal(store.peek('k'), undefined, 'expired');
    assert.equal(await store.run('k', charge), 'result 2');
    assert.equal(store.peek('k').result, 'result 2');
  });

  test('the TTL counts from completion, not from the start', async () => {
    const clock = manualClock();
    const store = new IdempotencyStore({ ttlMs: 1000, clock });
    let finish;
    const p = store.run('k', () => new Promise((r) => (finish = r)));
    clock.advance(5000);
    finish('late');
    await p;
    clock.advance(999);
    assert.equal(store.peek('k')?.result, 'late');
  });

  test('expired records are swept and their slots reused without mixing results', async () => {
    const clock = manualClock();
    const store = new IdempotencyStore({ ttlMs: 1000, clock });
    for (const k of ['a', 'b', 'c']) await store.run(k, async () => `r-${k}`);
    assert.equal(store.size, 3);
    clock.advance(2000);
    assert.equal(await store.run('d', async () => 'r-d'), 'r-d');
    assert.equal(store.size, 1, 'a, b, c were swept');
    assert.equal(await store.run('e', async () => 'r-e'), 'r-e');
    assert.equal(await store.run('d', async () => 'WRONG'), 'r-d');
    assert.equal(await store.run('e', async () => 'WRONG'), 'r-e');
    assert.equal(await store.run('a', async () => 'r-a2'), 'r-a2');
    assert.deepEqual(
      ['a', 'd', 'e'].map((k) => store.peek(k).result),
      ['r-a2', 'r-d', 'r-e'],
    );
  });

  test('unknown keys never expire', async () => {
    const clock = manualClock();
    const store = new IdempotencyStore({ ttlMs: 1000, clock });
    await assert.rejects(store.run('k', async () => Promise.reject(timeout())));
    clock.advance(1e9);
    await store.run('other', async () => 1); // triggers a sweep
    assert.equal(store.peek('k').status, 'unknown');
    await assert.rejects(
      store.run('k', async () => 1),
      OutcomeUnknownError,
    );
  });

  test('the default TTL is 24 h', async () => {
    const clock = manualClock();
    const store = new IdempotencyStore({ clock });
    await store.run('k', async () => 'v');
    clock.advance(86_400_000 - 1);
    assert.equal(store.peek('k')?.result, 'v');
    clock.advance(1);
    assert.equal(store.peek('k'), undefined);
  });
});

describe('reconciliation: resolve() and unknownKeys()', () => {
  async function parkedStore(clock, ...keys) {
    const store = new IdempotencyStore({ clock });
    for (const k of keys) await assert.rejects(store.run(k, async () => Promise.reject(timeout())));
    return store;
  }

  test("resolve(key, { status: 'done', result }) makes the key replay that result", async () => {
    const clock = manualClock();
    const store = await parkedStore(clock, 'k');
    store.resolve('k', { status: 'done', result: { reference: 'ch_found_in_settlement' } });
    assert.deepEqual(store.unknownKeys(), []);
    let calls = 0;
    assert.deepEqual(
      await store.run('k', async () => {
        calls++;
      }),
      { reference: 'ch_found_in_settlement' },
    );
    assert.equal(calls, 0);
  });

  test("resolve(key, { status: 'failed' }) frees the key", async () => {
    const clock = manualClock();
    const store = await parkedStore(clock, 'k');
    store.resolve('k', { status: 'failed' });
    assert.equal(store.peek('k'), undefined);
    assert.equal(await store.run('k', async () => 'charged now'), 'charged now');
  });

  test('unknownKeys() lists unknown keys oldest first (by start, not by failure)', async () => {
    const clock = manualClock();
    const store = new IdempotencyStore({ clock });
    const fails = {};
    const start = (k) => store.run(k, () => new Promise((_, reject) => (fails[k] = () => reject(timeout())))).catch(() => {});
    const pa = start('early');
    clock.advance(10);
    const pb = start('late');
    clock.advance(10);
    const pc = start('middle-done');
    fails.late();
    await pb;
    fails.early();
    await pa;
    fails['middle-done']();
    await pc;
    assert.deepEqual(store.unknownKeys(), ['early', 'late', 'middle-done']);
    store.resolve('late', { status: 'failed' });
    assert.deepEqual(store.unknownKeys(), ['early', 'middle-done']);
  });

  test('resolve() refuses keys that are absent, done or in flight, and bad outcomes', async () => {
    const clock = manualClock();
    const store = await parkedStore(clock, 'u');
    await store.run('d', async () => 1);
    store.run('f', () => new Promise(() => {}));
    const check = (key, code) =>
      assert.throws(
        () => store.resolve(key, { status: 'failed' }),
        (e) => {
          assert.ok(e instanceof IdempotencyStateError);
          assert.equal(e.name, 'IdempotencyStateError');
          assert.equal(e.code, code);
          assert.equal(e.key, key);
          return true;
        },
      );
    check('nope', 'KEY_NOT_FOUND');
    check('d', 'KEY_WRONG_STATE');
    check('f', 'KEY_WRONG_STATE');
    assert.throws(
      () => store.resolve('u', { status: 'maybe' }),
      (e) => e instanceof TypeError && e.code === 'INVALID_OPTION',
    );
    assert.throws(
      () => store.resolve('u', null),
      (e) => e instanceof TypeError && e.code === 'INVALID_OPTION',
    );
    assert.throws(
      () => store.resolve('', { status: 'failed' }),
      (e) => e instanceof RangeError && e.code === 'INVALID_KEY',
    );
    assert.equal(store.peek('u').status, 'unknown', 'nothing changed');
  });
});

describe('keys', () => {
  test('keys are 1 to 255 printable ASCII characters', async () => {
    const store = new IdempotencyStore();
    const ok = ['a', 'x'.repeat(255), '! ~', newIdempotencyKey()];
    for (const k of ok) assert.equal(await store.run(k, async () => k), k);
    const bad = ['', 'x'.repeat(256), 'ключ', 'tab\there', 'nl\n', 'café', 'k ', ' k', ' '];
    for (const k of bad) {
      await assert.rejects(
        store.run(k, async () => assert.fail('must not run')),
        (e) => {
          assert.ok(e instanceof RangeError, `${JSON.stringify(k)}: ${e}`);
          assert.equal(e.code, 'INVALID_KEY');
          assert.ok(isSteadfastError(e));
          return true;
        },
      );
    }
    for (const k of [undefined, 42, null, { toString: () => 'k' }]) {
      await assert.rejects(
        async () => store.run(k, async () => 1),
        (e) => e instanceof TypeError && e.code === 'INVALID_KEY',
      );
      assert.throws(() => store.peek(k), TypeError);
    }
  });

  test('newIdempotencyKey() is a lower-case UUID v4, different every time', () => {
    const re = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const keys = new Set();
    for (let i = 0; i < 2000; i++) {
      const k = newIdempotencyKey();
      assert.match(k, re);
      keys.add(k);
    }
    assert.equal(keys.size, 2000);
  });

  test('run(key, fn) with a non-function fn rejects with a TypeError and records nothing', async () => {
    const store = new IdempotencyStore();
    await assert.rejects(store.run('k', 'not a fn'), (e) => e instanceof TypeError && e.code === 'INVALID_OPTION');
    assert.equal(store.peek('k'), undefined);
    assert.equal(store.size, 0);
  });
});

test('a store that holds a few records costs a few hundred bytes of wasm memory, not a whole slot chunk', async () => {
  // A process that makes a store per request or per test keeps each one's wasm memory until the
  // garbage collector runs, and it does not see wasm memory: 2,000 small stores, all kept alive
  // here, must not add up to 40 KiB each (what one slot chunk of records and key ids took).
  const core = await import(new URL('./steadfast_core.js', import.meta.resolve('steadfast')).href);
  core.initSync();
  const memory = core.wasmMemory();
  const stores = [];
  const warm = new IdempotencyStore();
  await warm.run('k', async () => 1);
  const before = memory.buffer.byteLength;
  for (let i = 0; i < 2_000; i++) {
    const s = new IdempotencyStore();
    for (let k = 0; k < 3; k++) await s.run(`order-${i}-${k}`, async () => ({ reference: `ch_${k}` }));
    stores.push(s);
  }
  const perStore = (memory.buffer.byteLength - before) / stores.length;
  assert.ok(perStore <= 2_048, `each small store took ${Math.round(perStore)} B of wasm memory`);
  // Each still answers for its own records: a replay, and the size it holds.
  assert.deepEqual(await stores[1_234].run('order-1234-2', async () => assert.fail('replayed, not run')), { reference: 'ch_2' });
  assert.equal(stores[1_999].size, 3);
});
