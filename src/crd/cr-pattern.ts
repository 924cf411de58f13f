import { RE2JS } from '@bufbuild/re2';

/**
 * `pattern` of CRD schemas with Go's regexp semantics (RE2: linear time, no backreferences or
 * lookaround, Go's `(?i)` flags and `[[:alpha:]]` classes), as kube-apiserver evaluates it. A pattern
 * Go refuses is reported with Go's parser message; a hostile pattern cannot stall a worker.
 */

/** How many compiled patterns are kept (a CRD has few; old ones are dropped first). */
const CACHE_SIZE = 1024;
const compiled = new Map<string, RE2JS>();

/** PATTERN compiled (cached); throws Go's `error parsing regexp: ...` error when Go refuses it. */
export function compilePattern(pattern: string): RE2JS {
  const hit = compiled.get(pattern);
  if (hit !== undefined) return hit;
  const re = RE2JS.compile(pattern);
  if (compiled.size >= CACHE_SIZE) {
    const oldest = compiled.keys().next().value;
    if (oldest !== undefined) compiled.delete(oldest);
  }
  compiled.set(pattern, re);
  return re;
}

/** Go's error for PATTERN (`error parsing regexp: missing closing ): ...`), or undefined when it compiles. */
export function patternError(pattern: string): string | undefined {
  try {
    compilePattern(pattern);
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/** ajv's regular expression engine option: patterns run on RE2, matching anywhere in the string. */
export const re2Engine = Object.assign((pattern: string) => compilePattern(pattern), { code: 're2Engine' });
