// Why: the defaults read the global clock and timers at call time (not at import), so
// @sinonjs/fake-timers and node:test's mock timers control them; and no `window` is assumed, so
// the same code runs in Node, browsers and workers.

export const systemClock = () => Date.now();

/**
 * @internal A store that keeps its records' times on a clock of its own (Redis TIME) answers it
 * through this method, `(key) => Promise<ms>`: reconcile() judges settle windows by it.
 */
export const STORE_CLOCK = Symbol.for('steadfast.storeClock');

/**
 * @internal `store`'s clock at `key` (see STORE_CLOCK): the store's own, or `clock()` for a store
 * that keeps its times on this process's clock. A value or a promise of one.
 */
export function storeNow(store, key, clock = systemClock) {
  return typeof store[STORE_CLOCK] === 'function' ? store[STORE_CLOCK](key) : clock();
}

/** setTimeout's limit: a longer delay fires after 1 ms in Node and browsers. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * setTimeout for any delay: longer than 2^31−1 ms is chained in steps, never silently turned into
 * 1 ms. Returns a function that cancels it.
 */
export function after(ms, fn) {
  let handle;
  const arm = (left) => {
    handle = left > MAX_TIMER_MS ? globalThis.setTimeout(() => arm(left - MAX_TIMER_MS), MAX_TIMER_MS) : globalThis.setTimeout(fn, left);
  };
  arm(ms);
  return () => globalThis.clearTimeout(handle);
}

/**
 * Resolve after `ms`, or reject with `signal.reason` when it aborts; leaves no timer or listener
 * behind either way.
 */
export function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal === undefined) {
      after(ms, resolve);
      return;
    }
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      cancel();
      reject(signal.reason);
    };
    const cancel = after(ms, () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Run `fn(ctx)` but settle as soon as `signal` aborts (with its reason), removing the listener
 * when the attempt settles first. A late rejection of an abandoned attempt is absorbed.
 */
export function raceAbort(fn, ctx, signal) {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let p;
    try {
      p = fn(ctx);
    } catch (e) {
      signal.removeEventListener('abort', onAbort);
      reject(e);
      return;
    }
    Promise.resolve(p).then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
