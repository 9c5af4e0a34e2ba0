/** Idempotency: one key per charge, its store, and reconciliation of unknown outcomes. */

/** What an unknown record keeps for reconciliation (absent when the store was not told). */
export interface UnknownRecordMeta {
  /** When its last attempt started (or, when not reported, when the failure was seen), ms. */
  readonly lastAttemptAt?: number;
  /** Attempts sent. */
  readonly attempts?: number;
  /** The settle window of the limits that produced the unknown (see `reconcile`). */
  readonly settleAfterMs?: number;
  /** The checkout client: the endpoint that may have processed the charge (reconciliation re-sends there only). */
  readonly endpoint?: string;
}

export type IdempotencyRecord<T> =
  | { readonly status: 'in-flight'; readonly startedAt: number }
  | { readonly status: 'done'; readonly result: T }
  | ({ readonly status: 'unknown'; readonly error: string; readonly startedAt: number } & UnknownRecordMeta);

/**
 * Options of `run()`. `fingerprint` and `scope` bind the key to one request. `fingerprint`: the
 * request (any string; `chargeCustomer` and the checkout client use the whole charge, canonical
 * JSON). `scope`: the principal a client-supplied key belongs to (a customer or tenant id): another
 * scope's use of the key is `IdempotencyKeyReuseError`, never a replay of this one's result. Both are
 * hashed by the core (SHA-256, first 128 bits).
 */
export interface RunOptions {
  /** Binds the key to one request: another fingerprint (or none) rejects with `IdempotencyKeyReuseError`. */
  readonly fingerprint?: string;
  /** The principal a client-supplied key belongs to. */
  readonly scope?: string;
  /** The settle window to keep if this run ends unknown (an OutcomeUnknownError's own wins). */
  readonly settleAfterMs?: number;
  /** Updated by the caller as attempts start (`attempts`, `lastAttemptAt`); read if the run ends unknown. */
  readonly progress?: { attempts?: number; lastAttemptAt?: number };
}

/**
 * How reconciliation settles an unknown key. With `startedAt` (from `peek()`), only the attempt that
 * began then is settled (compare-and-set): a stale answer about an earlier attempt cannot free a
 * newer one (it rejects with `KEY_WRONG_STATE`).
 */
export type Resolution<T> =
  { readonly status: 'done'; readonly result: T; readonly startedAt?: number } | { readonly status: 'failed'; readonly startedAt?: number };

export interface IdempotencyStoreOptions {
  /** How long a done key replays its result (ms). Default 86,400,000 (24 h). Unknown keys never expire. */
  readonly ttlMs?: number;
  /**
   * Records held at most (in flight, unknown, done within the TTL). Default 1,000,000. A new key
   * beyond it rejects with `StoreFullError` before anything runs; nothing live is evicted.
   */
  readonly maxRecords?: number;
  /** Clock (ms). Default `Date.now`. */
  readonly clock?: () => number;
  /**
   * Which failures of an unknown shape park a key as unknown. Default `isTransientError`. A failure
   * whose shape the core knows (an HTTP status, a network code, a timeout, steadfast's own errors)
   * is judged by the core's rule — and by the whole history `withRetry` recorded for it (with every
   * hedged copy the run's retry or hedge let go), not by the last answer — and this option can only
   * make the store more careful: an error it calls transient is parked whatever its shape says.
   */
  readonly isTransient?: (error: unknown) => boolean;
}

/** Options of `resubmit()`: the same request, and what settles it. */
export interface ResubmitOptions extends RunOptions {
  /** Only the attempt that began then (from `peek()`) is reopened: compare-and-set. */
  readonly startedAt?: number;
  /**
   * An error of `fn` that is an answer ABOUT this key and proves the charge did not happen (e.g. a
   * decline from a gateway that honours keys, sent after the settle window): the key is freed. Any
   * other failure leaves it unknown. Default: none refutes.
   */
  readonly refutes?: (error: unknown) => boolean;
}

