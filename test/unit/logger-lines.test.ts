/**
 * The JSON lines of src/logging/logger.ts: key order, primitive fields as they are, and the values
 * that need the replacer (errors, also nested, and bigints) still written in full.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Logger } from '../../src/logging/logger.js';

function capture(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: new Logger('debug', (l) => lines.push(l)), lines };
}

test('a line of primitive fields keeps level, msg, the fields in order, then ts', () => {
  const { log, lines } = capture();
  log.info('request', { method: 'GET', status: 200, durationMs: 1.25, aborted: true });
  assert.equal(lines.length, 1);
  assert.ok(lines[0].endsWith('\n'));
  const parsed = JSON.parse(lines[0]) as Record<string, unknown>;
  assert.deepEqual(Object.keys(parsed), ['level', 'msg', 'method', 'status', 'durationMs', 'aborted', 'ts']);
  assert.deepEqual({ ...parsed, ts: undefined }, { level: 'info', msg: 'request', method: 'GET', status: 200, durationMs: 1.25, aborted: true, ts: undefined });
  assert.match(String(parsed.ts), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

test('errors (top-level and nested) and bigints are expanded', () => {
  const { log, lines } = capture();
  const cause = new Error('inner');
  log.error('failed', { error: new Error('outer', { cause }), nested: { err: new TypeError('deep') }, big: 12345678901234567890n });
  const parsed = JSON.parse(lines[0]) as { error: Record<string, unknown>; nested: { err: Record<string, unknown> }; big: string };
  assert.equal(parsed.error.name, 'Error');
  assert.equal(parsed.error.message, 'outer');
  assert.match(String(parsed.error.stack), /outer/);
  assert.equal((parsed.error.cause as Record<string, unknown>).message, 'inner');
  assert.equal(parsed.nested.err.name, 'TypeError');
  assert.equal(parsed.nested.err.message, 'deep');
  assert.equal(parsed.big, '12345678901234567890');
});

test('base fields with an object still go through the replacer', () => {
  const { log, lines } = capture();
  log.addBaseFields({ worker: 1, origin: { err: new Error('base') } });
  log.warn('w', { n: 1 });
  const parsed = JSON.parse(lines[0]) as { worker: number; origin: { err: { message: string } } };
  assert.equal(parsed.worker, 1);
  assert.equal(parsed.origin.err.message, 'base');
});

test('an unserialisable field still gives a line', () => {
  const { log, lines } = capture();
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  log.info('cyclic', { cyclic });
  assert.deepEqual(Object.keys(JSON.parse(lines[0]) as object), ['level', 'msg', 'fields', 'ts']);
});

test('on stderr, a deferred (request) line goes out before the next other line, and before the process exits', () => {
  const loggerModule = new URL('../../src/logging/logger.js', import.meta.url).href;
  const script = `
    const { logger } = await import(${JSON.stringify(loggerModule)});
    logger.logDeferred('info', 'request', { n: 1 });
    logger.logDeferred('info', 'request', { n: 2 });
    logger.warn('plain');
    process.stderr.write('direct\\n');
    logger.logDeferred('info', 'request', { n: 3 });
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const lines = run.stderr.trim().split('\n');
  assert.deepEqual(
    lines.map((l) => (l.startsWith('{') ? `${(JSON.parse(l) as { msg: string; n?: number }).msg}${(JSON.parse(l) as { n?: number }).n ?? ''}` : l)),
    ['request1', 'request2', 'plain', 'direct', 'request3'],
  );
});

test('every JSON line is what JSON.stringify of { level, msg, ...fields, ...base, ts } writes', () => {
  const fieldSets: Record<string, unknown>[] = [
    {},
    { method: 'GET', path: '/api/v1/namespaces/default/configmaps/c-1', status: 200, durationMs: 1.52, userAgent: 'kubectl/v1.33', remoteAddr: '' },
    { quote: 'a"b\\c\nd\u2028e', unicode: 'ü→😀', lone: '\ud800x', empty: '' },
    { nan: Number.NaN, inf: Number.POSITIVE_INFINITY, negZero: -0, big: 1e21, small: 5e-7, t: true, f: false, nil: null },
    { skipped: undefined, fn: () => 1, sym: Symbol('s'), after: 'kept' },
    { 'a"b': 1, ü: 2, 'with space': 3, '': 4 },
    { '1': 'integer-like key', b: 'x' },
    { level: 'overridden', msg: 'overridden', ts: 'overridden', other: 1 },
    { toString: 'own', constructor: 'own too' },
    { worker: 'field' },
    { gone: undefined, worker: undefined },
  ];
  const bases: Record<string, unknown>[] = [{}, { worker: 2 }, { worker: undefined }, { pod: 'p-1', zone: 'a' }];
  for (const base of bases) {
    for (const fields of fieldSets) {
      const lines: string[] = [];
      const log = new Logger('debug', (l) => lines.push(l));
      log.addBaseFields(base);
      log.info('request', fields);
      const ts = (JSON.parse(lines[0]) as { ts: string }).ts;
      const expected = `${JSON.stringify({ level: 'info', msg: 'request', ...fields, ...base, ts })}\n`;
      assert.equal(lines[0], expected, `fields ${Object.keys(fields).join(',')} with base ${Object.keys(base).join(',')}`);
    }
  }
});
