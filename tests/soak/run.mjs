// `make soak`, part 1: the full soak (default 100,000 logical charges, 200 in flight) through
// chargeCustomer over real HTTP to the local fault-injecting gateway; prints the figures and exits
// non-zero if a charge was doubled or lost. See soak.mjs for what is measured and why.
//
//   node tests/soak/run.mjs [--json] [--no-settle-window] [charges]   (SOAK_CHARGES, SOAK_CONCURRENCY, SOAK_SEED also read)
//
// --json: the figures as one last line, `soak-json {…}` (tests/soak/all.mjs reads it).
// --no-settle-window: settleAfterMs 0, a "failed" lookup applied at once; what the window protects
// (charges processed after the client gave up come out lost) — the exit status then ignores lost charges.
import { runSoak, format, DEFAULTS } from './soak.mjs';

const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const unknownFlag = flags.find((a) => a !== '--json' && a !== '--no-settle-window');
if (unknownFlag !== undefined) throw new TypeError(`soak: unknown flag ${unknownFlag}`);
const noWindow = flags.includes('--no-settle-window');
const charges = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? process.env.SOAK_CHARGES ?? 100_000);
const concurrency = Number(process.env.SOAK_CONCURRENCY ?? DEFAULTS.concurrency);
const seed = Number(process.env.SOAK_SEED ?? DEFAULTS.seed);
if (!Number.isSafeInteger(charges) || charges < 1) throw new RangeError(`charges must be a positive integer, got ${charges}`);

const f = await runSoak({
  charges,
  concurrency,
  seed,
  // Two outages in the long run: a short blip and a longer one that trips the breaker for a while.
  outages:
    charges >= 20_000
      ? [
          { at: 0.3, durationMs: 1_000 },
          { at: 0.7, durationMs: 3_000 },
        ]
      : DEFAULTS.outages,
  ...(noWindow ? { settleAfterMs: 0 } : {}),
  log: (line) => console.log(line),
});
console.log(format(f));
if (flags.includes('--json')) console.log(`soak-json ${JSON.stringify(f)}`);
// Without the window a late charge is reported not charged and the ledger has it: lost, as shown.
const ok = noWindow
  ? f.doubleCharges === 0 && f.errors === 0 && f.frontFreed === 0
  : f.doubleCharges === 0 && f.lost === 0 && f.unknownAfter === 0 && f.errors === 0 && f.frontFreed === 0 && f.clientTotalCents === f.ledgerTotalCents;
console.log(ok ? `soak: OK — nothing doubled${noWindow ? `; ${f.lost} lost without the settle window` : ', nothing lost'}` : 'soak: FAILED');
process.exitCode = ok ? 0 : 1;
