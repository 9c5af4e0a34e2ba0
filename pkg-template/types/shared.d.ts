/** Shared state: many processes (a state store, Redis) and many tabs (BroadcastChannel, storage). */

import type { BreakerState, CircuitBreaker, ConsecutiveBreakerOptions, RateBreakerOptions } from './breaker.js';
import type { SteadfastError } from './errors.js';
import type { ChargeOutcome, ChargeRequest, CheckoutClient } from './http.js';
import type { IdempotencyRecord, Resolution, ResubmitOptions, RunOptions, UnknownRecordMeta } from './idempotency.js';
import type { AbortSignalLike } from './platform.js';

/** A store call failed or timed out (`timeoutMs`). Idempotency never starts a charge it cannot record. */
export class StateStoreUnavailableError extends SteadfastError {
  readonly code: 'STORE_UNAVAILABLE';
  /**
   * The store operation: 'acquire' | 'record' | 'state' | 'isolate' | 'reset' | 'begin' | 'complete' | 'reopen' | 'peek' | 'resolve' |
   * 'unknownKeys' | 'acknowledge' | 'time' (the store's clock, for reconcile) | 'amnesia' (marking a loss) | 'read' (browser storage
   * refused to read a `persistentCheckoutKey` entry); or what refused: 'policy' (eviction),
   * 'persistence', 'layout' (old records or another bucket count), 'epoch'.
   */
  readonly op: string;
  readonly key?: string;
}

/** A store holds `maxRecords` live records: a NEW key is refused before anything runs (nothing live is evicted). */
export class StoreFullError extends SteadfastError {
  readonly code: 'STORE_FULL';
  readonly key: string;
  readonly maxRecords: number;
}

/**
 * Redis lost the store's data (an epoch marker gone or older than the one this process knew: a
 * restart without persistence, FLUSHALL, a failover to an empty node; or a bucket's write counter
 * below the one this process saw, or the write at that counter replaced by another one since: a
 * restart from an older RDB snapshot, a failover to a replica that lagged). Begins, reopens,
 * resolves, peeks and listings reject with it, running nothing, until `acknowledgeAmnesia()`. The
 * process that finds the loss marks the store in Redis, so every process, also one started later,
 * refuses too.
 */
export class StoreAmnesiaError extends SteadfastError {
  readonly code: 'STORE_AMNESIA';
  /** The store's key prefix. */
  readonly prefix: string;
}

/** What `onStoreError` receives. */
export interface StoreErrorEvent {
  readonly op: string;
  readonly error: StateStoreUnavailableError | StoreAmnesiaError;
  /** The breaker's name (breaker events). */
  readonly name?: string;
  /** The idempotency key (idempotency events). */
  readonly key?: string;
}

/** A shared breaker's state as a store handle answers it: the same names as `BreakerState`. */
export type BreakerStoreState = BreakerState;

/** The state a store call moved the breaker to (what `onStateChange` then reports), or 'none'. */
export type BreakerStoreTransition = BreakerStoreState | 'none';

/**
 * One breaker in a store. Every answer speaks state names; `permit` is the store's own opaque
 * token, handed back unchanged to `record`. `retryInMs`: how long a refused call waits (`Infinity`
 * while isolated); `state()` answers the open circuit's remaining cooldown, else 0.
 */
export interface BreakerStoreHandle {
  acquire(): Promise<{ granted: boolean; state: BreakerStoreState; permit?: unknown; retryInMs: number; transition: BreakerStoreTransition }>;
  record(permit: unknown, failed: boolean): Promise<{ state: BreakerStoreState; transition: BreakerStoreTransition }>;
  /**
   * An excluded outcome (`isExcluded`, or a refusal that never ran the call): nothing is counted, and
   * a half-open probe gives its slot back so the next call may probe. Optional for a custom store:
   * without it an excluded probe's slot is held until its lease lapses (twice `openDurationMs`).
   */
  release?(permit: unknown): Promise<{ state: BreakerStoreState; transition: BreakerStoreTransition }>;
  state(): Promise<{ state: BreakerStoreState; retryInMs: number }>;
  isolate(): Promise<{ state: BreakerStoreState; transition: BreakerStoreTransition }>;
  reset(): Promise<{ state: BreakerStoreState; transition: BreakerStoreTransition }>;
}

