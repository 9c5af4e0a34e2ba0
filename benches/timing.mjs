// Cases 1–4: ns per call, steadfast next to its anchors, in ONE process, interleaved.
//
// Method: every variant gets its own loop function (compiled separately via `new Function`, so V8's
// type feedback of one library never pollutes another's call site). A repetition runs every variant
// of a case once, for `batch` sequential awaited calls, in a rotated order; the figure is the median
// of `reps` repetitions. `overhead` = variant − the case's bare baseline (`await fn()`, measured in
// the same interleaving), and `ratio` = steadfast overhead ÷ anchor overhead.
import {
  CircuitBreaker,
  withRetry,
  chargeCustomer,
  IdempotencyStore,
  CircuitOpenError,
  timeout,
  bulkhead,
  fallback,
  wrap,
  retry,
  pipeline,
  resilientFetch,
  createCheckoutClient,
  chargeFingerprint,
} from 'steadfast';
import * as cockatiel from 'cockatiel';
// The raw wasm-bindgen glue of the installed package (by file path: the package does not export it),
// only to price one synchronous wasm call for case 5f.
import { BreakerCore } from './node_modules/steadfast/steadfast_core.js';
import Opossum from 'opossum';
import pRetry from 'p-retry';
import { RATE_BREAKER, RETRY_POLICY, checkoutSizedCharge, median, spread } from './common.mjs';

// ky 2 (a fetch wrapper with retries) is an optional anchor for case 8: its row appears when `ky`
// resolves from benches/ (it is not a dev dependency).
const ky = await import('ky').then(
  (m) => m.default,
  () => undefined,
);

const RESULT = Object.freeze({ reference: 'ch_1', amountCents: 1200 });
const ok = () => Promise.resolve(RESULT);
const fail = () => Promise.reject(new Error('boom'));

function loopOf(op, catching) {
  const body = catching ? 'for (let i = 0; i < n; i++) { try { await op(i); } catch {} }' : 'for (let i = 0; i < n; i++) await op(i);';

  return new Function('op', `return async function loop(n) { ${body} }`)(op);
}

async function time(loop, n) {
  const t0 = process.hrtime.bigint();
  await loop(n);
  return Number(process.hrtime.bigint() - t0) / n;
}

/**
 * Run one case: `variants` = [{ name, lib, op, setup?, catching? }], the first is the baseline.
 * Returns [{ ...variant, ns, spread }].
 */
export async function runCase(variants, { batch, reps, warmup }) {
  const vs = variants.map((v) => ({ ...v, loop: loopOf(v.op, v.catching), samples: [] }));
  for (const v of vs) {
    for (let w = 0; w < warmup; w++) {
      v.setup?.(batch);
      await v.loop(batch);
    }
  }
  for (let r = 0; r < reps; r++) {
    for (let k = 0; k < vs.length; k++) {
      const v = vs[(k + r) % vs.length];
      v.setup?.(batch);
      // A macrotask turn between batches lets FinalizationRegistry callbacks run (wasm-bindgen frees
      // dropped cores there; a pure microtask loop would starve them), then a full GC.
      await new Promise((resolve) => setTimeout(resolve, 0));
      globalThis.gc?.();
      v.samples.push(await time(v.loop, batch));
    }
  }
  return vs.map((v) => ({ name: v.name, lib: v.lib, vs: v.vs, target: v.target, ns: median(v.samples), spread: spread(v.samples) }));
}

const retryPolicy = RETRY_POLICY;
const cockatielRetry = () => cockatiel.retry(cockatiel.handleAll, { maxAttempts: 3, backoff: new cockatiel.ExponentialBackoff() });
const rateOptions = RATE_BREAKER;
const cockatielSampling = () =>
  cockatiel.circuitBreaker(cockatiel.handleAll, {
    halfOpenAfter: 10_000,
    breaker: new cockatiel.SamplingBreaker({ threshold: 0.5, duration: 10_000 }),
  });
