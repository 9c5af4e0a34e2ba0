// Why: the core answers in numbers (positional arrays, integer codes) because a crossing with
// numbers costs tens of nanoseconds; what each slot and code means is named once, in Rust
// (src/wasm/wire.rs `wireLayouts`), and read here once, when the core has loaded (lib/loader.js
// calls loadWire), into the frozen objects below. No file of the package types a position or a
// code of its own. The bindings are live: they are set before any call can reach the core.

import { wireLayouts } from '../steadfast_core.js';
import { parseWire } from './wire-format.js';

export { namedSlots, parseWire } from './wire-format.js';

/** `'in-flight'` → `'IN_FLIGHT'`, `'expiredFlag'` → `'EXPIRED_FLAG'`. */
const constantName = (name) =>
  name
    .replace(/[A-Z]/g, (c) => `_${c}`)
    .replace(/-/g, '_')
    .toUpperCase();

/** A group's codes by constant name (`{ RUN: 0, REPLAY: 1, …, EXPIRED_FLAG: 8 }`), frozen. */
function codes({ names, constants }) {
  const out = {};
  names.forEach((name, i) => (out[constantName(name)] = i));
  for (const [name, value] of Object.entries(constants)) out[constantName(name)] = value;
  return Object.freeze(out);
}

/** @internal Slot names of each positional export: `LAYOUT.fetchDefaults`, `storeDefaults`, `keyRule`, `breakerConfig`, `breakerSnapshot` (its head), `peek`, `limiterPreset`, `quotaPreset`, `hedgeDefaults`, `hedge` (HedgeCore's arguments), `dialectFields` (DialectCore.fields()). */
export let LAYOUT;
/** @internal StoreCore.beginInput's answer kinds (`RUN` … `FULL`) and its encoding (`EXPIRED_FLAG`, `SLOT`: answer = slot · SLOT + flag + kind). */
export let BEGIN;
/** @internal begin's kinds by code, as the `idempotency` event names them ('run', 'replay', 'in-flight', …). */
export let BEGIN_OUTCOMES;
/** @internal StoreCore.resolve / reopen answers (`RESOLVED`, `NOT_FOUND`, `WRONG_STATE`, `KEY_REUSED`; reopen = slot · SLOT + answer). */
export let RESOLVE;
/** @internal resolve's answers by code, as the state-store interface names them ('resolved', 'not-found', 'wrong-state', 'key-reused'). */
export let RESOLUTIONS;
/** @internal StoreCore.complete's kinds (`DONE`, `UNKNOWN`, `FAILED`, `REFUTED`). */
export let COMPLETION;
/** @internal complete's kinds by code, as the state-store interface names the outcome ('done', 'unknown', 'failed', 'refuted'). */
export let OUTCOMES;
/** @internal A record's status codes in StoreCore.peek (`IN_FLIGHT`, `DONE`, `UNKNOWN`). */
export let STATUS;
/** @internal Breaker states by the core's id ('closed', 'open', 'half-open', 'isolated'). */
export let STATES;
/** @internal Breaker state codes (`CLOSED`, `OPEN`, `HALF_OPEN`, `ISOLATED`). */
export let STATE;
/** @internal A transition code's name: 'none', or the state entered (code = state id + 1). */
export let TRANSITIONS;
/** @internal Transition codes (`NONE`, `CLOSED`, `OPEN`, `HALF_OPEN`, `ISOLATED`). */
export let TRANSITION_CODE;
/** @internal Breaker kinds by the core's id ('rate', 'consecutive'). */
export let BREAKER_KINDS;
/** @internal Jitter names by the core's id ('full', 'equal', 'decorrelated', 'none'). */
export let JITTERS;
/** @internal BreakerCore.recordTimed's verdicts (`SUCCESS`, `FAILURE`, `EXCLUDED`). */
export let VERDICT;
/** @internal Added to a permit when the acquire moved the breaker to half-open. */
export let TRANSITION;
/** @internal What tryAcquireClosed answers when the circuit is not closed (read the clock, call tryAcquire). */
export let NOT_CLOSED;

