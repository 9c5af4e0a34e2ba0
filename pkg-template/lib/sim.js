// Why: the retry-storm figures, computed by the same Rust backoff, breaker and budget that
// the package ships, seeded and reproducible. The wasm core returns flat Float64Arrays (no serde:
// size); this file turns them into plain objects, and renders terminal bars and an SVG
// chart. Every rule and every default of the outage model lives in Rust (src/core/sim); the
// option layout comes from the core too (simOutageLayout), so there is no list here to drift.

import {
  simHistogram,
  simJitter,
  simOutage,
  simOutageLayout,
  simOutageDefaults,
  simHistogramDefaults,
  simJitterDefaults,
  simTail,
  simTailDefaults,
  simLayouts,
} from '../steadfast_sim.js';
import * as o from './options.js';
import { namedSlots, parseWire } from './wire-format.js';

// The names of every slot the simulator's exports take and answer (src/wasm/sim.rs simLayouts),
// read on first use: this file may be evaluated while the browser entry is still loading the module.
let vocabulary;
const wire = () => (vocabulary ??= parseWire(simLayouts()));

// The core's defaults (src/core/sim: `Default` impls), by name, read once on first use.
let histogramDefaults;
let jitterDefaults;

/**
 * Strategy names, by core id. `fixed` waits exactly baseDelayMs; `none` is 1 s, 2 s, 4 s … A public
 * constant, so it exists at import, before the module has loaded: tests/js/wire.test.mjs checks it
 * (and QUOTA_PRESETS, LIMITER_PRESETS) against the names the core gives (simLayouts).
 */
export const STRATEGIES = Object.freeze(['full', 'equal', 'decorrelated', 'none', 'fixed']);
const HISTOGRAM_ORDER = ['fixed', 'full', 'equal', 'decorrelated', 'none'];

/** Read the numeric options in `names` (undefined when absent) into `values`. */
function read(opts, where, names, values = {}) {
  for (const name of names) values[name] = o.num(opts, name, where);
  return values;
}

/**
 * The tail-latency experiment: `requests` requests against a server that answers in `latencyMs ·
 * (0.5 + u)`, or with probability `tailProbability` in `tailLatencyMs · (0.5 + u)`; the same draws
 * without and with the shipped hedge (`hedge`: HedgeOptions, default the hedge's defaults) and,
 * with `budgetRatio`, a ratio budget paying for the hedges. Defaults: `requests = 100000`,
 * `latencyMs = 20`, `tailProbability = 0.02`, `tailLatencyMs = 1000`, `arrivalMs = 1`, `seed = 1`.
 * Returns `{ ...options, plain, hedged }`, each `{ p50Ms, p99Ms, p999Ms, copiesPerRequest, refused }`.
 */
export function simulateTail(options) {
  const where = 'simulateTail';
  const opts = o.object(options, where, true);
  const { tailDefaults, hedge, tailRun } = wire();
  const [TAIL_FIELDS, HEDGE_FIELDS, TAIL_RUN] = [tailDefaults.names, hedge.names, tailRun.names];
  o.misspelt(opts, [...TAIL_FIELDS, 'hedge', 'budgetRatio'], where);
  const v = read(opts, where, TAIL_FIELDS);
  const hedgeOpts = o.misspelt(o.object(opts.hedge, `${where} hedge`, true), HEDGE_FIELDS, `${where} hedge`);
  const h = read(hedgeOpts, where, HEDGE_FIELDS);
  const budgetRatio = o.num(opts, 'budgetRatio', where);
  const defaults = namedSlots(TAIL_FIELDS, simTailDefaults());
  const values = Object.fromEntries(TAIL_FIELDS.map((name) => [name, v[name] ?? defaults[name]]));
  const out = o.core(where, { ...values, ...h, ratio: budgetRatio }, () =>
    simTail(
      TAIL_FIELDS.map((name) => values[name]),
      HEDGE_FIELDS.map((name) => h[name] ?? NaN),
      budgetRatio ?? NaN,
    ),
  );
  const run = (at) => ({ ...namedSlots(TAIL_RUN, out.subarray(at)) });
  return { ...values, plain: run(0), hedged: run(TAIL_RUN.length) };
}

