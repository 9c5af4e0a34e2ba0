// Why: cockatiel and Polly users compose resilience as small policies: a timeout inside a retry inside
// a breaker, a bulkhead in front, a fallback outside. These are steadfast's, composable with its
// CircuitBreaker, retry policies (with their RetryBudget) and IdempotencyStore, in the documented order by
// default. Decisions stay where they are made: retry and breaker rules in the Rust core (through
// withRetry and CircuitBreaker); a timeout or a bulkhead decides nothing the core knows about (a timer,
// two counters), so they are plain JS (benches/: a wasm call per admission would cost more than the
// two integer comparisons it replaces).

import { SteadfastError, named } from './errors.js';
import { POLICY_EXTRAS, retryWith, checkPolicy } from './retry.js';
import { after } from './clock.js';
import * as o from './options.js';
import { coreUnavailable } from './loader.js';
import { HEDGE_DOOR, compileHedge, hedged, HedgeNotSafeError } from './hedge.js';
import { budgetCore } from './budget.js';
import { currentRunOf, currentSinkOf, isTransientError, resumingFor } from './classify.js';
import { isPermanent } from './errors.js';

// Here, not in errors.js: an app that uses no policy does not ship them.

/**
 * A `timeout(ms)` policy gave up on the call and aborted its signal. Its name is 'TimeoutError', so
 * `isTransientError` treats it like a platform timeout (retryable; for a charge, an unknown outcome).
 */
export const TimeoutError = /* @__PURE__ */ named(
  class TimeoutError extends SteadfastError {
    /** @param {number} timeoutMs */
    constructor(timeoutMs) {
      super(`Timed out after ${timeoutMs} ms`, 'TIMEOUT');
      this.timeoutMs = timeoutMs;
    }
  },
  'TimeoutError',
);

/** A `bulkhead(limit, queue)` was full: the call was refused without running. */
export const BulkheadRejectedError = /* @__PURE__ */ named(
  class BulkheadRejectedError extends SteadfastError {
    /** @param {number} limit @param {number} queue */
    constructor(limit, queue) {
      super(`Bulkhead full: ${limit} running and ${queue} queued`, 'BULKHEAD_REJECTED');
      this.limit = limit;
      this.queue = queue;
    }
  },
  'BulkheadRejectedError',
);

const RUN = Symbol('steadfast.policy');

/** A steadfast policy: `execute(fn, options?)`; composable with wrap()/pipeline(). */
class Policy {
  /** @param {(fn: Function, ctx: object) => Promise<unknown>} run */
  constructor(run) {
    this[RUN] = run;
    Object.freeze(this);
  }

  /**
   * Run `fn(ctx)` under this policy. `options.signal` aborts it; `options.idempotencyKey` and
   * `options.fingerprint` are read by an idempotency(store) policy.
   */
  execute(fn, options) {
    if (typeof fn !== 'function') return Promise.reject(o.typeError('execute', 'fn', 'a function', fn));
    let ctx;
    try {
      ctx = context(options);
    } catch (e) {
      return Promise.reject(e);
    }
    return invoke(this[RUN], fn, ctx);
  }
}

/** The context of a call without options: one frozen object, nothing allocated per call. */
const NO_OPTIONS = Object.freeze({ attempt: 1, signal: undefined, idempotencyKey: undefined, fingerprint: undefined });

function context(options) {
  if (options === undefined) return NO_OPTIONS;
  const opts = o.misspelt(o.object(options, 'execute'), ['signal', 'idempotencyKey', 'fingerprint'], 'execute');
  const signal = o.signal(opts, 'signal', 'execute');
  if (opts.idempotencyKey !== undefined && typeof opts.idempotencyKey !== 'string') {
    throw o.typeError('execute', 'idempotencyKey', 'a string', opts.idempotencyKey);
  }
  if (opts.fingerprint !== undefined && typeof opts.fingerprint !== 'string') throw o.typeError('execute', 'fingerprint', 'a string', opts.fingerprint);
  return { attempt: 1, signal, idempotencyKey: opts.idempotencyKey, fingerprint: opts.fingerprint };
}

/** Call `run(fn, ctx)` so that a synchronous throw becomes a rejection. */
function invoke(run, fn, ctx) {
  try {
    return Promise.resolve(run(fn, ctx));
  } catch (e) {
    return Promise.reject(e);
  }
}

/** The run function of a policy or of any executor (CircuitBreaker, SharedCircuitBreaker, cockatiel…). */
function runnerOf(policy, where, index) {
  if (policy instanceof Policy) return policy[RUN];
  if (policy !== null && typeof policy === 'object' && typeof policy.execute === 'function') {
    // An executor calls fn with no context: pass on the one it was given.
    return (fn, ctx) => policy.execute(() => fn(ctx));
  }
  throw o.typeError(where, `policies[${index}]`, 'a policy or an object with execute(fn)', policy);
}

/**
 * Compose policies, outermost first: `wrap(a, b, c).execute(fn)` runs `a(b(c(fn)))`. Accepts
 * steadfast policies and anything with `execute(fn)` (a CircuitBreaker, a shared one).
 */
