// Node, Deno and Bun run this: faults.js's matrix, then one JSON line { label, checks, shapes } for
// run.mjs. argv: <base URL of server.mjs> <a 127.0.0.1 port nobody listens on> <label>.
import * as steadfast from 'steadfast';
import { faultMatrix } from './faults.js';

const [base, closed, label] = globalThis.Deno?.args ?? globalThis.process.argv.slice(2);
const { checks, shapes } = await faultMatrix(steadfast, { base, closed, label });
console.log(JSON.stringify({ label, checks, shapes }));
