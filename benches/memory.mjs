// Case 5 (one child process per scenario, run with --expose-gc): JS heap and wasm linear memory after
// GC, before and after 1,000,000 sequential calls, while 100,000 calls are in flight at once, and after
// that burst settles. Prints one JSON line. Usage: node --expose-gc memory.mjs <scenario> [calls] [burst]
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { INSTALLED } from './common.mjs';

const [scenario, callsArg, burstArg] = process.argv.slice(2);
const CALLS = Number(callsArg ?? 1_000_000);
const BURST = Number(burstArg ?? 100_000);
if (typeof globalThis.gc !== 'function') throw new Error('memory.mjs needs node --expose-gc');

const RESULT = Object.freeze({ reference: 'ch_1', amountCents: 1200 });
const ok = () => Promise.resolve(RESULT);
const policy = Object.freeze({ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 10_000 });
const rate = { windowSize: 100, failureRateThreshold: 0.5, openDurationMs: 10_000 };

let wasmMemory = () => 0;

/** scenario -> () => (fn) => Promise: a factory of the call under test, `fn` being the dependency. */
const SCENARIOS = {
  async 'steadfast execute+withRetry'() {
    const { CircuitBreaker, withRetry } = await import('steadfast');
    const b = new CircuitBreaker(rate);
    return (fn) => b.execute(() => withRetry(fn, policy));
  },
  async 'steadfast chargeCustomer (replay key)'() {
    const { CircuitBreaker, IdempotencyStore, chargeCustomer } = await import('steadfast');
    const deps = { store: new IdempotencyStore(), breaker: new CircuitBreaker(rate), policy, gateway: null };
    let current = ok;
    deps.gateway = () => current();
    return (fn) => {
      current = fn;
      return chargeCustomer({ idempotencyKey: 'order-1', amountCents: 1200, currency: 'usd' }, deps);
    };
  },
  async 'steadfast chargeCustomer (fresh keys, 24 h TTL)'() {
    const { CircuitBreaker, IdempotencyStore, chargeCustomer } = await import('steadfast');
    // Warm-up + 1,000,000 calls + 100,000 in flight keep ~1.11M records: past the default maxRecords
    // (1,000,000), which would end the run in StoreFullError.
    const deps = { store: new IdempotencyStore({ maxRecords: 2_000_000 }), breaker: new CircuitBreaker(rate), policy, gateway: null };
    let current = ok;
    let i = 0;
    deps.gateway = () => current();
    return (fn) => {
      current = fn;
      return chargeCustomer({ idempotencyKey: `order-${(i++).toString(36)}`, amountCents: 1200, currency: 'usd' }, deps);
    };
  },
  async 'cockatiel wrap(retry, SamplingBreaker)'() {
    const c = await import('cockatiel');
    const p = c.wrap(
      c.retry(c.handleAll, { maxAttempts: 3, backoff: new c.ExponentialBackoff() }),
      c.circuitBreaker(c.handleAll, { halfOpenAfter: 10_000, breaker: new c.SamplingBreaker({ threshold: 0.5, duration: 10_000 }) }),
    );
    return (fn) => p.execute(fn);
  },
  async 'opossum fire() (timeout: false)'() {
    const { default: Opossum } = await import('opossum');
    let current = ok;
    const b = new Opossum(() => current(), { errorThresholdPercentage: 50, resetTimeout: 10_000, timeout: false });
    return (fn) => {
      current = fn;
      return b.fire();
    };
  },
  async 'p-retry pRetry(fn, {retries: 2})'() {
    const { default: pRetry } = await import('p-retry');
    return (fn) => pRetry(fn, { retries: 2 });
  },
};

function snapshot() {
  globalThis.gc();
  globalThis.gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, wasm: wasmMemory() };
}

const make = SCENARIOS[scenario];
if (make === undefined) throw new Error(`memory.mjs: unknown scenario ${scenario}; one of ${Object.keys(SCENARIOS).join(', ')}`);
const call = await make();
if (scenario.startsWith('steadfast')) {
  // The very module instance index.node.js initialised (same URL): initSync returns its exports.
  const core = await import(pathToFileURL(join(INSTALLED, 'steadfast_core.js')).href);
  core.initSync();
  const memory = core.wasmMemory();
  wasmMemory = () => memory.buffer.byteLength;
}
// Warm up (JIT, lazy allocations) before the baseline, so the baseline is the steady state.
for (let i = 0; i < 10_000; i++) await call(ok);
const before = snapshot();
for (let i = 0; i < CALLS; i++) await call(ok);
const after = snapshot();

let release;
const gate = new Promise((r) => (release = r));
const gated = () => gate.then(() => RESULT);
let inflight = [];
for (let i = 0; i < BURST; i++) inflight.push(call(gated));
const peak = snapshot();
release();
await Promise.allSettled(inflight);
inflight = null;
await new Promise((r) => setTimeout(r, 10));
const settled = snapshot();
console.log(JSON.stringify({ scenario, calls: CALLS, burst: BURST, before, after, peak, settled }));
process.exit(0);
