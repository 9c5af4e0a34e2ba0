// The checkout's outcome mapping as pure functions (lib/checkout-outcome.js): an HTTP answer judged with
// the charge's history, a failure of the HTTP calls, and a failure through the store, each mapped to
// what the UI is told. No server: every branch from its inputs.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { CheckoutRequestError, CircuitOpenError, IdempotencyKeyReuseError, OfflineError, OutcomeUnknownError } from 'steadfast';

const lib = (name) => import(new URL(`../node_modules/steadfast/lib/${name}.js`, import.meta.url).href);
const { answerOutcome, failureOutcome, unavailableFor, unknownRetryAfterMs, parseBody, Declined, Unavailable, UNAVAILABLE_RETRY_MS } =
  await lib('checkout-outcome');
const { VERDICT, ANSWER, answerOf } = await lib('classify');
const { compileDialect } = await lib('dialect');
const { RetryBudgetExhaustedError } = await lib('errors');

const stripe = compileDialect('stripe', 'test');
const NOW = Date.parse('2026-01-01T00:00:00Z');
/** A Response-like answer: what answerOutcome reads. */
const answer = (status, headers = {}, type = 'basic') => ({ ok: status >= 200 && status < 300, status, type, headers: new Headers(headers) });
const judge = (status, data, verdict = VERDICT.REFUSED, { headers, type, replayed = false } = {}) =>
  answerOutcome(answer(status, headers, type), data, verdict, replayed, stripe, 'k1', NOW);

describe('answerOutcome: an HTTP answer and the history -> the outcome', () => {
  test('a 2xx is succeeded with the reference (or id), and says when the gateway replayed it', () => {
    assert.deepEqual(judge(200, { reference: 'ch_1' }, VERDICT.DONE), { outcome: { status: 'succeeded', reference: 'ch_1', key: 'k1' } });
    assert.deepEqual(judge(201, { id: 'pi_2' }, VERDICT.DONE), { outcome: { status: 'succeeded', reference: 'pi_2', key: 'k1' } });
    assert.deepEqual(judge(200, { id: 7 }, VERDICT.DONE), { outcome: { status: 'succeeded', reference: '7', key: 'k1' } });
    assert.equal(judge(200, { id: 'x' }, VERDICT.DONE, { replayed: true }).outcome.replayed, true);
  });

  test('a 2xx that names no charge is unknown; a 2xx carrying a decline is a decline unless an earlier attempt may have been processed', () => {
    for (const data of [undefined, {}, { reference: '' }, { id: null }, 'ok', { reference: 'ch_1', error: { type: 'card_error' } }])
      assert.deepEqual(judge(200, data, VERDICT.DONE), { unknown: true }, JSON.stringify(data));
    const d = judge(200, { error: { type: 'card_error', decline_code: 'lost_card' } }, VERDICT.DONE).error;
    assert.ok(d instanceof Declined);
    assert.equal(d.reason, 'lost_card');
    const earlier = answerOutcome(answer(200), { error: { type: 'card_error' } }, VERDICT.DONE, false, stripe, 'k1', NOW, true);
    assert.deepEqual(earlier, { unknown: true });
  });

  test('after an attempt that may have been processed, no later non-2xx settles anything: unknown', () => {
    for (const status of [400, 401, 402, 404, 409, 429, 302])
      assert.deepEqual(judge(status, { error: { type: 'card_error' } }, VERDICT.UNKNOWN), { unknown: true });
  });

  test('a 402 or a card_error is a decline with the gateway reason', () => {
    const d = judge(402, { error: { decline_code: 'insufficient_funds' } }).error;
    assert.ok(d instanceof Declined);
    assert.equal(d.reason, 'insufficient_funds');
    assert.equal(judge(400, { error: { type: 'card_error', code: 'expired_card' } }).error.reason, 'expired_card');
    assert.equal(judge(402, undefined).error.reason, 'declined');
  });

  test("the dialect's reuse answer is IdempotencyKeyReuseError for the key", () => {
    const e = judge(400, { error: { type: 'idempotency_error' } }, VERDICT.REFUSED, { headers: { 'content-type': 'application/json' } }).error;
    assert.ok(e instanceof IdempotencyKeyReuseError);
    assert.equal(e.key, 'k1');
  });

  test('not processed (a 429) is unavailable, rate-limited, with the Retry-After as the hint', () => {
    const e = judge(429, {}, VERDICT.NOT_PROCESSED, { headers: { 'retry-after': '7' } }).error;
    assert.ok(e instanceof Unavailable);
    assert.deepEqual([e.reason, e.retryAfterMs], ['rate-limited', 7_000]);
    assert.equal(judge(429, {}, VERDICT.NOT_PROCESSED).error.retryAfterMs, UNAVAILABLE_RETRY_MS);
  });

  test('a redirect is never followed for a charge; anything else is the request rejected (a programming error)', () => {
    for (const [status, type] of [
      [302, 'basic'],
      [0, 'opaqueredirect'],
    ]) {
      const e = judge(status, undefined, VERDICT.REFUSED, { type }).error;
      assert.ok(e instanceof CheckoutRequestError);
      assert.match(e.message, /redirected: a charge is never followed through a redirect/);
    }
    const e = judge(404, { error: { message: 'no such route' } }).error;
    assert.ok(e instanceof CheckoutRequestError);
    assert.deepEqual([e.status, e.code, e.body], [404, 'CHECKOUT_REJECTED', { error: { message: 'no such route' } }]);
  });
});

