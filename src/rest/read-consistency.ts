import { ApiError, timeout } from '../api/errors.js';
import { queryResourceVersion, type ListOptions } from '../api/request-options.js';
import { compareResourceVersions } from '../storage/resource-version.js';
import type { ResourceTarget } from './server-context.js';

/** How a read picks its version (SPEC 4.9). */
export type ReadSemantic =
  { kind: 'MostRecent' } | { kind: 'Any' } | { kind: 'NotOlderThan'; resourceVersion: string } | { kind: 'Exact'; resourceVersion: string };

/** How long a read waits for a resourceVersion newer than the server has seen before 504. */
export const TOO_LARGE_WAIT_MS = 3000;

/** The semantic of a get: unset = Most Recent, "0" = Any, other = Not older than (400 for a malformed version). */
export function getSemantic(query: URLSearchParams): ReadSemantic {
  const rv = queryResourceVersion(query);
  if (rv === undefined) return { kind: 'MostRecent' };
  if (rv === '0') return { kind: 'Any' };
  return { kind: 'NotOlderThan', resourceVersion: rv };
}

/**
 * The semantic of a list without a continue token, per the 4.9 table. `opts` were validated by
 * listOptionsFrom, so only the version itself is checked here (400 as kube's storage words it).
 */
export function listSemantic(opts: ListOptions): ReadSemantic {
  const rv = listResourceVersion(opts);
  const hasLimit = opts.limit > 0;
  switch (opts.resourceVersionMatch) {
    case 'Exact':
      return { kind: 'Exact', resourceVersion: rv as string };
    case 'NotOlderThan':
      return rv === '0' ? { kind: 'Any' } : { kind: 'NotOlderThan', resourceVersion: rv as string };
    default:
      if (rv === undefined) return { kind: 'MostRecent' };
      if (rv === '0') return { kind: 'Any' };
      return hasLimit ? { kind: 'Exact', resourceVersion: rv } : { kind: 'NotOlderThan', resourceVersion: rv };
  }
}

/** A list or watch's `resourceVersion` in canonical form (400 "invalid resource version: ..." when malformed). */
export function listResourceVersion(opts: ListOptions): string | undefined {
  if (opts.resourceVersion === undefined) return undefined;
  return queryResourceVersion(new URLSearchParams({ resourceVersion: opts.resourceVersion }), 'invalid resource version: ');
}

/**
 * Waits until the type's current version reaches `rv`; 504 `Too large resource version` with
 * Retry-After when it does not within TOO_LARGE_WAIT_MS.
 */
export async function waitForResourceVersion(r: ResourceTarget, rv: string, waitMs = TOO_LARGE_WAIT_MS): Promise<string> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const current = await r.server.storage.currentResourceVersion(r.type);
    if (compareResourceVersions(current, rv) >= 0) return current;
    if (Date.now() >= deadline) {
      const err = timeout(`Too large resource version: ${rv}, current: ${current}`, 1);
      throw new ApiError(
        504,
        'Timeout',
        err.message,
        { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
        { 'Retry-After': '1' },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
