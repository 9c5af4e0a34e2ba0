// Deliberate type errors: this file must NOT compile. Each line marked `// @expect TSxxxx[|TSyyyy]` must
// get one of those errors, and no other line may get any (run.sh checks both against tsc's output), so
// each mistake is caught by a precise declaration, not by luck, and the declarations are not `any`.
// Keep each mistake on ONE line: tsc reports the line where the wrong expression starts.
import {
  withRetry,
  CircuitBreaker,
  RetryBudget,
  IdempotencyStore,
  chargeCustomer,
  newIdempotencyKey,
  isTransientError,
  CircuitOpenError,
  createCheckoutClient,
  resilientFetch,
  type ChargeResult,
  type ChargeDeps,
  type SteadfastErrorCode,
  isSteadfastError,
  timeout,
  bulkhead,
  pipeline,
  fallback,
  events,
} from 'steadfast';

const key = newIdempotencyKey();
const store = new IdempotencyStore<ChargeResult>();
const breaker = new CircuitBreaker({ failureThreshold: 3, openDurationMs: 1_000 });
const policy = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 100 } as const;

// Wrong option types.
withRetry(async () => 1, { maxAttempts: '3', baseDelayMs: 10, maxDelayMs: 100 }); // @expect TS2322
withRetry(async () => 1, { maxAttemps: 3, baseDelayMs: 10 }); // @expect TS2561|TS2353
withRetry(async () => 1, { retries: 3 }); // @expect TS2353|TS2559
withRetry(async () => 1, { maxAttempts: 5 }); // a partial policy is whole: the rest are the core's defaults
withRetry(async () => 1, { ...policy, jitter: 'ful' }); // @expect TS2820|TS2322
withRetry(async () => 1, { ...policy, onRetry: (info: { attempt: string }) => info }); // @expect TS2322
withRetry(async () => 1, { ...policy, budget: { capacity: 1, refillPerSec: 1 } }); // @expect TS2740|TS2739|TS2322|TS2353

// Mixing the two breaker shapes, and missing what each shape needs.
new CircuitBreaker({ failureThreshold: 3, windowSize: 10, failureRateThreshold: 0.5, openDurationMs: 1_000 }); // @expect TS2322|TS2345|TS2769
new CircuitBreaker({ windowSize: 10, openDurationMs: 1_000 }); // @expect TS2345|TS2322
new CircuitBreaker({ failureThreshold: 3 }); // @expect TS2345|TS2322
const notHalfOpen: 'closed' | 'open' = breaker.currentState; // @expect TS2322
breaker.currentState = 'open'; // @expect TS2540

// Budgets: one shape at a time.
new RetryBudget({ capacity: 10, refillPerSec: 1, ratio: 0.2 }); // @expect TS2345|TS2322|TS2769

// Idempotency: wrong resolve() shapes, wrong result type, unchecked peek().
store.resolve(key, { status: 'done' }); // @expect TS2345
store.resolve(key, { status: 'ok', result: { reference: 'r', amountCents: 1 } }); // @expect TS2322|TS2820|TS2345
store.run(key, async () => 'a string, not a ChargeResult'); // @expect TS2322|TS2345
const peeked: ChargeResult = store.peek(key).result; // @expect TS18048|TS2532|TS2339

// The pipeline: its result is a ChargeResult, not a string; the gateway must return one.
const charged: string = await chargeCustomer({ idempotencyKey: key, amountCents: 100, currency: 'usd' }, { store, breaker, policy, gateway: async () => ({ reference: 'r', amountCents: 100 }) }); // @expect TS2322
const badDeps: ChargeDeps = { store, breaker, policy, gateway: async () => ({ reference: 1, amountCents: 100 }) }; // @expect TS2322
chargeCustomer({ idempotencyKey: key, amountCents: '100', currency: 'usd' }, badDeps); // @expect TS2322|TS2345

// HTTP: a misspelled option, a breaker that is neither, an outcome used without narrowing.
const client = createCheckoutClient({ endpoint: 'https://pay.example.test/v1/charges', retry: { maxAttempts: 3, jiter: 'full' } }); // @expect TS2561|TS2353
resilientFetch('https://pay.example.test/', { method: 'GET' }, { breaker: true }); // @expect TS2322
const reference: string = (await client.charge({ amountCents: 100, currency: 'usd' })).reference; // @expect TS2339

// Misc: arity, error fields, codes.
isTransientError(); // @expect TS2554
newIdempotencyKey(42); // @expect TS2554
const retryAfter: string = new CircuitOpenError(5).retryAfterMs; // @expect TS2322
const code: SteadfastErrorCode = 'CIRCUIT_CLOSED'; // @expect TS2322|TS2820

// Issue 16: exact types.
const inferredFromFn: string = await withRetry(async () => 1); // @expect TS2322
withRetry(async () => 1, { ...policy, retryOnResult: 1 }); // @expect TS2322
const fromGateway: string = await chargeCustomer({ idempotencyKey: key, amountCents: 1, currency: 'usd' }, { store: new IdempotencyStore(), breaker, gateway: async () => ({ reference: 'r', amountCents: 1 }) }); // @expect TS2322
const notOnlyT: number = await breaker.execute(async () => 1, async () => 'cached'); // @expect TS2322
const notOnlyTPipeline: number = await pipeline({ fallback: fallback('cached') }).execute(async () => 1); // @expect TS2322
isSteadfastError(new Error('x'), 'CIRCUIT_CLOSED'); // @expect TS2345
const maybe: unknown = new CircuitOpenError();
if (isSteadfastError(maybe, 'KEY_REUSED')) maybe.retryAfterMs; // @expect TS2339
timeout('5s'); // @expect TS2345
bulkhead(); // @expect TS2554
events.onRetry((e: { attempt: string }) => e); // @expect TS2345
pipeline({ retyr: policy }); // @expect TS2353|TS2561

export { reference, notHalfOpen, peeked, charged, retryAfter, code, inferredFromFn, fromGateway, notOnlyT, notOnlyTPipeline };
