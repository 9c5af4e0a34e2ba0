// The fault cases, one list for every environment: Node 24 (tests/js/faults.test.mjs), a Chromium
// page and a module Web Worker (tests/browser/faults.test.mjs), and Firefox/WebKit through
// WebDriver. Nothing here imports 'steadfast' or touches a driver: the runner is handed the
// package's module and the server's origin, and every fault is driven, and every debit read,
// through the test server's HTTP control routes (server.mjs). So any engine runs it unchanged.
//
// Protocol for pages: run `runCases(steadfast, { base })` and publish
// `globalThis.__suite = { done: true, results: [{ name, ok, assertions, error? }] }`.

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const uid = () => `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
const fast = Object.freeze({ maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 });
const ORDER = Object.freeze({ amountCents: 4999, currency: 'usd' });

/** Assertions that count themselves; a case that asserts nothing fails. */
function checker() {
  const t = {
    count: 0,
    notes: [],
    ok(value, message = 'expected truthy') {
      t.count += 1;
      if (!value) throw new Error(`not ok: ${message}`);
    },
    equal(actual, expected, message = '') {
      t.count += 1;
      if (!Object.is(actual, expected)) throw new Error(`${message} expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`.trim());
    },
    deepEqual(actual, expected, message = '') {
      t.count += 1;
      const a = JSON.stringify(actual);
      const b = JSON.stringify(expected);
      if (a !== b) throw new Error(`${message} expected ${b}, got ${a}`.trim());
    },
    async rejects(promise, test, message = 'expected a rejection') {
      t.count += 1;
      let error;
      try {
        await promise;
      } catch (e) {
        error = e;
      }
      if (error === undefined) throw new Error(`${message}: it resolved`);
      if (!test(error)) throw new Error(`${message}: wrong error ${error?.name}: ${error?.message}`);
      return error;
    },
    note(text) {
      t.notes.push(text);
    },
  };
  return t;
}

/** The test server's control routes (same origin as the gateway). */
export function controls(base) {
  const call = async (path, body) => {
    const res = await fetch(
      `${base}${path}`,
      body === undefined ? { cache: 'no-store' } : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
    );
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
    return res.json();
  };
  const c = {
    force: (fault, count = 1) => call('/__control/force', { fault, count }),
    reset: () => call('/__control/reset', {}),
    release: () => call('/__control/release', {}),
    configure: (config) => call('/__control/configure', config),
    stats: () => call('/__stats'),
    ledger: (key) => call(key === undefined ? '/__ledger' : `/__ledger?key=${encodeURIComponent(key)}`),
    flakyCount: (id) => call(`/__flaky-count/${id}`),
    endlessCount: () => call('/__endless-count'),
    /** Until nothing is in flight or held at the gateway and no request arrived for `quietMs`. */
    async waitIdle(quietMs = 100, maxMs = 10_000) {
      const t0 = Date.now();
      let last = -1;
      let quietSince = Date.now();
      for (;;) {
        const s = await c.stats();
        if (s.requests !== last || s.inFlight !== 0) {
          last = s.requests;
          quietSince = Date.now();
        } else if (Date.now() - quietSince >= quietMs) return;
        if (Date.now() - t0 > maxMs) throw new Error(`gateway not idle after ${maxMs} ms: ${JSON.stringify(s)}`);
        await sleep(20);
      }
    },
    /** Poll until `predicate(await probe())` holds. */
    async until(probe, predicate, maxMs = 5_000) {
      const t0 = Date.now();
      for (;;) {
        const v = await probe();
        if (predicate(v)) return v;
        if (Date.now() - t0 > maxMs) throw new Error(`condition not met after ${maxMs} ms: ${JSON.stringify(v)}`);
        await sleep(20);
      }
    },
  };
  return c;
}

/** A reconcile() lookup against the gateway's settlement listing: a debit → done; none → failed. */
export function settlementLookup(base) {
  return async (key) => {
    const res = await fetch(`${base}/v1/settlements?idempotencyKey=${encodeURIComponent(key)}`, { cache: 'no-store' });
    if (!res.ok) throw new Error(`settlements: HTTP ${res.status}`);
    const list = await res.json();
    return list.length === 0 ? { status: 'failed' } : { status: 'done', result: { status: 'succeeded', reference: list[0].id, key } };
  };
}

const post = (key, body = ORDER) => ({ method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(body) });

/** RFC 850 form of a time (two-digit year), for the Retry-After case. */
function rfc850(ms) {
  const d = new Date(ms);
  const days = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p = (n) => String(n).padStart(2, '0');
  return `${days[d.getUTCDay()]}, ${p(d.getUTCDate())}-${months[d.getUTCMonth()]}-${p(d.getUTCFullYear() % 100)} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} GMT`;
}

/**
 * Request bodies fetch reads anew on every call, each as [name, make(), change(body)]: the form
 * kinds (a page's own), shared with tests/js/changed-charge.test.mjs, which adds the byte kinds.
 */
export const FORM_BODIES = [
  ['URLSearchParams', () => new URLSearchParams({ amount: '1000' }), (b) => b.set('amount', '100000')],
  [
    'FormData',
    () => {
      const f = new FormData();
      f.set('amount', '1000');
      return f;
    },
    (b) => b.set('amount', '100000'),
  ],
];

/**
 * The cases: [name, async (t, x) => {}] with x = { sf, base, env, c (controls), client(options) }.
 * Each starts from a reset gateway and ends with it idle.
 */
export const CASES = [
  [
    'a dropped connection is a transient network error in this engine',
    async (t, x) => {
      let error;
      try {
        await fetch(`${x.base}/__drop`, { cache: 'no-store' });
      } catch (e) {
        error = e;
      }
      t.ok(error !== undefined, 'fetch rejected');
      t.equal(error?.name, 'TypeError', 'the Fetch standard rejects with a TypeError');
      t.ok(x.sf.isFetchNetworkError(error), `isFetchNetworkError(${JSON.stringify(error?.message)})`);
      t.ok(x.sf.isTransientError(error), 'isTransientError');
      t.note(`network error message: ${JSON.stringify(error?.message)}`);
    },
  ],

  // The README's example is a GET. Firefox re-sends a GET/HEAD whose connection dropped before any
  // response byte by itself, beneath fetch (up to 10 requests in all; Chromium and WebKit never do, and
  // no engine re-sends a POST): there the caller may see fewer attempts for the same 3 requests. So the
  // GET asserts what holds everywhere, and a POST (re-sent by no engine) proves withRetry's own retries.
  [
    'withRetry around fetch (the README example) retries a dropped connection',
    async (t, x) => {
      for (const method of ['GET', 'POST']) {
        const id = uid();
        const calls = [];
        const body = await x.sf.withRetry(async ({ attempt }) => {
          calls.push(attempt);
          const res = await fetch(`${x.base}/__flaky/${id}?drop=2`, { method, cache: 'no-store', body: method === 'POST' ? '{}' : undefined });
          if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
          return res.json();
        }, fast);
        t.equal(body.n, 3, `${method}: the third request was answered`);
        t.equal((await x.c.flakyCount(id)).n, 3, `${method}: the server saw three requests`);
        if (method === 'POST') t.deepEqual(calls, [1, 2, 3], 'POST: withRetry made all three attempts');
        else {
          t.deepEqual(
            calls,
            Array.from({ length: calls.length }, (_, i) => i + 1),
            'GET: attempts counted from 1',
          );
          if (calls.length < 3)
            t.note(`GET: the engine re-sent the dropped request itself ${3 - calls.length} time(s); withRetry saw ${calls.length} attempt(s)`);
        }
      }
    },
  ],

  // As above: Firefox may absorb a GET's dropped connections itself (then resilientFetch sees none);
  // a PUT (idempotent, so resilientFetch retries it; re-sent by no engine) shows its own retries.
  [
    'resilientFetch retries a GET whose connection dropped',
    async (t, x) => {
      for (const method of ['GET', 'PUT']) {
        const id = uid();
        const retried = [];
        const init = method === 'PUT' ? { method, body: '{}' } : undefined;
        const res = await x.sf.resilientFetch(`${x.base}/__flaky/${id}?drop=2`, init, {
          breaker: false,
          budget: false,
          retry: fast,
          onRetry: (i) => retried.push(i.error),
        });
        t.equal(res.status, 200, `${method}: answered`);
        t.equal((await res.json()).n, 3, `${method}: two dropped requests, then the answer`);
        t.equal((await x.c.flakyCount(id)).n, 3, `${method}: the server saw three requests`);
        t.ok(
          retried.every((e) => x.sf.isFetchNetworkError(e)),
          `${method}: retried on the engine's network error: ${retried.map((e) => e?.message)}`,
        );
        if (method === 'PUT') t.equal(retried.length, 2, 'PUT: resilientFetch retried both dropped connections');
        else if (retried.length < 2) t.note(`GET: the engine re-sent the dropped request itself ${2 - retried.length} time(s)`);
      }
    },
  ],

  [
    'resilientFetch: a keyed POST whose connection dropped after the debit rejects OutcomeUnknownError',
    async (t, x) => {
      const key = `drop-${uid()}`;
      await x.c.force('debitThenReset');
      const e = await t.rejects(
        x.sf.resilientFetch(`${x.base}/v1/charges`, post(key), { breaker: false, budget: false, retry: { ...fast, maxAttempts: 1 } }),
        (err) => err instanceof x.sf.OutcomeUnknownError,
        'OutcomeUnknownError',
      );
      t.equal(e.key, key);
      t.equal(e.attempts, 1);
      t.ok(typeof e.lastAttemptAt === 'number' && e.settleAfterMs > 0, 'carries what reconciliation needs');
      t.ok(x.sf.isFetchNetworkError(e.cause), `cause is the engine's network error: ${e.cause?.message}`);
      t.equal((await x.c.ledger(key)).length, 1, 'the money did move');
    },
  ],

  // The whole history decides, in every engine: attempt 1 debits and its connection drops,
  // attempt 2 is answered by something in front of the gateway (a 404 from a load balancer, a 401
  // from an auth proxy). That answer proves nothing about attempt 1: the key stays parked.
  [
    'a keyed POST that debited and dropped, then answered 404/401 by the front, stays unknown (one debit)',
    async (t, x) => {
      for (const front of ['status404', 'status401']) {
        const key = `front-${front}-${uid()}`;
        await x.c.force('debitThenReset');
        await x.c.force(front);
        const e = await t.rejects(
          x.sf.resilientFetch(`${x.base}/v1/charges`, post(key), { breaker: false, budget: false, retry: fast }),
          (err) => err instanceof x.sf.OutcomeUnknownError,
          `${front}: OutcomeUnknownError, not the final Response`,
        );
        t.equal(e.cause?.status, Number(front.slice(6)), `${front}: the last answer is the cause`);
        t.equal((await x.c.ledger(key)).length, 1, `${front}: one debit`);

        const cart = `cart-${front}-${uid()}`;
        await x.c.force('debitThenReset');
        await x.c.force(front);
        const checkout = x.client({ retry: fast });
        t.equal((await checkout.charge(ORDER, { idempotencyKey: cart })).status, 'unknown', `${front}: checkout says unknown, not declined or an error`);
        t.equal((await checkout.charge(ORDER, { idempotencyKey: cart })).status, 'unknown', `${front}: a second click is refused without a request`);
        t.equal((await x.c.ledger(cart)).length, 1, `${front}: one debit`);
        await x.c.waitIdle();
      }
    },
  ],

  // An answer nothing can be read from: a fetch wrapper (a membrane, an SDK's transport) whose
  // request reached the gateway and debited, then rejects with a revoked Proxy, which every engine
  // refuses to inspect with a TypeError of its own wording. It may have been processed: unknown.
  [
    'a fetch that debits, then rejects with a revoked Proxy: unknown, one debit, a second click sends nothing',
    async (t, x) => {
      const key = `revoked-${uid()}`;
      let sent = 0;
      const revokedAfter = async (input, init) => {
        sent += 1;
        await fetch(input, init);
        const { proxy, revoke } = Proxy.revocable({}, {});
        revoke();
        throw proxy;
      };
      const checkout = x.client({ fetch: revokedAfter, retry: fast, breaker: false });
      t.deepEqual(await checkout.charge(ORDER, { idempotencyKey: key }), { status: 'unknown', key }, 'not declined, not an error');
      t.equal(sent, fast.maxAttempts, 'retried as a network error is (every attempt carries the key)');
      t.equal(checkout.store.peek(key)?.status, 'unknown', 'the key is parked');
      t.deepEqual(await checkout.charge(ORDER, { idempotencyKey: key }), { status: 'unknown', key }, 'a second click');
      t.equal(sent, fast.maxAttempts, 'the second click sent nothing');
      t.equal((await x.c.ledger(key)).length, 1, 'the gateway honoured the key: one debit');
    },
  ],

  // A 200 whose body never ends (a misrouted download, a hostile endpoint): the client reads at
  // most maxResponseBytes of it, lets the connection go, and counts that attempt as one that got
  // no answer. Without the cap the page would buffer until the attempt timeout, or until it crashed.
  [
    'checkout: a 200 whose body never ends is abandoned at maxResponseBytes: unknown, a second click sends nothing',
    async (t, x) => {
      const key = `endless-${uid()}`;
      const checkout = x.client({ endpoint: `${x.base}/__endless`, attemptTimeoutMs: 60_000, retry: fast, breaker: false, maxResponseBytes: 64 * 1024 });
      t.deepEqual(await checkout.charge(ORDER, { idempotencyKey: key }), { status: 'unknown', key }, 'a 2xx whose body was not read may have charged');
      const seen = await x.c.until(x.c.endlessCount, (s) => s.closed >= fast.maxAttempts);
      t.equal(seen.requests, fast.maxAttempts, 'retried under the key, as a cut-off body is');
      t.equal(seen.closed, fast.maxAttempts, 'every connection let go while the server was still sending');
      t.deepEqual(await checkout.charge(ORDER, { idempotencyKey: key }), { status: 'unknown', key }, 'a second click');
      t.equal((await x.c.endlessCount()).requests, fast.maxAttempts, 'the second click sent nothing');
    },
  ],

  [
    'resilientFetch: a keyed POST retried after a drop gets the replay, one debit',
    async (t, x) => {
      const key = `replay-${uid()}`;
      await x.c.force('debitThenReset');
      const res = await x.sf.resilientFetch(`${x.base}/v1/charges`, post(key), { breaker: false, budget: false, retry: fast });
      t.equal(res.status, 200);
      t.equal(res.headers.get('idempotent-replayed'), 'true');
      t.equal((await x.c.ledger(key)).length, 1);
    },
  ],

  [
    'checkout: debit then drop → unknown, key parked, a second click blocked, reconcile() finds the debit',
    async (t, x) => {
      const key = `cart-${uid()}`;
      await x.c.force('debitThenReset');
      await x.c.force('status503', 2);
      const checkout = x.client({ retry: fast });
      const first = await checkout.charge(ORDER, { idempotencyKey: key });
      t.deepEqual(first, { status: 'unknown', key });
      const rec = checkout.store.peek(key);
      t.equal(rec?.status, 'unknown');
      t.equal(rec?.attempts, 3, 'the record knows its attempts');
      t.ok(rec?.lastAttemptAt >= rec?.startedAt && rec?.settleAfterMs > 0, 'and when the last one left, and its settle window');
      const before = (await x.c.stats()).requests;
      t.deepEqual(await checkout.charge(ORDER, { idempotencyKey: key }), { status: 'unknown', key }, 'a second click');
      t.equal((await x.c.stats()).requests, before, 'the second click sent nothing');
      const debits = await x.c.ledger(key);
      t.equal(debits.length, 1, 'the money moved once');
      const settled = await checkout.reconcile(key);
      t.deepEqual(
        settled,
        { status: 'succeeded', reference: debits[0].id, key, replayed: true },
        'reconcile() re-sent the same key: the gateway replayed it, and said so',
      );
      t.equal((await x.c.ledger(key)).length, 1, 'still one debit');
      const after = (await x.c.stats()).requests;
      t.deepEqual(await checkout.charge(ORDER, { idempotencyKey: key }), settled, 'the next click replays');
      t.equal((await x.c.stats()).requests, after, 'from the store');
    },
  ],

  [
    'checkout: debit then hang → unknown at the attempt timeout; a settlement lookup settles it done',
    async (t, x) => {
      const key = `hang-${uid()}`;
      await x.c.force('debitThenTimeout');
      const checkout = x.client({ retry: { ...fast, maxAttempts: 1 }, attemptTimeoutMs: 250 });
      t.deepEqual(await checkout.charge(ORDER, { idempotencyKey: key }), { status: 'unknown', key });
      const report = await x.sf.reconcile(checkout.store, settlementLookup(x.base));
      t.equal(report.done, 1);
      t.equal(report.failed, 0);
      const again = await checkout.charge(ORDER, { idempotencyKey: key });
      t.equal(again.status, 'succeeded');
      t.equal((await x.c.ledger(key)).length, 1);
    },
  ],

  [
    'a slow gateway (processed after the client gave up): reconciliation never frees the key early',
    async (t, x) => {
      const key = `late-${uid()}`;
      await x.c.force('processAfterGiveUp'); // held (unregistered) until released below
      const checkout = x.client({ retry: { ...fast, maxAttempts: 1 }, attemptTimeoutMs: 500 });
      t.deepEqual(await checkout.charge(ORDER, { idempotencyKey: key }), { status: 'unknown', key });
      t.equal((await x.c.ledger(key)).length, 0, 'no debit yet: a lookup now says "never happened"');
      const early = await x.sf.reconcile(checkout.store, settlementLookup(x.base));
      t.equal(early.failed, 0, 'the "failed" answer was not believed');
      t.equal(early.deferred, 1, 'it was deferred');
      t.ok(early.retryAfterMs > 0 && early.retryAfterMs <= 1_000, `until the settle window (2 × 500 ms) passes: ${early.retryAfterMs}`);
      t.equal(checkout.store.peek(key)?.status, 'unknown', 'the key stays parked');
      t.equal((await x.c.release()).released, 1, 'the gateway processes it after all');
      await x.c.until(
        () => x.c.ledger(key),
        (l) => l.length === 1,
      );
      const late = await x.sf.reconcile(checkout.store, settlementLookup(x.base));
      t.equal(late.done, 1, 'the late debit is found');
      t.equal((await checkout.charge(ORDER, { idempotencyKey: key })).status, 'succeeded');
      t.equal((await x.c.ledger(key)).length, 1);
    },
  ],

  [
    'processed after the client gave up: reconcile() re-sends the same key while the first is held, one debit',
    async (t, x) => {
      const key = `late2-${uid()}`;
      await x.c.force('processAfterGiveUp');
      const checkout = x.client({ retry: { ...fast, maxAttempts: 1 }, attemptTimeoutMs: 150 });
      t.equal((await checkout.charge(ORDER, { idempotencyKey: key })).status, 'unknown');
      const settled = await checkout.reconcile(key);
      t.equal(settled.status, 'succeeded', 'the re-sent key was processed');
      t.equal((await x.c.release()).released, 1, 'then the held first request is processed');
      await x.c.waitIdle();
      const s = await x.c.stats();
      t.equal(s.replays, 1, 'the held request, processed late, was answered from the key');
      t.equal((await x.c.ledger(key)).length, 1, 'one debit');
    },
  ],

  [
    'checkout: 503, 503, then success: one key on every attempt, one debit',
    async (t, x) => {
      const key = `blip-${uid()}`;
      await x.c.force('status503', 2);
      const seen = [];
      const checkout = x.client({ retry: fast, onAttempt: (a) => seen.push(a) });
      const out = await checkout.charge(ORDER, { idempotencyKey: key });
      t.equal(out.status, 'succeeded');
      t.deepEqual(
        seen.map((a) => a.attempt),
        [1, 2, 3],
      );
      t.ok(
        seen.every((a) => a.key === key),
        'the same key',
      );
      t.equal((await x.c.ledger(key)).length, 1);
    },
  ],

  [
    'checkout: 429 with Retry-After is honoured',
    async (t, x) => {
      const key = `rl-${uid()}`;
      await x.c.force('status429');
      const at = [];
      const checkout = x.client({ retry: { ...fast, maxDelayMs: 5_000 }, onAttempt: () => at.push(Date.now()) });
      t.equal((await checkout.charge(ORDER, { idempotencyKey: key })).status, 'succeeded');
      t.equal(at.length, 2);
      t.ok(at[1] - at[0] >= 950, `waited ${at[1] - at[0]} ms for Retry-After: 1`);
    },
  ],

  [
    'checkout: an open circuit answers unavailable (nothing sent, key free), never a rejection',
    async (t, x) => {
      await x.c.force('status503', 3);
      const checkout = x.client({ retry: { ...fast, maxAttempts: 1 }, breaker: { failureThreshold: 1, openDurationMs: 60_000 } });
      const first = await checkout.charge(ORDER, { idempotencyKey: `cb1-${uid()}` });
      t.equal(first.status, 'unknown', 'a 503 answer: it may have been processed');
      const before = (await x.c.stats()).requests;
      const key = `cb2-${uid()}`;
      const second = await checkout.charge(ORDER, { idempotencyKey: key });
      t.equal(second.status, 'unavailable');
      t.equal(second.reason, 'circuit-open');
      t.ok(second.retryAfterMs > 0, `retryAfterMs ${second.retryAfterMs}`);
      t.equal((await x.c.stats()).requests, before, 'nothing was sent');
      t.equal(checkout.store.peek(key), undefined, 'the key is free');
    },
  ],

  [
    'checkout: 12 charges against a failing gateway all resolve; breaker: false sends every one',
    async (t, x) => {
      await x.c.force('status503', 100);
      const withBreaker = x.client({ retry: { ...fast, maxAttempts: 1 } });
      const statuses = [];
      for (let i = 0; i < 12; i++) statuses.push((await withBreaker.charge(ORDER)).status);
      t.ok(
        statuses.slice(0, 10).every((s) => s === 'unknown'),
        statuses.join(),
      );
      t.deepEqual(statuses.slice(10), ['unavailable', 'unavailable'], 'charges 11+ meet the open circuit');
      const before = (await x.c.stats()).requests;
      const without = x.client({ retry: { ...fast, maxAttempts: 1 }, breaker: false });
      const outs = [];
      for (let i = 0; i < 12; i++) outs.push((await without.charge(ORDER)).status);
      t.ok(
        outs.every((s) => s === 'unknown'),
        outs.join(),
      );
      t.equal((await x.c.stats()).requests - before, 12, 'breaker: false sent every charge');
      await x.c.reset();
    },
  ],

  [
    'resilientFetch: QUERY is retried like GET; TRACE is refused before anything is sent',
    async (t, x) => {
      const id = uid();
      let retries = 0;
      const res = await x.sf.resilientFetch(
        `${x.base}/__flaky/${id}?drop=2`,
        { method: 'QUERY', body: '{"q":1}', headers: { 'content-type': 'application/json' } },
        { breaker: false, budget: false, retry: fast, onRetry: () => (retries += 1) },
      );
      t.equal(res.status, 200);
      const seen = await x.c.flakyCount(id);
      t.ok(retries >= 1 && seen.n === 3, `QUERY was retried (${retries} retries, ${seen.n} requests)`);
      t.equal(seen.methods.at(-1), 'QUERY');
      const trace = uid();
      await t.rejects(
        x.sf.resilientFetch(`${x.base}/__flaky/${trace}`, { method: 'TRACE' }, { breaker: false, budget: false, retry: fast }),
        (e) => e instanceof TypeError,
        'TRACE',
      );
      t.equal((await x.c.flakyCount(trace)).n, 0, 'nothing sent');
    },
  ],

  [
    'resilientFetch: bufferBody makes a ReadableStream body retryable for a keyed POST',
    async (t, x) => {
      const id = uid();
      const bytes = new TextEncoder().encode('{"amountCents":4999,"currency":"usd"}');
      const stream = new ReadableStream({
        start(ctl) {
          ctl.enqueue(bytes.slice(0, 10));
          ctl.enqueue(bytes.slice(10));
          ctl.close();
        },
      });
      const res = await x.sf.resilientFetch(
        `${x.base}/__flaky/${id}?fail=1`,
        { method: 'POST', body: stream, headers: { 'content-type': 'application/json' } },
        { breaker: false, budget: false, retry: fast, idempotencyKey: 'auto', bufferBody: true },
      );
      t.equal(res.status, 200);
      const seen = await x.c.flakyCount(id);
      t.equal(seen.n, 2, 'a 503, then the retry');
      t.deepEqual(seen.bodies, [new TextDecoder().decode(bytes), new TextDecoder().decode(bytes)], 'the same bytes both times');
    },
  ],

  [
    'withRetry: an isRetryable that returns a Promise is awaited',
    async (t, x) => {
      let calls = 0;
      const out = await x.sf.withRetry(
        () => {
          calls += 1;
          if (calls < 3) throw new Error('flaky');
          return 'ok';
        },
        { ...fast, isRetryable: async (e) => e.message === 'flaky' },
      );
      t.equal(out, 'ok');
      t.equal(calls, 3);
    },
  ],

  [
    'withRetry: the context and onRetry info are frozen on every attempt',
    async (t, x) => {
      const frozen = [];
      let calls = 0;
      await x.sf.withRetry(
        (ctx) => {
          frozen.push(Object.isFrozen(ctx));
          calls += 1;
          if (calls < 3) throw Object.assign(new Error('503'), { status: 503 });
          return 1;
        },
        { ...fast, maxElapsedMs: 5_000, onRetry: (info) => frozen.push(Object.isFrozen(info)) },
      );
      t.deepEqual(frozen, [true, true, true, true, true], 'ctx 1, info 1, ctx 2, info 2, ctx 3');
    },
  ],

  // A keyed POST's retry must send the bytes its key went out with: fetch reads a FormData or
  // URLSearchParams body anew on every call (a FormData with a new multipart boundary each time),
  // so the page editing its form during the delay would change the request under the same key.
  [
    'resilientFetch: a keyed form body changed during the retry delay is re-sent as first sent',
    async (t, x) => {
      for (const [name, make, change] of FORM_BODIES) {
        const id = uid();
        const body = make();
        let changed = 0;
        const res = await x.sf.resilientFetch(
          `${x.base}/__flaky/${id}?fail=1`,
          { method: 'POST', body },
          {
            idempotencyKey: `form-${id}`,
            breaker: false,
            budget: false,
            retry: fast,
            onRetry: () => {
              changed += 1;
              change(body);
            },
          },
        );
        t.equal(res.status, 200, `${name}: answered after one 503`);
        t.equal(changed, 1, `${name}: the form was edited during the delay`);
        const seen = await x.c.flakyCount(id);
        t.equal(seen.n, 2, `${name}: two requests`);
        t.ok(seen.bodies[0].includes('1000') && !seen.bodies[0].includes('100000'), `${name}: the first sent the form as it was`);
        t.equal(seen.bodies[1], seen.bodies[0], `${name}: the retry sent the same bytes`);
        t.equal(seen.types[1], seen.types[0], `${name}: and the same content type`);
        t.ok(/^(application\/x-www-form-urlencoded|multipart\/form-data)/.test(seen.types[0] ?? ''), `${name}: the type fetch gives it: ${seen.types[0]}`);
      }
    },
  ],

  [
    'parseRetryAfter reads an RFC 850 two-digit year relative to now',
    async (t, x) => {
      const now = Date.now();
      const inTen = Math.ceil(now / 1000) * 1000 + 10_000;
      t.equal(x.sf.parseRetryAfter(rfc850(inTen), now), inTen - now, `${rfc850(inTen)} is this century`);
      t.equal(x.sf.parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', now), 0, "'94 is 1994, in the past, not 2094");
      // 49 years ahead is still ahead (a fixed 1970 pivot would read it as last century, in the past).
      const ahead = new Date(now);
      ahead.setUTCFullYear(ahead.getUTCFullYear() + 49);
      const wait = x.sf.parseRetryAfter(rfc850(ahead.getTime()), now);
      t.ok(wait > 48 * 365 * 86_400_000, `${rfc850(ahead.getTime())} is 49 years ahead: ${wait} ms`);
    },
  ],
];

