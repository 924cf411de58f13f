/**
 * Field selectors on custom resources through client-go (test/clients/go-crd-field-selectors,
 * built by scripts/build-go-crd-field-selectors.sh): the client-go half of kube's e2e
 * CustomResourceFieldSelectors test, whose lists and raw watches
 * test/e2e/crd-conversion-webhook.test.ts replays. The Go program serves the CRD's conversion
 * webhook itself (HTTPS, caBundle), runs raw watches and dynamic informers with field selectors on
 * both versions' selectable fields, metadata.name and metadata.namespace, moves objects in and
 * out of the selections, and checks events, lists and the 400 for undeclared fields against
 * expectations that kube-apiserver 1.36 meets (the program passes against the reference). Runs on
 * the embedded store (informers streaming their initial list, client-go's default, and listing then
 * watching) and on Redis with two workers. Needs Go on PATH.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, uniqueName } from '../helpers/capstan.js';
import { startRedisWorkers } from '../helpers/redis-workers.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
let binary = '';

before(() => {
  const built = spawnSync('bash', [join(REPO, 'scripts', 'build-go-crd-field-selectors.sh')], { encoding: 'utf8', timeout: 15 * 60_000 });
  assert.equal(built.status, 0, `build-go-crd-field-selectors.sh failed: ${built.stderr}`);
  binary = built.stdout.trim();
});

/** Runs the Go program against KUBECONFIG; resolves with its exit code and its check lines. */
function runChecks(kubeconfig: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const ns = uniqueName('crdfs');
  const child = spawn(binary, [kubeconfig, ns, `${ns}.example.com`], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

function assertAllPassed(run: { code: number | null; stdout: string; stderr: string }): void {
  const failures = run.stdout.split('\n').filter((l) => l.startsWith('FAIL'));
  assert.deepEqual(failures, [], `stderr: ${run.stderr.slice(-2000)}`);
  assert.equal(run.code, 0, run.stdout + run.stderr.slice(-2000));
  // Every check ran: 37 of them (lists, watches, informers, 400s).
  assert.equal(run.stdout.split('\n').filter((l) => l.startsWith('ok ')).length, 37, run.stdout);
}

describe('client-go watches and informers with field selectors on a converted custom resource', () => {
  test('on the embedded store', async () => {
    const srv = await startTestServer();
    try {
      assertAllPassed(await runChecks(srv.kubeconfig));
    } finally {
      await srv.stop();
    }
  });

  test('on the embedded store, informers listing then watching (WatchListClient off)', async () => {
    const srv = await startTestServer();
    try {
      assertAllPassed(await runChecks(srv.kubeconfig, { KUBE_FEATURE_WatchListClient: 'false' }));
    } finally {
      await srv.stop();
    }
  });

  test('on Redis with two workers', async () => {
    const env = await startRedisWorkers();
    try {
      assertAllPassed(await runChecks(env.kubeconfig));
    } finally {
      await env.stop();
    }
  });
});
