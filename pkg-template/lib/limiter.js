// Why: jitter spreads retries and a budget caps them, but neither lowers what a fleet offers to a
// server that answers 429 at its capacity. A RateLimiter in front of every attempt (first attempts
// included) learns the rate the server accepts from its 429s (CUBIC, as the AWS SDKs' adaptive
// mode, or AIMD) and paces sends at it; a Retry-After holds every send until it passes. The rate
// rules are the Rust core's (src/core/limiter.rs); this driver reads the clock, sleeps and reports
// outcomes.
//
// Scope: a RateLimiter lives in one process (one tab, one worker). It is not shared through Redis
// or across tabs on purpose: its input is the latency-free stream of this process's own answers,
// and each process converging on its own share is exactly how the AWS SDKs' fleets converge; a
// shared rate would add a store round trip before every attempt, and a store outage would stall
// every send.

import { LimiterCore, limiterPreset, quotaErrorClass } from '../steadfast_core.js';
import { retryAfterMsOf, statusOf } from './classify.js';
import { sleep } from './clock.js';
import * as o from './options.js';
import { deferred } from './deferred.js';
import { ERROR_CLASS, LAYOUT, LIMITER_PRESETS, namedSlots } from './wire.js';

const CORE = Symbol('steadfast.limiter');
/** The preset slots a caller may override (every named slot but the mode and the AWS-exact flag). */
const overridable = (name) => name !== 'mode' && name !== 'awsExact';
const monotonic = () => globalThis.performance.now();

export class RateLimiter {
  /**
   * @param {object} [options] `preset = 'cubic'` (CUBIC with the AWS SDK's constants — beta 0.7,
   *   scaleConstant 0.4, smooth 0.8, minRatePerSec 0.5, minCapacity 1 — plus our rules: one cut
   *   per burst of 429s, a start-up measurement), `'aws'` (the AWS SDK's DefaultRateLimiter
   *   exactly) or `'aimd'` (beta 0.5, increasePerSec 10); any of `beta`, `scaleConstant`,
   *   `smooth`, `minRatePerSec`, `minCapacity`, `increasePerSec` to override it; `maxHoldMs =
   *   60000` (the longest Retry-After honoured); `clock = performance.now` (ms, monotonic).
   */
  constructor(options) {
    const where = 'RateLimiter';
    const stand = deferred(new.target, arguments, where, ['acquire', 'run']);
    if (stand !== undefined) return stand;
    const opts = o.misspelt(o.object(options, where, true), ['preset', 'clock', ...LAYOUT.limiterPreset.filter(overridable)], where);
    const presetId = o.oneOf(opts, 'preset', where, LIMITER_PRESETS, 0);
    const preset = namedSlots(LAYOUT.limiterPreset, limiterPreset(presetId));
    const values = {};
    for (const name of LAYOUT.limiterPreset) if (overridable(name)) values[name] = o.num(opts, name, where) ?? preset[name];
    const clock = opts.clock === undefined ? monotonic : o.clock(opts, where);
    // LimiterCore takes the preset's slots in their order (awsExact as a boolean).
    const args = LAYOUT.limiterPreset.map((name) => (overridable(name) ? values[name] : name === 'awsExact' ? preset.awsExact === 1 : preset[name]));
    const core = o.core(where, values, () => new LimiterCore(...args));
    // The AWS preset counts time from the limiter's creation, as AWS's DefaultRateLimiter (the core ignores it otherwise).
    core.start(clock());
    const observe = (error, sentAt) => {
      const now = clock();
      const throttled = quotaErrorClass(statusOf(error) ?? NaN) === ERROR_CLASS.THROTTLED;
      core.record(now, sentAt, throttled);
      if (throttled) {
        const ms = retryAfterMsOf(error, Date.now());
        if (ms > 0) core.hold(now, ms);
      }
    };
    const acquire = async (signal) => {
      for (;;) {
        const x = core.acquire(clock());
        if (x === 0) return;
        if (x > 0) return sleep(x, signal); // a token is ours: send after x ms
        await sleep(-x, signal); // nothing taken: ask again
      }
    };
    this[CORE] = {
      acquire,
      observe,
      async run(fn, ctx) {
        await acquire(ctx.signal);
        const sentAt = clock();
        let value;
        try {
          value = await fn(ctx);
        } catch (error) {
          observe(error, sentAt);
          throw error;
        }
        core.record(clock(), sentAt, false);
        return value;
      },
      core,
      clock,
      preset: LIMITER_PRESETS[presetId],
    };
    Object.freeze(this);
  }

  /** Wait until a send is allowed (rejects with `signal.reason` if it aborts first). */
  acquire(signal) {
    if (signal !== undefined) o.signal({ signal }, 'signal', 'acquire');
    return this[CORE].acquire(signal);
  }

  /**
   * Report the answer to a send made at `sentAtMs` (this limiter's clock): `{ throttled, retryAfterMs, sentAtMs }`.
   * `withRetry`, `resilientFetch` and the checkout client do this for you.
   */
  record(outcome) {
    const out = o.object(outcome, 'record');
    const { core, clock } = this[CORE];
    const now = clock();
    const sentAt = o.num(out, 'sentAtMs', 'record') ?? now;
    const throttled = out.throttled === true;
    core.record(now, sentAt, throttled);
    const ms = o.num(out, 'retryAfterMs', 'record');
    if (ms !== undefined && ms > 0) core.hold(now, ms);
  }

  /** Run `fn` once, paced: acquire, call, report its outcome (a 429 is a throttle). */
  run(fn, signal) {
    if (typeof fn !== 'function') return Promise.reject(o.typeError('run', 'fn', 'a function', fn));
    return this[CORE].run(() => fn(), { signal });
  }

  /** `'cubic' | 'aws' | 'aimd'`. */
  get preset() {
    return this[CORE].preset;
  }

  /** The current send rate (per second); meaningful once a throttle has switched pacing on. */
  get ratePerSec() {
    return this[CORE].core.ratePerSec;
  }

  /** The measured rate of answers (per second, smoothed over half-seconds). */
  get measuredRatePerSec() {
    return this[CORE].core.measuredRatePerSec;
  }

  /** Whether a throttle has switched pacing on (before it, only a Retry-After delays sends). */
  get enabled() {
    return this[CORE].core.enabled;
  }
}

/** @internal The driver's view of a rateLimiter option: `{ run(fn, ctx) }`. */
export function limiterDriver(value, where) {
  if (value instanceof RateLimiter) return value[CORE];
  throw o.typeError(where, 'rateLimiter', 'a RateLimiter', value);
}
