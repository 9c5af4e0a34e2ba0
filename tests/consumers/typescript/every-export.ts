// Uses EVERY export of 'steadfast' (values and types) under `tsc --strict --module nodenext`; run.sh checks
// that each name exported by index.d.ts and by the runtime module is imported here. Needs neither the
// `dom` lib nor @types/node: only ES2022. Type-level checks (`Expect<Equal<…>>`) prove the declarations
// are precise, not `any`. run.mjs also RUNS it (Node 24 type stripping): main() returns its check count.
import {
  fullJitter,
  equalJitter,
  decorrelatedJitter,
  seedRandom,
  isTransientError,
  isFetchNetworkError,
  parseRetryAfter,
  withRetry,
  CircuitBreaker,
  RetryBudget,
  IdempotencyStore,
  newIdempotencyKey,
  chargeCustomer,
  chargeFingerprint,
  SteadfastError,
  CircuitOpenError,
  DuplicateRequestError,
  OutcomeUnknownError,
  IdempotencyKeyReuseError,
  RetryBudgetExhaustedError,
  DeadlineExceededError,
  IdempotencyStateError,
  OfflineError,
  isSteadfastError,
  version,
  reconcile,
  resilientFetch,
  BreakerRegistry,
  createCheckoutClient,
  CheckoutRequestError,
  UnknownEndpointError,
  ready,
  init,
  DEFAULT_RETRY_POLICY,
  WasmUnavailableError,
  PermanentError,
  TimeoutError,
  BulkheadRejectedError,
  wrap,
  pipeline,
  retry,
  timeout,
  bulkhead,
  fallback,
  idempotency,
  events,
} from 'steadfast';
import type {
  PlatformAbortSignal,
  WasmSource,
  WasmModule,
  PolicyContext,
  PolicyExecuteOptions,
  Policy,
  PolicyLike,
  PipelineStages,
  Bulkhead,
  Unsubscribe,
  RetryEvent,
  GiveUpReason,
  GiveUpEvent,
  BreakerStateEvent,
  BudgetRefusedEvent,
  IdempotencyOutcome,
  IdempotencyEvent,
  SteadfastEvents,
  SteadfastInputError,
  SteadfastErrorsByCode,
  SharedBreakerConfig,
} from 'steadfast';
import type {
  IdempotencyRunner,
  Executor,
  ReconcilableStore,
  CheckoutStore,
  AbortSignalLike,
  Jitter,
  RetryContext,
  RetryInfo,
  RetryPolicy,
  BreakerState,
  RateBreakerOptions,
  ConsecutiveBreakerOptions,
  CircuitBreakerOptions,
  BreakerSnapshot,
  TokenBucketBudgetOptions,
  RatioBudgetOptions,
  IdempotencyRecord,
  UnknownRecordMeta,
  RunOptions,
  ResubmitOptions,
  Resolution,
  IdempotencyStoreOptions,
  Charge,
  ChargeResult,
  ChargeDeps,
  SteadfastErrorCode,
  ReconcileReport,
  FetchResponse,
  FetchInit,
  FetchInput,
  FetchFn,
  FetchRetryOptions,
  ResilientFetchOptions,
  ChargeOutcome,
  CheckoutClientOptions,
  ChargeRequest,
  CheckoutClient,
} from 'steadfast';

// Throttling (issue 18): see throttling() at the end.
import { RetryQuota, RateLimiter, retryErrorClass } from 'steadfast';
import { gatewayDialect, isReplayed, IdempotencyKeyExpiredError } from 'steadfast';
import type { DialectName, CustomDialect, GatewayDialect } from 'steadfast';
import type { RetryErrorClass, RetryQuotaOptions, RateLimiterOptions } from 'steadfast';

// Hedging: see hedging() at the end.
import { hedge, HedgeNotSafeError } from 'steadfast';
import type { HedgeOptions, CallHedgeOptions, HedgePolicyOptions, HedgeContext, HedgeEvent } from 'steadfast';

// Type-level assertions: `Equal` is exact (distinguishes any, unknown, readonly, optional).
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;
type IsAny<T> = 0 extends 1 & T ? true : false;
type Not<T extends boolean> = T extends true ? false : true;

// Shared state (Redis / tabs): see sharedState() at the end.
import {
  StateStoreUnavailableError,
  StoreFullError,
  StoreAmnesiaError,
  memoryStateStore,
  redisStateStore,
  SharedCircuitBreaker,
  createSharedBreaker,
  SharedIdempotencyStore,
  createSharedIdempotencyStore,
  createRedisBreaker,
  createRedisIdempotencyStore,
  shareBreakerAcrossTabs,
  persistentCheckoutKey,
} from 'steadfast';
import type {
  StoreErrorEvent,
  BreakerStoreHandle,
  BreakerStoreState,
  BreakerStoreTransition,
  IdempotencyStoreHandle,
  StateStore,
  RedisClientLike,
  RedisStoreOptions,
  SharedBreakerOptions,
  SharedIdempotencyStoreOptions,
  TabSharing,
  CheckoutKeyStatus,
  CheckoutKeyState,
  PersistentCheckoutKey,
} from 'steadfast';

