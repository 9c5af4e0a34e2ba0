// Why: the codes StoreCore answers with, by name.

/** Wire codes of StoreCore.begin (low 3 bits; bit 3 = expired slots to drain first). Mirrors src/wasm/idempotency.rs. */
export const BEGIN = Object.freeze({ RUN: 0, REPLAY: 1, IN_FLIGHT: 2, UNKNOWN: 3, MISMATCH: 4, FULL: 5, EXPIRED_FLAG: 8 });
/** Wire codes of StoreCore.resolve. Mirrors src/wasm/idempotency.rs. */
export const RESOLVE = Object.freeze({ RESOLVED: 0, NOT_FOUND: 1, WRONG_STATE: 2 });
