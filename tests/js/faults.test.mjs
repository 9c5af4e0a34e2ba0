// The browser fault suite's cases (tests/browser/faults/cases.js), run in Node 24 against the same
// server: one case list, the same semantics in Node, a Chromium page and a Web Worker
// (tests/browser/faults.test.mjs runs the other two). The package is imported by its name.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as steadfast from 'steadfast';
import { startFaultServer } from '../browser/faults/server.mjs';
import { runCases, CASES } from '../browser/faults/cases.js';

let server;
before(async () => {
  server = await startFaultServer();
});
after(async () => {
  await server?.close();
});

test('fault suite in Node 24: every case of the shared list', { timeout: 120_000 }, async (t) => {
  const results = await runCases(steadfast, { base: server.url, env: 'node' });
  assert.equal(results.length, CASES.length, 'every case ran');
  for (const r of results) {
    await t.test(r.name, () => {
      for (const note of r.notes ?? []) t.diagnostic(`${r.name}: ${note}`);
      assert.ok(r.ok, r.error);
      assert.ok(r.assertions > 0);
    });
  }
});

test('the browser soak, in Node 24: faulted charges, 0 lost, 0 double, every unknown reconciled', { timeout: 120_000 }, async (t) => {
  const { runSoak, formatSoak } = await import('../browser/faults/soak.js');
  const f = await runSoak(steadfast, { base: server.url, charges: Number(process.env.NODE_FAULT_SOAK_CHARGES ?? 1_000) });
  for (const line of formatSoak(f, 'node').split('\n')) t.diagnostic(line);
  assert.equal(f.doubleCharges, 0, 'double charges');
  assert.equal(f.lost, 0, `lost: ${JSON.stringify(f.violations)}`);
  assert.equal(f.unknownAfter, 0);
  assert.equal(f.rejected, 0, 'charge() never rejected');
  assert.ok(f.unknownBefore > 0 && f.deferred > 0, 'reconciliation and its settle window were exercised');
  assert.ok(f.ok);
});