export interface IdempotencyStoreHandle {
  /**
   * `fingerprint`: the fingerprint TEXT; the store hashes it (Redis: the core's SHA-256/128, the same
   * in every process; the memory state store: a SipHash-128 keyed by its own secret seed).
   */
  begin(
    key: string,
    fingerprint: string | undefined,
    token: string,
  ): Promise<
    | { status: 'run'; startedAt?: number; token: unknown }
    | { status: 'done'; result: unknown }
    | { status: 'in-flight'; startedAt: number }
    | { status: 'unknown'; startedAt: number; error: string }
    | { status: 'mismatch' }
    | { status: 'full'; maxRecords: number }
  >;
  /**
   * `meta`: what an unknown record keeps for reconcile; `lastAttemptAgeMs` is the last attempt's
   * age (ms before this call, on the caller's clock), for a store that keeps its times on a clock of
   * its own (Redis TIME): such a store keeps `now - lastAttemptAgeMs`, never the caller's
   * `lastAttemptAt`. 'late': the record was settled (or taken by another attempt) before this
   * owner reported.
   */
  complete(
    key: string,
    token: unknown,
    outcome: 'done' | 'unknown' | 'failed',
    value: unknown,
    meta?: UnknownRecordMeta & { readonly lastAttemptAgeMs?: number },
  ): Promise<'ok' | 'late'>;
  peek(key: string): Promise<IdempotencyRecord<unknown> | undefined>;
  resolve(key: string, outcome: 'done' | 'failed', result?: unknown, startedAt?: number): Promise<'resolved' | 'not-found' | 'wrong-state'>;
  unknownKeys(): Promise<string[]>;
  /** Optional: one page of the list, `keys` as `[key, startedAt]` pairs; cursor undefined at the end. */
  unknownKeysPage?(cursor?: string): Promise<{ keys: [string, number][]; cursor: string | undefined }>;
  /** Optional: stores that can lose data start a new epoch after a StoreAmnesiaError. */
  acknowledgeAmnesia?(): Promise<{ generation: number }>;
  /**
   * Optional: the clock the store keeps `key`'s times in (ms; Redis TIME on the node that holds
   * it). reconcile() judges settle windows by it, read before each key's lookup is asked; without
   * it, by `Date.now()`.
   */
  now?(key: string): Promise<number>;
}

/** A shared breaker's options as a store receives them (defaults filled in). */
export type SharedBreakerConfig =
  | { readonly kind: 'consecutive'; readonly failureThreshold: number; readonly openDurationMs: number; readonly probesToClose: number }
  | {
      readonly kind: 'rate';
      readonly windowSize: number;
      readonly failureRateThreshold: number;
      readonly minimumCalls: number;
      readonly openDurationMs: number;
      readonly probesToClose: number;
    };

/** The async state-store interface behind SharedCircuitBreaker and SharedIdempotencyStore. */
export interface StateStore {
  readonly kind: string;
  breaker(name: string, config: SharedBreakerConfig): BreakerStoreHandle;
  /** `maxRecords` and `unknownTtlMs` default to the core's (as `SharedIdempotencyStoreOptions` states them). */
  idempotency(options: {
    readonly ttlMs: number;
    readonly inFlightLeaseMs: number;
    readonly maxRecords?: number;
    readonly unknownTtlMs?: number;
  }): IdempotencyStoreHandle;
}

/**
 * In-process store (the default): handles directly on the wasm core (BreakerCore, StoreCore). At most
 * 10,000 breaker names (past it the oldest closed one is dropped); each record set is bounded by its `maxRecords`.
 */
export function memoryStateStore(): StateStore;

/**
 * A node-redis (4+) or ioredis (5+) client, connected by you: one node (`createClient`, `new Redis`)
 * or a Redis Cluster (`createCluster`, `new Redis.Cluster`). steadfast depends on neither.
 */
export type RedisClientLike =
  | { sendCommand(args: string[]): Promise<unknown> }
  | {
      sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
      getNodeClientForKey(key: string, isReadonly?: boolean): Promise<unknown>;
      nodeClient(node: unknown): Promise<unknown>;
      readonly masters: readonly unknown[];
    }
  | { call(...args: string[]): Promise<unknown>; evalsha(sha: string, numKeys: number | string, ...args: (string | number)[]): Promise<unknown> };

