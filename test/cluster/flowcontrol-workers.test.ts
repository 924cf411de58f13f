/**
 * API Priority and Fairness with `--workers 2` over Redis: each worker enforces half of the server's
 * concurrency limit (the metrics the primary sums give the configured seats, up to rounding), and a
 * FlowSchema written through one worker is in force in both (they follow the change stream).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, fresh, startRedisWorkers, type RedisWorkers } from '../helpers/redis-workers.js';
import { parseMetrics, sampleValue } from '../flowcontrol/apf-helpers.js';

const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';
let cluster: RedisWorkers;

before(async () => {
  cluster = await startRedisWorkers({ args: ['--max-requests-inflight=100', '--max-mutating-requests-inflight=50'] });
});
after(async () => {
  await cluster?.stop();
});

test('each worker gets half of the seats; the primary reports their sum', async () => {
  const levels = (await fresh(cluster.url, `${FC}/prioritylevelconfigurations`)).body.items as any[];
  const shares = new Map(levels.map((pl) => [pl.metadata.name as string, (pl.spec.limited ?? pl.spec.exempt).nominalConcurrencyShares as number]));
  const total = [...shares.values()].reduce((a, b) => a + b, 0);
  // 150 seats for the server: 75 per worker, each level its shares of them, rounded up.
  const perWorker = (level: string): number => Math.ceil((75 * (shares.get(level) ?? 0)) / total);
  await eventually(async () => {
    const m = parseMetrics((await fresh(cluster.url, '/metrics')).text);
    return (
      sampleValue(m, 'apiserver_flowcontrol_nominal_limit_seats', { priority_level: 'global-default' }) === 2 * perWorker('global-default') &&
      sampleValue(m, 'apiserver_flowcontrol_nominal_limit_seats', { priority_level: 'workload-low' }) === 2 * perWorker('workload-low')
    );
  }, 'both workers in the metrics');
  assert.equal(perWorker('global-default'), 7);
});

test('a FlowSchema written through one worker is in force in both', async () => {
  const pl = await fresh(cluster.url, `${FC}/prioritylevelconfigurations`, {
    method: 'POST',
    body: { metadata: { name: 'workers-level' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' } } } },
  });
  assert.equal(pl.status, 201);
  // Precedence 1 and a name before "exempt": the administrator's GETs of /version land here.
  const fs = await fresh(cluster.url, `${FC}/flowschemas`, {
    method: 'POST',
    body: {
      metadata: { name: 'aaa-workers' },
      spec: {
        matchingPrecedence: 1,
        priorityLevelConfiguration: { name: 'workers-level' },
        rules: [{ subjects: [{ kind: 'Group', group: { name: 'system:masters' } }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/version'] }] }],
      },
    },
  });
  assert.equal(fs.status, 201);
  const uid = fs.body.metadata.uid as string;
  // Fresh connections go to either worker: ten in a row all classified by the new schema.
  await eventually(async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => fresh(cluster.url, '/version')));
    return answers.every((a) => a.status === 200 && a.headers['x-kubernetes-pf-flowschema-uid'] === uid);
  }, 'the new FlowSchema on both workers');
  const exempt = await fresh(cluster.url, '/api/v1/namespaces');
  assert.notEqual(exempt.headers['x-kubernetes-pf-flowschema-uid'], uid);
});
