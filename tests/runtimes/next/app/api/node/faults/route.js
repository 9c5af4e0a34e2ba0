// faults.js's matrix in the Node.js runtime (steadfast's `node` entry, Node's own fetch).
import { faultHandler } from '../../../../handler.js';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';
export const GET = faultHandler('next-node-faults');