export interface RedisStoreOptions {
  readonly client: RedisClientLike;
  /**
   * This service's name (1–64 letters, digits, `.`, `_`, `-`): the default prefix becomes
   * `steadfast:<service>`, so two services on one Redis never share a breaker or a key by accident.
   */
  readonly service?: string;
  /**
   * Key namespace; overrides the one `service` gives. Default `'steadfast:<service>'`, or
   * `'steadfast'` when no service is named — shared by every such store on the Redis, reported
   * through `onWarning` (for each such store), else once per process by `process.emitWarning` (code
   * `STEADFAST_SHARED_PREFIX`).
   */
  readonly prefix?: string;
  /** Bound on every Redis call (ms). Default 250. */
  readonly timeoutMs?: number;
  /**
   * Redis's maxmemory-policy may evict keys (anything but 'noeviction'): 'refuse' (default) rejects
   * idempotency calls with StateStoreUnavailableError (op 'policy'); 'warn' goes on and calls
   * `onWarning` once. Checked on first use and at most once a minute; a Redis that forbids CONFIG
   * cannot be checked and is used as is.
   */
  readonly evictionPolicy?: 'refuse' | 'warn';
  /**
   * A primary without AOF (`appendonly yes`) loses data when it crashes: with no persistence at all,
   * everything; with RDB snapshots (`save`) only, every write since the last snapshot. 'warn'
   * (default) calls `onWarning` once; 'refuse' rejects idempotency calls with
   * StateStoreUnavailableError (op 'persistence'); 'ignore'. Checked on every primary like the policy.
   */
  readonly persistence?: 'warn' | 'refuse' | 'ignore';
  /**
   * Records are spread over this many buckets, each its own hash tag (`{idem:<b>}`), so a cluster
   * spreads them over its primaries; each bucket holds at most `ceil(maxRecords / buckets)` live
   * records. Fixed for the life of the data: a store with another count refuses (op 'layout').
   * Integer 1–1024, default 64.
   */
  readonly buckets?: number;
  /**
   * Durability: when > 0, a begin, completion, reopen or resolve is acknowledged only once this many
   * replicas hold it (`WAIT` on the connection to the node that holds the record); fewer within
   * `waitTimeoutMs` is a StateStoreUnavailableError (a begin then runs nothing). Default 0 (no wait).
   */
  readonly waitReplicas?: number;
  /** How long one WAIT may take (ms). Default 100. */
  readonly waitTimeoutMs?: number;
  /**
   * No epoch marker in Redis at all: 'initialize' (default) writes one (a new deployment); 'refuse'
   * treats it as lost data (StoreAmnesiaError) until `acknowledgeAmnesia()` writes it.
   */
  readonly firstUse?: 'initialize' | 'refuse';
  /**
   * Records under the single-slot key layout of earlier versions (`<prefix>:{idem}:…`): 'refuse'
   * (default) rejects idempotency calls (op 'layout') so none is silently forgotten; 'ignore'.
   */
  readonly legacyLayout?: 'refuse' | 'ignore';
  /** Called once for each warning (eviction policy under 'warn', the shared default prefix). */
  readonly onWarning?: (message: string) => void;
}

/** Every decision is one Lua script on Redis's clock (TIME); every call is bounded by timeoutMs. */
export function redisStateStore(options: RedisStoreOptions): StateStore;

type SharedBreakerExtra = {
  /** Breakers with the same store and name share one state. */
  readonly name: string;
  /** Default: the process's memory store. */
  readonly store?: StateStore;
  /** Store unreachable: 'local' (default) runs an in-process breaker with the same options; 'reject' rejects with StateStoreUnavailableError. */
  readonly whenUnavailable?: 'local' | 'reject';
  /** How long a process answers "open" by itself before asking again. Default 1000 (remote stores), 0 (memory). */
  readonly localCacheMs?: number;
  readonly onStoreError?: (event: StoreErrorEvent) => void;
  readonly onStateChange?: (state: BreakerState) => void;
  readonly clock?: never;
  readonly state?: never;
};
export type SharedBreakerOptions =
  | (Omit<RateBreakerOptions, 'clock' | 'state' | 'onStateChange'> & SharedBreakerExtra)
  | (Omit<ConsecutiveBreakerOptions, 'clock' | 'state' | 'onStateChange'> & SharedBreakerExtra);

