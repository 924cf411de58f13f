/**
 * `--redis-wait-replicas`: a write no replica confirms in time stands on the primary but may be lost
 * in a failover, so its outcome is unknown. Capstan answers it as kube-apiserver answers a write its
 * storage did not confirm before the deadline (504 Timeout, no Retry-After), never with a 503 that
 * reads as "nothing was done" and makes clients retry into AlreadyExists. Reads, which no replica
 * confirms either, answer 503 until a replica has what they would show.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { kubeconfigFor } from '../../src/cli/kubeconfig.js';
import { spawnCapstan } from '../helpers/capstan.js';
import { startRedis } from '../helpers/redis-process.js';
import { DURABLE_NODE_ARGS, startReplica, waitForReplicas } from '../helpers/redis-replication.js';
import { fresh } from '../helpers/redis-workers.js';

const execFileAsync = promisify(execFile);
const CM = '/api/v1/namespaces/default/configmaps';

/** kube-apiserver 1.36's answer when storage does not confirm a write in time (its request timeout filter). */
const KUBE_TIMEOUT_BODY =
  '{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}\n';

test('--redis-wait-replicas 1: a write no replica confirms answers 504 Timeout as kube does, and may have been applied', async (t) => {
  const primary = await startRedis({ appendOnly: true, args: DURABLE_NODE_ARGS });
  const replica = await startReplica(primary);
  const dir = mkdtempSync(join(tmpdir(), 'capstan-wait-'));
  const cap = await spawnCapstan(['--storage=redis', '--redis-url', primary.url, '--redis-wait-replicas', '1', '--port', '0']);
  try {
    await waitForReplicas(primary.host, primary.port, 1);
    const body = (name: string): unknown => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } });
    const confirmed = await fresh(cap.url, CM, { method: 'POST', body: body('confirmed') });
    assert.equal(confirmed.status, 201, confirmed.text);

    await replica.stop();
    const unconfirmed = await fresh(cap.url, CM, { method: 'POST', body: body('unconfirmed') });
    assert.equal(unconfirmed.status, 504, unconfirmed.text);
    assert.equal(unconfirmed.text, KUBE_TIMEOUT_BODY);
    assert.equal(unconfirmed.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(unconfirmed.headers['retry-after'], undefined, 'no Retry-After: clients must not re-send a write that may have been applied');
    // Nor is a read answered that no replica confirms: a failover now could discard what it shows.
    const unconfirmedRead = await fresh(cap.url, `${CM}/confirmed`);
    assert.equal(unconfirmedRead.status, 503, unconfirmedRead.text);
    assert.equal((JSON.parse(unconfirmedRead.text) as { reason: string }).reason, 'ServiceUnavailable');

    // kubectl reports the outcome as unknown, without retrying the create into AlreadyExists.
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, kubeconfigFor(cap.url));
    const started = Date.now();
    const run = await execFileAsync('kubectl', ['--kubeconfig', kubeconfig, 'create', 'configmap', 'by-kubectl', '--from-literal=k=v']).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code?: number; stderr?: string }) => ({ code: err.code ?? -1, stderr: err.stderr ?? '' }),
    );
    t.diagnostic(`kubectl took ${Date.now() - started} ms; the first unconfirmed write ${unconfirmed.ms} ms`);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /the server was unable to return a response in the time allotted, but may still be processing the request \(post configmaps\)/);
    // A new replica copies the primary: the writes answered 504 stand ("may have been applied", and
    // they were), and reads answer again.
    const another = await startReplica(primary);
    try {
      await waitForReplicas(primary.host, primary.port, 1);
      const read = await fresh(cap.url, `${CM}/unconfirmed`);
      assert.equal(read.status, 200, read.text);
      const byKubectl = await fresh(cap.url, `${CM}/by-kubectl`);
      assert.equal(byKubectl.status, 200, 'applied on the primary, answered as unknown');
    } finally {
      await another.stop();
    }
  } finally {
    await cap.stop('SIGKILL');
    await replica.stop();
    await primary.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
