// Shared by every bench script: load steadfast BY NAME (the packed tarball from `make build`,
// installed into benches/node_modules like a user's `npm install`), and small statistics helpers.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = dirname(BENCH_DIR);
export const INSTALLED = join(BENCH_DIR, 'node_modules', 'steadfast');

/** Install dist/steadfast-*.tgz into benches/node_modules/steadfast unless that exact tarball is there. */
export function installTarball() {
  const dist = join(ROOT, 'dist');
  const tgz = existsSync(dist) ? readdirSync(dist).filter((f) => /^steadfast-.*\.tgz$/.test(f)) : [];
  if (tgz.length !== 1) throw new Error('bench: expected one dist/steadfast-*.tgz; run `make build` first');
  const tarball = join(dist, tgz[0]);
  const stamp = `${tarball} ${statSync(tarball).mtimeMs} ${statSync(tarball).size}`;
  const stampFile = join(INSTALLED, '.bench-stamp');
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return tarball;
  rmSync(INSTALLED, { recursive: true, force: true });
  execFileSync('npm', ['install', '--prefix', BENCH_DIR, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', tarball], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  writeFileSync(stampFile, stamp);
  return tarball;
}

/**
 * Case 3's inputs, shared by timing.mjs, profile.mjs and ab.mjs so that every table measures the
 * same charge: the retry policy and the rate breaker's options of the pipeline rows, and the
 * checkout-sized charge (customer, description and metadata: ~200 bytes of canonical text).
 */
export const RETRY_POLICY = Object.freeze({ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 10_000 });
export const RATE_BREAKER = Object.freeze({ windowSize: 100, failureRateThreshold: 0.5, openDurationMs: 10_000 });
export const checkoutSizedCharge = (idempotencyKey, amountCents) => ({
  idempotencyKey,
  amountCents,
  currency: 'usd',
  customer: 'cus_NffrFeUfNV2Hib',
  description: 'Order 1042: 2 items',
  metadata: { cartId: 'cart_8f3e2a9b', channel: 'web', promo: 'WINTER25' },
});

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Median absolute deviation relative to the median, in % (a noise indicator for the table). */
export const spread = (xs) => {
  const m = median(xs);
  return m === 0 ? 0 : (100 * median(xs.map((x) => Math.abs(x - m)))) / m;
};

export const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '—');
export const kib = (n) => `${(n / 1024).toFixed(1)} KB`;

/** Print rows (arrays of strings) as an aligned table; first row is the header. */
export function table(rows, alignLeft = 1) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c] ?? '').length)));
  const line = (r) => r.map((v, c) => (c < alignLeft ? String(v).padEnd(widths[c]) : String(v).padStart(widths[c]))).join('  ');
  console.log(line(rows[0]));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows.slice(1)) console.log(line(r));
}
