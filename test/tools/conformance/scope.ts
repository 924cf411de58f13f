/**
 * The conformance tests outside the set-up's reach, with a reason each: the data file
 * scripts/conformance/out-of-scope.json (see its "about"). Patterns are regular expressions valid
 * in both Go's RE2 (ginkgo's --skip) and JavaScript; the first one that matches a test's name
 * gives its reason.
 */

/** One out-of-scope rule. */
export interface ScopeRule {
  pattern: RegExp;
  /** The source text of pattern, as ginkgo gets it. */
  source: string;
  reason: string;
}

/** The parsed data file: reason texts by key, and the rules in file order. */
export interface Scope {
  reasons: Map<string, string>;
  rules: ScopeRule[];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses the data file; throws an Error naming the first bad entry (unknown reason, bad pattern). */
export function parseScope(json: string): Scope {
  const doc: unknown = JSON.parse(json);
  if (!isRecord(doc) || !isRecord(doc.reasons) || !Array.isArray(doc.tests)) throw new Error('out-of-scope file: wants {"reasons": {...}, "tests": [...]}');
  const reasons = new Map<string, string>();
  for (const [key, text] of Object.entries(doc.reasons)) {
    if (typeof text !== 'string') throw new Error(`out-of-scope file: reason ${key} is not a string`);
    reasons.set(key, text);
  }
  const rules: ScopeRule[] = [];
  doc.tests.forEach((t: unknown, i: number) => {
    if (!isRecord(t) || typeof t.pattern !== 'string' || typeof t.reason !== 'string') throw new Error(`out-of-scope file: tests[${i}] wants a pattern and a reason`);
    if (!reasons.has(t.reason)) throw new Error(`out-of-scope file: tests[${i}] names unknown reason ${t.reason}`);
    rules.push({ pattern: new RegExp(t.pattern), source: t.pattern, reason: t.reason });
  });
  return { reasons, rules };
}

/** The reason key that puts a test out of scope, or undefined when it is in scope. */
export function outOfScopeReason(scope: Scope, name: string): string | undefined {
  return scope.rules.find((r) => r.pattern.test(name))?.reason;
}

/** One regular expression matching every out-of-scope test (for ginkgo's --skip), or '' when none. */
export function skipRegex(scope: Scope): string {
  return scope.rules.map((r) => `(${r.source})`).join('|');
}
