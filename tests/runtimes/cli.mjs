// Deno, Bun and Bun's single-file executable run this: the program, then one JSON line for run.mjs.
// argv: <base URL> <label>.
import * as steadfast from 'steadfast';
import { moduleLevel, program } from './program.js';

const early = moduleLevel(steadfast);
const [base, label] = globalThis.Deno?.args ?? globalThis.process.argv.slice(2);
const checks = await program(steadfast, base, label, early);
console.log(JSON.stringify({ label, checks }));
