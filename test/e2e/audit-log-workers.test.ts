/**
 * The audit log under the cluster module: with `--workers 2` both workers append to one file, and each
 * event stays one whole line (a single O_APPEND write per event), even for lines of several hundred KB.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fresh, startRedisWorkers } from '../helpers/redis-workers.js';
import { waitForAuditEvents } from '../helpers/audit-events.js';

describe('audit log with --workers 2', () => {
  test('events of concurrent requests on both workers are whole lines of one file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capstan-audit-workers-'));
    const log = join(dir, 'audit.log');
    const policy = join(dir, 'p.yaml');
    writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n  namespaces: [default]\n- level: None\n');
    const cluster = await startRedisWorkers({ args: [`--audit-log-path=${log}`, `--audit-policy-file=${policy}`] });
    try {
      const data = { k: 'y'.repeat(20_000) };
      const creates = Array.from({ length: 40 }, (_, i) =>
        fresh(cluster.url, '/api/v1/namespaces/default/configmaps', {
          method: 'POST',
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w-${i}` }, data },
        }),
      );
      // The lists run once every create is stored, so each of their lines holds 40 large ConfigMaps.
      const created = await Promise.all(creates);
      const lists = Array.from({ length: 40 }, () => fresh(cluster.url, '/api/v1/namespaces/default/configmaps'));
      const answers = [...created, ...(await Promise.all(lists))];
      for (const a of answers) assert.ok(a.status === 200 || a.status === 201, String(a.status));
      const ids = new Set(answers.map((a) => String(a.headers['audit-id'])));
      const events = await waitForAuditEvents(
        log,
        (all) => all.filter((e) => ids.has(e.auditID) && e.stage === 'ResponseComplete').length === ids.size,
        20_000,
      );
      const lines = readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l !== '');
      assert.equal(lines.length, events.length, 'every line is one JSON event');
      for (const id of ids) {
        assert.deepEqual(
          events.filter((e) => e.auditID === id).map((e) => e.stage),
          ['RequestReceived', 'ResponseComplete'],
        );
      }
      assert.ok(
        lines.some((l) => l.length > 64 * 1024),
        'some lines are long lists',
      );
    } finally {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
