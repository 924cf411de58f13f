/**
 * A server other hosts can reach that authorizes with AlwaysAllow says so at start (issue 26): the
 * real process is started on 0.0.0.0 with the default mode and its JSON log is read; the same
 * server on loopback, and on 0.0.0.0 with Node,RBAC, logs no such warning. The address classifier
 * is checked on its own for the forms a flag can take.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnCapstan } from '../helpers/capstan.js';
import { isLoopbackAddress, openAccessWarning } from '../../src/cli/open-access-warning.js';

interface LogLine {
  level?: string;
  msg?: string;
  bindAddress?: string;
  authorizationMode?: string;
}

function warnings(stderr: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    const parsed = JSON.parse(line) as LogLine;
    if (parsed.level === 'warn' && (parsed.msg ?? '').includes('--authorization-mode=')) lines.push(parsed);
  }
  return lines;
}

test('AlwaysAllow on 0.0.0.0 logs a warning at start; loopback and Node,RBAC do not', { timeout: 120_000 }, async () => {
  const runs = [['--bind-address=0.0.0.0'], [], ['--bind-address=0.0.0.0', '--authorization-mode=Node,RBAC']];
  const [open, loopback, rbac] = await Promise.all(
    runs.map(async (args) => {
      const server = await spawnCapstan([...args, '--log-format=json']);
      const stderr = server.stderr();
      assert.equal(await server.stop(), 0, stderr);
      return { stderr, found: warnings(stderr) };
    }),
  );
  assert.equal(open.found.length, 1, open.stderr);
  assert.equal(open.found[0].bindAddress, '0.0.0.0');
  assert.equal(open.found[0].authorizationMode, 'AlwaysAllow');
  // Anonymous requests are off under AlwaysAllow (kube's rule), so the warning is about credentials.
  assert.match(open.found[0].msg ?? '', /every client with any valid credential/);
  assert.match(open.found[0].msg ?? '', /Node,RBAC/);
  assert.deepEqual(loopback.found, [], loopback.stderr);
  assert.deepEqual(rbac.found, [], rbac.stderr);
});

test('loopback addresses, and the warning for each combination', () => {
  for (const a of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST']) assert.equal(isLoopbackAddress(a), true, a);
  for (const a of ['0.0.0.0', '::', '10.0.0.1', '::ffff:10.0.0.1', '128.0.0.1', 'example.com', '']) assert.equal(isLoopbackAddress(a), false, a);
  const base = { bindAddress: '0.0.0.0', authorizationMode: 'AlwaysAllow' };
  assert.match(openAccessWarning(base) ?? '', /every client with any valid credential/);
  assert.match(openAccessWarning({ ...base, authorizationMode: 'RBAC,AlwaysAllow' }) ?? '', /RBAC,AlwaysAllow/);
  assert.equal(openAccessWarning({ ...base, authorizationMode: 'Node,RBAC' }), undefined);
  assert.equal(openAccessWarning({ ...base, bindAddress: '127.0.0.1' }), undefined);
});
