import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS, workerExecArgv } from '../../src/cluster/node-flags.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

test('a forked worker gets the server flags unless the primary was started with its own value', () => {
  assert.deepEqual(workerExecArgv([]), [...SERVER_NODE_FLAGS]);
  assert.deepEqual(workerExecArgv(['--cpu-prof']), [...SERVER_NODE_FLAGS, '--cpu-prof']);
  assert.deepEqual(workerExecArgv(['--max-semi-space-size=32']), ['--max-semi-space-size=32']);
  assert.deepEqual(workerExecArgv(['--max_semi_space_size=8', '--inspect']), ['--max_semi_space_size=8', '--inspect']);
});

test('npm start, the image and scripts/control-plane.sh start the server with the same flags', () => {
  const flags = SERVER_NODE_FLAGS.join(' ');
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  assert.ok(pkg.scripts.start?.startsWith(`node ${flags} dist/src/main.js `), pkg.scripts.start);
  const entrypoint = /^ENTRYPOINT (.*)$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))?.[1] ?? '';
  assert.deepEqual(JSON.parse(entrypoint), ['/usr/bin/tini', '--', 'node', ...SERVER_NODE_FLAGS, '/app/dist/src/main.js']);
  assert.match(
    readFileSync(join(ROOT, 'scripts', 'control-plane.sh'), 'utf8'),
    new RegExp(`node ${flags} \\$\\{CAPSTAN_NODE_ARGS:-\\} "\\$root/dist/src/main.js"`),
  );
});

test('the flags give V8 a larger young generation (its heap limit grows by three times the added semi-space)', () => {
  const limit = (args: readonly string[]): number =>
    Number(execFileSync(process.execPath, [...args, '-p', 'require("node:v8").getHeapStatistics().heap_size_limit'], { encoding: 'utf8' }).trim());
  const semiSpaceMiB = Number(/^--max-semi-space-size=(\d+)$/.exec(SERVER_NODE_FLAGS[0] ?? '')?.[1]);
  assert.ok(semiSpaceMiB > 16);
  assert.equal(limit(SERVER_NODE_FLAGS) - limit(['--max-semi-space-size=16']), 3 * (semiSpaceMiB - 16) * 1024 * 1024);
});