export type TypeChecks = [
  Expect<Equal<StoreAmnesiaError['code'], 'STORE_AMNESIA'>>,
  Expect<Equal<Awaited<ReturnType<SharedIdempotencyStore['unknownKeysPage']>>['cursor'], string | undefined>>,
  Expect<Equal<Awaited<ReturnType<SharedIdempotencyStore['acknowledgeAmnesia']>>, { generation: number }>>,
  Expect<Equal<BreakerStoreState, 'closed' | 'open' | 'half-open' | 'isolated'>>,
  Expect<Equal<BreakerStoreTransition, 'none' | 'closed' | 'open' | 'half-open' | 'isolated'>>,
  Expect<Equal<Awaited<ReturnType<BreakerStoreHandle['state']>>['state'], BreakerStoreState>>,
  Expect<Equal<Awaited<ReturnType<BreakerStoreHandle['acquire']>>['transition'], BreakerStoreTransition>>,
  Expect<Equal<ReturnType<typeof fullJitter>, number>>,
  Expect<Equal<Parameters<typeof equalJitter>, [attempt: number, baseDelayMs: number, maxDelayMs: number]>>,
  Expect<Equal<ReturnType<typeof withRetry<string>>, Promise<string>>>,
  Expect<Equal<ReturnType<typeof newIdempotencyKey>, string>>,
  Expect<Equal<ReturnType<typeof version>, string>>,
  Expect<Equal<Jitter, 'full' | 'equal' | 'decorrelated' | 'none'>>,
  Expect<Equal<BreakerState, 'closed' | 'open' | 'half-open' | 'isolated'>>,
  Expect<Equal<SharedCircuitBreaker['currentState'], BreakerState>>,
  Expect<Equal<CircuitBreaker['currentState'], BreakerState>>,
  Expect<Equal<CircuitOpenError['code'], 'CIRCUIT_OPEN'>>,
  Expect<Equal<ReturnType<IdempotencyStore<ChargeResult>['peek']>, IdempotencyRecord<ChargeResult> | undefined>>,
  Expect<Not<IsAny<RetryPolicy>>>,
  Expect<Not<IsAny<ChargeDeps>>>,
  Expect<Not<IsAny<SteadfastErrorCode>>>,
  Expect<Not<IsAny<CircuitBreakerOptions>>>,
  Expect<Not<IsAny<FetchResponse>>>,
  Expect<Not<IsAny<FetchInit>>>,
  Expect<Equal<Awaited<ReturnType<CheckoutClient['charge']>>, ChargeOutcome>>,
  Expect<Equal<Awaited<ReturnType<typeof reconcile<ChargeResult>>>, ReconcileReport>>,
  Expect<Equal<CheckoutRequestError['code'], 'CHECKOUT_REJECTED'>>,
  Expect<Equal<UnknownEndpointError['code'], 'UNKNOWN_ENDPOINT'>>,
  Expect<Equal<UnknownEndpointError['endpoints'], readonly string[]>>,
  // The pipelines take the in-process classes and the shared (Redis) ones alike, structurally.
  Expect<Equal<IdempotencyStore<ChargeResult> extends IdempotencyRunner<ChargeResult> ? true : false, true>>,
  Expect<Equal<SharedIdempotencyStore<ChargeResult> extends IdempotencyRunner<ChargeResult> ? true : false, true>>,
  Expect<Equal<CircuitBreaker extends Executor ? true : false, true>>,
  Expect<Equal<SharedCircuitBreaker extends Executor ? true : false, true>>,
  Expect<Equal<IdempotencyStore<ChargeOutcome> extends ReconcilableStore<ChargeOutcome> ? true : false, true>>,
  Expect<Equal<SharedIdempotencyStore<ChargeOutcome> extends CheckoutStore ? true : false, true>>,
  // Issue 16: exact types.
  Expect<Equal<RetryContext['signal'], PlatformAbortSignal | undefined>>,
  Expect<Equal<PolicyContext['signal'], PlatformAbortSignal | undefined>>,
  Expect<Equal<ReturnType<typeof withRetry<number>>, Promise<number>>>,
  Expect<Equal<Parameters<typeof withRetry>[1], RetryPolicy | undefined>>,
  Expect<Equal<typeof ready, Promise<void>>>,
  Expect<Equal<ReturnType<typeof init>, Promise<void>>>,
  Expect<Equal<SteadfastErrorsByCode['CIRCUIT_OPEN'], CircuitOpenError>>,
  Expect<Equal<SteadfastErrorsByCode['WASM_UNAVAILABLE'], WasmUnavailableError>>,
  Expect<Equal<WasmUnavailableError['reason'], 'csp' | 'permission' | 'load' | 'pending'>>,
  // Made before the core loaded, a checkout client answers this; its key is the caller's, if any.
  Expect<Equal<Extract<ChargeOutcome, { reason: 'wasm' }>['key'], string | undefined>>,
  Expect<Equal<CircuitOpenError['name'], 'CircuitOpenError'>>,
  Expect<Equal<ReturnType<typeof bulkhead>, Bulkhead>>,
  Expect<Equal<ReturnType<SteadfastEvents['onRetry']>, Unsubscribe>>,
  Expect<Equal<GiveUpReason, 'attempts' | 'not-retryable' | 'permanent' | 'deadline' | 'budget'>>,
  Expect<Equal<IdempotencyEvent['outcome'], IdempotencyOutcome>>,
  Expect<Equal<SharedBreakerConfig['kind'], 'consecutive' | 'rate'>>,
  Expect<Not<IsAny<WasmSource>>>,
  Expect<Not<IsAny<WasmModule>>>,
  Expect<Not<IsAny<PipelineStages>>>,
  Expect<Not<IsAny<SteadfastInputError>>>,
  Expect<Equal<CircuitBreaker extends PolicyLike ? true : false, true>>,
];