const cockatielConsecutive = (n) => cockatiel.circuitBreaker(cockatiel.handleAll, { halfOpenAfter: 10_000, breaker: new cockatiel.ConsecutiveBreaker(n) });
// opossum's default `timeout: 10000` arms a timer per call; steadfast's execute has no timeout, so
// the like-for-like row disables it. The default-config row is printed too.
const opossum = (fn, extra) => new Opossum(fn, { errorThresholdPercentage: 50, resetTimeout: 10_000, timeout: false, ...extra });

export const opened = [];

// Cases 8–9: the HTTP wing against a stub fetch that answers 200 at once (a new Response per call,
// as a real fetch gives): what resilientFetch and the checkout client add per request.
const HTTP_URL = 'http://127.0.0.1:9/v1/charges';
const CHARGE_BODY = '{"reference":"ch_1"}';
const stubFetch = () => Promise.resolve(new Response(CHARGE_BODY, { status: 200, headers: { 'content-type': 'application/json' } }));
/** The plain wrapper an app writes by hand: up to 3 attempts on a 5xx or a network error, nothing else. */
async function plainFetch(url, init) {
  for (let attempt = 1; ; attempt++) {
    try {
      const r = await stubFetch(url, init);
      if (r.status < 500 || attempt === 3) return r;
    } catch (e) {
      if (attempt === 3) throw e;
    }
  }
}

