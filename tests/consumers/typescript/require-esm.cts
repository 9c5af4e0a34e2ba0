// A CommonJS TypeScript file (.cts) requiring the ES module package: TS 5.8+ models Node's require(esm)
// under `module: nodenext`. Compiled with tsconfig.node.json.
import steadfast = require('steadfast');

const breaker: steadfast.CircuitBreaker = new steadfast.CircuitBreaker({ failureThreshold: 3, openDurationMs: 1_000 });
export const state: steadfast.BreakerState = breaker.currentState;
export const retried: Promise<number> = steadfast.withRetry(() => 1, { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 });
