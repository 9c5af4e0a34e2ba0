// The wasm core loads under jsdom / happy-dom / node with the package inlined.
import { test, expect } from 'vitest';
import { ready, version, CircuitBreaker, newIdempotencyKey } from 'steadfast';

test(`the core loads (environment: ${process.env.STEADFAST_VITEST_ENV})`, async () => {
  await expect(ready).resolves.toBeUndefined();
  expect(version()).toMatch(/^\d+\.\d+\.\d+/);
  expect(newIdempotencyKey()).toMatch(/^[0-9a-f-]{36}$/);
  const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 1_000 });
  expect(await breaker.execute(() => 'ok')).toBe('ok');
});
