// A route handler in the edge runtime (steadfast's `edge-light` entry).
import { handler } from '../../../handler.js';

export const runtime = 'edge';
export const dynamic = 'force-dynamic';
export const GET = handler('next-edge');
