// Issue 16: the README's own example, `withRetry(({ signal }) => fetch(url, { signal }))`, type-checks under
// plain `strict` (compiled by tsconfig.fetch-{dom,node}.json: strict without exactOptionalPropertyTypes).
import { withRetry, pipeline, type PolicyContext } from 'steadfast';

export const get = (url: string): Promise<Response> => withRetry(({ signal }) => fetch(url, { signal }));
export const viaPolicy = (url: string): Promise<Response> =>
  pipeline({ timeout: 1_000, retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1_000 } }).execute(({ signal }: PolicyContext) => fetch(url, { signal }));