/**
 * The retry-storm experiment: `clients` clients that failed together at t = 0 retry once; retries per
 * bucket for each strategy. Defaults: `clients = 10000`, `baseDelayMs = 1000`, `maxDelayMs = 30000`,
 * `attempt = 1`, `bucketMs = 100`, `seed = 1`, `strategies = ['fixed', 'full', 'equal',
 * 'decorrelated', 'none']`.
 *
 * Returns `{ clients, attempt, baseDelayMs, maxDelayMs, bucketMs, seed, runs }`, each run
 * `{ strategy, counts (Float64Array, bucket i = [i·bucketMs, (i+1)·bucketMs)), rows ([{ at, count }],
 * non-empty buckets), peak, peakAtMs, retries, reduction (fixed's peak ÷ this peak) }`. `bucketMs`
 * is the width used (widened only past 2^20 buckets).
 */
export function simulateHistogram(options) {
  const where = 'simulateHistogram';
  const opts = o.object(options, where, true);
  const W = wire();
  const names = W.histogramDefaults.names;
  o.misspelt(opts, [...names, 'strategies'], where);
  const v = read(opts, where, names);
  const strategies = strategyList(opts, where);
  histogramDefaults ??= namedSlots(names, simHistogramDefaults());
  const values = Object.fromEntries(names.map((name) => [name, v[name] ?? histogramDefaults[name]]));
  const run = (name) => {
    const out = o.core(where, values, () => simHistogram(STRATEGIES.indexOf(name), ...names.map((n) => values[n])));
    const { bucketMs, peak, peakIndex, total } = namedSlots(W.histogram.names, out);
    const counts = out.subarray(W.histogram.names.length);
    const rows = [];
    for (let i = 0; i < counts.length; i++) if (counts[i] > 0) rows.push({ at: i * bucketMs, count: counts[i] });
    return { strategy: name, bucketMs, counts, rows, peak, peakAtMs: peakIndex * bucketMs, retries: total };
  };
  // Fixed is the reference for `reduction`; it costs O(1) (every client computes the same delay).
  const fixed = run('fixed');
  const runs = strategies.map((name) => {
    const r = name === 'fixed' ? fixed : run(name);
    const rest = { ...r };
    delete rest.bucketMs; // one bucketMs, at the top level
    return { ...rest, reduction: fixed.peak / r.peak };
  });
  return { ...values, bucketMs: fixed.bucketMs, runs };
}

function strategyList(opts, where) {
  const list = opts.strategies;
  if (list === undefined) return HISTOGRAM_ORDER;
  if (!Array.isArray(list)) throw o.typeError(where, 'strategies', 'an array of strategy names', list);
  return list.map((name) => STRATEGIES[o.oneOf({ strategies: name }, 'strategies', where, STRATEGIES, 0)]);
}

/**
 * The jitter table: min / median / max / mean of each variant over `samples` draws at
 * `attempt`. Defaults: `samples = 20000`, `attempt = 4`, `baseDelayMs = 1000`, `maxDelayMs = 30000`,
 * `seed = 1`. Rows: `full`, `equal`, `decorrelated` (the textbook definition: min(cap, uniform
 * [base, 3 · ceiling(attempt)))), `decorrelatedChained` (previous = the delay actually drawn,
 * from base at attempt 1: what a client really sees), `none`.
 *
 * Returns `{ samples, attempt, baseDelayMs, maxDelayMs, seed, rows: [{ variant, min, median, max, mean }] }`.
 */
export function jitterStats(options) {
  const where = 'jitterStats';
  const opts = o.object(options, where, true);
  const W = wire();
  const names = W.jitterDefaults.names;
  o.misspelt(opts, names, where);
  const v = read(opts, where, names);
  jitterDefaults ??= namedSlots(names, simJitterDefaults());
  const values = Object.fromEntries(names.map((name) => [name, v[name] ?? jitterDefaults[name]]));
  const out = o.core(where, values, () => simJitter(...names.map((n) => values[n])));
  const stats = W.jitterStats.names;
  const rows = W.jitterRows.names.map((variant, i) => ({ variant, ...namedSlots(stats, out.subarray(i * stats.length)) }));
  return { ...values, rows };
}

