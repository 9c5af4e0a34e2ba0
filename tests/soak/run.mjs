// `make soak`, part 1: the full soak (default 100,000 logical charges, 200 in flight) through
// chargeCustomer over real HTTP to the local fault-injecting gateway; prints the figures and exits
// non-zero if a charge was doubled or lost. See soak.mjs for what is measured and why.
//
//   node tests/soak/run.mjs [charges]        (SOAK_CHARGES, SOAK_CONCURRENCY, SOAK_SEED also read)
import { runSoak, format, DEFAULTS } from './soak.mjs';

const charges = Number(process.argv[2] ?? process.env.SOAK_CHARGES ?? 100_000);
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
  log: (line) => console.log(line),
});
console.log(format(f));
const ok = f.doubleCharges === 0 && f.lost === 0 && f.unknownAfter === 0 && f.errors === 0 && f.frontFreed === 0 && f.clientTotalCents === f.ledgerTotalCents;
console.log(ok ? 'soak: OK — nothing doubled, nothing lost' : 'soak: FAILED');
process.exitCode = ok ? 0 : 1;
