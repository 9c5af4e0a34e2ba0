// examples/sim-page in headless Chromium: the simulator runs in the page, and changing an input
// re-runs it and redraws the chart and the numbers; the same seed gives the same output in Chromium
// and in Node. A screenshot lands in tests/.out/.
import { test } from 'node:test';
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { ROOT, OUT, counter, launchBrowser } from './harness.mjs';
import { startSimPage } from '../../examples/sim-page/server.mjs';
import { simulateOutage, simulateHistogram } from 'steadfast/sim';

test('the simulator page re-runs and redraws when an input changes', async () => {
  const a = counter('example-sim');
  const server = await startSimPage({ packageDir: join(ROOT, 'tests', 'node_modules', 'steadfast') });
  await mkdir(OUT, { recursive: true });
  const browser = await launchBrowser();
  try {
    const { page } = browser;
    await page.setViewportSize({ width: 1000, height: 720 });
    await page.goto(server.url);
    await page.waitForSelector('body[data-runs="1"]');
    const first = JSON.parse(await page.getAttribute('body', 'data-summary'));
    const firstSvg = await page.innerHTML('#chart');
    a.match(firstSvg, /^<svg/);
    a.ok(first.secondPeakOffered > 0 && first.failed === 0, `full jitter absorbs the hiccup: ${JSON.stringify(first)}`);
    // Switch to no jitter: the synchronized second peak appears and requests fail.
    await page.selectOption('select[name="strategy"]', 'none');
    await page.waitForSelector('body[data-runs="2"]');
    const naive = JSON.parse(await page.getAttribute('body', 'data-summary'));
    a.ok(naive.secondPeakOffered >= 5 * first.secondPeakOffered, `naive second peak ${naive.secondPeakOffered} vs ${first.secondPeakOffered}`);
    a.ok(naive.failed > 0);
    a.ok((await page.innerHTML('#chart')) !== firstSvg, 'the chart was redrawn');
    a.equal(await page.textContent('td[data-key="second peak after the outage"]'), String(naive.secondPeakOffered));
    // A bad input shows the library's RangeError, and the next valid input works again.
    await page.fill('input[name="clients"]', '0');
    await page.waitForFunction(() => document.querySelector('#error').textContent.includes('clients'));
    a.match(await page.textContent('#error'), /RangeError: .*clients/);
    await page.fill('input[name="clients"]', '2000');
    await page.waitForSelector('body[data-runs="3"]');
    a.equal(await page.textContent('#error'), '');
    // Same seed, same output in Chromium and in Node (the same wasm, the same SplitMix64 draws).
    const options = { strategy: 'decorrelated', clients: 3000, seed: 77, breaker: true, budget: true };
    const inPage = await page.evaluate(async (o) => {
      const sim = await import('steadfast/sim');
      const r = sim.simulateOutage(o);
      const h = sim.simulateHistogram({ clients: 5000, seed: 9 });
      return { summary: r.summary, offered: r.buckets.map((b) => b.offered), peaks: h.runs.map((x) => x.peak) };
    }, options);
    const inNode = simulateOutage(options);
    a.deepEqual(inPage, {
      summary: inNode.summary,
      offered: inNode.buckets.map((b) => b.offered),
      peaks: simulateHistogram({ clients: 5000, seed: 9 }).runs.map((x) => x.peak),
    });
    await page.screenshot({ path: join(OUT, 'example-sim.png'), fullPage: true });
    a.deepEqual(browser.problems, []);
    a.done(10);
  } finally {
    await browser.close();
    await server.close();
  }
});
