// To merge into tests/consumers/typescript/every-export.ts (check-exports.mjs requires every export
// to be used there): the imports go with the others, sharedState() is called from its main function.
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
  CircuitBreaker,
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
