import { ApiError, badRequest, timeout } from '../api/errors.js';
import { compareResourceVersions, isResourceVersion } from '../storage/resource-version.js';
import type { ResourceRequest } from './context.js';

/** How a read picks its version (SPEC 4.9). */
export type ReadSemantic =
  | { kind: 'MostRecent' }
  | { kind: 'Any' }
  | { kind: 'NotOlderThan'; resourceVersion: string }
  | { kind: 'Exact'; resourceVersion: string };

/** How long a read waits for a resourceVersion newer than the server has seen before 504. */
export const TOO_LARGE_WAIT_MS = 3000;

function invalidListOptions(field: string, value: string, detail: string): ApiError {
  return new ApiError(400, 'BadRequest', `${field}: Invalid value: "${value}": ${detail}`, {});
}

/** Parses `resourceVersion` (400 when it is not a decimal number). */
export function parseResourceVersionParam(query: URLSearchParams): string | undefined {
  const rv = query.get('resourceVersion');
  if (rv === null || rv === '') return undefined;
  if (!isResourceVersion(rv)) throw invalidListOptions('resourceVersion', rv, 'must be a decimal number');
  return rv;
}

/** The semantic of a get: unset = Most Recent, "0" = Any, other = Not older than. */
export function getSemantic(query: URLSearchParams): ReadSemantic {
  const rv = parseResourceVersionParam(query);
  if (rv === undefined) return { kind: 'MostRecent' };
  if (rv === '0') return { kind: 'Any' };
  return { kind: 'NotOlderThan', resourceVersion: rv };
}

/** The semantic of a list without a continue token, per the 4.9 table; 400 for invalid combinations. */
export function listSemantic(query: URLSearchParams, hasLimit: boolean): ReadSemantic {
  const rv = parseResourceVersionParam(query);
  const match = query.get('resourceVersionMatch') ?? '';
  if (match !== '' && rv === undefined) {
    throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
  }
  switch (match) {
    case '':
      if (rv === undefined) return { kind: 'MostRecent' };
      if (rv === '0') return { kind: 'Any' };
      return hasLimit ? { kind: 'Exact', resourceVersion: rv } : { kind: 'NotOlderThan', resourceVersion: rv };
    case 'Exact':
      if (rv === '0') throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
      return { kind: 'Exact', resourceVersion: rv as string };
    case 'NotOlderThan':
      return rv === '0' ? { kind: 'Any' } : { kind: 'NotOlderThan', resourceVersion: rv as string };
    default:
      throw badRequest(`resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan", ""`);
  }
}

/**
 * Waits until the type's current version reaches `rv`; 504 `Too large resource version` with
 * Retry-After when it does not within TOO_LARGE_WAIT_MS.
 */
export async function waitForResourceVersion(r: ResourceRequest, rv: string, waitMs = TOO_LARGE_WAIT_MS): Promise<string> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const current = await r.services.storage.currentResourceVersion(r.type);
    if (compareResourceVersions(current, rv) >= 0) return current;
    if (Date.now() >= deadline) {
      const err = timeout(`Too large resource version: ${rv}, current: ${current}`, 1);
      throw new ApiError(504, 'Timeout', err.message, { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 }, { 'Retry-After': '1' });
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
