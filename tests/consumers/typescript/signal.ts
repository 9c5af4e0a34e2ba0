// Compiled with @types/node (tsconfig.node.json) and with the dom lib (tsconfig.dom.json): the platform's
// real AbortSignal must satisfy steadfast's structural AbortSignalLike in both.
import { withRetry, type AbortSignalLike, type RetryPolicy } from 'steadfast';

const controller = new AbortController();
const fromController: AbortSignalLike = controller.signal;
const policy: RetryPolicy = { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, signal: AbortSignal.timeout(1_000) };
export const run = (): Promise<string> => withRetry(async ({ signal }) => (signal?.aborted === true ? 'aborted' : 'ok'), { ...policy, signal: fromController });

// Issue 16: the context's signal is the platform's AbortSignal, so fetch takes it (with
// exactOptionalPropertyTypes, which this suite enables, a possibly-undefined signal is passed as `?? null`).
export const get = (url: string): Promise<Response> => withRetry(({ signal }) => fetch(url, { signal: signal ?? null }));
