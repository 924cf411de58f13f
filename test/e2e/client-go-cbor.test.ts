/**
 * client-go and kubectl with the client-side CBOR feature gates (KUBE_FEATURE_ClientsAllowCBOR and
 * KUBE_FEATURE_ClientsPreferCBOR) against Capstan with CBORServingAndStorage, on both backends:
 * test/clients/go-cbor creates, reads, updates, lists, watches and applies through the typed clientset
 * (asking for application/cbor) and creates and lists through the dynamic client, and must see only
 * CBOR on the wire. The same program gives the same lines against kube-apiserver 1.36 with the gate on.
 *
 * The Go program is built by scripts/build-go-cbor.sh (cached by source hash; run it before the suite,
 * the first build downloads client-go).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KNOWN_GATES } from '../../src/api/feature-gates.js';
import { allBackends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { kubectlFor } from './kubectl.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CBOR_ENV = { KUBE_FEATURE_ClientsAllowCBOR: 'true', KUBE_FEATURE_ClientsPreferCBOR: 'true' };

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let binary: Promise<string> | undefined;

async function build(): Promise<string> {
  const r = await run('bash', [join(REPO, 'scripts', 'build-go-cbor.sh')], {}, 9 * 60_000);
  const path = r.stdout.trim().split('\n').pop() ?? '';
  if (r.code !== 0 || path === '') throw new Error(`scripts/build-go-cbor.sh failed (exit ${String(r.code)}):\n${r.stderr}`);
  return path;
}

for (const backend of allBackends())
  describe(`client-go and kubectl preferring CBOR (${backend.name})`, () => {
    let srv: TestServer;

    before(
      async () => {
        binary ??= build();
        await binary;
        srv = await startTestServer({ featureGates: { ...KNOWN_GATES, CBORServingAndStorage: true } }, await backend.open());
      },
      { timeout: 10 * 60_000 },
    );

    after(async () => {
      await srv.stop();
      await backend.stop();
    });

    test('create, get, update, list, watch, apply and the dynamic client, all in CBOR', async () => {
      const r = await run(await (binary as Promise<string>), ['--kubeconfig', srv.kubeconfig, '--namespace', 'default', '--name', 'cbor-go'], CBOR_ENV, 60_000);
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { step: string; error: string; detail?: string; requests?: string[]; responses?: string[] });
      const media = lines.pop();
      assert.deepEqual(
        lines.map((l) => [l.step, l.error, l.detail ?? '']),
        [
          ['watch-start', '', ''],
          ['create', '', '[0 1 2 255]'],
          ['get', '', ''],
          ['update', '', ''],
          ['list', '', '1'],
          ['watch', '', '[ADDED: MODIFIED:yes]'],
          ['apply', '', 'v [9] 1'],
          ['dynamic-create', '', ''],
          ['dynamic-list', '', '2'],
        ],
      );
      assert.deepEqual(media?.requests, ['PATCH application/apply-patch+cbor', 'POST application/cbor', 'PUT application/cbor']);
      assert.deepEqual(media?.responses, [
        'GET application/cbor',
        'GET application/cbor-seq',
        'PATCH application/cbor',
        'POST application/cbor',
        'PUT application/cbor',
      ]);
    });

    test('kubectl with the CBOR client gates works', async () => {
      const k = kubectlFor(srv.kubeconfig);
      const created = await k.run(['create', 'configmap', 'cbor-kubectl', '--from-literal=a=1'], { env: CBOR_ENV });
      assert.equal(created.code, 0, created.stderr);
      const applied = await k.run(['apply', '--server-side', '-f', '-', '-o', 'jsonpath={.data.b}'], {
        env: CBOR_ENV,
        input: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cbor-kubectl-applied\ndata:\n  b: "2"\n',
      });
      assert.equal(applied.code, 0, applied.stderr);
      assert.equal(applied.stdout, '2');
      const got = await k.run(['get', 'configmaps', '-o', 'name'], { env: CBOR_ENV });
      assert.equal(got.code, 0, got.stderr);
      assert.match(got.stdout, /configmap\/cbor-kubectl\n/);
      assert.match(got.stdout, /configmap\/cbor-kubectl-applied\n/);
    });
  });