export class IdempotencyStore<T = unknown> {
  constructor(options?: IdempotencyStoreOptions);
  /**
   * Run `fn` once per key. Keys are 1–255 printable ASCII characters, not starting or ending with a
   * space. `fingerprint` and `scope` bind the key to one request: another request (or none, when the
   * key was bound to one) rejects with `IdempotencyKeyReuseError`, in every status. A new key in a
   * full store rejects with `StoreFullError`.
   * The result type is `fn`'s (a subtype of the store's `T`): a replay returns what that key's `fn` returned.
   */
  run<R extends T = T>(key: string, fn: () => Promise<R> | R, options?: RunOptions): Promise<R>;
  /**
   * Reconciliation by re-sending: the key's UNKNOWN record goes back to in flight on the same record
   * (one compare-and-set; another request's fingerprint rejects with `IdempotencyKeyReuseError`
   * before `fn` is called; a key that is not unknown rejects with `IdempotencyStateError`), then
   * `fn` runs once: its result → done; an error `refutes` accepts → the key is free; anything else →
   * unknown again (`OutcomeUnknownError`). Nothing is freed in between.
   */
  resubmit<R extends T = T>(key: string, fn: () => Promise<R> | R, options?: ResubmitOptions): Promise<R>;
  peek(key: string): IdempotencyRecord<T> | undefined;
  /** Settle an unknown key (reconciliation). */
  resolve(key: string, outcome: Resolution<T>): void;
  /** Unknown keys, oldest first. */
  unknownKeys(): string[];
  /** Records held. */
  readonly size: number;
  /** The `maxRecords` limit. */
  readonly maxRecords: number;
}

/** A UUID v4 from the platform CSPRNG. Make it once per logical charge, at the API boundary. */
export function newIdempotencyKey(): string;

export interface ReconcileReport {
  /** Unknown keys looked up. */
  readonly checked: number;
  /** Settled as done (the charge happened; its result replays from now on). */
  readonly done: number;
  /** Settled as failed (the charge never happened; the key is free). */
  readonly failed: number;
  /** Answered failed, asked inside the settle window (however late the answer came): not believed yet, left unknown. */
  readonly deferred: number;
  /** Left unknown (lookup answered undefined, threw, or answered nonsense). */
  readonly stillUnknown: number;
  /**
   * When deferred > 0: ms until the earliest deferred key's "failed" may be believed, counted from
   * when its lookup was asked (so waiting it from the report is never early); else undefined.
   */
  readonly retryAfterMs: number | undefined;
  /** When deferred > 0: ms until every deferred key's "failed" may be believed (the whole batch can settle), counted the same way; else undefined. */
  readonly settleAllAfterMs: number | undefined;
  readonly errors: ReadonlyArray<{ readonly key: string; readonly error: unknown }>;
}

/** What `reconcile` needs of a store: `IdempotencyStore` or a shared (Redis) one (async is fine). */
export interface ReconcilableStore<T> {
  unknownKeys(): string[] | Promise<string[]>;
  peek(key: string): IdempotencyRecord<T> | undefined | Promise<IdempotencyRecord<T> | undefined>;
  resolve(key: string, outcome: Resolution<T>): void | Promise<void>;
}

/**
 * Settle every unknown key of `store` through `lookup(key, record)` (e.g. the gateway's settlement
 * listing): `{ status: 'done', result }`, `{ status: 'failed' }`, or `undefined` to leave it unknown.
 * A `done` is applied at once. A `failed` ("never happened") is applied only when the record's
 * settle window had passed since its last attempt at the time the lookup was asked — a request the
 * client gave up on may still be processed, and the answer covers only what your source of truth
 * knew when asked, however long it took to come back — and is `deferred` until then. The store's
 * clock is read once per key, just before its lookup. Prefer `createCheckoutClient(...).reconcile()`
 * (re-sends the same key) against a gateway that honours idempotency keys.
 */
export function reconcile<T>(
  store: ReconcilableStore<T>,
  lookup: (key: string, record: IdempotencyRecord<T> & { readonly status: 'unknown' }) => Promise<Resolution<T> | undefined> | Resolution<T> | undefined,
  options?: {
    /** Keys looked up at once. Default 8. */
    readonly concurrency?: number;
    /**
     * The window for records that carry none (ms). Default 120,000 (2 × 60 s: nothing bounded the
     * attempts). Given, it can only WIDEN a record's own window, never shorten it.
     */
    readonly settleAfterMs?: number;
    /** How long one lookup may take (ms); a lookup past it is that key's error (`LOOKUP_TIMEOUT`), the key stays unknown. Default 30,000. */
    readonly lookupTimeoutMs?: number;
    /**
     * Clock (ms) the settle windows are judged by, read before each key's lookup is asked.
     * Default: the store's own — a Redis store's TIME (the clock its records' times are kept in, so
     * a reconciler whose wall clock is off judges as any other), an in-process store's `clock`
     * option (default `Date.now`). For tests.
     */
    readonly clock?: () => number;
  },
): Promise<ReconcileReport>;
