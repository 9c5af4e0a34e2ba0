// Types for tests/support/gateway.mjs (local Stripe-like test payment gateway). See the JSDoc header there.

export type FaultName =
  | 'debitThenTimeout'
  | 'debitThenReset'
  | 'resetBeforeProcessing'
  | 'status500'
  | 'status502'
  | 'status503'
  | 'status504'
  | 'status429'
  | 'status401'
  | 'status404'
  | 'status409'
  | 'slow'
  | 'decline'
  | 'processAfterGiveUp';

export declare const FAULT_NAMES: readonly FaultName[];

export type FaultOptions = Partial<Record<FaultName, number>> & {
  /** Retry-After seconds on 429. Default 1. */
  retryAfterSeconds?: number;
  /** Delay added by the `slow` fault. Default 200. */
  slowMs?: number;
  /** How long a debit-then-timeout response is held before the socket is destroyed. Default 30000. */
  timeoutHoldMs?: number;
  /** How long a processAfterGiveUp request is held, unregistered, before it is processed. Default 500. */
  processLateMs?: number;
};

export interface GatewayOptions {
  /** PRNG seed for the fault schedule. Default 1. */
  seed?: number;
  /** Per-request fault probabilities (sum <= 1) plus fault settings. Default {}. */
  faults?: FaultOptions;
  /** 503 for every request while active; window is ms since start on the gateway clock, [startMs, endMs). */
  outage?: { startMs: number; endMs: number } | ((elapsedMs: number) => boolean);
  /** Gateway time in ms. Default Date.now. */
  clock?: () => number;
  /** Send Stripe-Should-Retry on error responses. Default true. */
  shouldRetryHeader?: boolean;
  /** false: `Connection: close` on every response (no reused connection, no silent browser re-send). Default true. */
  keepAlive?: boolean;
  /** Called first for every request; true = it answered (static files, control routes) and the gateway ignores it. */
  passthrough?: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => boolean;
}

export interface LedgerEntry {
  idempotencyKey: string;
  id: string;
  amountCents: number;
  currency: string;
  /** Gateway clock time of the debit (ms). */
  at: number;
}

export interface GatewayStats {
  requests: number;
  replays: number;
  conflicts: number;
  mismatches: number;
  validationErrors: number;
  outage503: number;
  debits: number;
  /** processAfterGiveUp requests held right now (they will be processed). */
  lateHeld: number;
  /** Faults actually applied, per name. */
  faults: Record<FaultName, number>;
  inFlight: number;
  storedKeys: number;
  openSockets: number;
  pendingTimers: number;
}

export interface Gateway {
  /** e.g. http://127.0.0.1:54321 */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
  forceNext(faultName: FaultName | 'none', count?: number): void;
  ledger(): LedgerEntry[];
  requests(): number;
  stats(): GatewayStats;
  chargesByKey(): Map<string, number>;
  reset(): void;
  /** Process every held processAfterGiveUp request now; returns how many. */
  releaseHeld(): number;
  /** A new fault schedule, validated as at start; then reset(). */
  configure(options: { seed?: number; faults?: FaultOptions }): void;
}

export declare function startGateway(options?: GatewayOptions): Promise<Gateway>;
