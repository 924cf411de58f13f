/**
 * Redis with two replicas and three Sentinels (quorum 2), every node with AOF `appendfsync always`,
 * optionally each node in its own network namespace (see createTestNetwork), and Capstan
 * (`--redis-sentinels`, `--redis-wait-replicas 1`, 2 workers) in front of it; plus the faults the
 * durability tests inject on whichever node is the primary at the time.
 */
import { Redis } from 'ioredis';
import { spawnCluster, type ClusterProcess } from '../cluster/cluster-process.js';
import type { HistoryEvent } from '../helpers/linearizability.js';
import { storedHistory } from './durability-checks.js';
import { CAPSTAN_MAIN } from '../helpers/capstan.js';
import { freePort, startRedis, type RedisServer } from '../helpers/redis-process.js';
import {
  DURABLE_NODE_ARGS,
  replicationInfo,
  sentinelMaster,
  startReplica,
  startSentinels,
  onlineReplicas,
  until,
  waitForReplicas,
  type SentinelProcess,
  type TestNetwork,
} from '../helpers/redis-replication.js';
import { sleep } from '../helpers/redis-workers.js';

export const MASTER_NAME = 'mymaster';
/** Sentinel's down-after-milliseconds: a primary silent this long is down. */
export const DOWN_AFTER_MS = 1000;

export interface SentinelTopology {
  /** Redis nodes; node 0 starts as the primary. */
  nodes: RedisServer[];
  sentinels: SentinelProcess[];
  network: TestNetwork | undefined;
  capstan: ClusterProcess;
  /** The namespace's ConfigMap changes after `afterRv` on the primary of the moment. */
  storedHistory(namespace: string, afterRv: string): Promise<HistoryEvent[]>;
  /** Index of the node the Sentinels name as primary now. */
  primaryIndex(): Promise<number>;
  /** Resolves once the Sentinels name a primary other than node `old` and it has `replicas` replicas online. */
  waitForNewPrimary(old: number, replicas: number, timeoutMs?: number): Promise<number>;
  /** Each node's replication state and the end of each Sentinel's log, for a failing test's message. */
  describe(): Promise<string>;
  stop(): Promise<void>;
}