/** @internal The RateLimiter `preset` names, by the id limiterPreset takes ('cubic', 'aws', 'aimd'). */
export let LIMITER_PRESETS;
/** @internal The RetryQuota `preset` names, by the id quotaPreset takes ('steadfast', 'aws'). */
export let QUOTA_PRESETS;
/** @internal quotaErrorClass's classes by code ('timeout', 'throttled', 'serverError'). */
export let ERROR_CLASSES;
/** @internal quotaErrorClass's codes (`TIMEOUT`, `THROTTLED`, `SERVER_ERROR`). */
export let ERROR_CLASS;
/** @internal HedgeCore.nextStep's codes (`START`, `AWAIT_ANSWER`, `EXHAUSTED`; any answer > 0 is a wait in ms). */
export let HEDGE_STEP;
/** @internal RetryCore.afterFailure's stops (`NOT_RETRYABLE`, `ATTEMPTS_EXHAUSTED`, `DEADLINE_EXCEEDED`; any answer >= 0 is the delay). */
export let STOP;
/** @internal historyRecord's answer codes that are not HTTP statuses (`NOT_SENT`, `NO_ANSWER`, `REFUSED`, `IN_PROGRESS`). */
export let ANSWER;
/** @internal historyVerdict's codes (`DONE`, `UNKNOWN`, `REFUSED`, `NOT_PROCESSED`). */
export let HISTORY_VERDICT;
/** @internal parseShouldRetry's answers (`NONE`, `FALSE`, `TRUE`). */
export let SHOULD_RETRY;

/** @internal A dialect's key syntaxes, by the id DialectCore.custom takes ('raw', 'sf-string'). */
export let KEY_SYNTAXES;
/** @internal DialectCore's status slot that holds none (`NO_STATUS`: no in-progress status, an unused reuse slot). */
export let DIALECT;

/** @internal Read the vocabulary from the loaded core (lib/loader.js, once the core is ready). */
export function loadWire() {
  const g = parseWire(wireLayouts());
  LAYOUT = Object.freeze(
    Object.fromEntries(
      [
        'fetchDefaults',
        'storeDefaults',
        'keyRule',
        'breakerConfig',
        'breakerSnapshot',
        'peek',
        'limiterPreset',
        'quotaPreset',
        'hedgeDefaults',
        'hedge',
        'dialectFields',
      ].map((k) => [k, g[k].names]),
    ),
  );
  BEGIN = codes(g.begin);
  BEGIN_OUTCOMES = g.begin.names;
  RESOLVE = codes(g.resolve);
  RESOLUTIONS = g.resolve.names;
  COMPLETION = codes(g.completion);
  OUTCOMES = g.completion.names;
  STATUS = codes(g.status);
  STATES = g.state.names;
  STATE = codes(g.state);
  TRANSITIONS = g.transition.names;
  TRANSITION_CODE = codes(g.transition);
  BREAKER_KINDS = g.breakerKind.names;
  JITTERS = g.jitter.names;
  VERDICT = codes(g.verdict);
  ({ TRANSITION_FLAG: TRANSITION, NOT_CLOSED } = codes(g.breaker));
  LIMITER_PRESETS = g.limiterPresetName.names;
  QUOTA_PRESETS = g.quotaPresetName.names;
  ERROR_CLASSES = g.errorClass.names;
  ERROR_CLASS = codes(g.errorClass);
  HEDGE_STEP = codes(g.hedgeStep);
  STOP = codes(g.stop);
  ANSWER = codes(g.answer);
  HISTORY_VERDICT = codes(g.historyVerdict);
  SHOULD_RETRY = codes(g.shouldRetry);
  KEY_SYNTAXES = g.keySyntax.names;
  DIALECT = codes(g.dialect);
}
