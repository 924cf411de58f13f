/** memory: resident memory of the server (and Redis) with N ConfigMaps stored. */
import { CM_PATH, bulkCreate } from './fixtures.js';
import { HttpClient } from './http-client.js';
import { metric, type Metric } from './metrics.js';
import { log, sleep, withTarget, type Scenario } from './scenario.js';

export const memoryScenario: Scenario = {
  name: 'memory',
  title: 'memory: resident memory with N ConfigMaps stored',
  async run(target, options) {
    return withTarget(target, options, async (t) => {
      const client = new HttpClient(t.server.url, options.memoryConcurrency);
      try {
        const n = options.memoryObjects;
        await sleep(1000);
        const rssEmpty = t.rss.current();
        const redisEmpty = t.redis ? await t.redis.usedMemory() : Number.NaN;
        log(`memory: creating ${n} ConfigMaps, ${options.memoryConcurrency} in flight`);
        const created = await bulkCreate(client, {
          prefix: 'mem',
          count: n,
          bytes: options.payloadBytes,
          concurrency: options.memoryConcurrency,
          timeoutMs: 900_000,
          progressEvery: Math.max(1000, Math.round(n / 10)),
          label: 'memory',
        });
        t.assertAlive();
        if (created.created === 0) throw new Error(`no ConfigMap was created: ${created.firstError ?? ''}`);
        const peakDuringLoad = t.rss.peak();
        client.close();
        await sleep(2000);
        t.assertAlive();
        const rss = t.rss.current();
        const single = new HttpClient(t.server.url, 1);
        const one = await single.request('GET', `${CM_PATH}/mem-0`).finally(() => single.close());
        const metrics: Metric[] = [
          metric('objects created', created.created, 'count'),
          metric('create/s while loading', created.created / created.seconds, 'ops/s', { higherIsBetter: true }),
          metric('RSS before loading', rssEmpty, 'bytes'),
          metric('RSS with objects (after 2 s pause)', rss, 'bytes'),
          metric('peak RSS while loading', peakDuringLoad, 'bytes'),
          metric('RSS per object ((RSS - empty) / N)', (rss - rssEmpty) / created.created, 'B/obj'),
          metric('object JSON size (GET)', one.bytes, 'B/obj'),
        ];
        if (t.redis) {
          const used = await t.redis.usedMemory();
          metrics.push(metric('Redis used_memory', used, 'bytes'), metric('Redis used_memory per object', (used - redisEmpty) / created.created, 'B/obj'));
        }
        return { metrics, notes: [`${n} ConfigMaps of ${options.payloadBytes} B data, ${created.failed} failed creates`] };
      } finally {
        client.close();
      }
    });
  },
};
