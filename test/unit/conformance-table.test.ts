/**
 * npm run conformance's table (test/tools/conformance/): JUnit files as e2e.test writes them
 * (test/fixtures/conformance/, one per target) are read, sorted into sigs and scope, and counted;
 * the out-of-scope data file of scripts/conformance/ parses and becomes one ginkgo skip expression.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseJUnit } from '../tools/conformance/junit.js';
import { buildReport, sigOf } from '../tools/conformance/report.js';
import { outOfScopeReason, parseScope, skipRegex } from '../tools/conformance/scope.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'conformance');
const read = (target: string): string => readFileSync(join(FIXTURES, target, 'junit_01.xml'), 'utf8');

const SCOPE = JSON.stringify({
  reasons: { busybox: 'runs busybox commands', logs: 'reads logs' },
  tests: [{ reason: 'busybox', pattern: '\\[sig-apps\\] Job with successPolicy ' }],
});

test('parseJUnit reads names without [It], statuses and the first line of a failure, entities decoded', () => {
  const cases = parseJUnit(read('reference'));
  assert.equal(cases.length, 6);
  assert.deepEqual(cases[0], { name: '[SynchronizedBeforeSuite]', status: 'passed' });
  assert.deepEqual(cases[1], { name: '[sig-apps] Deployment deployment should support rollover [Conformance]', status: 'passed' });
  assert.deepEqual(cases[4], {
    name: '[sig-auth] ServiceAccounts should update a ServiceAccount [Conformance]',
    status: 'failed',
    failure: "[FAILED] the server doesn't have a resource <x> & more",
  });
  assert.equal(cases[3].status, 'skipped');
  // Self-closing test cases count too.
  assert.deepEqual(
    parseJUnit(read('capstan-memory')).map((c) => c.status),
    ['failed', 'passed', 'skipped', 'passed'],
  );
});

test('parseScope refuses unknown reasons and bad entries; skipRegex matches exactly the listed tests', () => {
  assert.throws(() => parseScope(JSON.stringify({ reasons: {}, tests: [{ reason: 'x', pattern: 'a' }] })), /unknown reason x/);
  assert.throws(() => parseScope(JSON.stringify({ reasons: { x: 'y' }, tests: [{ reason: 'x' }] })), /tests\[0\] wants a pattern/);
  assert.throws(() => parseScope('[]'), /wants/);
  const scope = parseScope(SCOPE);
  assert.equal(outOfScopeReason(scope, '[sig-apps] Job with successPolicy should succeeded [Conformance]'), 'busybox');
  assert.equal(outOfScopeReason(scope, '[sig-apps] Job should delete a job [Conformance]'), undefined);
  const skip = new RegExp(skipRegex(scope));
  assert.ok(skip.test('[sig-apps] Job with successPolicy should succeeded [Conformance]'));
  assert.ok(!skip.test('[sig-apps] Job should delete a job [Conformance]'));
  assert.equal(skipRegex(parseScope(JSON.stringify({ reasons: {}, tests: [] }))), '');
});

test("the project's out-of-scope file parses, and its skip expression is one valid regular expression", () => {
  const scope = parseScope(readFileSync(join(ROOT, 'scripts', 'conformance', 'out-of-scope.json'), 'utf8'));
  assert.ok(scope.rules.length > 0);
  const skip = new RegExp(skipRegex(scope));
  assert.ok(skip.test('[sig-architecture] Conformance Tests should have at least two untainted nodes [Conformance]'));
  assert.ok(!skip.test('[sig-apps] Job should delete a job [Conformance]'));
});

test('buildReport counts per sig and target, and lists what the reference passes and a target does not', () => {
  const md = buildReport({
    focus: /\[sig-(apps|auth)\]/,
    scope: parseScope(SCOPE),
    reference: 'reference',
    targets: [
      { name: 'reference', cases: parseJUnit(read('reference')) },
      { name: 'capstan-memory', cases: parseJUnit(read('capstan-memory')) },
      { name: 'capstan-redis2' },
    ],
  });
  const row = (sig: string): string | undefined => md.split('\n').find((l) => l.startsWith(`| ${sig} |`));
  // apps: 3 selected, 1 out of scope; reference passes both, Capstan fails the rollover.
  assert.equal(row('apps'), '| apps | 3 | 1 | 2 | 2 / 0 / 0 | 1 / 1 / 0 | not run |');
  assert.equal(row('auth'), '| auth | 1 | 0 | 1 | 0 / 1 / 0 | 1 / 0 / 0 | not run |');
  assert.equal(row('**all**'), '| **all** | 4 | 1 | 3 | 2 / 1 / 0 | 2 / 1 / 0 | not run |');
  assert.match(
    md,
    /Passed on reference, not on capstan-memory \(1\):\n\n- \[sig-apps\] Deployment deployment should support rollover \[Conformance\]: failed \(\[FAILED\] timed out/,
  );
  assert.match(
    md,
    /Not passed on reference \(1\):\n\n- \[sig-auth\] ServiceAccounts should update a ServiceAccount \[Conformance\]: failed .*; passed on capstan-memory/,
  );
  assert.match(md, /\| runs busybox commands \| 1 \|/);
  // The non-conformance [NodeConformance] test is not counted.
  assert.doesNotMatch(md, /sig-node/);
  assert.equal(sigOf('[sig-api-machinery] x'), 'api-machinery');
  assert.equal(sigOf('no sig'), 'other');
});

test('the table command writes DIR/table.md from DIR/<target>/junit_*.xml', () => {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-table-'));
  try {
    cpSync(FIXTURES, dir, { recursive: true });
    const scopeFile = join(dir, 'scope.json');
    // The fixtures' out-of-scope test (a busybox Job) is in scope since the pod runner runs busybox: the file of SCOPE keeps it out.
    writeFileSync(scopeFile, SCOPE);
    const tool = join(ROOT, 'dist', 'test', 'tools', 'conformance', 'main.js');
    const printed = execFileSync(process.execPath, [tool, 'table', '--dir', dir, '--scope', scopeFile, '--focus', '\\[sig-apps\\]'], { encoding: 'utf8' });
    const written = readFileSync(join(dir, 'table.md'), 'utf8');
    assert.equal(printed, written);
    assert.match(written, /^\| apps \| 3 \| 1 \| 2 \| 2 \/ 0 \/ 0 \| 1 \/ 1 \/ 0 \| not run \|$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
