// A route handler in the Node.js runtime (steadfast's `node` entry).
import { handler } from '../../../handler.js';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';
export const GET = handler('next-node');
