/**
 * kube's regex library: `find` and `findAll` with RE2 syntax (patterns RE2 refuses, such as
 * look-arounds and back-references, are errors: `Illegal regex: ...`).
 */
import { celList, type CelValue } from '@bufbuild/cel';
import { RE2JS } from '@bufbuild/re2';
import { CelEvalError, defineFunction, defineMethod } from './registry.js';

const cache = new Map<string, RegExp>();

/** A JavaScript regexp matching as the RE2 PATTERN does; throws for patterns RE2 refuses. */
export function re2Regexp(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (re !== undefined) return re;
  try {
    RE2JS.compile(pattern);
  } catch (err) {
    throw new CelEvalError(`Illegal regex: ${(err as Error).message}`);
  }
  let flags = 'gu';
  let body = pattern;
  const inline = /^\(\?([imsU]+)\)/.exec(body);
  if (inline !== null) {
    if (inline[1].includes('i')) flags += 'i';
    if (inline[1].includes('m')) flags += 'm';
    if (inline[1].includes('s')) flags += 's';
    body = body.slice(inline[0].length);
  }
  body = body.replace(/\\z/g, '$(?![\\s\\S])').replace(/\(\?P</g, '(?<');
  re = new RegExp(body, flags);
  if (cache.size > 1000) cache.clear();
  cache.set(pattern, re);
  return re;
}

function findAll(s: string, pattern: string, limit: number): string[] {
  const re = re2Regexp(pattern);
  const out: string[] = [];
  if (limit === 0) return out;
  for (const m of s.matchAll(re)) {
    out.push(m[0]);
    if (limit > 0 && out.length >= limit) break;
  }
  return out;
}

defineMethod('find', 1, (s: CelValue, p: CelValue) => (typeof s === 'string' && typeof p === 'string' ? (findAll(s, p, 1)[0] ?? '') : undefined));
defineMethod('findAll', 1, (s, p) => (typeof s === 'string' && typeof p === 'string' ? celList(findAll(s, p, -1)) : undefined));
defineMethod('findAll', 2, (s, p, n) =>
  typeof s === 'string' && typeof p === 'string' && typeof n === 'bigint' ? celList(findAll(s, p, Number(n))) : undefined,
);

// The global form of `matches`: `matches(s, pattern)`.
defineFunction('matches', 2, (s, pattern) => (typeof s === 'string' && typeof pattern === 'string' ? re2Regexp(pattern).test(s) : undefined));
