/**
 * Failover under load: Redis with two replicas and three Sentinels, Capstan with
 * `--redis-sentinels --redis-wait-replicas 1` and 2 workers, and a mixed load of 6 clients (creates,
 * compare-and-swap updates and deletes, gets, consistent lists) with live watches. The primary is
 * killed (kill -9), paused (SIGSTOP past Sentinel's down-after) or cut off from every other process
 * (its own network namespace). After each failover: no acknowledged write lost, no watch event
 * missed, duplicated or made up, no resourceVersion going backwards, and the history linearizable
 * per the Porcupine checker. Run by scripts/run-durability.sh (DURABILITY_SIZE=long for the long size).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { canCreateNetworkNamespaces, createTestNetwork } from '../helpers/redis-replication.js';
import { passed, summary } from './durability-checks.js';
import { loadSize, runScenario } from './scenario.js';
import { FAULTS, startSentinelTopology } from './sentinel-topology.js';

describe('Sentinel failover under a mixed load', () => {
  for (const name of ['kill -9', 'SIGSTOP', 'partition'] as const) {
    test(`${name} of the primary`, async (t) => {
      const needsNetwork = name === 'partition';
      if (needsNetwork && !(await canCreateNetworkNamespaces())) {
        t.skip('needs root, ip and iptables to create network namespaces');
        return;
      }
      const network = needsNetwork ? await createTestNetwork(3) : undefined;
      try {
        const topology = await startSentinelTopology(network);
        try {
          const report = await runScenario({
            scenario: `sentinel ${name}`,
            urls: [topology.capstan.url],
            size: loadSize(),
            fault: () => FAULTS[name](topology),
            storedHistory: (namespace, afterRv) => topology.storedHistory(namespace, afterRv),
          });
          t.diagnostic(summary(report));
          assert.ok(passed(report), summary(report));
          assert.ok(report.acknowledgedWrites > 0, 'writes were acknowledged');
        } finally {
          await topology.stop();
        }
      } finally {
        await network?.remove();
      }
    });
  }
});