/** Starts the nodes, the Sentinels and Capstan; `network` puts each node in its own namespace. */
export async function startSentinelTopology(network?: TestNetwork, capstanArgs: string[] = []): Promise<SentinelTopology> {
  const nodes: RedisServer[] = [];
  let sentinels: SentinelProcess[] = [];
  const where = (i: number): { host?: string; netns?: string } =>
    network === undefined ? {} : { host: network.nodeAddress(i), netns: network.nodeNamespace(i) };
  const cleanup = async (): Promise<void> => {
    await Promise.all(sentinels.map((s) => s.stop()));
    await Promise.all(nodes.map((n) => n.stop()));
  };
  try {
    const primary = await startRedis({ appendOnly: true, args: DURABLE_NODE_ARGS, ...where(0) });
    nodes.push(primary);
    for (let i = 1; i <= 2; i++) nodes.push(await startReplica(primary, where(i)));
    await waitForReplicas(primary.host, primary.port, 2);
    sentinels = await startSentinels(primary, 3, { name: MASTER_NAME, host: network?.hostAddress, downAfterMs: DOWN_AFTER_MS });
    const port = await freePort();
    const capstan = await spawnCluster(CAPSTAN_MAIN, [
      '--storage=redis',
      '--redis-sentinels',
      sentinels.map((s) => `${s.host}:${s.port}`).join(','),
      '--redis-sentinel-name',
      MASTER_NAME,
      '--redis-wait-replicas',
      '1',
      '--workers',
      '2',
      '--port',
      String(port),
      ...capstanArgs,
    ]);
    const primaryIndex = async (): Promise<number> => {
      for (const s of sentinels) {
        try {
          const m = await sentinelMaster(s, MASTER_NAME);
          const i = nodes.findIndex((n) => n.host === m.host && n.port === m.port);
          if (i >= 0) return i;
        } catch {
          // ask the next Sentinel
        }
      }
      throw new Error('no Sentinel names a known primary');
    };
    return {
      nodes,
      sentinels,
      network,
      capstan,
      storedHistory: async (namespace, afterRv) => {
        const redis = new Redis({ sentinels: sentinels.map((s) => ({ host: s.host, port: s.port })), name: MASTER_NAME, lazyConnect: true });
        try {
          return await storedHistory(redis, namespace, afterRv);
        } finally {
          redis.disconnect();
        }
      },
      primaryIndex,
      waitForNewPrimary: async (old, replicas, timeoutMs = 60_000) => {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          try {
            const now = await primaryIndex();
            const node = nodes[now];
            if (now !== old && node) {
              const info = await replicationInfo(node.host, node.port);
              if (info.role === 'master') {
                await waitForReplicas(node.host, node.port, replicas, Math.max(1000, deadline - Date.now()));
                return now;
              }
            }
          } catch {
            // not yet
          }
          if (Date.now() > deadline) throw new Error(`no failover away from node ${old} within ${timeoutMs} ms`);
          await sleep(100);
        }
      },
      describe: async () => {
        const parts: string[] = [];
        for (const [i, n] of nodes.entries()) {
          const info = await replicationInfo(n.host, n.port).catch((err: Error) => ({ error: err.message }));
          parts.push(`node ${i} (${n.host}:${n.port}): ${JSON.stringify(info)}`);
        }
        for (const [i, s] of sentinels.entries()) parts.push(`sentinel ${i} log:\n${await s.logTail()}`);
        return parts.join('\n');
      },
      stop: async () => {
        await capstan.stop('SIGKILL');
        await cleanup();
      },
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** The faults, each on the primary of the moment; each resolves once the primary is replaced and the old node is back as a replica. */
export const FAULTS = {
  /** SIGKILL the primary; once a replica took over, restart it on its data (it rejoins as a replica). */
  'kill -9': async (t: SentinelTopology): Promise<void> => {
    const old = await t.primaryIndex();
    const node = t.nodes[old];
    if (!node) throw new Error('no primary');
    await node.kill9();
    await t.waitForNewPrimary(old, 1);
    await node.restart();
    // The Sentinels turn the restarted node into a replica and it syncs in full: on a loaded
    // machine that took more than the default 20 s (a CI run beside a conformance run).
    await explained(t, waitForWholeAgain(t, 60_000));
  },
  /** SIGSTOP the primary until a replica took over (longer than down-after), then SIGCONT: the Sentinels demote it. */
  SIGSTOP: async (t: SentinelTopology): Promise<void> => {
    const old = await t.primaryIndex();
    const pid = t.nodes[old]?.pid;
    if (pid === undefined) throw new Error('no primary process');
    process.kill(pid, 'SIGSTOP');
    try {
      await t.waitForNewPrimary(old, 1);
      await sleep(DOWN_AFTER_MS);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await explained(t, waitForWholeAgain(t));
  },
  /** Cut the primary off from every other process until a replica took over, then heal: the Sentinels demote it. */
  partition: async (t: SentinelTopology): Promise<void> => {
    const network = t.network;
    if (!network) throw new Error('the partition fault needs the nodes in network namespaces');
    const old = await t.primaryIndex();
    await network.isolate(old);
    try {
      await t.waitForNewPrimary(old, 1);
      await sleep(DOWN_AFTER_MS);
    } finally {
      await network.heal(old);
    }
    await explained(t, waitForWholeAgain(t));
  },
};

/** `wait`, with the topology's state added to its error. */
async function explained(t: SentinelTopology, wait: Promise<void>): Promise<void> {
  try {
    await wait;
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${await t.describe()}`);
  }
}

/**
 * Waits until the primary of the moment, asked of the Sentinels at every poll, has both other nodes
 * as replicas online: on a loaded machine a second failover can follow the first (down-after is 1 s),
 * and then the node that took over first is no longer the one to ask.
 */
async function waitForWholeAgain(t: SentinelTopology, timeoutMs = 20_000): Promise<void> {
  await until(
    async () => {
      const node = t.nodes[await t.primaryIndex()];
      return node !== undefined && onlineReplicas(await replicationInfo(node.host, node.port)) >= t.nodes.length - 1;
    },
    `the primary of the moment with ${t.nodes.length - 1} replicas online`,
    timeoutMs,
  );
}
