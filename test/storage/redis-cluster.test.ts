import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { connectRedisBackend } from '../../src/storage/redis/open-redis.js';
import { typeKeys } from '../../src/storage/redis/keys.js';
import { startRedisCluster, type RedisClusterProcess } from '../helpers/redis-process.js';
import { describeStorageConformance, freshType, obj, Recorder } from './conformance.js';

let cluster: RedisClusterProcess | undefined;
const quiet = (): void => undefined;

before(async () => {
  cluster = await startRedisCluster(3);
});
after(async () => {
  await cluster?.stop();
});

function nodes(): { host: string; port: number }[] {
  if (!cluster) throw new Error('cluster not started');
  return cluster.nodes;
}

describeStorageConformance('redis cluster (3 masters)', (options) => connectRedisBackend({ clusterNodes: nodes(), onError: quiet, ...options }));

describe('redis cluster specifics', () => {
  test('types spread over the masters, each type in one slot, and a second worker follows every type', async () => {
    const one = await connectRedisBackend({ clusterNodes: nodes(), historyMs: 60_000, onError: quiet });
    const two = await connectRedisBackend({ clusterNodes: nodes(), historyMs: 60_000, onError: quiet });
    const stop = new AbortController();
    const direct = nodes().map((n) => new Redis(n.port, n.host));
    try {
      const types = Array.from({ length: 12 }, () => freshType('c'));
      const recorders = new Map<string, Recorder>();
      for (const t of types) {
        const r = new Recorder();
        recorders.set(t, r);
        await two.watch(t, '1', r.listener, stop.signal);
      }
      await Promise.all(
        types.map(async (t) => {
          for (let i = 0; i < 5; i++) await one.create(t, `ns/o${i}`, obj(`o${i}`, 'ns'));
        }),
      );
      const owners = new Set<number>();
      for (const t of types) {
        const k = typeKeys('capstan:', t);
        const slots = await Promise.all([k.counter, k.objects, k.index, k.stream, k.trimDue].map((key) => direct[0]?.call('CLUSTER', 'KEYSLOT', key)));
        assert.equal(new Set(slots).size, 1, 'all keys of a type share a slot');
        for (const [i, node] of direct.entries()) if ((await node.call('CLUSTER', 'COUNTKEYSINSLOT', String(slots[0]))) === 5) owners.add(i);
        const r = recorders.get(t);
        assert.ok(r);
        await r.until(5);
        assert.deepEqual(r.versions(), ['2', '3', '4', '5', '6']);
        assert.deepEqual(
          (await two.list(t, { limit: 2 })).items.map((i) => i.key),
          ['ns/o0', 'ns/o1'],
        );
      }
      assert.ok(owners.size >= 2, `12 types landed on ${owners.size} master(s)`);
    } finally {
      stop.abort();
      for (const d of direct) d.disconnect();
      await one.close();
      await two.close();
    }
  });
});
