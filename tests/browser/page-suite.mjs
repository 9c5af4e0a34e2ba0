// The page-suite runner (not a test itself): runs a suite that lives IN a page, in this run's engine,
// and turns each of its results into a node:test case named with the engine.
//
// Protocol (shared with the fault suites): a page suite is an HTML page + module served by a Node test
// server on 127.0.0.1; the page imports the installed package itself (an import map or a URL: in a
// WebDriver-executed script the page's import map does not apply), runs its cases, and ends by setting
//
//   globalThis.__suite = { done: true, results: [{ name, ok, assertions, error? }, ...] }
//
// (while running it may set `{ done: false, progress? }`). Faults and ledger reads go through HTTP
// control endpoints of the same server, so the page needs nothing from the test but its URL.
// The runner opens the page (Playwright in Chromium, WebDriver in Firefox/WebKit: harness.launchBrowser),
// polls `__suite.done`, and reports. A suite that produced zero results, or a case that made zero
// assertions, fails.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ENGINE_LABEL, OUT } from './harness.mjs';

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/**
 * Opens `url` in `browser` (from launchBrowser) and waits for `__suite.done`. Returns
 * { results, userAgent, ms }. Throws with the page's last progress if it does not finish in time.
 */
export async function runPageSuite(browser, url, { timeoutMs = 120_000, pollMs = 250, screenshot } = {}) {
  const { page } = browser;
  const t0 = Date.now();
  await page.goto(url);
  let state;
  for (;;) {
    state = await page.evaluate(() => {
      const s = globalThis.__suite;
      if (s === undefined || s === null) return { missing: true };
      return JSON.parse(JSON.stringify(s)); // plain data across both protocols
    });
    if (state?.done === true) break;
    if (Date.now() - t0 > timeoutMs) {
      throw new Error(`${browser.label}: page suite ${url} did not finish in ${timeoutMs} ms; last state ${JSON.stringify(state).slice(0, 2000)}`);
    }
    await sleep(pollMs);
  }
  const userAgent = await page.evaluate(() => navigator.userAgent);
  if (screenshot) await page.screenshot({ path: join(OUT, `${screenshot}-${browser.engine}.png`) });
  return { results: Array.isArray(state.results) ? state.results : [], userAgent, ms: Date.now() - t0, raw: state };
}

/** Checks one result object of the protocol; throws (so the case fails) unless it passed with assertions. */
export function checkResult(r) {
  assert.equal(typeof r?.name, 'string', `a result without a name: ${JSON.stringify(r)}`);
  if (r.ok !== true) throw new Error(`${r.name}: ${r.error ?? 'failed (no error message)'}`);
  assert.ok(Number.isInteger(r.assertions) && r.assertions > 0, `${r.name}: made ${r.assertions} assertions (a case must assert something)`);
}

/**
 * Registers, inside node:test test `t`, one subtest per result, named `<Engine>: <name>`. Fails `t` when
 * there were no results. Returns the number of results.
 */
export async function reportResults(t, results) {
  assert.ok(results.length > 0, `${ENGINE_LABEL}: the page suite reported zero results`);
  for (const r of results) {
    await t.test(`${ENGINE_LABEL}: ${r?.name ?? '(unnamed)'}`, () => checkResult(r));
  }
  const failed = results.filter((r) => r?.ok !== true).length;
  assert.equal(failed, 0, `${ENGINE_LABEL}: ${failed} of ${results.length} page cases failed`);
  return results.length;
}
