/**
 * Go clients' server-side apply against Capstan on both storage backends: test/clients/go-apply
 * (client-go's typed apply configurations on ConfigMaps and Deployments by two field managers,
 * one conflicting then forcing, ApplyStatus, the Extract helpers reading managedFields back, and
 * controller-runtime v0.24's client.Apply and Patch with client.Apply). The program passes against
 * kube-apiserver 1.36 too (GO_APPLY_TOKEN=TOKEN go-apply URL NS).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allBackends } from '../helpers/backends.js';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
/** Building client-go and controller-runtime from an empty module cache takes minutes. */
const SETUP_TIMEOUT_MS = 9 * 60_000;

function run(command: string, args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => (stderr += String(e)));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let program: string;

before(
  async () => {
    const r = await run('bash', [join(ROOT, 'scripts', 'build-go-apply.sh')], SETUP_TIMEOUT_MS);
    program = r.stdout.trim().split('\n').pop() ?? '';
    if (r.code !== 0 || program === '' || !existsSync(program)) throw new Error(`scripts/build-go-apply.sh failed (exit ${String(r.code)}):\n${r.stderr}`);
  },
  { timeout: SETUP_TIMEOUT_MS + 30_000 },
);

for (const backend of allBackends())
  describe(`Go server-side apply clients (${backend.name})`, () => {
    let srv: TestServer;
    before(async () => {
      srv = await startTestServer({}, await backend.open());
    });
    after(async () => {
      await srv?.stop();
      await backend.stop();
    });

    test('client-go apply configurations and controller-runtime client.Apply: every check passes', async () => {
      const ns = uniqueName('go-apply');
      const created = await api(srv.url, '/api/v1/namespaces', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
      });
      assert.equal(created.status, 201, created.text);
      const r = await run(program, [srv.url, ns], 60_000);
      const lines = r.stdout.trim().split('\n');
      assert.deepEqual(
        lines.filter((l) => !l.startsWith('ok ')),
        [],
        r.stderr,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(lines.length, 28, r.stdout);
    });
  });
