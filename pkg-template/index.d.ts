/**
 * steadfast: full-jitter retries, a client-side circuit breaker, a retry budget and exactly one
 * idempotency key per charge. A pure Rust core compiled to WebAssembly; the same semantics in
 * Node 24 and browsers.
 *
 * These declarations need no `dom` lib: the few web types used are declared structurally in types/platform.d.ts.
 */

// The declarations, one file per concern.
export * from './types/platform.js';
export * from './types/loading.js';
export * from './types/retry.js';
export * from './types/breaker.js';
export * from './types/budget.js';
export * from './types/throttling.js';
export * from './types/idempotency.js';
export * from './types/pipeline.js';
export * from './types/policies.js';
export * from './types/hedge.js';
export * from './types/events.js';
export * from './types/errors.js';
export * from './types/http.js';
export * from './types/shared.js';
