// examples/sim-page's throttling panel in headless Chromium: full jitter vs full jitter + an
// adaptive limiter on a gateway at half the demand, computed in the page by the same wasm as in
// Node (same figures), and re-run when an input changes.
import { test } from 'node:test';
import { join } from 'node:path';
import { ROOT, counter, launchBrowser } from './harness.mjs';
import { startSimPage } from '../../examples/sim-page/server.mjs';
import { simulateOutage } from 'steadfast/sim';

test('the simulator page shows the limiter lowering 429s and offered load', async () => {
  const a = counter('example-sim-throttle');
  const server = await startSimPage({ packageDir: join(ROOT, 'tests', 'node_modules', 'steadfast') });
  const browser = await launchBrowser();
  try {
    const { page } = browser;
    await page.goto(server.url);
    await page.waitForSelector('body[data-throttle-runs="1"]');
    const first = JSON.parse(await page.getAttribute('body', 'data-throttle'));
    a.ok(first.adaptive.throttled * 10 < first.jitter.throttled, `429s ${first.adaptive.throttled} vs ${first.jitter.throttled}`);
    a.ok(first.adaptive.offeredPerSec * 2 < first.jitter.offeredPerSec, `offered ${first.adaptive.offeredPerSec} vs ${first.jitter.offeredPerSec}`);
    a.match(await page.innerHTML('#throttle-adaptive'), /^<svg/);
    // The same figures as Node computes with the same options.
    const base = {
      clients: 10_000,
      capacityPerTick: 25,
      throttle: true,
      retryAfterMs: 0,
      outageDurationMs: 0,
      durationMs: 60_000,
      bucketMs: 1_000,
      quota: false,
    };
    // (The page hands its figures over as JSON: NaN, "never recovered", becomes null on both sides.)
    const inNode = (limiter) => JSON.parse(JSON.stringify(simulateOutage({ ...base, limiter }).summary));
    a.deepEqual(first.adaptive, inNode('cubic'));
    await page.selectOption('#throttle-form select[name="limiter"]', 'aimd');
    await page.waitForSelector('body[data-throttle-runs="2"]');
    const aimd = JSON.parse(await page.getAttribute('body', 'data-throttle'));
    a.deepEqual(aimd.adaptive, inNode('aimd'));
    a.deepEqual(browser.problems, []);
    a.done(6);
  } finally {
    await browser.close();
    await server.close();
  }
});

test('RetryQuota and RateLimiter work from the package in Chromium', async () => {
  const a = counter('throttle-api-chromium');
  const server = await startSimPage({ packageDir: join(ROOT, 'tests', 'node_modules', 'steadfast') });
  const browser = await launchBrowser();
  try {
    const { page } = browser;
    await page.goto(server.url);
    const out = await page.evaluate(async () => {
      const { RetryQuota, RateLimiter, retryErrorClass, withRetry, resilientFetch, RetryBudgetExhaustedError } = await import('/steadfast/index.browser.js');
      const quota = new RetryQuota({ preset: 'aws' });
      const limiter = new RateLimiter({ minRatePerSec: 100 });
      let calls = 0;
      const value = await withRetry(
        () => {
          calls += 1;
          if (calls === 1) throw Object.assign(new Error('busy'), { status: 429 });
          return 'ok';
        },
        { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1, budget: quota, rateLimiter: limiter },
      );
      // A 503 every time through resilientFetch drains a small quota: 10 per 5xx in the AWS preset.
      const small = new RetryQuota({ preset: 'aws', capacity: 20 });
      let fetches = 0;
      const fetch = async () => {
        fetches += 1;
        return new Response('', { status: 503 });
      };
      const err = await resilientFetch('https://api.example.test/x', undefined, {
        fetch,
        budget: small,
        breaker: false,
        retry: { maxAttempts: 9, baseDelayMs: 0, maxDelayMs: 0 },
      }).catch((e) => e);
      let badOption = '';
      try {
        new RateLimiter({ beta: 2 });
      } catch (e) {
        badOption = `${e.name}: ${e.message}`;
      }
      return {
        value,
        calls,
        available: quota.available,
        enabled: limiter.enabled,
        cls: retryErrorClass(new TypeError('Failed to fetch')),
        exhausted: err instanceof RetryBudgetExhaustedError,
        fetches,
        badOption,
      };
    });
    a.deepEqual(
      { ...out, badOption: undefined },
      { value: 'ok', calls: 2, available: 500, enabled: true, cls: 'timeout', exhausted: true, fetches: 3, badOption: undefined },
    );
    a.match(out.badOption, /^RangeError: .*beta/);
    a.deepEqual(browser.problems, []);
    a.done(3);
  } finally {
    await browser.close();
    await server.close();
  }
});