export class SharedCircuitBreaker {
  constructor(options: SharedBreakerOptions);
  readonly name: string;
  /** The state this process last saw. */
  readonly currentState: BreakerState;
  execute<T>(fn: () => Promise<T> | T): Promise<T>;
  execute<T, F>(fn: () => Promise<T> | T, fallback: () => Promise<F> | F): Promise<T | F>;
  /** Ask the store now. */
  state(): Promise<BreakerState>;
  isolate(): Promise<void>;
  reset(): Promise<void>;
}
export function createSharedBreaker(options: SharedBreakerOptions): SharedCircuitBreaker;
export function createRedisBreaker(options: SharedBreakerOptions & RedisStoreOptions): SharedCircuitBreaker;

export interface SharedIdempotencyStoreOptions {
  /** Default: a new memory store. */
  readonly store?: StateStore;
  /** How long done records replay. Default 86_400_000 (24 h). */
  readonly ttlMs?: number;
  /** An in-flight record whose owner has not reported for this long reads as unknown. Default 120_000. */
  readonly inFlightLeaseMs?: number;
  /** Live records held at most; a new key beyond it rejects with StoreFullError. Default 1,000,000. */
  readonly maxRecords?: number;
  /** How long Redis keeps an unknown record for reconciliation (ms). Default 2,592,000,000 (30 days). */
  readonly unknownTtlMs?: number;
  /**
   * An owner reported after its record was settled by someone else (its lease lapsed and reconcile
   * resolved it). A late success or unknown re-parks the key as unknown (back on the worklist).
   */
  readonly onLateCompletion?: (event: { readonly key: string; readonly outcome: 'done' | 'unknown' | 'failed' }) => void;
  readonly isTransient?: (error: unknown) => boolean;
  readonly onStoreError?: (event: StoreErrorEvent) => void;
}

/** IdempotencyStore's contract over a shared store; results must be JSON-serialisable for Redis. */
export class SharedIdempotencyStore<T = unknown> {
  constructor(options?: SharedIdempotencyStoreOptions);
  /** Rejects with StateStoreUnavailableError without calling `fn` when the start cannot be recorded. */
  run(key: string, fn: () => Promise<T> | T, options?: RunOptions): Promise<T>;
  /** `IdempotencyStore.resubmit` across processes (one compare-and-set in the store); StateStoreUnavailableError without calling `fn` when the reopen cannot be recorded. */
  resubmit(key: string, fn: () => Promise<T> | T, options?: ResubmitOptions): Promise<T>;
  peek(key: string): Promise<IdempotencyRecord<T> | undefined>;
  resolve(key: string, outcome: Resolution<T>): Promise<void>;
  /** Every unknown key, oldest first; a Redis store reads them page by page and retries a failed page from where it stopped. */
  unknownKeys(): Promise<string[]>;
  /** One page of that list: pass the previous page's `cursor` ('' or none to start); `cursor` is undefined on the last page. */
  unknownKeysPage(cursor?: string): Promise<{ keys: string[]; cursor: string | undefined }>;
  /** After a StoreAmnesiaError, once the lost keys are reconciled: start a new epoch (every process accepts calls again). Memory stores: `{ generation: 0 }`. */
  acknowledgeAmnesia(): Promise<{ generation: number }>;
}
export function createSharedIdempotencyStore<T = unknown>(options?: SharedIdempotencyStoreOptions): SharedIdempotencyStore<T>;
export function createRedisIdempotencyStore<T = unknown>(options: SharedIdempotencyStoreOptions & RedisStoreOptions): SharedIdempotencyStore<T>;

export interface TabSharing {
  readonly channel: string;
  /** Call it from the breaker's onStateChange. */
  onStateChange(state: BreakerState): void;
  close(): void;
}
/**
 * Share a CircuitBreaker's trips with the origin's other tabs (BroadcastChannel). A message can make
 * a breaker more careful (open it, for at most `openDurationMs`), never less: a close is believed
 * only from the tab whose half-open probe succeeded (it proves the `probe` lease it announced), and
 * only once this tab's own cooldown is over. `reset()` stays local. Defaults: `channel`
 * `'steadfast:breaker'`, `BroadcastChannel` the global one, no `onRemote`.
 */
