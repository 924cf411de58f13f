/**
 * The README and the pages of docs/ link to each other by relative paths and `#anchors`. Every such
 * link must point at a file that exists and, for a markdown file, at one of its headings (GitHub's
 * anchors: lower case, punctuation dropped, spaces as dashes). Links with a scheme (https:, mailto:)
 * are not followed, nor is anything inside code. The repository paths the pages name in code spans
 * (`src/...`, `test/...`, `scripts/...`, ...) must exist too, so a moved file cannot leave a stale page.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { anchor } from '../../src/cli/flags-doc.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** README.md and every markdown page of docs/, relative to the repository root. */
function pages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs.sort()];
}

/** `markdown` with fenced code blocks and inline code spans blanked (line numbers kept). */
function withoutCode(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*```/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line.replace(/`[^`]*`/g, (span) => ' '.repeat(span.length));
    })
    .join('\n');
}

/** The anchors of `markdown`'s headings, as GitHub makes them (a repeated heading gets `-1`, `-2`, ...). */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const text = heading[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = anchor(text);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

interface Link {
  page: string;
  line: number;
  target: string;
}

/** The relative links of a page (inline links and images; not those inside code). */
function linksOf(page: string): Link[] {
  const text = withoutCode(readFileSync(join(ROOT, page), 'utf8'));
  const links: Link[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    links.push({ page, line: text.slice(0, m.index).split('\n').length, target });
  }
  return links;
}

test('every relative link of README.md and docs/*.md points at an existing file and heading', () => {
  const problems: string[] = [];
  let checked = 0;
  for (const page of pages()) {
    for (const link of linksOf(page)) {
      const [path, fragment] = link.target.split('#', 2);
      const file = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
      const where = `${link.page}:${link.line}: ${link.target}`;
      if (relative(ROOT, join(ROOT, file)).startsWith('..')) {
        problems.push(`${where}: leaves the repository`);
        continue;
      }
      if (!existsSync(join(ROOT, file))) {
        problems.push(`${where}: no file ${file}`);
        continue;
      }
      checked++;
      if (fragment !== undefined && file.endsWith('.md') && !anchorsOf(readFileSync(join(ROOT, file), 'utf8')).has(fragment)) {
        problems.push(`${where}: no heading #${fragment} in ${file}`);
      }
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(checked > 50, `${checked} links checked`);
});

/** Whether `path` (relative to the root; `*` matches within one name) names an existing file or folder. */
function pathExists(path: string): boolean {
  let found = [ROOT];
  for (const part of path.split('/').filter((p) => p !== '')) {
    if (!part.includes('*')) {
      found = found.map((dir) => join(dir, part)).filter((p) => existsSync(p));
      continue;
    }
    const pattern = new RegExp(`^${part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*')}$`);
    found = found.flatMap((dir) => (statSync(dir).isDirectory() ? readdirSync(dir).filter((n) => pattern.test(n)) : []).map((n) => join(dir, n)));
  }
  return found.length > 0;
}

test('every repository path README.md and docs/*.md name in code spans exists', () => {
  const problems: string[] = [];
  let checked = 0;
  for (const page of pages()) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    for (const m of text.matchAll(/`((?:src|test|scripts|lua|schema|tools|bench|deploy|docs)\/[^`\s]*)`/g)) {
      checked++;
      const path = m[1].replace(/[.,:;]$/, '');
      if (!pathExists(path)) problems.push(`${page}: \`${m[1]}\``);
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(checked > 100, `${checked} paths checked`);
});

test('every page of docs/ is listed in the docs index and in the README', () => {
  const index = linksOf('docs/README.md').map((l) => l.target.split('#')[0]);
  const readme = linksOf('README.md').map((l) => l.target.split('#')[0]);
  for (const page of pages().filter((p) => p.startsWith('docs/') && p !== 'docs/README.md')) {
    assert.ok(index.includes(page.slice('docs/'.length)), `docs/README.md links ${page}`);
    assert.ok(readme.includes(page), `README.md links ${page}`);
  }
});

test('the README fits on a screen: at most 150 lines', () => {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length;
  assert.ok(lines <= 150, `README.md has ${lines} lines`);
});

test('anchors are made as GitHub makes them', () => {
  assert.deepEqual(
    [...anchorsOf("# A b\n## Goldens from kube's own code\n```\n# not a heading\n```\n## A b\n### `--x` flags")],
    ['a-b', 'goldens-from-kubes-own-code', 'a-b-1', '--x-flags'],
  );
});