// The platform's Response (Node 24, browsers), typed as whatever FetchResponse is in this lib setup.
type ResponseConstructor = new (body: string, init: { status: number; headers?: Record<string, string> }) => FetchResponse;
const ResponseImpl = (globalThis as unknown as { Response: ResponseConstructor }).Response;
const headerOf = (init: FetchInit | undefined, name: string): string | null =>
  (init as unknown as { headers: { get(name: string): string | null } } | undefined)?.headers.get(name) ?? null;

class Failed extends Error {}
let checks = 0;
function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Failed(`every-export: ${what}`);
  checks += 1;
}

export async function main(): Promise<number> {
  checks = 0;
  check(/^\d+\.\d+\.\d+/.test(version()), 'version()');

  // Jitter and randomness.
  seedRandom(42);
  const jitter: Jitter = 'equal';
  const f = fullJitter(3, 100, 10_000);
  const e = equalJitter(3, 100, 10_000);
  const d = decorrelatedJitter(400, 100, 10_000);
  check(f >= 0 && f < 400, `fullJitter(3) in [0, 400): ${f}`);
  check(e >= 200 && e < 400, `equalJitter(3) in [200, 400): ${e}`);
  check(d >= 100 && d <= 10_000, `decorrelatedJitter in [100, 10000]: ${d}`);

  // Classification.
  check(isTransientError({ status: 503 }) && !isTransientError({ status: 404 }), 'isTransientError');
  check(isFetchNetworkError(new TypeError('Failed to fetch')) && !isFetchNetworkError(new TypeError('x is not a function')), 'isFetchNetworkError');
  check(parseRetryAfter('2', 0) === 2000, 'parseRetryAfter("2")');

  // Retry with a budget and a signal-shaped value.
  const budgetOptions: TokenBucketBudgetOptions = { capacity: 5, refillPerSec: 1 };
  const budget = new RetryBudget(budgetOptions);
  const ratioOptions: RatioBudgetOptions = { ratio: 0.1, minRetriesPerSec: 1, windowMs: 1_000 };
  const ratioBudget = new RetryBudget(ratioOptions);
  ratioBudget.recordRequest();
  check(typeof ratioBudget.tryConsume() === 'boolean', 'RetryBudget.tryConsume()');
  const infos: RetryInfo[] = [];
  const neverAborts: AbortSignalLike = {
    aborted: false,
    addEventListener: () => {},
    removeEventListener: () => {},
  };
  const policy: RetryPolicy = {
    maxAttempts: 3,
    baseDelayMs: 1,
    maxDelayMs: 2,
    jitter,
    budget,
    signal: neverAborts,
    maxElapsedMs: 5_000,
    onRetry: (info) => infos.push(info),
    isRetryable: isTransientError,
    random: () => 0.5,
    clock: () => Date.now(),
  };
  const answer: number = await withRetry(async (ctx: RetryContext) => {
    if (ctx.attempt === 1) throw Object.assign(new Error('reset'), { code: 'ECONNRESET' });
    return 42;
  }, policy);
  check(answer === 42 && infos.length === 1 && infos[0]?.attempt === 1, 'withRetry retried once');
  check(budget.available >= 4 && budget.available < 5, `budget.available after one retry: ${budget.available}`);

  // Circuit breakers, both shapes, a snapshot round trip.
  let now = 0;
  const rateOptions: RateBreakerOptions = {
    windowSize: 4,
    failureRateThreshold: 0.5,
    minimumCalls: 2,
    openDurationMs: 1_000,
    clock: () => now,
  };
  const rate = new CircuitBreaker(rateOptions);
  const consecutiveOptions: ConsecutiveBreakerOptions = {
    failureThreshold: 1,
    openDurationMs: 1_000,
    probesToClose: 1,
    clock: () => now,
    isFailure: (error) => !(error instanceof SteadfastError),
    onStateChange: (state) => void state,
  };
  const breaker = new CircuitBreaker(consecutiveOptions);
  await breaker.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
  const state: BreakerState = breaker.currentState;
  check(state === 'open' && !breaker.isolated, `breaker opens after one failure: ${state}`);
  const refused: unknown = await breaker.execute(() => 1).catch((error: unknown) => error);
  check(refused instanceof CircuitOpenError && refused.retryAfterMs === 1_000, 'CircuitOpenError.retryAfterMs');
  const snapshot: BreakerSnapshot = breaker.toJSON();
  const restored = new CircuitBreaker({ ...consecutiveOptions, state: snapshot });
  check(restored.currentState === 'open', 'restored from toJSON()');
  restored.reset();
  restored.isolate();
  check(restored.isolated && (restored as CircuitBreaker).currentState === 'isolated', 'isolate()'); // the cast drops the narrowing to 'open' above
  rate.openUntil(500);
  check(rate.currentState === 'open', 'openUntil()');

  // Idempotency and the pipeline.
  const storeOptions: IdempotencyStoreOptions = { ttlMs: 60_000, clock: () => now, isTransient: isTransientError };
  const store = new IdempotencyStore<ChargeResult>(storeOptions);
  const charge: Charge = { idempotencyKey: newIdempotencyKey(), amountCents: 1999, currency: 'eur' };
  const keys: string[] = [];
  const deps: ChargeDeps = {
    store,
    breaker: new CircuitBreaker({ failureThreshold: 5, openDurationMs: 1_000 }),
    policy: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
    gateway: async (c, ctx) => {
      keys.push(c.idempotencyKey);
      if (ctx.attempt === 1) throw Object.assign(new Error('bad gateway'), { status: 502 });
      return { reference: 'ch_1', amountCents: c.amountCents };
    },
  };
  const result = await chargeCustomer(charge, deps);
  const inferred: Expect<Equal<typeof result, ChargeResult>> = true;
  check(inferred, 'chargeCustomer infers ChargeResult');
  check(result.reference === 'ch_1' && keys.length === 2 && keys.every((k) => k === charge.idempotencyKey), 'chargeCustomer');
  const text: string = chargeFingerprint({ ...charge, sdkNonce: 'n-1' }, { volatileFields: ['sdkNonce'] });
  check(text === '{"amountCents":1999,"currency":"eur"}', `chargeFingerprint: ${text}`);
  const record: IdempotencyRecord<ChargeResult> | undefined = store.peek(charge.idempotencyKey);
  check(record?.status === 'done' && record.result.amountCents === 1999, 'peek() after a charge');

  // An unknown outcome, then reconciliation.
  const unknownKey = newIdempotencyKey();
  const runOptions: RunOptions = { settleAfterMs: 5_000, progress: { attempts: 2 } };
  await store.run(unknownKey, () => Promise.reject(Object.assign(new Error('timeout'), { name: 'TimeoutError' })), runOptions).catch(() => undefined);
  check(store.unknownKeys().includes(unknownKey), 'a timeout parks the key as unknown');
  const parked = store.peek(unknownKey);
  const meta: UnknownRecordMeta | undefined = parked?.status === 'unknown' ? parked : undefined;
  check(meta?.attempts === 2 && meta.settleAfterMs === 5_000 && meta.lastAttemptAt === now, `unknown record meta: ${JSON.stringify(meta)}`);
  const again: unknown = await store.run(unknownKey, () => result).catch((error: unknown) => error);
  check(again instanceof OutcomeUnknownError && again.key === unknownKey, 'OutcomeUnknownError');
  // Reconciliation by re-sending on the same record: another request is refused before fn runs.
  const resend: ResubmitOptions = { fingerprint: 'another', refutes: (e) => e instanceof Error };
  const resendRefused: unknown = await store.resubmit(unknownKey, () => result, resend).catch((error: unknown) => error);
  check(isSteadfastError(resendRefused, 'KEY_REUSED'), `resubmit() binds the record's request: ${String(resendRefused)}`);
  const resolution: Resolution<ChargeResult> = { status: 'done', result };
  store.resolve(unknownKey, resolution);
  check((await store.run(unknownKey, () => ({ reference: 'x', amountCents: 1 }))) === result, 'resolve() then replay');
  check(store.size === 2, `store.size: ${store.size}`);

  // Every error class, and the brand.
  const errors: SteadfastError[] = [
    new SteadfastError('base', 'INVALID_OPTION'),
    new CircuitOpenError(10),
    new DuplicateRequestError('k', 0),
    new OutcomeUnknownError('k', 0, { cause: new Error('timeout') }),
    new IdempotencyKeyReuseError('k'),
    new RetryBudgetExhaustedError(new Error('503'), 2),
    new DeadlineExceededError(1_000, new Error('503'), 3),
    new IdempotencyStateError('k', 'KEY_NOT_FOUND', 'no record'),
    new CheckoutRequestError(400, { error: 'bad request' }),
    new UnknownEndpointError('k', 'https://b.example/v1', ['https://a.example/v1']),
    new OfflineError(),
  ];
  const codes: SteadfastErrorCode[] = errors.map((error) => error.code);
  check(
    errors.every((error) => isSteadfastError(error) && error instanceof Error),
    'every error is branded',
  );
  check(
    codes.join() ===
      'INVALID_OPTION,CIRCUIT_OPEN,DUPLICATE_IN_FLIGHT,OUTCOME_UNKNOWN,KEY_REUSED,RETRY_BUDGET_EXHAUSTED,DEADLINE_EXCEEDED,KEY_NOT_FOUND,CHECKOUT_REJECTED,UNKNOWN_ENDPOINT,OFFLINE',
    codes.join(),
  );
  const thrown: unknown = errors[1];
  if (isSteadfastError(thrown)) {
    const code: SteadfastErrorCode = thrown.code;
    check(code === 'CIRCUIT_OPEN', 'isSteadfastError narrows to a code');
  }

  // Reconciliation of an unknown key.
  const lostKey = newIdempotencyKey();
  await store.run(lostKey, () => Promise.reject(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).catch(() => undefined);
  now += 120_000; // past the default settle window, on the store's clock (which reconcile judges by)
  const report: ReconcileReport = await reconcile(store, (k) => (k === lostKey ? { status: 'failed' } : undefined), { concurrency: 2 });
  check(report.checked === 1 && report.failed === 1 && store.peek(lostKey) === undefined, `reconcile(): ${JSON.stringify(report)}`);

  // HTTP: resilientFetch over a stub fetch that answers 503 once, then 200; the same key both times.
  const sentKeys: (string | null)[] = [];
  const stubFetch: FetchFn = async (input: FetchInput, init?: FetchInit) => {
    void input;
    sentKeys.push(headerOf(init, 'idempotency-key'));
    return sentKeys.length === 1
      ? new ResponseImpl('{}', { status: 503 })
      : new ResponseImpl(JSON.stringify({ reference: 'ch_http' }), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const retryOptions: FetchRetryOptions = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2, jitter: 'full' };
  const registry = new BreakerRegistry({ failureThreshold: 5, openDurationMs: 1_000 });
  const fetchOptions: ResilientFetchOptions = {
    fetch: stubFetch,
    retry: retryOptions,
    breaker: registry,
    budget: false,
    idempotencyKey: 'auto',
    attemptTimeoutMs: 1_000,
  };
  const init: FetchInit = { method: 'POST', body: '{}' };
  const response: FetchResponse = await resilientFetch('https://pay.example.test/v1/charges', init, fetchOptions);
  check(response.status === 200 && sentKeys.length === 2 && sentKeys[0] !== null && sentKeys[0] === sentKeys[1], `resilientFetch keys: ${sentKeys.join()}`);
  check(registry.origins().join() === 'https://pay.example.test' && registry.get('https://pay.example.test').currentState === 'closed', 'BreakerRegistry');
  const pinnedBreaker: CircuitBreaker = registry.pin({ href: 'https://pay.example.test/v1/charges' });
  const inUse: boolean = pinnedBreaker.holdsProtection;
  check(pinnedBreaker === registry.get('https://pay.example.test') && typeof inUse === 'boolean', 'BreakerRegistry.pin');

  // The checkout client over the same stub.
  sentKeys.length = 0;
  const clientOptions: CheckoutClientOptions = {
    endpoint: 'https://pay.example.test/v1/charges',
    fetch: stubFetch,
    retry: retryOptions,
    breaker: { failureThreshold: 5, openDurationMs: 1_000 },
    onAttempt: () => undefined,
  };
  const client: CheckoutClient = createCheckoutClient(clientOptions);
  const request: ChargeRequest = { amountCents: 500, currency: 'usd', note: 'every-export' };
  const outcome: ChargeOutcome = await client.charge(request, { idempotencyKey: 'order-every-export' });
  check(outcome.status === 'succeeded' && outcome.key === 'order-every-export' && client.store.size === 1, `checkout: ${JSON.stringify(outcome)}`);

  // Gateway dialects: a built-in and a custom one, resolved by the core; a replay marker; an expired key.
  const adyen: GatewayDialect = gatewayDialect('adyen' satisfies DialectName);
  const custom: CustomDialect = { base: 'checkout', retentionMs: 7 * 86_400_000, syntax: 'raw' };
  check(adyen.maxKeyLength === 64 && gatewayDialect(custom).retentionMs === 7 * 86_400_000, 'gatewayDialect');
  const replayHeaders = { get: (name: string) => (name.toLowerCase() === 'idempotent-replayed' ? 'true' : null) };
  check(isReplayed({ status: 200, ok: true, headers: replayHeaders } as unknown as FetchResponse, 'stripe'), 'isReplayed');
  const expired = new IdempotencyKeyExpiredError('k', { firstUsedAt: 0, retentionMs: 1, dialect: 'stripe' });
  check(isSteadfastError(expired, 'IDEMPOTENCY_KEY_EXPIRED') && expired.retentionMs === 1, 'IdempotencyKeyExpiredError');

  // Throttling: a weighted quota as the budget, an adaptive limiter on every attempt.
  const throttled = await throttling();
  check(throttled === 'throttled,499,true,ok', `throttling: ${throttled}`);

  const hedged = await hedging();
  check(hedged === 'copy 1,started won cancelled,HEDGE_NOT_SAFE,POST', `hedging: ${hedged}`);

  // Shared state: memory store, a Redis store whose client never answers, tabs, a persisted key.
  checks += await issue16();
  const shared = await sharedState();
  check(
    shared.join() === 'closed,0,open 1,ran,closed,STORE_FULL 1,ch_1,SharedIdempotencyStore,STORE_UNAVAILABLE,redis (node-redis),local fallback,new,key',
    `shared state: ${shared.join()}`,
  );
  return checks;
}

export async function sharedState(): Promise<string[]> {
  const out: string[] = [];
  const store: StateStore = memoryStateStore();
  const handle: BreakerStoreHandle = store.breaker('h', { kind: 'consecutive', failureThreshold: 1, openDurationMs: 10, probesToClose: 1 });
  const records: IdempotencyStoreHandle = store.idempotency({ ttlMs: 1000, inFlightLeaseMs: 1000 });
  out.push((await handle.state()).state, String((await records.unknownKeys()).length));
  // A user-written store implements the breaker handle in state names only (here: counting trips
  // on top of the memory store's handle).
  let trips = 0;
  const counting: StateStore = {
    kind: 'counting',
    breaker(name, config) {
      const inner = store.breaker(`counting-${name}`, config);
      const seen = <T extends { transition: BreakerStoreTransition }>(r: T): T => {
        if (r.transition === 'open') trips += 1;
        return r;
      };
      return {
        acquire: async () => seen(await inner.acquire()),
        record: async (permit, failed) => seen(await inner.record(permit, failed)),
        state: async () => {
          const r = await inner.state();
          const s: BreakerStoreState = r.state;
          return { state: s, retryInMs: r.retryInMs };
        },
        isolate: async () => seen(await inner.isolate()),
        reset: async () => seen(await inner.reset()),
      };
    },
    idempotency: (o) => store.idempotency(o),
  };
  const countedStates: string[] = [];
  const counted = new SharedCircuitBreaker({
    name: 'counted',
    store: counting,
    failureThreshold: 1,
    openDurationMs: 60_000,
    onStateChange: (s) => void countedStates.push(s),
  });
  await counted
    .execute(async () => {
      throw new Error('down');
    })
    .catch(() => undefined);
  out.push(`${countedStates.join('/')} ${trips}`);
  const events: StoreErrorEvent[] = [];
  const options: SharedBreakerOptions = { name: 'every-export', store, failureThreshold: 2, openDurationMs: 1000, onStoreError: (e) => events.push(e) };
  const breaker: SharedCircuitBreaker = createSharedBreaker(options);
  out.push(await breaker.execute(async () => 'ran'), new SharedCircuitBreaker({ ...options, name: 'b2' }).currentState);
  const idemOptions: SharedIdempotencyStoreOptions = { ttlMs: 60_000, inFlightLeaseMs: 5_000, maxRecords: 10, unknownTtlMs: 86_400_000 };
  const bound: RunOptions = { fingerprint: 'order-1', scope: 'customer-1' };
  const small = new IdempotencyStore<number>({ maxRecords: 1 });
  void small.run('a', () => new Promise<number>(() => undefined), bound);
  const full = await small
    .run('b', async () => 1)
    .then(
      () => 'no error',
      (e: unknown) => (e instanceof StoreFullError ? `${e.code} ${e.maxRecords}` : 'other'),
    );
  out.push(full);
  const idem: SharedIdempotencyStore<{ id: string }> = createSharedIdempotencyStore<{ id: string }>(idemOptions);
  out.push((await idem.run('k', async () => ({ id: 'ch_1' }))).id, String(new SharedIdempotencyStore().constructor.name));
  // Redis forgetting is a typed error of its own; a memory store never forgets.
  if (StoreAmnesiaError.name !== 'StoreAmnesiaError' || (await idem.acknowledgeAmnesia()).generation !== 0) out.push('amnesia types');
  // Redis: a stand-in client that never answers (no server here): typed, bounded rejection.
  const client: RedisClientLike = { sendCommand: () => new Promise<unknown>(() => undefined) };
  const redisOptions: RedisStoreOptions = { client, prefix: 'ee', timeoutMs: 20 };
  const redisStore: StateStore = redisStateStore(redisOptions);
  const redisIdem = createRedisIdempotencyStore({ ...redisOptions });
  const err = await redisIdem.run('k', async () => 1).catch((e: unknown) => e);
  out.push(err instanceof StateStoreUnavailableError ? err.code : 'no error', redisStore.kind);
  const redisBreaker = createRedisBreaker({ ...redisOptions, name: 'rb', failureThreshold: 1, openDurationMs: 10, whenUnavailable: 'local' });
  out.push(await redisBreaker.execute(async () => 'local fallback'));
  // Tabs (BroadcastChannel exists in Node and browsers).
  let tabs: TabSharing | undefined;
  const local = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 10, onStateChange: (s) => tabs?.onStateChange(s) });
  tabs = shareBreakerAcrossTabs(local, { channel: 'every-export' });
  tabs.close();
  const data = new Map<string, string>();
  const checkout: PersistentCheckoutKey = await persistentCheckoutKey({
    cartId: 'cart',
    storage: { getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v), removeItem: (k) => void data.delete(k) },
    locks: null,
  });
  const state: CheckoutKeyState = await checkout.state();
  const status: CheckoutKeyStatus = state.status;
  out.push(status, checkout.key.length > 0 ? 'key' : 'no key');
  return out;
}