let layout;
function outageLayout() {
  if (layout === undefined) {
    const [input, summary] = simOutageLayout().split(';');
    layout = { input: input.split(','), summary: summary.split(',') };
  }
  return layout;
}

/** `breaker` / `budget`: false or absent = off, true = on with the defaults, an object = on. */
function nested(opts, name, where, shapeKeys) {
  const v = opts[name];
  if (v === undefined || v === false) return { mode: 0, sub: {} };
  if (v === true) return { mode: 1, sub: {} };
  if (v === null || typeof v !== 'object') throw o.typeError(where, name, 'a boolean or an object', v);
  return { mode: shapeKeys.some((k) => v[k] !== undefined) ? 2 : 1, sub: v };
}

/** Quota presets, by core mode id − 1. */
export const QUOTA_PRESETS = Object.freeze(['steadfast', 'aws']);
/** Limiter presets, by core mode id − 1: CUBIC with our rules, the AWS SDK's exact rules, AIMD. */
export const LIMITER_PRESETS = Object.freeze(['cubic', 'aws', 'aimd']);

/** `quota` / `limiter`: false or absent = off, true = the first preset, a preset name, or `{ preset, ...overrides }`. */
function preset(opts, name, where, names) {
  const v = opts[name];
  if (v === undefined || v === false) return { mode: 0, sub: {} };
  if (v === true) return { mode: 1, sub: {} };
  const expected = `a boolean, ${names.map((n) => `'${n}'`).join(', ')} or an object`;
  if (typeof v === 'string') {
    const i = names.indexOf(v);
    if (i < 0) throw o.typeError(where, name, expected, v);
    return { mode: i + 1, sub: {} };
  }
  if (v === null || typeof v !== 'object') throw o.typeError(where, name, expected, v);
  return { mode: o.oneOf(v, 'preset', where, names, 0) + 1, sub: v };
}

/**
 * The outage model (see src/core/sim/outage.rs for the rules): `clients` closed-loop clients
 * against a gateway that admits `capacityPerTick` attempts per tick and answers nothing during
 * the outage; calls in flight fail together when it restarts. Defaults: `strategy = 'full'`,
 * `clients = 10000`, `thinkTimeMs = 1000` (uniform [0, 2·mean)), `latencyMs = 1000`,
 * `timeoutMs = 10000`, `capacityPerTick = 150`, `tickMs = 10`, `outageStartMs = 5000`,
 * `outageDurationMs = 400`, `durationMs = 20000`, `bucketMs = 100`, `maxAttempts = 4`,
 * `baseDelayMs = 1000`, `maxDelayMs = 30000`, `seed = 1`, `breaker = false`, `budget = false`.
 *
 * `breaker`: one breaker shared by every client: `true`, `{ windowSize = 100,
 * failureRateThreshold = 0.5, openDurationMs = 5000, probesToClose = 1 }` or `{ failureThreshold,
 * openDurationMs, probesToClose }`. `budget`: one shared retry budget: `true`, `{ ratio = 0.2,
 * minRetriesPerSec = 10, windowMs = 10000 }` or `{ capacity = 100, refillPerSec = 10 }`.
 *
 * Throttling: `throttle = false` (true: above capacity the gateway answers 429 — a rate limit
 * whose bucket holds `burstMs = 1000` of capacity — with a Retry-After of `retryAfterMs = 0`
 * when > 0). `quota`: one shared weighted retry quota: `true`/`'steadfast'` (capacity 500, timeout
 * 10, throttled 5, server error 5, refund 1), `'aws'` (AWS standard mode: 500, 10, 5, 10, 1) or
 * `{ preset, capacity, timeoutCost, throttledCost, serverErrorCost, successRefund }`. `limiter`:
 * an adaptive rate limiter per process (`limiterGroups = 100` processes, client i in process
 * i mod limiterGroups): `true`/`'cubic'`, `'aws'` (the AWS SDK's exact rules), `'aimd'`, or
 * `{ preset, beta, scaleConstant, smooth, minRatePerSec, minCapacity, increasePerSec, maxHoldMs }`.
 *
 * Returns `{ strategy, throttle, quota, limiter, options, summary, buckets }`: `summary` = `{
 * bucketMs, buckets, logicalRequests, succeeded, failed, failedExhausted, failedBudget,
 * failedRejected, pending, attempts, retries, outageAttempts, peakOffered, peakOfferedAtMs,
 * secondPeakOffered, secondPeakAtMs, amplification, recoveredAtMs, timeToRecoverMs, outageEndMs,
 * failedQuota, throttled, throttledShare, offeredPerSec, goodputPerSec, paced, convergedAtMs }`
 * (NaN = did not recover / converge); `buckets` = `[{ atMs, offered, served, failed, retries,
 * rejected, throttled }]`.
 */
