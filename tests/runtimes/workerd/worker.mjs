// A Cloudflare Worker, bundled by wrangler (the `workerd` condition) and served by workerd, locally.
import * as steadfast from 'steadfast';
import { moduleLevel, program } from './program.js';

const early = moduleLevel(steadfast);

export default {
  async fetch(request) {
    const base = new URL(request.url).searchParams.get('base');
    return Response.json({ label: 'workerd', checks: await program(steadfast, base, 'workerd', early) });
  },
};