export type ThrottleTypeChecks = [
  Expect<Equal<ReturnType<typeof retryErrorClass>, 'timeout' | 'throttled' | 'serverError'>>,
  Expect<Equal<RateLimiter['preset'], 'cubic' | 'aws' | 'aimd'>>,
  Expect<Equal<ReturnType<RateLimiter['run']>, Promise<unknown>>>,
  Expect<Not<IsAny<RetryPolicy['budget']>>>,
];

export async function throttling(): Promise<string> {
  const cls: RetryErrorClass = retryErrorClass({ status: 429 });
  const quotaOptions: RetryQuotaOptions = { preset: 'aws', successRefund: 1 };
  const quota = new RetryQuota(quotaOptions);
  const limiterOptions: RateLimiterOptions = { preset: 'cubic', minRatePerSec: 100 };
  const limiter = new RateLimiter(limiterOptions);
  let calls = 0;
  const value = await withRetry(
    async () => {
      calls += 1;
      if (calls === 1) throw Object.assign(new Error('busy'), { status: 429 });
      return 'ok';
    },
    { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, budget: quota, rateLimiter: limiter },
  );
  // The retry paid 5 (throttled), the success refunded it: 500 again; one more success cannot exceed 500.
  quota.recordSuccess();
  const v: string = value;
  return [cls, quota.available - 1, limiter.enabled, v].join();
}

