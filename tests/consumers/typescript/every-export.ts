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

// Type-level assertions: `Equal` is exact (distinguishes any, unknown, readonly, optional).
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;
type IsAny<T> = 0 extends 1 & T ? true : false;
type Not<T extends boolean> = T extends true ? false : true;

// Shared state (Redis / tabs): see sharedState() at the end.
import {
  StateStoreUnavailableError,
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
  Expect<Equal<ReturnType<typeof fullJitter>, number>>,
  Expect<Equal<Parameters<typeof equalJitter>, [attempt: number, baseDelayMs: number, maxDelayMs: number]>>,
  Expect<Equal<ReturnType<typeof withRetry<string>>, Promise<string>>>,
  Expect<Equal<ReturnType<typeof newIdempotencyKey>, string>>,
  Expect<Equal<ReturnType<typeof version>, string>>,
  Expect<Equal<Jitter, 'full' | 'equal' | 'decorrelated' | 'none'>>,
  Expect<Equal<BreakerState, 'closed' | 'open' | 'half-open'>>,
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
  // The pipelines take the in-process classes and the shared (Redis) ones alike, structurally.
  Expect<Equal<IdempotencyStore<ChargeResult> extends IdempotencyRunner<ChargeResult> ? true : false, true>>,
  Expect<Equal<SharedIdempotencyStore<ChargeResult> extends IdempotencyRunner<ChargeResult> ? true : false, true>>,
  Expect<Equal<CircuitBreaker extends Executor ? true : false, true>>,
  Expect<Equal<SharedCircuitBreaker extends Executor ? true : false, true>>,
  Expect<Equal<IdempotencyStore<ChargeOutcome> extends ReconcilableStore<ChargeOutcome> ? true : false, true>>,
  Expect<Equal<SharedIdempotencyStore<ChargeOutcome> extends CheckoutStore ? true : false, true>>,
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
  check(restored.isolated, 'isolate()');
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
    new OfflineError(),
  ];
  const codes: SteadfastErrorCode[] = errors.map((error) => error.code);
  check(errors.every((error) => isSteadfastError(error) && error instanceof Error), 'every error is branded');
  check(codes.join() === 'INVALID_OPTION,CIRCUIT_OPEN,DUPLICATE_IN_FLIGHT,OUTCOME_UNKNOWN,KEY_REUSED,RETRY_BUDGET_EXHAUSTED,DEADLINE_EXCEEDED,KEY_NOT_FOUND,CHECKOUT_REJECTED,OFFLINE', codes.join());
  const thrown: unknown = errors[1];
  if (isSteadfastError(thrown)) {
    const code: SteadfastErrorCode = thrown.code;
    check(code === 'CIRCUIT_OPEN', 'isSteadfastError narrows to a code');
  }

  // Reconciliation of an unknown key.
  const lostKey = newIdempotencyKey();
  await store.run(lostKey, () => Promise.reject(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).catch(() => undefined);
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
  const fetchOptions: ResilientFetchOptions = { fetch: stubFetch, retry: retryOptions, breaker: registry, budget: false, idempotencyKey: 'auto', attemptTimeoutMs: 1_000 };
  const init: FetchInit = { method: 'POST', body: '{}' };
  const response: FetchResponse = await resilientFetch('https://pay.example.test/v1/charges', init, fetchOptions);
  check(response.status === 200 && sentKeys.length === 2 && sentKeys[0] !== null && sentKeys[0] === sentKeys[1], `resilientFetch keys: ${sentKeys.join()}`);
  check(registry.origins().join() === 'https://pay.example.test' && registry.get('https://pay.example.test').currentState === 'closed', 'BreakerRegistry');

  // The checkout client over the same stub.
  sentKeys.length = 0;
  const clientOptions: CheckoutClientOptions = { endpoint: 'https://pay.example.test/v1/charges', fetch: stubFetch, retry: retryOptions, breaker: { failureThreshold: 5, openDurationMs: 1_000 }, onAttempt: () => undefined };
  const client: CheckoutClient = createCheckoutClient(clientOptions);
  const request: ChargeRequest = { amountCents: 500, currency: 'usd', note: 'every-export' };
  const outcome: ChargeOutcome = await client.charge(request, { idempotencyKey: 'order-every-export' });
  check(outcome.status === 'succeeded' && outcome.key === 'order-every-export' && client.store.size === 1, `checkout: ${JSON.stringify(outcome)}`);

  // Shared state: memory store, a Redis store whose client never answers, tabs, a persisted key.
  const shared = await sharedState();
  check(shared.join() === '0,0,ran,closed,ch_1,SharedIdempotencyStore,STORE_UNAVAILABLE,redis (node-redis),local fallback,new,key', `shared state: ${shared.join()}`);
  return checks;
}

export async function sharedState(): Promise<string[]> {
  const out: string[] = [];
  const store: StateStore = memoryStateStore();
  const handle: BreakerStoreHandle = store.breaker('h', { kind: 'consecutive', failureThreshold: 1, openDurationMs: 10, probesToClose: 1 });
  const records: IdempotencyStoreHandle = store.idempotency({ ttlMs: 1000, inFlightLeaseMs: 1000 });
  out.push(String((await handle.state()).state), String((await records.unknownKeys()).length));
  const events: StoreErrorEvent[] = [];
  const options: SharedBreakerOptions = { name: 'every-export', store, failureThreshold: 2, openDurationMs: 1000, onStoreError: (e) => events.push(e) };
  const breaker: SharedCircuitBreaker = createSharedBreaker(options);
  out.push(await breaker.execute(async () => 'ran'), new SharedCircuitBreaker({ ...options, name: 'b2' }).currentState);
  const idemOptions: SharedIdempotencyStoreOptions = { ttlMs: 60_000, inFlightLeaseMs: 5_000 };
  const idem: SharedIdempotencyStore<{ id: string }> = createSharedIdempotencyStore<{ id: string }>(idemOptions);
  out.push((await idem.run('k', async () => ({ id: 'ch_1' }))).id, String(new SharedIdempotencyStore().constructor.name));
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

