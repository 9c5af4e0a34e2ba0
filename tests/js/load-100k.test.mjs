// Load: 100,000 concurrent in-flight chargeCustomer calls through one breaker and one store complete, and
// nothing is left behind: with a short-TTL store and the clock advanced, store.size returns to 0. Runs
// tests/soak/load.mjs in a child `node --expose-gc` (exact GC), 2 rounds; memory figures are printed,
// and only loosely asserted (no timings): the JS heap after GC returns near its baseline and the wasm
// linear memory stops growing after the first round (it can never shrink: WebAssembly semantics).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const LOAD = fileURLToPath(new URL('../soak/load.mjs', import.meta.url));
const CALLS = 100_000;
const mb = (b) => `${(b / 1048576).toFixed(1)} MB`;

test(
  `load: ${CALLS.toLocaleString('en-US')} concurrent calls through one breaker and one store complete and leave no record`,
  { timeout: 120_000 },
  async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', LOAD, '--json', String(CALLS), '3'], {
      cwd: fileURLToPath(new URL('.', import.meta.url)),
      maxBuffer: 1 << 20,
    });
    const { baseline, results } = JSON.parse(stdout.trim().split('\n').at(-1));
    console.log(`load: baseline JS heap ${mb(baseline.heap)}, wasm ${mb(baseline.wasm)}`);
    for (const r of results) {
      console.log(
        `load: round ${r.round}: ${r.completed}/${r.calls} in ${r.ms} ms, peak in flight ${r.peakInFlight}, size ${r.sizeInFlight} → ${r.sizeDone} → ${r.sizeAfterExpiry}; JS heap peak ${mb(r.heapPeak)}, after GC ${mb(r.heapAfter)}; wasm ${mb(r.wasmAfter)}`,
      );
      assert.equal(r.completed, CALLS, `round ${r.round}: ${r.rejected} calls rejected`);
      assert.equal(r.peakInFlight, CALLS, 'the calls were not all in flight together');
      assert.equal(r.sizeInFlight, CALLS, 'the store did not hold every in-flight key');
      assert.equal(r.sizeDone, CALLS);
      assert.equal(r.sizeAfterExpiry, 0, 'records leaked past their TTL');
      assert.equal(r.breaker, 'closed');
      // Loose memory bounds (not timings): after GC the heap is back within 32 MB of the baseline.
      assert.ok(r.heapAfter - baseline.heap < 32 * 1048576, `JS heap after GC ${mb(r.heapAfter)} vs baseline ${mb(baseline.heap)}`);
    }
    // The wasm memory is reused: the last round does not grow it past what the previous round needed.
    assert.equal(results.at(-1).wasmAfter, results.at(-2).wasmAfter, 'wasm linear memory still growing round after round');
  },
);
