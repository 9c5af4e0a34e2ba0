// faults.js's matrix in the edge runtime (steadfast's `edge-light` entry, the edge sandbox's fetch).
import { faultHandler } from '../../../../handler.js';

export const runtime = 'edge';
export const dynamic = 'force-dynamic';
export const GET = faultHandler('next-edge-faults');