/**
 * Run every case (or those whose name includes `only`) in order, against the server at `base`.
 * @returns {Promise<Array<{ name: string, ok: boolean, assertions: number, error?: string, notes?: string[] }>>}
 */
export async function runCases(sf, { base, env = 'unknown', only, onResult } = {}) {
  const c = controls(base);
  const client = (options) => sf.createCheckoutClient({ endpoint: `${base}/v1/charges`, attemptTimeoutMs: 2_000, ...options });
  const results = [];
  for (const [name, run] of CASES) {
    if (only !== undefined && !name.includes(only)) continue;
    const t = checker();
    let error;
    try {
      await c.reset();
      await run(t, { sf, base, env, c, client });
      if (t.count === 0) throw new Error('the case asserted nothing');
    } catch (e) {
      // Gecko's and WebKit's error.stack leaves out the message: name it first.
      error = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack ?? ''}` : String(e);
    }
    try {
      // Whatever happened, leave nothing behind for the next case (a held request would debit into it).
      await c.release();
      await c.waitIdle();
    } catch (e) {
      error ??= `cleanup: ${String(e?.stack ?? e)}`;
    }
    const result = { name, ok: error === undefined, assertions: t.count };
    if (error !== undefined) result.error = error;
    if (t.notes.length > 0) result.notes = t.notes;
    results.push(result);
    onResult?.(result);
  }
  try {
    await c.waitIdle();
    await c.reset();
  } catch {
    // best effort: the next run resets again
  }
  return results;
}
