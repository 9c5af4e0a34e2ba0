// A route handler in the edge runtime (the `edge-light` condition).
import * as steadfast from 'steadfast';
import { moduleLevel, program } from '../../../program.js';

export const runtime = 'edge';
export const dynamic = 'force-dynamic';

const early = moduleLevel(steadfast);

export async function GET(request) {
  const base = new URL(request.url).searchParams.get('base');
  return Response.json({ label: 'next-edge', checks: await program(steadfast, base, 'next-edge', early) });
}
