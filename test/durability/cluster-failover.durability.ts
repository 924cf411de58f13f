/**
 * Redis Cluster failover under the same mixed load and checks as the Sentinel tests: 3 shards of a
 * master and two replicas, Capstan with `--redis-cluster --redis-wait-replicas 1` and 2 workers; the
 * master of the shard holding the ConfigMaps is killed (kill -9) and a replica takes its slots over.
 * Run by scripts/run-durability.sh.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { passed, summary } from './durability-checks.js';
import { loadSize, runScenario } from './scenario.js';
import { killShardMaster, startClusterTopology } from './cluster-topology.js';

test('Redis Cluster: kill -9 of the master of the ConfigMaps shard under a mixed load', async (t) => {
  const topology = await startClusterTopology();
  try {
    const report = await runScenario({
      scenario: 'cluster kill -9 of a shard master',
      urls: [topology.capstan.url],
      size: loadSize(),
      fault: () => killShardMaster(topology),
      storedHistory: (namespace, afterRv) => topology.storedHistory(namespace, afterRv),
    });
    t.diagnostic(summary(report));
    assert.ok(passed(report), summary(report));
    assert.ok(report.acknowledgedWrites > 0, 'writes were acknowledged');
  } finally {
    await topology.stop();
  }
});
