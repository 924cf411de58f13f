/**
 * No tracked text file carries a merge's conflict markers: a marker left in a table or a comment
 * still builds and renders, so nothing else would notice it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const TEXT = /\.(ts|mts|mjs|js|json|md|sh|yaml|yml|lua|go|txt|tpl)$|(^|\/)(Dockerfile|run)$/;

/** Lines that open, split or close a conflict (git's markers are 7 characters at the start of a line). */
export function conflictMarkers(text: string): number[] {
  const lines: number[] = [];
  text.split('\n').forEach((line, i) => {
    if (/^(<{7}|>{7})( |$)/.test(line) || line === '=======') lines.push(i + 1);
  });
  return lines;
}

test('the marker finder sees each kind of marker and nothing else', () => {
  assert.deepEqual(conflictMarkers('a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> main\n'), [2, 4, 6]);
  assert.deepEqual(conflictMarkers('a\n======== not one\n<<<<<<<< eight\n'), []);
});

test('no tracked text file has conflict markers', () => {
  const files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => TEXT.test(f) && !f.startsWith('test/golden/') && !f.startsWith('test/fixtures/'));
  assert.ok(files.length > 100, `only ${files.length} files listed`);
  const found = files.flatMap((f) => conflictMarkers(readFileSync(join(ROOT, f), 'utf8')).map((line) => `${f}:${line}`));
  assert.deepEqual(found, []);
});
