// Why: one home for a breaker's options. They are read here (own properties only, type checks that
// only JS can make), validated once by the Rust core (ranges, defaults), and read back from the core
// as one normalised config that every breaker — the in-process CircuitBreaker, the memory state
// store and the Redis Lua twin — is built from. Nothing downstream re-parses an option.

import { BreakerCore } from '../steadfast_core.js';
import * as o from './options.js';
import { BREAKER_KINDS, LAYOUT, namedSlots } from './wire.js';

// The breaker's states by the core's id (STATES), a store handle's `transition` by the core's
// transition code (TRANSITIONS: 'none', or the state entered; the Redis Lua answers that code - 1),
// the permit's half-open flag (TRANSITION) and tryAcquireClosed's "not closed" (NOT_CLOSED): all
// named by the core (src/wasm/wire.rs), read by lib/wire.js.
export { NOT_CLOSED, STATES, TRANSITION, TRANSITIONS } from './wire.js';

/** A CircuitBreaker's option names (CircuitBreakerOptions in types/breaker.d.ts): a name near one is a typo. */
export const BREAKER_OPTIONS = [
  'windowSize',
  'failureRateThreshold',
  'minimumCalls',
  'failureThreshold',
  'openDurationMs',
  'probesToClose',
  'clock',
  'onStateChange',
  'isFailure',
  'isExcluded',
  'slowCallDurationMs',
  'state',
];

/**
 * Read and validate a breaker's options: the rate shape `{ windowSize, failureRateThreshold,
 * openDurationMs, minimumCalls = windowSize, probesToClose = 1 }` or the consecutive shape
 * `{ failureThreshold, openDurationMs, probesToClose = 1 }`. Returns `{ core, config }`: a new
 * BreakerCore, and its normalised config (every default filled in by the core, frozen).
 */
export function readBreakerOptions(opts, where) {
  const values = {
    windowSize: o.num(opts, 'windowSize', where),
    failureRateThreshold: o.num(opts, 'failureRateThreshold', where),
    minimumCalls: o.num(opts, 'minimumCalls', where),
    failureThreshold: o.num(opts, 'failureThreshold', where),
    openDurationMs: o.num(opts, 'openDurationMs', where),
    probesToClose: o.num(opts, 'probesToClose', where),
  };
  const consecutive = values.failureThreshold !== undefined;
  const rate = values.windowSize !== undefined || values.failureRateThreshold !== undefined || values.minimumCalls !== undefined;
  if (consecutive === rate) {
    throw o.typeError(where, 'options', '{ windowSize, failureRateThreshold, openDurationMs } or { failureThreshold, openDurationMs } (not both)', opts);
  }
  const required = consecutive ? ['failureThreshold', 'openDurationMs'] : ['windowSize', 'failureRateThreshold', 'openDurationMs'];
  for (const name of required) {
    if (values[name] === undefined) throw o.typeError(where, name, 'a number', undefined);
  }
  const core = o.core(where, values, () =>
    consecutive
      ? BreakerCore.consecutive(values.failureThreshold, values.openDurationMs, values.probesToClose)
      : BreakerCore.rate(values.windowSize, values.failureRateThreshold, values.minimumCalls, values.openDurationMs, values.probesToClose),
  );
  return { core, config: configOf(core) };
}

/** The normalised config a core holds (its slots by the names the core publishes). */
export function configOf(core) {
  const { kind, windowSize, failureRateThreshold, minimumCalls, failureThreshold, openDurationMs, probesToClose } = namedSlots(
    LAYOUT.breakerConfig,
    core.config(),
  );
  return Object.freeze(
    BREAKER_KINDS[kind] === 'rate'
      ? { kind: 'rate', windowSize, failureRateThreshold, minimumCalls, openDurationMs, probesToClose }
      : { kind: 'consecutive', failureThreshold, openDurationMs, probesToClose },
  );
}

/** A new BreakerCore from a normalised config (a store's handle; the numbers were validated already). */
export function coreFromConfig(c) {
  return o.core('breaker', c, () =>
    c.kind === 'consecutive'
      ? BreakerCore.consecutive(c.failureThreshold, c.openDurationMs, c.probesToClose)
      : BreakerCore.rate(c.windowSize, c.failureRateThreshold, c.minimumCalls, c.openDurationMs, c.probesToClose),
  );
}
