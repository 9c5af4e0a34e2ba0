// Compile once, execute many: resilientFetch reads and validates an options object once (its plan is
// cached by the object's identity, and the object is frozen like withRetry's policy), and a checkout
// client reads its options when it is created, never per charge. Observed the way a user could: by
// counting reads of the options, and by what a later mutation does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resilientFetch, createCheckoutClient } from 'steadfast';

const okFetch = async () => new Response('{"reference":"ch_1"}', { status: 200, headers: { 'content-type': 'application/json' } });

/** `retry` options whose every read is counted. */
function countedRetry() {
  const reads = { n: 0 };
  const retry = {};
  for (const [k, v] of Object.entries({ maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 })) {
    Object.defineProperty(retry, k, {
      enumerable: true,
      get() {
        reads.n += 1;
        return v;
      },
    });
  }
  return { retry, reads };
}

test('resilientFetch reads one options object once, however many requests use it', async () => {
  const { retry, reads } = countedRetry();
  const options = { fetch: okFetch, retry, breaker: false };
  const first = await resilientFetch('http://127.0.0.1:9/a', undefined, options);
  assert.equal(first.status, 200);
  const afterFirst = reads.n;
  assert.ok(afterFirst > 0, 'the first request reads the retry options');
  for (let i = 0; i < 20; i++) assert.equal((await resilientFetch('http://127.0.0.1:9/a', undefined, options)).status, 200);
  assert.equal(reads.n, afterFirst, 'no request after the first reads the options again');
  // Another options object is another plan.
  const other = countedRetry();
  await resilientFetch('http://127.0.0.1:9/a', undefined, { fetch: okFetch, retry: other.retry, breaker: false });
  assert.ok(other.reads.n > 0);
});

test('an options object resilientFetch has used is frozen (a mutation would desynchronise its plan), like a withRetry policy', async () => {
  const options = { fetch: okFetch, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 }, breaker: false };
  await resilientFetch('http://127.0.0.1:9/a', undefined, options);
  assert.ok(Object.isFrozen(options));
  assert.ok(Object.isFrozen(options.retry));
  assert.throws(() => {
    options.retry = { maxAttempts: 9 };
  }, TypeError);
  assert.throws(() => {
    options.retry.maxAttempts = 9;
  }, TypeError);
  // Bad options are refused at every call, with the same error, and nothing is frozen or cached.
  const bad = { fetch: okFetch, deadlineMs: -1 };
  for (let i = 0; i < 2; i++)
    await assert.rejects(resilientFetch('http://127.0.0.1:9/a', undefined, bad), { name: 'RangeError', message: /deadlineMs must be a number > 0, got -1/ });
  assert.ok(!Object.isFrozen(bad));
});

test('a checkout client reads its options when it is made, never per charge', async () => {
  const { retry, reads } = countedRetry();
  const client = createCheckoutClient({ endpoint: 'http://127.0.0.1:9/charges', fetch: okFetch, retry });
  const afterConstruction = reads.n;
  for (let i = 0; i < 10; i++) {
    const outcome = await client.charge({ amountCents: 100 + i, currency: 'usd' });
    assert.equal(outcome.status, 'succeeded');
  }
  assert.equal(reads.n, afterConstruction, 'no charge reads the retry options again');
  assert.ok(!Object.isFrozen(retry), "the client copies what it read: the caller's object is left as it was");
});

test("retry numbers left out are the core's defaults, ordered around the one given; a bad one throws when the client is made", async () => {
  const firstDelay = async (retry) => {
    const controller = new AbortController();
    let delay;
    const onRetry = (info) => {
      delay = info.delayMs;
      controller.abort(new Error('seen'));
    };
    const fetch = async () => new Response('', { status: 503 });
    await resilientFetch(
      'https://pay.example/x',
      { signal: controller.signal },
      { fetch, breaker: false, budget: false, retry: { jitter: 'none', ...retry }, onRetry },
    ).catch(() => {});
    return delay;
  };
  assert.equal(await firstDelay({}), 100);
  assert.equal(await firstDelay({ baseDelayMs: 20_000 }), 20_000, 'a base above the default cap raises the cap');
  assert.equal(await firstDelay({ maxDelayMs: 50 }), 50, 'a cap below the default base lowers the base');
  for (const retry of [{ maxDelayMs: -5 }, { baseDelayMs: 500, maxDelayMs: 100 }, { maxAttempts: 0 }]) {
    assert.throws(
      () => createCheckoutClient({ endpoint: 'https://pay.example/c', retry }),
      (e) => e instanceof RangeError && e.option === Object.keys(retry).at(-1),
      JSON.stringify(retry),
    );
  }
});