export function simulateOutage(options) {
  const where = 'simulateOutage';
  const opts = o.object(options, where, true);
  const { input, summary: summaryNames } = outageLayout();
  o.misspelt(opts, [...new Set(input.map((k) => k.split('.')[0]))], where);
  const values = {};
  const vector = simOutageDefaults();
  const groups = {
    breaker: nested(opts, 'breaker', where, ['failureThreshold']),
    budget: nested(opts, 'budget', where, ['capacity', 'refillPerSec']),
    quota: preset(opts, 'quota', where, QUOTA_PRESETS),
    limiter: preset(opts, 'limiter', where, LIMITER_PRESETS),
  };
  if (opts.throttle !== undefined && typeof opts.throttle !== 'boolean') throw o.typeError(where, 'throttle', 'a boolean', opts.throttle);
  input.forEach((key, i) => {
    const dot = key.indexOf('.');
    let value;
    if (key === 'strategy') {
      value = o.oneOf(opts, 'strategy', where, STRATEGIES, vector[i]);
    } else if (key === 'throttle') {
      value = opts.throttle === undefined ? vector[i] : Number(opts.throttle);
    } else if (Object.hasOwn(groups, key)) {
      value = groups[key].mode;
    } else {
      const sub = dot < 0 ? opts : groups[key.slice(0, dot)].sub;
      const name = dot < 0 ? key : key.slice(dot + 1);
      value = o.num(sub, name, where);
      if (value === undefined) value = vector[i];
      // NaN = "the preset's value" (quota.*, limiter.*): not an option the caller set.
      if (dot < 0 || !Number.isNaN(value)) values[name] = value;
    }
    vector[i] = value;
  });
  const out = o.core(where, values, () => simOutage(vector));
  const summary = {};
  summaryNames.forEach((name, i) => (summary[name] = out[i]));
  const n = summary.buckets;
  const base = summaryNames.length;
  const buckets = new Array(n);
  for (let i = 0; i < n; i++) {
    buckets[i] = {
      atMs: i * summary.bucketMs,
      offered: out[base + i],
      served: out[base + n + i],
      failed: out[base + 2 * n + i],
      retries: out[base + 3 * n + i],
      rejected: out[base + 4 * n + i],
      throttled: out[base + 5 * n + i],
    };
  }
  const at = (key) => vector[input.indexOf(key)];
  return {
    strategy: STRATEGIES[vector[0]],
    throttle: at('throttle') === 1,
    quota: at('quota') === 0 ? false : QUOTA_PRESETS[at('quota') - 1],
    limiter: at('limiter') === 0 ? false : LIMITER_PRESETS[at('limiter') - 1],
    options: values,
    summary,
    buckets,
  };
}

/**
 * A terminal chart: one line per row, `█` bars on a scale shared by every run
 * (`scaleMax`), at least one block per non-empty row. `rows` = `[{ at, count }]`.
 */
