/**
 * Reads the JUnit XML that e2e.test writes with --report-dir (junit_01.xml): one entry per
 * `<testcase>`, its name without ginkgo's `[It] ` prefix, its status attribute and the first
 * line of its failure (the message attribute, else the element's text). Only the shape ginkgo writes is understood (attributes in double
 * quotes, XML's five entities and numeric character references); anything else is ignored, never
 * guessed.
 */

/** One test case of a run. */
export interface JUnitCase {
  /** The spec's full text, as ginkgo --focus matches it. */
  name: string;
  /** passed, failed, skipped, pending, panicked, interrupted, timedout, aborted (ginkgo's states). */
  status: string;
  /** The first line of the failure message, for failed cases. */
  failure?: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** XML text with its entity and character references replaced. */
export function unescapeXml(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (all, ref: string) => {
    if (ref.startsWith('#x')) return String.fromCodePoint(parseInt(ref.slice(2), 16));
    if (ref.startsWith('#')) return String.fromCodePoint(parseInt(ref.slice(1), 10));
    return ENTITIES[ref] ?? all;
  });
}

function attributes(tag: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of tag.matchAll(/([A-Za-z_:][\w.:-]*)="([^"]*)"/g)) out.set(m[1], unescapeXml(m[2]));
  return out;
}

/** The test cases of a JUnit document, in document order. */
export function parseJUnit(xml: string): JUnitCase[] {
  const cases: JUnitCase[] = [];
  // A testcase is either self-closing or runs to its </testcase>; its body holds <failure>, <skipped>, <system-err>...
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const attrs = attributes(m[1]);
    const rawName = attrs.get('name');
    if (rawName === undefined) continue;
    const name = rawName.replace(/^\[It\] /, '');
    const body = m[3] ?? '';
    const failureTag = /<(failure|error)\b([^>]*?)(?:\/>|>([\s\S]*?)<\/\1>)/.exec(body);
    const status = attrs.get('status') ?? (failureTag ? 'failed' : /<skipped\b/.test(body) ? 'skipped' : 'passed');
    const c: JUnitCase = { name, status };
    if (failureTag) {
      // Ginkgo leaves the message attribute empty and puts the failure in the element's text.
      const message = attributes(failureTag[2]).get('message') || unescapeXml(failureTag[3] ?? '');
      const first = message.split('\n').find((l) => l.trim() !== '');
      if (first !== undefined) c.failure = first.trim();
    }
    cases.push(c);
  }
  return cases;
}