export function wrap(...policies) {
  const runs = policies.map((p, i) => runnerOf(p, 'wrap', i));
  // Built once: each stage hands the next its (possibly narrowed) context.
  const chain = runs.reduceRight(
    (inner, run) => (fn, ctx) => run((c) => inner(fn, c), ctx),
    (fn, ctx) => fn(ctx),
  );
  return new Policy(chain);
}

/**
 * The documented order, whatever order the options are written in: fallback → idempotency → bulkhead →
 * breaker → retry (with its budget) → hedge (copies of each attempt) → timeout (per copy) → fn. Omitted
 * stages are skipped.
 */
export function pipeline(stages) {
  const where = 'pipeline';
  const s = o.object(stages, where);
  const order = [];
  if (s.fallback !== undefined) order.push(s.fallback);
  if (s.idempotency !== undefined) order.push(s.idempotency instanceof Policy ? s.idempotency : idempotency(s.idempotency));
  if (s.bulkhead !== undefined) order.push(s.bulkhead);
  if (s.breaker !== undefined) order.push(s.breaker);
  if (s.retry !== undefined) order.push(s.retry instanceof Policy ? s.retry : retry(s.retry));
  if (s.hedge !== undefined) order.push(s.hedge instanceof Policy ? s.hedge : hedge(s.hedge));
  if (s.timeout !== undefined) order.push(typeof s.timeout === 'number' ? timeout(s.timeout) : s.timeout);
  for (const name of Object.keys(s)) {
    if (!['fallback', 'idempotency', 'bulkhead', 'breaker', 'retry', 'hedge', 'timeout'].includes(name)) {
      throw o.typeError(where, name, 'one of fallback, idempotency, bulkhead, breaker, retry, hedge, timeout', s[name]);
    }
  }
  return wrap(...order);
}

/** withRetry as a policy: each attempt gets `{ attempt, signal }`; the pipeline's signal aborts it. */
export function retry(policy) {
  // Validate (and freeze) now, not on the first call; before the core has loaded, at the first call.
  if (coreUnavailable('retry') === undefined) checkPolicy(policy);
  return new Policy((fn, ctx) => retryWith((r) => fn({ ...ctx, attempt: r.attempt, signal: r.signal ?? ctx.signal }), policy, ctx.signal, POLICY_EXTRAS));
}

/**
 * Race copies of each call (see HedgeOptions): after a delay another copy starts, the first
 * definitive answer wins and the others are aborted through their signals. Refused with
 * HedgeNotSafeError unless `safe: true`, `idempotencyKey`, or an `idempotencyKey` given to
 * `execute`. The copies it lets go count in the history of the withRetry attempt or store run
 * that starts it. `budget` (a RetryBudget or RetryQuota, the retry policy's own to share it) pays for
 * each copy beyond the first; `isRetryable` (default isTransientError) tells a failure another copy
 * may still beat from a definitive one.
 */
export function hedge(options) {
  const where = 'hedge';
  const opts = o.object(options, where);
  const h = coreUnavailable(where) === undefined ? compileHedge(opts, where, HEDGE_DOOR.policy) : undefined;
  const budget = opts.budget === undefined ? undefined : budgetCore(opts.budget, where);
  const isRetryable = o.fn(opts, 'isRetryable', where) ?? isTransientError;
  const clock = o.clock(opts, where);
  let driver;
  return new Policy((fn, ctx) => {
    driver ??= { hedge: h ?? compileHedge(opts, where, HEDGE_DOOR.policy), budget, clock, isRetryable: (e) => !isPermanent(e) && isRetryable(e) };
    if (!driver.hedge.safe && driver.hedge.idempotencyKey === undefined && typeof ctx.idempotencyKey !== 'string') {
      throw new HedgeNotSafeError(where, undefined);
    }
    // The copies it lets go are reported to the withRetry attempt or store run starting it now.
    return hedged(fn, ctx, driver, currentSinkOf());
  });
}

/**
 * Give up on a call after `ms`: its signal aborts with a TimeoutError and the call rejects with it at
 * once (the function is told through the signal; it is not waited for).
 */
export function timeout(ms) {
  if (typeof ms !== 'number') throw o.typeError('timeout', 'ms', 'a number', ms);
  if (!(ms >= 0)) throw o.rangeError('timeout', 'ms', 'a number ≥ 0', ms);
  return new Policy(
    (fn, ctx) =>
      new Promise((resolve, reject) => {
        const controller = new AbortController();
        const outer = ctx.signal;
        const onOuterAbort = () => {
          controller.abort(outer.reason);
          finish();
          reject(outer.reason);
        };
        let cancelTimer;
        const finish = () => {
          cancelTimer();
          if (outer !== undefined) outer.removeEventListener('abort', onOuterAbort);
        };
        if (outer !== undefined) {
          if (outer.aborted) {
            reject(outer.reason);
            return;
          }
          outer.addEventListener('abort', onOuterAbort, { once: true });
        }
        cancelTimer = after(ms, () => {
          const error = new TimeoutError(ms);
          controller.abort(error);
          finish();
          reject(error);
        });
        let p;
        try {
          p = fn({ ...ctx, signal: controller.signal });
        } catch (e) {
          finish();
          reject(e);
          return;
        }
        Promise.resolve(p).then(
          (v) => {
            finish();
            resolve(v);
          },
          (e) => {
            finish();
            reject(e);
          },
        );
      }),
  );
}