/** Issue 16: loading, exact types, policies, events. Returns its check count. */
export async function issue16(): Promise<number> {
  let n = 0;
  const ok = (condition: boolean, what: string): void => {
    if (!condition) throw new Failed(`every-export (issue 16): ${what}`);
    n += 1;
  };
  await ready;
  await init();
  ok(new WasmUnavailableError(new Error('Refused to compile: Content Security Policy')).reason === 'csp', 'WasmUnavailableError reason');

  // The result type comes from the gateway, with an untyped store and no policy (the default one).
  const breaker = new CircuitBreaker({ failureThreshold: 5, openDurationMs: 1_000 });
  const charged = await chargeCustomer(
    { idempotencyKey: newIdempotencyKey(), amountCents: 100, currency: 'usd' },
    { store: new IdempotencyStore(), breaker, gateway: async (c) => ({ reference: 'r', amountCents: c.amountCents, receipt: true as const }) },
  );
  const fromGateway: Expect<Equal<typeof charged, { reference: string; amountCents: number; receipt: true }>> = true;
  ok(fromGateway && charged.receipt, 'chargeCustomer infers the gateway result');
  const defaulted: number = await withRetry(async () => 1);
  ok(defaulted === 1 && DEFAULT_RETRY_POLICY.maxAttempts === 3, 'withRetry(fn) with the default policy');

  // Fallback typing is T | F on both breakers and on policies.
  const viaFallback = await breaker.execute(
    async () => 1,
    () => 'cached' as const,
  );
  const union: Expect<Equal<typeof viaFallback, number | 'cached'>> = true;
  ok(union && viaFallback === 1, 'execute(fn, fallback): T | F');
  const guarded = pipeline({ fallback: fallback('cached' as const), retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 }, timeout: 1_000, breaker });
  const piped = await guarded.execute(async (ctx: PolicyContext) => ctx.attempt);
  const pipedType: Expect<Equal<typeof piped, number | 'cached'>> = true;
  ok(pipedType && piped === 1, 'pipeline result: T | F');
  const stages: PipelineStages = {
    bulkhead: bulkhead(2, 2),
    retry: retry(DEFAULT_RETRY_POLICY),
    timeout: timeout(1_000),
    idempotency: idempotency(new IdempotencyStore()),
  };
  const opts: PolicyExecuteOptions = { idempotencyKey: 'order-ts-1' };
  ok((await pipeline(stages).execute(() => 'once', opts)) === 'once', 'pipeline with every stage');
  const wrapped: Policy = wrap(breaker, retry(), timeout(1_000));
  ok((await wrapped.execute(({ attempt }) => attempt)) === 1, 'wrap');

  // Per-code narrowing.
  const refused: unknown = new CircuitOpenError(5);
  if (isSteadfastError(refused, 'CIRCUIT_OPEN')) {
    const narrowed: Expect<Equal<typeof refused, CircuitOpenError>> = true;
    ok(narrowed && refused.retryAfterMs === 5, 'isSteadfastError(e, code) narrows to the class');
  }
  const errs: unknown[] = [new PermanentError(new Error('x')), new TimeoutError(5), new BulkheadRejectedError(1, 0)];
  ok(errs.every((e) => isSteadfastError(e)) && isSteadfastError(errs[1], 'TIMEOUT') && errs[1].timeoutMs === 5, 'new error classes');

  // Events.
  const seen: string[] = [];
  const offs: Unsubscribe[] = [
    events.onRetry((e: RetryEvent) => void seen.push(`retry ${e.attempt}`)),
    events.onGiveUp((e: GiveUpEvent) => void seen.push(`giveUp ${e.reason}`)),
    events.onBreakerStateChange((e: BreakerStateEvent) => void seen.push(e.state)),
    events.onBudgetRefused((e: BudgetRefusedEvent) => void seen.push(`refused ${e.attempt}`)),
    events.onIdempotency((e: IdempotencyEvent) => void seen.push(e.outcome)),
  ];
  await withRetry(
    async () => {
      throw Object.assign(new Error('503'), { status: 503 });
    },
    { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
  ).catch(() => undefined);
  for (const off of offs) off();
  ok(seen.join() === 'retry 1,giveUp attempts', `events: ${seen.join()}`);
  return n;
}

