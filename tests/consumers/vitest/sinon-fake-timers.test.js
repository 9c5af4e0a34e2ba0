// The same with @sinonjs/fake-timers (what Jest's modern timers and sinon use underneath): install it
// on globalThis and drive it with tickAsync.
import { afterEach, beforeEach, expect, test } from 'vitest';
import FakeTimers from '@sinonjs/fake-timers';
import { withRetry, RetryBudget, RetryBudgetExhaustedError } from 'steadfast';

let clock;
beforeEach(() => {
  clock = FakeTimers.install({ now: 1_700_000_000_000 });
});
afterEach(() => clock.uninstall());

const transient = () => Object.assign(new Error('ECONNRESET'), { code: 'ECONNRESET' });

test('retries run on tickAsync, not on the wall clock', async () => {
  let calls = 0;
  const p = withRetry(
    async () => {
      calls += 1;
      if (calls < 3) throw transient();
      return calls;
    },
    { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 200, jitter: 'none' },
  );
  await clock.tickAsync(199);
  expect(calls).toBe(1);
  await clock.tickAsync(1);
  expect(calls).toBe(2);
  await clock.tickAsync(200);
  await expect(p).resolves.toBe(3);
});

test('a token-bucket budget refills on the fake clock', async () => {
  const budget = new RetryBudget({ capacity: 1, refillPerSec: 1 });
  const failing = () => withRetry(() => Promise.reject(transient()), { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0, budget });
  const first = failing().catch((e) => e);
  await clock.tickAsync(0);
  expect(await first).toHaveProperty('code', 'ECONNRESET'); // retried once (the token), then gave up
  await expect(failing()).rejects.toBeInstanceOf(RetryBudgetExhaustedError);
  await clock.tickAsync(1_000); // one token back
  const third = failing().catch((e) => e);
  await clock.tickAsync(0);
  expect(await third).toHaveProperty('code', 'ECONNRESET');
});
