import { FORBIDDEN_KEYS, ForbiddenKeyError } from './json-text.js';
import { isObject } from '../api/values.js';

/** A decoded value nested deeper than the limit allows. */
export class NestingDepthError extends Error {
  constructor(readonly maxDepth: number) {
    super(`exceeded max depth of ${maxDepth}`);
    this.name = 'NestingDepthError';
  }
}

/**
 * Checks a JSON value that did not come through the text readers (a protobuf body, the result of a
 * patch): nesting of at most `maxDepth` objects and arrays, and no forbidden key as an own property.
 * Iterative, so it is safe on any input; throws NestingDepthError or ForbiddenKeyError.
 */
export function assertPlainJsonValue(value: unknown, maxDepth: number): void {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (Array.isArray(v)) {
      if (depth + 1 > maxDepth) throw new NestingDepthError(maxDepth);
      for (const e of v) if (typeof e === 'object' && e !== null) stack.push([e, depth + 1]);
    } else if (isObject(v)) {
      if (depth + 1 > maxDepth) throw new NestingDepthError(maxDepth);
      for (const k of Object.keys(v)) {
        if (FORBIDDEN_KEYS.has(k)) throw new ForbiddenKeyError(k);
        const e = v[k];
        if (typeof e === 'object' && e !== null) stack.push([e, depth + 1]);
      }
    }
  }
}