/** A slow first copy overtaken by its hedge; an unkeyed POST refused. */
export async function hedging(): Promise<string> {
  const tail: HedgeOptions = { delayMs: 5, maxHedges: 1 };
  const call: CallHedgeOptions = { ...tail, safe: true };
  const staged: HedgePolicyOptions = { ...call, isRetryable: () => true };
  const kinds: string[] = [];
  const off = events.onHedge((e: HedgeEvent) => void kinds.push(e.kind));
  // The first copy answers only when aborted (then with its reason); the hedge answers at once.
  const value = await hedge(staged).execute((ctx) => {
    const copy = ctx as typeof ctx & HedgeContext;
    const index: Expect<Equal<typeof copy.hedge, number>> = true;
    if (index && copy.hedge > 0) return `copy ${copy.hedge}`;
    return new Promise<string>((_, reject) => copy.signal.addEventListener('abort', () => reject(copy.signal.reason)));
  });
  off();
  const refused = await resilientFetch('http://127.0.0.1:9/', { method: 'POST', body: '{}' }, { hedge: tail }).then(
    () => 'sent',
    (e: unknown) => (e instanceof HedgeNotSafeError ? `${e.code},${e.method}` : String(e)),
  );
  return `${value},${kinds.join(' ')},${refused}`;
}
