import { ApiError } from '../api/errors.js';

const FORBIDDEN_KEYS = /"(__proto__|constructor|prototype)"\s*:/;

/** JSON.parse that refuses prototype-polluting keys with 400. */
export function parseJsonSafely(text: string): unknown {
  if (!FORBIDDEN_KEYS.test(text)) return JSON.parse(text) as unknown;
  return JSON.parse(text, (key, value: unknown) => {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') {
      throw new ApiError(400, 'BadRequest', `invalid field name "${key}"`);
    }
    return value;
  }) as unknown;
}
