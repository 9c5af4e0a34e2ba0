// The route handlers' body, shared by app/api/node/route.js and app/api/edge/route.js (and their
// faults/ routes): each route is bundled on its own, so the `steadfast` import below resolves by that
// route's runtime (Node: the `node` condition; edge: `edge-light`), and each gets its own breaker made
// at module level.
import * as steadfast from 'steadfast';
import { moduleLevel, program } from './program.js';
import { faultMatrix } from './faults.js';

const early = moduleLevel(steadfast);

/** A GET handler that runs the program against `?base=` and answers its checks. */
export function handler(label) {
  return async (request) => {
    const base = new URL(request.url).searchParams.get('base');
    return Response.json({ label, checks: await program(steadfast, base, label, early) });
  };
}

/** A GET handler that runs faults.js's matrix against `?base=` and the refused port `?closed=`. */
export function faultHandler(label) {
  return async (request) => {
    const params = new URL(request.url).searchParams;
    return Response.json({ label, ...(await faultMatrix(steadfast, { base: params.get('base'), closed: params.get('closed'), label })) });
  };
}
