/**
 * The web platform types steadfast uses. Each comes from whichever lib the project has (`dom`, or
 * @types/node's globals); with neither, minimal structural types stand in, so the declarations still compile.
 */

/** The part of `AbortSignal` steadfast uses (a real `AbortSignal` satisfies it). */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** The platform's `AbortSignal` (from the `dom` lib or @types/node); `AbortSignalLike` with neither. */
export type PlatformAbortSignal = typeof globalThis extends { AbortSignal: { prototype: infer S } } ? S : AbortSignalLike;

interface ResponseLike {
  readonly ok: boolean;
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  json(): Promise<unknown>;
  text(): Promise<string>;
}
/** `Response` from the environment's lib. */
export type FetchResponse = typeof globalThis extends { Response: { prototype: infer R } } ? R : ResponseLike;
/** `RequestInit` from the environment's lib. */
export type FetchInit = typeof globalThis extends { fetch: (input: never, init?: infer I) => unknown }
  ? NonNullable<I>
  : {
      method?: string;
      headers?: Record<string, string> | [string, string][];
      body?: unknown;
      signal?: AbortSignalLike | null;
    };
/** `fetch`'s first argument from the environment's lib. */
export type FetchInput = typeof globalThis extends { fetch: (input: infer I, init?: never) => unknown }
  ? I
  : string | { readonly href: string } | { readonly url: string };
/** A fetch implementation. */
export type FetchFn = (input: FetchInput, init?: FetchInit) => Promise<FetchResponse>;
