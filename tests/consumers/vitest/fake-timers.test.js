// Testing code that uses steadfast with Vitest's fake timers: steadfast reads setTimeout and Date.now
// at call time, so vi.useFakeTimers() controls its sleeps, deadlines and breaker cooldowns.
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { withRetry, CircuitBreaker, CircuitOpenError, DeadlineExceededError } from 'steadfast';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const transient = () => Object.assign(new Error('503'), { status: 503 });

test('withRetry sleeps between attempts on the fake clock', async () => {
  const fn = vi.fn().mockRejectedValueOnce(transient()).mockRejectedValueOnce(transient()).mockResolvedValue('paid');
  const p = withRetry(fn, { maxAttempts: 3, baseDelayMs: 1_000, maxDelayMs: 10_000, random: () => 0.5 });
  await vi.advanceTimersByTimeAsync(0);
  expect(fn).toHaveBeenCalledTimes(1);
  await vi.advanceTimersByTimeAsync(499); // full jitter with random 0.5: 500 ms after attempt 1
  expect(fn).toHaveBeenCalledTimes(1);
  await vi.advanceTimersByTimeAsync(1);
  expect(fn).toHaveBeenCalledTimes(2);
  await vi.advanceTimersByTimeAsync(1_000); // 1000 ms after attempt 2
  await expect(p).resolves.toBe('paid');
  expect(fn).toHaveBeenCalledTimes(3);
});

test('a deadline fires on the fake clock', async () => {
  const p = withRetry(() => new Promise(() => {}), { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 10, maxElapsedMs: 5_000 });
  const settled = expect(p).rejects.toBeInstanceOf(DeadlineExceededError);
  await vi.advanceTimersByTimeAsync(5_000);
  await settled;
});

test('a breaker cools down on the fake clock (Date.now is faked too)', async () => {
  const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 30_000 });
  await expect(breaker.execute(() => Promise.reject(transient()))).rejects.toThrow('503');
  const refused = await breaker.execute(() => 'never').catch((e) => e);
  expect(refused).toBeInstanceOf(CircuitOpenError);
  expect(refused.retryAfterMs).toBe(30_000);
  vi.advanceTimersByTime(30_000);
  expect(breaker.currentState).toBe('half-open');
  expect(await breaker.execute(() => 'probe ok')).toBe('probe ok');
  expect(breaker.currentState).toBe('closed');
});

test('a pipeline with a per-attempt timeout, on the fake clock', async () => {
  const { pipeline, TimeoutError } = await import('steadfast');
  const guarded = pipeline({ retry: { maxAttempts: 2, baseDelayMs: 100, maxDelayMs: 100, jitter: 'none' }, timeout: 1_000 });
  const signals = [];
  const p = guarded.execute(({ signal }) => {
    signals.push(signal);
    return new Promise(() => {}); // hangs: only the timeout ends it
  });
  const settled = expect(p).rejects.toBeInstanceOf(TimeoutError);
  await vi.advanceTimersByTimeAsync(1_000); // attempt 1 times out
  expect(signals[0].aborted).toBe(true);
  await vi.advanceTimersByTimeAsync(100); // the retry's sleep
  expect(signals).toHaveLength(2);
  await vi.advanceTimersByTimeAsync(1_000); // attempt 2 times out: out of attempts
  await settled;
});
