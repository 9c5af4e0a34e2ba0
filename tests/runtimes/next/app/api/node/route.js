// A route handler in the Node.js runtime (the `node` condition).
import * as steadfast from 'steadfast';
import { moduleLevel, program } from '../../../program.js';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

const early = moduleLevel(steadfast);

export async function GET(request) {
  const base = new URL(request.url).searchParams.get('base');
  return Response.json({ label: 'next-node', checks: await program(steadfast, base, 'next-node', early) });
}