export function shareBreakerAcrossTabs(
  breaker: CircuitBreaker,
  options?: {
    readonly channel?: string;
    readonly BroadcastChannel?: unknown;
    readonly onRemote?: (
      event: { type: 'open'; until: number } | { type: 'probe'; lease: string } | { type: 'closed' } | { type: 'invalid'; reason: string },
    ) => void;
  },
): TabSharing;

export type CheckoutKeyStatus = 'new' | 'in-flight' | 'unknown' | 'succeeded' | 'declined' | 'replaced';
export interface CheckoutKeyState {
  readonly key: string;
  readonly status: CheckoutKeyStatus;
  readonly startedAt?: number;
  /** When the key was first sent (ms since the epoch). */
  readonly firstUsedAt?: number;
  /** An unknown charge: when its last attempt was sent, or later (when it ended); the settle window of a resume counts from it. */
  readonly lastAttemptAt?: number;
  /** An unknown charge: the endpoint where it may have been processed, when the client's store knew it. */
  readonly endpoint?: string;
  /** A charge was in flight when its page went away (reload, crash): its outcome is unknown. */
  readonly interrupted?: boolean;
  readonly outcome?: ChargeOutcome;
}
export interface PersistentCheckoutKey {
  readonly key: string;
  readonly cartId: string;
  state(): Promise<CheckoutKeyState>;
  /**
   * `{ status: 'in-flight' }` when another tab is charging; `{ status: 'unknown' }` after an
   * interrupted/unknown charge unless `resume`. `resume` re-sends the same key as one that may have
   * been processed (the client's `maybeProcessed`, with the entry's `lastAttemptAt`, `firstUsedAt`
   * and `endpoint`): only a success, or a decline sent after the settle window from
   * `lastAttemptAt`, settles it; an interrupted charge's last attempt is not known, so a decline
   * then leaves it `unknown` (resume again after the window). A resumed key is never freed by an
   * error or an `unavailable` answer: it stays `unknown`.
   */
  charge(
    client: CheckoutClient,
    charge: ChargeRequest,
    options?: { readonly resume?: boolean; readonly signal?: AbortSignalLike },
  ): Promise<ChargeOutcome | { readonly status: 'in-flight' | 'unknown' | 'replaced'; readonly key: string }>;
  clear(): void;
}
/**
 * One idempotency key per cart, kept in `storage` (default localStorage) across reloads and tabs.
 * Rejects with `StoreFullError` when a new cart needs an entry and in-flight/unknown entries fill
 * `maxEntries`, and with `StateStoreUnavailableError` (`op: 'read'`) when the cart's entry cannot be
 * read: neither makes a new key.
 */
export function persistentCheckoutKey(options: {
  readonly cartId: string;
  readonly storage?: { getItem(key: string): string | null; setItem(key: string, value: string): void; removeItem?(key: string): void };
  /** Default navigator.locks; null to go without (no cross-tab mutual exclusion). */
  readonly locks?: unknown;
  /**
   * Settled entries older than this from the key's first use, and never-sent ones from their
   * creation, are pruned (ms). Default 86,400,000 (the gateway's key retention). An in-flight or
   * unknown entry (maybe charged) is never pruned: only a settled outcome or `clear()` ends it.
   */
  readonly maxAgeMs?: number;
  /**
   * Carts kept per storage, the oldest settled or never-sent pruned first. Default 100. In-flight
   * and unknown entries are never evicted: when they alone fill it, a NEW cart rejects with
   * `StoreFullError` (also reported to `onStorageError`).
   */
  readonly maxEntries?: number;
  /**
   * Called when storage refuses to record a charge's outcome after the request went out (quota
   * exceeded, SecurityError); `charge()` still resolves the real outcome. Default: none (ignored).
   * A refusal before anything is sent rejects `charge()` with the storage's error. Also called with
   * a read that throws: that is not "no entry" — `persistentCheckoutKey()`, `state()` or `charge()`
   * then rejects with `StateStoreUnavailableError` (`op: 'read'`), replacing and sending nothing.
   */
  readonly onStorageError?: (error: unknown) => void;
}): Promise<PersistentCheckoutKey>;
