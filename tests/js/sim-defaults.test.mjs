// The simulator entry's defaults come from the core (src/core/sim `Default` impls, read through
// simHistogramDefaults / simJitterDefaults): calling with no options is the same run as passing the
// documented defaults, and reports them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simulateHistogram, jitterStats } from 'steadfast/sim';

test('simulateHistogram(): the documented defaults, the same run as passing them', () => {
  const implicit = simulateHistogram();
  const documented = { clients: 10_000, baseDelayMs: 1_000, maxDelayMs: 30_000, attempt: 1, bucketMs: 100, seed: 1 };
  for (const [k, v] of Object.entries(documented)) assert.equal(implicit[k], v, k);
  const explicit = simulateHistogram(documented);
  assert.deepEqual(
    implicit.runs.map((r) => [r.strategy, r.peak, r.retries]),
    explicit.runs.map((r) => [r.strategy, r.peak, r.retries]),
  );
  assert.equal(implicit.runs.find((r) => r.strategy === 'fixed').peak, 10_000, 'fixed: every client in one bucket');
});

test('jitterStats(): the documented defaults, the same table as passing them', () => {
  const implicit = jitterStats();
  const documented = { samples: 20_000, attempt: 4, baseDelayMs: 1_000, maxDelayMs: 30_000, seed: 1 };
  for (const [k, v] of Object.entries(documented)) assert.equal(implicit[k], v, k);
  assert.deepEqual(implicit.rows, jitterStats(documented).rows);
  assert.ok(implicit.rows.length >= 4);
});