export function renderHistogram(rows, scaleMax, width = 50) {
  return rows
    .map(({ at, count }) => {
      const bar = '█'.repeat(Math.max(1, Math.round((count / scaleMax) * width)));
      return `  ${String(at).padStart(6)}ms ${String(count).padStart(7)}  ${bar}`;
    })
    .join('\n');
}

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

/**
 * A self-contained SVG (a string) of one `simulateOutage` result: offered load per bucket as bars
 * (served green, failed red), breaker rejections as an orange line, the outage window shaded,
 * and the capacity as a dashed line. `{ width = 800, height = 260, title }`.
 */
export function outageChartSvg(result, { width = 800, height = 260, title } = {}) {
  const { buckets, summary, options } = result;
  const pad = { l: 56, r: 12, t: 28, b: 30 };
  const w = width - pad.l - pad.r;
  const h = height - pad.t - pad.b;
  const n = Math.max(1, buckets.length);
  const capacity = options.capacityPerTick * (summary.bucketMs / options.tickMs);
  let top = capacity;
  for (const b of buckets) top = Math.max(top, b.offered, b.rejected);
  top = top || 1;
  const x = (i) => pad.l + (i / n) * w;
  const y = (v) => pad.t + h - (v / top) * h;
  const bw = Math.max(w / n, 0.5);
  const f = (v) => +v.toFixed(1);
  const parts = [];
  const t0 = options.outageStartMs / summary.bucketMs;
  const t1 = summary.outageEndMs / summary.bucketMs;
  if (t1 > t0) parts.push(`<rect x="${f(x(t0))}" y="${pad.t}" width="${f(Math.max(1, x(t1) - x(t0)))}" height="${h}" fill="#888" opacity="0.18"/>`);
  let served = '';
  let failed = '';
  let rejected = '';
  buckets.forEach((b, i) => {
    if (b.served > 0) served += `M${f(x(i))} ${f(y(b.served))}h${f(bw)}V${f(y(0))}h${f(-bw)}Z`;
    if (b.failed > 0) failed += `M${f(x(i))} ${f(y(b.offered))}h${f(bw)}V${f(y(b.served))}h${f(-bw)}Z`;
    rejected += `${i ? 'L' : 'M'}${f(x(i) + bw / 2)} ${f(y(b.rejected))}`;
  });
  parts.push(`<path d="${served}" fill="#2e9d5b"/>`, `<path d="${failed}" fill="#d9483b"/>`);
  if (summary.failedRejected > 0) parts.push(`<path d="${rejected}" fill="none" stroke="#e69a28" stroke-width="1.5"/>`);
  parts.push(
    `<line x1="${pad.l}" x2="${pad.l + w}" y1="${f(y(capacity))}" y2="${f(y(capacity))}" stroke="#333" stroke-dasharray="4 3"/>`,
    `<line x1="${pad.l}" x2="${pad.l + w}" y1="${f(y(0))}" y2="${f(y(0))}" stroke="#333"/>`,
    `<text x="${pad.l - 4}" y="${f(y(top)) + 4}" text-anchor="end">${Math.round(top)}</text>`,
    `<text x="${pad.l - 4}" y="${f(y(0))}" text-anchor="end">0</text>`,
    `<text x="${pad.l + w}" y="${height - 8}" text-anchor="end">${esc(((n * summary.bucketMs) / 1000).toFixed(1))} s</text>`,
    `<text x="${pad.l}" y="${height - 8}">0 s · attempts per ${esc(summary.bucketMs)} ms · dashed = capacity</text>`,
    `<text x="${pad.l}" y="18" font-weight="bold">${esc(title ?? `${result.strategy}: peak ${summary.peakOffered}, second peak ${summary.secondPeakOffered}, failed ${summary.failed}`)}</text>`,
  );
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
    `font-family="system-ui, sans-serif" font-size="11" role="img"><title>${esc(title ?? `retry storm: ${result.strategy}`)}</title>` +
    `<rect width="${width}" height="${height}" fill="#fff"/>${parts.join('')}</svg>`
  );
}