describe('unavailableFor: a failure that provably sent nothing -> why', () => {
  const refused = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
  const cases = [
    ['an open circuit', new CircuitOpenError(5_000), false, ['circuit-open', 5_000]],
    ['offline', new OfflineError(), false, ['offline', UNAVAILABLE_RETRY_MS]],
    ['a refused connection', refused, false, ['connection-refused', UNAVAILABLE_RETRY_MS]],
    ['the budget refusing a retry of a refused connection', new RetryBudgetExhaustedError(refused, 2), false, ['connection-refused', UNAVAILABLE_RETRY_MS]],
    ['the budget refusing a retry while the circuit is open', new RetryBudgetExhaustedError(new CircuitOpenError(3_000), 2), false, ['circuit-open', 3_000]],
    [
      'a 429 error carrying Retry-After',
      Object.assign(new Error('HTTP 429'), { status: 429, headers: new Headers({ 'retry-after': '2' }) }),
      true,
      ['rate-limited', 2_000],
    ],
    ['an answered call that was not processed', new Error('HTTP 503'), true, ['rate-limited', UNAVAILABLE_RETRY_MS]],
  ];
  for (const [name, e, maybeSent, [reason, retryAfterMs]] of cases) {
    test(name, () => {
      const u = unavailableFor(e, maybeSent, NOW);
      assert.ok(u instanceof Unavailable);
      assert.deepEqual([u.reason, u.retryAfterMs], [reason, retryAfterMs]);
      assert.equal(u.cause, undefined, 'no cause: a nested network error would read as transient to the store');
    });
  }
  test('nothing sent and not the network (a bad URL): undefined, the caller rethrows it', () => {
    assert.equal(unavailableFor(new TypeError('Invalid URL'), false, NOW), undefined);
  });
});

// Deno's fetch names no code: the words of its cause are all there is (the real errors: tests/runtimes/connect.mjs).
describe("Deno's words: a connect-stage failure sent nothing, a failure after connecting may have", () => {
  const deno = (words) => new TypeError('fetch failed', { cause: new Error(words) });
  const refused = deno(
    'error sending request for url (http://127.0.0.1:9/v1/charges): client error (Connect): tcp connect error: Connection refused (os error 111)',
  );
  const older = new TypeError(
    'error sending request for url (http://127.0.0.1:9/): client error (Connect): tcp connect error: Connection refused (os error 111)',
  );
  const reset = deno('Connection reset by peer (os error 104)');
  const closed = deno(
    'error sending request from 127.0.0.1:35952 for http://127.0.0.1:38087/ (127.0.0.1:38087): client error (SendRequest): connection closed before message completed',
  );
  const never = () => assert.fail('the classifier is not asked about a network error of a known shape');
  test('refused (Deno 2.9: on the cause; older Deno: on the error): not sent, connection-refused', () => {
    for (const e of [refused, older, new RetryBudgetExhaustedError(refused, 2)]) {
      assert.equal(answerOf(e, never), ANSWER.NOT_SENT);
      assert.deepEqual([unavailableFor(e, false, NOW)?.reason], ['connection-refused']);
    }
  });
  test('a reset or a close after connecting: no answer (the key stays unknown), never "not sent"', () => {
    for (const e of [reset, closed]) {
      assert.equal(answerOf(e, never), ANSWER.NO_ANSWER);
      assert.equal(unavailableFor(e, false, NOW), undefined);
    }
  });
});

describe('failureOutcome: what the store rejected with -> the outcome', () => {
  test('declines, unavailability, unknowns and store refusals each have their outcome; programming errors none', () => {
    assert.deepEqual(failureOutcome(new Declined('do_not_honor'), 'k'), { status: 'declined', reason: 'do_not_honor', key: 'k' });
    assert.deepEqual(failureOutcome(new Unavailable('offline', 1_000), 'k'), { status: 'unavailable', reason: 'offline', retryAfterMs: 1_000, key: 'k' });
    assert.deepEqual(failureOutcome(new OutcomeUnknownError('k', NOW), 'k'), { status: 'unknown', key: 'k' });
    for (const code of ['OUTCOME_UNKNOWN', 'DUPLICATE_IN_FLIGHT']) assert.deepEqual(failureOutcome({ code }, 'k'), { status: 'unknown', key: 'k' });
    for (const code of ['STORE_UNAVAILABLE', 'STORE_AMNESIA']) {
      assert.deepEqual(failureOutcome({ code }, 'k'), { status: 'unavailable', reason: 'store-unavailable', retryAfterMs: UNAVAILABLE_RETRY_MS, key: 'k' });
    }
    assert.deepEqual(failureOutcome({ code: 'STORE_FULL' }, 'k'), {
      status: 'unavailable',
      reason: 'store-full',
      retryAfterMs: UNAVAILABLE_RETRY_MS,
      key: 'k',
    });
    assert.equal(failureOutcome(new TypeError('bad'), 'k'), undefined);
    assert.equal(failureOutcome(new IdempotencyKeyReuseError('k'), 'k'), undefined);
  });

  test("unknownRetryAfterMs: the error's own hint, else the open circuit's cooldown a level or two down, else a second", () => {
    assert.equal(unknownRetryAfterMs({ retryAfterMs: 250 }), 250);
    assert.equal(unknownRetryAfterMs({ cause: new CircuitOpenError(4_000) }), 4_000);
    assert.equal(unknownRetryAfterMs({ cause: { cause: new CircuitOpenError(6_000) } }), 6_000);
    assert.equal(unknownRetryAfterMs({ retryAfterMs: 0 }), UNAVAILABLE_RETRY_MS);
    assert.equal(unknownRetryAfterMs(undefined), UNAVAILABLE_RETRY_MS);
  });

  test('parseBody: JSON or undefined, never a throw', () => {
    assert.deepEqual(parseBody('{"a":1}'), { a: 1 });
    for (const t of ['', 'not json', undefined, '{']) assert.equal(parseBody(t), undefined);
  });
});