/**
 * At most `limit` calls at once; up to `queue` more wait (first in, first out); beyond that a call
 * is refused with BulkheadRejectedError without running. A queued call whose signal aborts leaves the
 * queue. `stats()` reports `{ running, queued }`.
 */
export function bulkhead(limit, queue = 0) {
  const where = 'bulkhead';
  for (const [name, v] of [
    ['limit', limit],
    ['queue', queue],
  ]) {
    if (typeof v !== 'number') throw o.typeError(where, name, 'a number', v);
  }
  if (!Number.isInteger(limit) || limit < 1) throw o.rangeError(where, 'limit', 'an integer ≥ 1', limit);
  if (!(Number.isInteger(queue) || queue === Infinity) || queue < 0) throw o.rangeError(where, 'queue', 'an integer ≥ 0 or Infinity', queue);
  let running = 0;
  // Waiting calls, first in first out: { start, cancelled }. A queue with a moving head, so taking
  // the next waiter is O(1) (Array#shift is O(n): 100,000 waiters drained in quadratic time); an
  // aborted waiter is marked and skipped, not spliced out. The dead prefix is dropped once it is
  // more than half of the array (amortised O(1)).
  let waiting = [];
  let head = 0;
  let queued = 0;
  const next = () => {
    while (head < waiting.length) {
      const entry = waiting[head];
      waiting[head] = undefined;
      head += 1;
      if (head > 1024 && head * 2 > waiting.length) {
        waiting = waiting.slice(head);
        head = 0;
      }
      if (!entry.cancelled) return entry;
    }
    return undefined;
  };
  const release = () => {
    running -= 1;
    const entry = next();
    if (entry !== undefined) {
      queued -= 1;
      entry.start();
    }
  };
  // Made once: the admitted path allocates no closure of its own.
  const settledValue = (value) => {
    release();
    return value;
  };
  const settledError = (error) => {
    release();
    throw error;
  };
  const admit = (fn, ctx) => {
    running += 1;
    let p;
    try {
      p = Promise.resolve(fn(ctx));
    } catch (e) {
      p = Promise.reject(e);
    }
    return p.then(settledValue, settledError);
  };
  const policy = new Policy((fn, ctx) => {
    const signal = ctx.signal;
    if (signal !== undefined && signal.aborted) return Promise.reject(signal.reason);
    if (running < limit) return admit(fn, ctx);
    if (queued >= queue) return Promise.reject(new BulkheadRejectedError(limit, queue));
    // A store run or a retry attempt starting this call: the call, started later, still reports to it.
    const owner = currentRunOf();
    const sink = currentSinkOf();
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        entry.cancelled = true;
        queued -= 1;
        reject(signal.reason);
      };
      const entry = {
        cancelled: false,
        start: () => {
          if (signal !== undefined) signal.removeEventListener('abort', onAbort);
          resumingFor(owner, sink, () => admit(fn, ctx)).then(resolve, reject);
        },
      };
      waiting.push(entry);
      queued += 1;
      if (signal !== undefined) signal.addEventListener('abort', onAbort, { once: true });
    });
  });
  return Object.freeze(
    Object.assign(Object.create(policy), {
      /** Calls running and waiting now. */
      stats: () => ({ running, queued }),
    }),
  );
}

/**
 * When the call fails (and `when(error)` agrees; default: every error), answer `fallback(error)`
 * instead. `fallback` is a function, or a value to resolve with.
 */
export function fallback(valueOrFn, options) {
  const opts = o.misspelt(o.object(options, 'fallback', true), ['when'], 'fallback');
  const when = o.fn(opts, 'when', 'fallback');
  const make = typeof valueOrFn === 'function' ? valueOrFn : () => valueOrFn;
  return new Policy((fn, ctx) =>
    invoke((f, c) => f(c), fn, ctx).catch((error) => {
      if (when !== undefined && when(error) !== true) throw error;
      return make(error);
    }),
  );
}

/**
 * An IdempotencyStore (or a shared one) as a policy: the call runs once per `idempotencyKey` given to
 * `execute(fn, { idempotencyKey, fingerprint })`; a replay answers the first result.
 */
export function idempotency(store) {
  if (store === null || typeof store !== 'object' || typeof store.run !== 'function') {
    throw o.typeError('idempotency', 'store', 'an IdempotencyStore (an object with run())', store);
  }
  return new Policy((fn, ctx) => {
    if (typeof ctx.idempotencyKey !== 'string') {
      throw o.typeError('execute', 'idempotencyKey', 'a string (the idempotency policy needs one per call)', ctx.idempotencyKey);
    }
    return store.run(ctx.idempotencyKey, () => fn(ctx), ctx.fingerprint === undefined ? undefined : { fingerprint: ctx.fingerprint });
  });
}
