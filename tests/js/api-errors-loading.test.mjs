// Issue 16: errors that survive production (fresh, taggable, literal names) and the loading API.
import { test, describe } from 'node:test';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import {
  ready,
  init,
  withRetry,
  chargeCustomer,
  CircuitBreaker,
  IdempotencyStore,
  CircuitOpenError,
  SteadfastError,
  DuplicateRequestError,
  WasmUnavailableError,
  DEFAULT_RETRY_POLICY,
  isSteadfastError,
} from 'steadfast';

/** Run `source` as an ES module in a child Node, resolving 'steadfast' as these tests do. */
const nodeModule = (source) =>
  spawnSync(process.execPath, ['--input-type=module', '-e', source], { cwd: fileURLToPath(new URL('.', import.meta.url)), encoding: 'utf8' });

const trip = async () => {
  const b = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
  await b.execute(() => Promise.reject(new Error('down'))).catch(() => {});
  return b;
};

describe('CircuitOpenError: a fresh object per rejection', () => {
  test('two rejections are two objects; catch code may tag, rename and re-stack one', async () => {
    const b = await trip();
    const e1 = await b.execute(() => 'x').catch((e) => e);
    const e2 = await b.execute(() => 'x').catch((e) => e);
    assert.ok(e1 instanceof CircuitOpenError && e2 instanceof CircuitOpenError);
    assert.notEqual(e1, e2);
    assert.equal(Object.isFrozen(e1), false);
    e1.requestId = 'req-1';
    e1.message = `[req-1] ${e1.message}`;
    e1.name = 'TaggedError';
    Error.captureStackTrace(e1);
    assert.equal(e2.requestId, undefined, 'tags do not leak to the next rejection');
    assert.equal(e2.name, 'CircuitOpenError');
    assert.ok(!e2.message.startsWith('[req-1]'));
  });

  test('no stack frames: flow control, not a bug report', async () => {
    const b = await trip();
    const e = await b.execute(() => 'x').catch((err) => err);
    assert.equal(e.stack.split('\n').length, 1, e.stack);
    assert.match(e.stack, /^CircuitOpenError: /);
  });

  test('retryAfterMs is plain data (serialises into logs)', async () => {
    const b = await trip();
    const e = await b.execute(() => 'x').catch((err) => err);
    assert.ok(e.retryAfterMs > 59_000 && e.retryAfterMs <= 60_000);
    assert.equal(JSON.parse(JSON.stringify(e)).retryAfterMs, e.retryAfterMs);
  });
});

describe('open-breaker rejection is settled after the caller attaches its handler', () => {
  test('a rejection nobody handles is still reported as unhandled', () => {
    // In a child process: node:test fails the current test on an unhandled rejection, which is the
    // very thing this checks. Node's default is to print it and exit 1.
    const child = nodeModule(`
      const { CircuitBreaker } = await import('steadfast');
      const b = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
      await b.execute(() => Promise.reject(new Error('down'))).catch(() => {});
      b.execute(() => 'x'); // no handler, ever
    `);
    assert.equal(child.status, 1, child.stderr);
    assert.match(child.stderr, /CircuitOpenError: Circuit is open/);
  });

  test('a handler attached later still receives it; fn is never called', async () => {
    const b = await trip();
    let called = 0;
    const p = b.execute(() => called++);
    p.catch(() => {}); // keep Node quiet while we wait a turn
    await new Promise((resolve) => setImmediate(resolve));
    await assert.rejects(p, CircuitOpenError);
    assert.equal(called, 0);
  });

  test('does not depend on queueMicrotask (fake-timer libraries may replace it)', async () => {
    const b = await trip();
    const real = globalThis.queueMicrotask;
    globalThis.queueMicrotask = () => {
      throw new Error('faked queueMicrotask must not be used');
    };
    try {
      await assert.rejects(
        b.execute(() => 'x'),
        CircuitOpenError,
      );
    } finally {
      globalThis.queueMicrotask = real;
    }
  });
});