/** The cases: { id, title, target?, variants } with variants[0] the baseline. */
export function cases() {
  const sfBreaker = new CircuitBreaker(rateOptions);
  const sfConsecutive = new CircuitBreaker({ failureThreshold: 5, openDurationMs: 10_000 });
  const ckRetry = cockatielRetry();
  const ckSampling = cockatielSampling();
  const ckConsecutive = cockatielConsecutive(5);
  const opNoTimeout = opossum(ok);
  const opDefault = new Opossum(ok, { errorThresholdPercentage: 50, resetTimeout: 10_000 });
  opened.push(opNoTimeout, opDefault);

  // Case 3: the pipeline. chargeCustomer = store.run(key, () => breaker.execute(() => withRetry(...))).
  const gateway = (c) => Promise.resolve({ reference: 'ch_1', amountCents: c.amountCents });
  const pipeBreaker = new CircuitBreaker(rateOptions);
  const deps = { store: new IdempotencyStore(), breaker: pipeBreaker, gateway, policy: retryPolicy };
  let keys = [];
  let amountSeq = 0; // every amount of the "new amount" row is unique, across batches too
  const freshKeys = (n) => {
    // A new store per batch (records live 24 h by default, so a reused store would grow across
    // batches) and pre-made keys: key creation is the caller's, not the pipeline's, cost.
    deps.store = new IdempotencyStore();
    if (keys.length !== n) keys = Array.from({ length: n }, (_, i) => `order-${i.toString(36)}-charge`);
  };
  const replayDeps = { store: new IdempotencyStore(), breaker: new CircuitBreaker(rateOptions), gateway, policy: retryPolicy };
  const ckWrap = cockatiel.wrap(cockatielRetry(), cockatielSampling());
  const sfWrapBreaker = new CircuitBreaker(rateOptions);
  // Cases 3 and 3c: the bare gateway, and cockatiel's like-for-like of the pipeline.
  const gatewayBaseline = {
    name: 'baseline: await gateway(charge)',
    lib: 'baseline',
    op: () => gateway({ idempotencyKey: 'k', amountCents: 1200, currency: 'usd' }),
  };
  const cockatielWrap = {
    name: 'cockatiel wrap(retry, SamplingBreaker)',
    lib: 'cockatiel',
    op: () => {
      const c = { idempotencyKey: 'k', amountCents: 1200, currency: 'usd' };
      return ckWrap.execute(() => gateway(c));
    },
  };

  // Case 4: open circuits (tripped by real failures; cooldowns far longer than the run).
  const sfOpen = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 1e9 });
  const ckOpen = cockatielConsecutive(1);
  const opOpen = opossum(ok, { resetTimeout: 1e9 });
  opOpen.open();
  opened.push(opOpen);
  const OPEN_ERR = new Error('baseline');

  // Case 5 (issue 16): the composable policies, each next to cockatiel's equivalent. No targets: the
  // issue asks for the comparison, not a bound.
  const sfTimeout = timeout(10_000);
  const ckTimeout = cockatiel.timeout(10_000, cockatiel.TimeoutStrategy.Aggressive);
  const sfBulkhead = bulkhead(10, 10);
  const ckBulkhead = cockatiel.bulkhead(10, 10);
  const sfFallback = fallback('cached');
  const ckFallback = cockatiel.fallback(cockatiel.handleAll, 'cached');
  const sfOnResult = { ...retryPolicy, retryOnResult: (r) => r === 'busy' };
  const ckOnResult = cockatiel.retry(
    cockatiel.handleWhenResult((r) => r === 'busy'),
    { maxAttempts: 3, backoff: new cockatiel.ExponentialBackoff() },
  );
  const sfWrap = wrap(new CircuitBreaker(rateOptions), retry(retryPolicy), timeout(10_000));
  const sfPipeline = pipeline({ bulkhead: bulkhead(10, 10), breaker: new CircuitBreaker(rateOptions), retry: retryPolicy, timeout: 10_000 });
  const ckWrap3 = cockatiel.wrap(cockatielSampling(), cockatielRetry(), cockatiel.timeout(10_000, cockatiel.TimeoutStrategy.Aggressive));
  const ckWrap4 = cockatiel.wrap(
    cockatiel.bulkhead(10, 10),
    cockatielSampling(),
    cockatielRetry(),
    cockatiel.timeout(10_000, cockatiel.TimeoutStrategy.Aggressive),
  );

  // Case 5f: would a bulkhead's admission decision be worth a wasm call? One number-in/number-out
  // call into the core, against the two integer comparisons the JS bulkhead makes.
  const rawCore = BreakerCore.consecutive(5, 10_000, 1);
  const admission = { running: 0, waiting: 0 };

  // Cases 8–9: one options object (one plan) for every request, as an app holds it.
  const rfDefaults = { fetch: stubFetch };
  const rfBare = { fetch: stubFetch, breaker: false, budget: false };
  const rfKeyed = { fetch: stubFetch, idempotencyKey: 'auto' };
  const POST = Object.freeze({ method: 'POST', body: '{"amountCents":1200,"currency":"usd"}' });
  const kyStub = ky?.create({ fetch: stubFetch, retry: 2, timeout: false });
  const kyTimeout = ky?.create({ fetch: stubFetch, retry: 2 });
  const CHARGE = Object.freeze({ amountCents: 1200, currency: 'usd', cart: 'cart_8f3e2a9b' });
  let checkout;
  // A new client (and store) per batch: a fresh key per charge, and records live 24 h by default.
  const freshClient = () => {
    checkout = createCheckoutClient({ endpoint: HTTP_URL, fetch: stubFetch, store: new IdempotencyStore({ maxRecords: 1_000_000 }) });
  };
  freshClient();

  return [
    {
      id: '1',
      title: 'retry, success path',
      target: 0.5,
      variants: [
        { name: 'baseline: await fn()', lib: 'baseline', op: ok },
        { name: 'steadfast withRetry(fn, {maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 10_000})', lib: 'steadfast', op: () => withRetry(ok, retryPolicy) },
        { name: 'cockatiel retry(handleAll, {maxAttempts: 3, backoff}).execute', lib: 'cockatiel', op: () => ckRetry.execute(ok) },
        { name: 'p-retry pRetry(fn, {retries: 2})', lib: 'p-retry', op: () => pRetry(ok, { retries: 2 }) },
      ],
    },
    {
      id: '2',
      title: 'circuit breaker, success path',
      target: 0.5,
      variants: [
        { name: 'baseline: await fn()', lib: 'baseline', op: ok },
        {
          name: 'steadfast execute (rate window 100)',
          lib: 'steadfast',
          op: () => sfBreaker.execute(ok),
          vs: ['cockatiel SamplingBreaker', 'opossum fire() (timeout: false)', 'opossum fire() (default timeout)'],
        },
        {
          name: 'steadfast execute (consecutive 5)',
          lib: 'steadfast',
          op: () => sfConsecutive.execute(ok),
          vs: ['cockatiel ConsecutiveBreaker'],
        },
        { name: 'cockatiel SamplingBreaker', lib: 'cockatiel', op: () => ckSampling.execute(ok) },
        { name: 'cockatiel ConsecutiveBreaker', lib: 'cockatiel', op: () => ckConsecutive.execute(ok) },
        { name: 'opossum fire() (timeout: false)', lib: 'opossum', op: () => opNoTimeout.fire() },
        { name: 'opossum fire() (default timeout)', lib: 'opossum', op: () => opDefault.fire() },
      ],
    },
    {
      id: '3',
      title: 'pipeline, success path',
      target: 0.5,
      variants: [
        gatewayBaseline,
        {
          name: 'steadfast chargeCustomer (fresh key)',
          lib: 'steadfast',
          target: 1.0,
          setup: freshKeys,
          op: (i) => chargeCustomer({ idempotencyKey: keys[i], amountCents: 1200, currency: 'usd' }, deps),
        },
        {
          // Real orders differ: a new amount per call, so the request fingerprint (canonical text +
          // SHA-256/128 in the core) is never served from the store's cache of recent digests.
          name: 'steadfast chargeCustomer (fresh key, new amount)',
          lib: 'steadfast',
          target: 1.0,
          setup: freshKeys,
          op: (i) => chargeCustomer({ idempotencyKey: keys[i], amountCents: 1200 + ++amountSeq, currency: 'usd' }, deps),
        },
        {
          // A checkout-sized charge: customer, description and metadata (~200 bytes of canonical
          // text), a new amount per call. The fingerprint's cost grows with the text.
          name: 'steadfast chargeCustomer (fresh key, checkout-sized charge)',
          lib: 'steadfast',
          target: 1.0,
          setup: freshKeys,
          op: (i) => chargeCustomer(checkoutSizedCharge(keys[i], 1200 + ++amountSeq), deps),
        },
        {
          name: 'steadfast chargeCustomer (same key: replay)',
          lib: 'steadfast',
          op: () => chargeCustomer({ idempotencyKey: 'order-1', amountCents: 1200, currency: 'usd' }, replayDeps),
        },
        {
          name: 'steadfast execute(() => withRetry(...)) (no store)',
          lib: 'steadfast',
          op: () => {
            const c = { idempotencyKey: 'k', amountCents: 1200, currency: 'usd' };
            return sfWrapBreaker.execute(() => withRetry(() => gateway(c), retryPolicy));
          },
        },
        cockatielWrap,
      ],
    },
    {
      // No goal: where case 3's fresh-key charge spends its time, one layer at a time, each row a
      // new key per call into a new store per batch (as case 3), against the same anchor.
      id: '3c',
      title: 'a fresh-key charge, layer by layer',
      variants: [
        gatewayBaseline,
        {
          name: 'the canonical text alone (chargeFingerprint), then the gateway',
          lib: 'steadfast',
          op: () => {
            const c = { idempotencyKey: 'k', amountCents: 1200, currency: 'usd' };
            chargeFingerprint(c);
            return gateway(c);
          },
        },
        {
          name: 'store.run(fresh key, gateway), no fingerprint',
          lib: 'steadfast',
          setup: freshKeys,
          op: (i) => {
            const c = { idempotencyKey: keys[i], amountCents: 1200, currency: 'usd' };
            return deps.store.run(c.idempotencyKey, () => gateway(c));
          },
        },
        {
          name: 'store.run(fresh key, gateway, { fingerprint: its canonical text })',
          lib: 'steadfast',
          setup: freshKeys,
          op: (i) => {
            const c = { idempotencyKey: keys[i], amountCents: 1200, currency: 'usd' };
            return deps.store.run(c.idempotencyKey, () => gateway(c), { fingerprint: '{"amountCents":1200,"currency":"usd"}' });
          },
        },
        {
          name: 'store.run(fresh key, () => execute(() => withRetry(gateway)), { fingerprint: chargeFingerprint(charge) })',
          lib: 'steadfast',
          setup: freshKeys,
          op: (i) => {
            const c = { idempotencyKey: keys[i], amountCents: 1200, currency: 'usd' };
            return deps.store.run(c.idempotencyKey, () => pipeBreaker.execute(() => withRetry(() => gateway(c), retryPolicy)), {
              fingerprint: chargeFingerprint(c),
            });
          },
        },
        {
          name: 'chargeCustomer (fresh key): the same, with the charge checked',
          lib: 'steadfast',
          setup: freshKeys,
          op: (i) => chargeCustomer({ idempotencyKey: keys[i], amountCents: 1200, currency: 'usd' }, deps),
        },
        cockatielWrap,
      ],
    },
    {
      id: '4',
      title: 'open breaker, rejection',
      target: 0.2,
      setup: async () => {
        await sfOpen.execute(fail).catch(() => {});
        await ckOpen.execute(fail).catch(() => {});
        const e1 = await sfOpen.execute(ok).catch((e) => e);
        const e2 = await ckOpen.execute(ok).catch((e) => e);
        const e3 = await opOpen.fire().catch((e) => e);
        if (!(e1 instanceof CircuitOpenError)) throw new Error('bench: steadfast did not reject with CircuitOpenError');
        if (!(e2 instanceof cockatiel.BrokenCircuitError)) throw new Error('bench: cockatiel did not reject with BrokenCircuitError');
        if (e3?.code !== 'EOPENBREAKER') throw new Error('bench: opossum did not reject as open');
      },
      variants: [
        { name: 'baseline: await Promise.reject(err)', lib: 'baseline', catching: true, op: () => Promise.reject(OPEN_ERR) },
        { name: 'steadfast execute → CircuitOpenError', lib: 'steadfast', catching: true, op: () => sfOpen.execute(ok) },
        { name: 'cockatiel → BrokenCircuitError', lib: 'cockatiel', catching: true, op: () => ckOpen.execute(ok) },
        { name: 'opossum fire() → open error', lib: 'opossum', catching: true, op: () => opOpen.fire() },
      ],
    },
    {
      id: '5a',
      title: 'timeout(10 s), success path',
      variants: [
        { name: 'baseline: await fn()', lib: 'baseline', op: ok },
        { name: 'steadfast timeout(10_000).execute', lib: 'steadfast', op: () => sfTimeout.execute(ok) },
        { name: 'cockatiel timeout(10_000, Aggressive).execute', lib: 'cockatiel', op: () => ckTimeout.execute(ok) },
      ],
    },
    {
      id: '5b',
      title: 'bulkhead(10, 10), success path',
      variants: [
        { name: 'baseline: await fn()', lib: 'baseline', op: ok },
        { name: 'steadfast bulkhead(10, 10).execute', lib: 'steadfast', op: () => sfBulkhead.execute(ok) },
        { name: 'cockatiel bulkhead(10, 10).execute', lib: 'cockatiel', op: () => ckBulkhead.execute(ok) },
      ],
    },
    {
      id: '5c',
      title: 'fallback, failing call',
      variants: [
        { name: 'baseline: await fn().catch(() => value)', lib: 'baseline', op: () => fail().catch(() => 'cached') },
        { name: "steadfast fallback('cached').execute", lib: 'steadfast', op: () => sfFallback.execute(fail) },
        { name: "cockatiel fallback(handleAll, 'cached').execute", lib: 'cockatiel', op: () => ckFallback.execute(fail) },
      ],
    },
    {
      id: '5d',
      title: 'retry on result, success path',
      variants: [
        { name: 'baseline: await fn()', lib: 'baseline', op: ok },
        { name: 'steadfast withRetry(fn, {retryOnResult})', lib: 'steadfast', op: () => withRetry(ok, sfOnResult) },
        { name: 'cockatiel retry(handleWhenResult(...)).execute', lib: 'cockatiel', op: () => ckOnResult.execute(ok) },
      ],
    },
    {
      id: '5e',
      title: 'composed policies, success path',
      variants: [
        { name: 'baseline: await fn()', lib: 'baseline', op: ok },
        {
          name: 'steadfast wrap(breaker, retry(), timeout())',
          lib: 'steadfast',
          op: () => sfWrap.execute(ok),
          vs: ['cockatiel wrap(breaker, retry, timeout)'],
        },
        {
          name: 'steadfast pipeline({bulkhead, breaker, retry, timeout})',
          lib: 'steadfast',
          op: () => sfPipeline.execute(ok),
          vs: ['cockatiel wrap(bulkhead, breaker, retry, timeout)'],
        },
        { name: 'cockatiel wrap(breaker, retry, timeout)', lib: 'cockatiel', op: () => ckWrap3.execute(ok) },
        { name: 'cockatiel wrap(bulkhead, breaker, retry, timeout)', lib: 'cockatiel', op: () => ckWrap4.execute(ok) },
      ],
    },
    {
      id: '5f',
      title: 'bulkhead admission: JS compare vs one wasm call',
      variants: [
        { name: 'baseline: await fn()', lib: 'baseline', op: ok },
        {
          name: 'JS: running < limit || waiting < queue',
          lib: 'js',
          op: () => {
            if (admission.running < 10 || admission.waiting < 10) admission.running += 0;
            return ok();
          },
        },
        { name: 'one sync wasm call (BreakerCore.tryAcquireClosed)', lib: 'wasm', op: () => (rawCore.tryAcquireClosed(), ok()) },
      ],
    },
    {
      id: '8',
      title: 'resilientFetch, stub fetch answering 200',
      variants: [
        { name: 'baseline: await fetch(url)', lib: 'baseline', op: () => stubFetch(HTTP_URL) },
        {
          name: 'steadfast resilientFetch GET (defaults: origin breaker, budget)',
          lib: 'steadfast',
          op: () => resilientFetch(HTTP_URL, undefined, rfDefaults),
        },
        { name: 'steadfast resilientFetch GET (breaker: false, budget: false)', lib: 'steadfast', op: () => resilientFetch(HTTP_URL, undefined, rfBare) },
        { name: "steadfast resilientFetch POST (idempotencyKey: 'auto')", lib: 'steadfast', op: () => resilientFetch(HTTP_URL, POST, rfKeyed) },
        { name: 'plain wrapper: 3 attempts on 5xx', lib: 'plain', op: () => plainFetch(HTTP_URL) },
        ...(ky === undefined
          ? []
          : [
              { name: 'ky GET (retry: 2, timeout: false)', lib: 'ky', op: () => kyStub(HTTP_URL) },
              { name: 'ky GET (retry: 2, default timeout)', lib: 'ky', op: () => kyTimeout(HTTP_URL) },
            ]),
      ],
    },
    {
      id: '9',
      title: 'checkout charge(), stub fetch answering 200',
      variants: [
        {
          name: 'baseline: await fetch(POST) + await text()',
          lib: 'baseline',
          op: () => stubFetch(HTTP_URL, { method: 'POST', body: JSON.stringify(CHARGE) }).then((r) => r.text()),
        },
        { name: 'steadfast client.charge (fresh key)', lib: 'steadfast', setup: freshClient, op: () => checkout.charge(CHARGE) },
      ],
    },
  ];
}
