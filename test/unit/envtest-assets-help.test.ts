/**
 * The scripts of `capstan envtest-assets` answer envtest's `--help` themselves (envtest's CheckFlag
 * runs `kube-apiserver --help` and `etcd --help` before starting each): the text is exactly what the
 * command prints, flags baked in or not, and every other call still reaches the command.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CAPSTAN_MAIN } from '../helpers/capstan.js';

const STAND_IN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'envtest', 'etcd-stand-in.js');
const dir = mkdtempSync(join(tmpdir(), 'capstan-envtest-help-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function run(file: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(file, args, { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const written = run(process.execPath, [CAPSTAN_MAIN, 'envtest-assets', dir, '--controllers=-garbage-collector']);

test('kube-apiserver --help and -h print what Capstan prints, baked-in flags and all', () => {
  assert.equal(written.status, 0, written.stderr);
  const capstan = run(process.execPath, [CAPSTAN_MAIN, '--controllers=-garbage-collector', '--help']);
  assert.equal(capstan.status, 0);
  assert.match(capstan.stdout, /^\s*--insecure-port\b/m);
  for (const flag of ['--help', '-h']) {
    const script = run(join(dir, 'kube-apiserver'), [flag]);
    assert.equal(script.status, 0, script.stderr);
    assert.equal(script.stdout, capstan.stdout);
  }
});

test('etcd --help prints what the stand-in prints', () => {
  const standIn = run(process.execPath, [STAND_IN, '--help']);
  assert.equal(standIn.status, 0);
  assert.match(standIn.stdout, /^\s*--listen-client-urls\b/m);
  assert.equal(run(join(dir, 'etcd'), ['--help']).stdout, standIn.stdout);
});

test('any other arguments reach the command', () => {
  const unknown = run(join(dir, 'kube-apiserver'), ['--no-such-flag']);
  assert.equal(unknown.status, 2);
  assert.equal(unknown.stderr, 'Error: unknown flag: --no-such-flag\n');
  const version = run(join(dir, 'etcd'), ['--version']);
  assert.equal(version.stdout, 'etcd Version: capstan-stand-in\n');
});