describe('names are string literals on the prototypes', () => {
  test('name does not come from the constructor (a minifier renames those)', () => {
    for (const [Class, name] of [
      [SteadfastError, 'SteadfastError'],
      [CircuitOpenError, 'CircuitOpenError'],
      [DuplicateRequestError, 'DuplicateRequestError'],
      [WasmUnavailableError, 'WasmUnavailableError'],
    ]) {
      assert.equal(Object.getOwnPropertyDescriptor(Class.prototype, 'name')?.value, name);
      assert.equal(Object.getOwnPropertyDescriptor(Class.prototype, 'name').writable, true);
    }
    // A renamed subclass (what a minifier does to the class binding) keeps the literal name.
    const Renamed = { x: class extends CircuitOpenError {} }.x;
    assert.equal(new Renamed().name, 'CircuitOpenError');
  });
});

describe('isSteadfastError(error, code)', () => {
  test('with a code, only errors with that code', async () => {
    const e = await (await trip()).execute(() => 'x').catch((err) => err);
    assert.equal(isSteadfastError(e), true);
    assert.equal(isSteadfastError(e, 'CIRCUIT_OPEN'), true);
    assert.equal(isSteadfastError(e, 'KEY_REUSED'), false);
    assert.equal(isSteadfastError(Object.assign(new Error('x'), { code: 'CIRCUIT_OPEN' }), 'CIRCUIT_OPEN'), false, 'unbranded');
    assert.equal(isSteadfastError(null, 'CIRCUIT_OPEN'), false);
  });
});

describe('default retry policy', () => {
  test('withRetry(fn) uses DEFAULT_RETRY_POLICY: 3 attempts', async () => {
    assert.deepEqual({ ...DEFAULT_RETRY_POLICY }, { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 10_000 });
    assert.ok(Object.isFrozen(DEFAULT_RETRY_POLICY));
    let calls = 0;
    const err = Object.assign(new Error('503'), { status: 503 });
    const started = Date.now();
    await assert.rejects(
      withRetry(() => {
        calls += 1;
        throw err;
      }),
      (e) => e === err,
    );
    assert.equal(calls, 3);
    assert.ok(Date.now() - started < 10_000);
  });

  test('chargeCustomer without a policy uses it too', async () => {
    const result = await chargeCustomer(
      { idempotencyKey: 'order-default-policy', amountCents: 100, currency: 'usd' },
      {
        store: new IdempotencyStore(),
        breaker: new CircuitBreaker({ failureThreshold: 3, openDurationMs: 1 }),
        gateway: async (c) => ({ reference: 'r', amountCents: c.amountCents }),
      },
    );
    assert.deepEqual(result, { reference: 'r', amountCents: 100 });
  });
});

describe('loading', () => {
  test('ready is resolved in Node (loaded synchronously at import); init() is then a no-op', async () => {
    assert.equal(await ready, undefined);
    assert.equal(await init(), undefined);
    assert.equal(await init(new Uint8Array([0, 1, 2])), undefined, 'a loaded core is kept');
    assert.equal(await new CircuitBreaker({ failureThreshold: 1, openDurationMs: 1 }).execute(() => 7), 7);
  });

  test('WasmUnavailableError names the CSP fix when a policy refused the wasm', () => {
    const csp = new WasmUnavailableError(
      new WebAssembly.CompileError(
        "WebAssembly.instantiateStreaming(): Refused to compile or instantiate WebAssembly module because 'unsafe-eval' is not an allowed source of script in the following Content Security Policy directive",
      ),
    );
    assert.equal(csp.reason, 'csp');
    assert.match(csp.message, /'wasm-unsafe-eval'/);
    const missing = new WasmUnavailableError(new TypeError('Failed to fetch'));
    assert.equal(missing.reason, 'load');
    assert.match(missing.message, /Failed to fetch/);
    assert.doesNotMatch(missing.message, /wasm-unsafe-eval/);
    assert.ok(isSteadfastError(missing, 'WASM_UNAVAILABLE'));
  });
});

describe('steadfast/sim on its own', () => {
  test('a bad simulator option is still a RangeError naming it (the main loader never ran)', () => {
    const out = nodeModule(`
      const sim = await import('steadfast/sim');
      try { sim.simulateOutage({ clients: 0 }); console.log('no error'); } catch (e) { console.log(e.name, e.code, e.message.includes('clients')); }
    `).stdout.trim();
    assert.equal(out, 'RangeError INVALID_OPTION true');
  });
});
