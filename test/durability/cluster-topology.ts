/**
 * A Redis Cluster of 3 shards, each a master with two replicas (9 nodes, AOF `appendfsync always`,
 * node timeout 1 s), Capstan in front of it (`--redis-cluster`, `--redis-wait-replicas 1`, 2
 * workers), and the fault the durability test injects: kill -9 of the master of the shard that holds
 * the ConfigMaps (their keys share the hash tag `{configmaps}`, so one slot).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { spawnCluster, type ClusterProcess } from '../cluster/cluster-process.js';
import { CAPSTAN_MAIN } from '../helpers/capstan.js';
import type { HistoryEvent } from '../helpers/linearizability.js';
import { freePort, rawCommand, startRedis, type RedisServer } from '../helpers/redis-process.js';
import { DURABLE_NODE_ARGS, replicationInfo, waitForReplicas } from '../helpers/redis-replication.js';
import { sleep } from '../helpers/redis-workers.js';
import { storedHistory } from './durability-checks.js';

const execFileAsync = promisify(execFile);
const NODE_TIMEOUT_MS = 1000;

export interface ClusterTopology {
  nodes: RedisServer[];
  capstan: ClusterProcess;
  storedHistory(namespace: string, afterRv: string): Promise<HistoryEvent[]>;
  /** Index of the node serving `slot` as master, as a live node reports it. */
  masterOf(slot: number): Promise<number>;
  stop(): Promise<void>;
}

/** CRC16 (XMODEM) slot of a hash tag, as Redis Cluster computes it. */
export function slotOf(tag: string): number {
  let crc = 0;
  for (const byte of Buffer.from(tag)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Starts the nine nodes, joins them (`redis-cli --cluster create --cluster-replicas 2`), then Capstan. */
export async function startClusterTopology(): Promise<ClusterTopology> {
  const nodes: RedisServer[] = [];
  try {
    for (let i = 0; i < 9; i++) {
      nodes.push(
        await startRedis({
          appendOnly: true,
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(NODE_TIMEOUT_MS), ...DURABLE_NODE_ARGS],
        }),
      );
    }
    await execFileAsync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `${n.host}:${n.port}`), '--cluster-replicas', '2', '--cluster-yes'], {
      timeout: 60_000,
    });
    for (const n of nodes)
      await until(async () => (await rawCommand(n.port, 'CLUSTER INFO', 1000)).includes('cluster_state:ok'), `cluster ok on ${n.port}`, 30_000);
  } catch (err) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw err;
  }
  const masterOf = async (slot: number): Promise<number> => {
    for (const n of nodes) {
      if (n.pid === undefined) continue;
      // A plain connection to this one node: a Cluster client could send the question to a dead one.
      const client = new Redis({ host: n.host, port: n.port, lazyConnect: true, maxRetriesPerRequest: 0, commandTimeout: 2000, retryStrategy: () => null });
      client.on('error', () => undefined);
      try {
        await client.connect();
        const slots = await client.call('CLUSTER', 'SLOTS');
        for (const range of Array.isArray(slots) ? (slots as unknown[][]) : []) {
          const [from, to, master] = range;
          const [host, port] = Array.isArray(master) ? master : [];
          if (typeof from === 'number' && typeof to === 'number' && slot >= from && slot <= to) {
            const i = nodes.findIndex((x) => x.host === host && x.port === port);
            if (i >= 0) return i;
          }
        }
      } catch {
        // ask the next node
      } finally {
        client.disconnect();
      }
    }
    throw new Error(`no live node knows the master of slot ${slot}`);
  };
  let capstan: ClusterProcess;
  try {
    const port = await freePort();
    capstan = await spawnCluster(CAPSTAN_MAIN, [
      '--storage=redis',
      '--redis-cluster',
      nodes
        .slice(0, 3)
        .map((n) => `${n.host}:${n.port}`)
        .join(','),
      '--redis-wait-replicas',
      '1',
      '--workers',
      '2',
      '--port',
      String(port),
    ]);
  } catch (err) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw err;
  }
  return {
    nodes,
    capstan,
    masterOf,
    storedHistory: async (namespace, afterRv) => {
      const live = nodes.filter((n) => n.pid !== undefined).map((n) => ({ host: n.host, port: n.port }));
      const client = new Cluster(live, { lazyConnect: true });
      try {
        await client.connect();
        return await storedHistory(client, namespace, afterRv);
      } finally {
        client.disconnect();
      }
    },
    stop: async () => {
      await capstan.stop('SIGKILL');
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
}

/**
 * kill -9 of the master of the ConfigMaps' shard; resolves once a replica took its slots over with the
 * other replica following it, and the killed node (restarted on its data) rejoined as a replica.
 */
export async function killShardMaster(t: ClusterTopology): Promise<void> {
  const slot = slotOf('configmaps');
  const old = await t.masterOf(slot);
  const node = t.nodes[old];
  if (!node) throw new Error('no master');
  await node.kill9();
  let promoted = -1;
  await until(
    async () => {
      promoted = await t.masterOf(slot);
      const n = t.nodes[promoted];
      return promoted !== old && n !== undefined && (await replicationInfo(n.host, n.port)).role === 'master';
    },
    'a replica to take the shard over',
    60_000,
  );
  const master = t.nodes[promoted];
  if (!master) throw new Error('no new master');
  await waitForReplicas(master.host, master.port, 1, 60_000);
  await node.restart();
  await waitForReplicas(master.host, master.port, 2, 60_000);
}
