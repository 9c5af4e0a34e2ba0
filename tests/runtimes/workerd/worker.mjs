// A Cloudflare Worker, bundled by wrangler (the `workerd` condition) and served by workerd, locally.
//   /?base=…               program.js's checks
//   /faults?base=…&closed=… faults.js's matrix (real faults from server.mjs, and a refused port)
import * as steadfast from 'steadfast';
import { moduleLevel, program } from './program.js';
import { faultMatrix } from './faults.js';

const early = moduleLevel(steadfast);
/**
 * workerd's fetch rejects with one plain Error, "Network connection lost.", for a refused connection
 * and a reset alike, and with "internal error; reference = …" for a name that does not resolve: it
 * cannot tell a request that never left, so those faults are unknown here, like every other.
 */
const CANNOT_TELL = ['refused', 'dns'];

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const base = url.searchParams.get('base');
    if (url.pathname === '/faults') {
      return Response.json({
        label: 'workerd-faults',
        ...(await faultMatrix(steadfast, { base, closed: url.searchParams.get('closed'), label: 'workerd-faults', cannotTell: CANNOT_TELL })),
      });
    }
    return Response.json({ label: 'workerd', checks: await program(steadfast, base, 'workerd', early) });
  },
};
