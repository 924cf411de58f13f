/**
 * list: a full LIST of N ConfigMaps (median time of 5, mean server CPU per LIST: one reading of CPU
 * clock ticks is too coarse for one LIST) and its size, the same in protobuf (the first LIST, which
 * encodes every item, apart), a paged LIST (limit=500, following
 * continue tokens; median of 3), and the server's peak RSS growth during a full list against the
 * size of the JSON it sends (and during the protobuf LISTs after the first).
 */
import { CM_PATH, bulkCreate } from './fixtures.js';
import { HttpClient } from './http-client.js';
import { metric } from './metrics.js';
import { mean, median } from './stats.js';
import { log, sleep, withTarget, type Scenario } from './scenario.js';

const PAGE = 500;
const PROTOBUF = 'application/vnd.kubernetes.protobuf';

interface ListBody {
  metadata?: { continue?: string; resourceVersion?: string };
  items?: unknown[];
}

export const listScenario: Scenario = {
  name: 'list',
  title: 'list: LIST of ConfigMaps (full and limit=500 pages)',
  async run(target, options) {
    return withTarget(target, options, async (t) => {
      const client = new HttpClient(t.server.url, options.concurrency);
      try {
        const n = options.listObjects;
        // The namespace already holds ConfigMaps of its own (kube-root-ca.crt): lists expect them too.
        const initial = await client.request('GET', CM_PATH, { timeoutMs: 60_000 });
        if (initial.status !== 200) throw new Error(`LIST before creating: HTTP ${initial.status}: ${initial.body.slice(0, 300)}`);
        const existing = ((JSON.parse(initial.body) as ListBody).items ?? []).length;
        log(`list: creating ${n} ConfigMaps`);
        const created = await bulkCreate(client, {
          prefix: 'list',
          count: n,
          bytes: options.payloadBytes,
          concurrency: options.concurrency,
          timeoutMs: 300_000,
        });
        if (created.created !== n) throw new Error(`only ${created.created} of ${n} ConfigMaps were created: ${created.firstError ?? ''}`);
        t.assertAlive();
        await sleep(500);

        const fullTimes: number[] = [];
        const growths: number[] = [];
        const jsonCpus: number[] = [];
        let bytes = 0;
        let items = -1;
        for (let i = 0; i < 5; i++) {
          const before = t.rss.reset();
          const stop = t.cpu.start();
          const res = await client.request('GET', CM_PATH, { discardBody: i > 0, timeoutMs: 120_000 });
          jsonCpus.push(stop().totalMs);
          const peak = t.rss.peakSinceReset();
          t.assertAlive();
          if (res.status !== 200) throw new Error(`LIST: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
          if (i === 0) items = ((JSON.parse(res.body) as ListBody).items ?? []).length;
          fullTimes.push(res.ms);
          growths.push(Math.max(0, peak - before));
          bytes = res.bytes;
          await sleep(200);
        }
        if (items !== existing + n) throw new Error(`LIST returned ${items} items, expected ${existing + n}`);

        // The same LIST in protobuf, as client-go components (informers, controllers) ask for it.
        const protoTimes: number[] = [];
        const protoCpus: number[] = [];
        const protoGrowths: number[] = [];
        let protoBytes = 0;
        for (let i = 0; i < 6; i++) {
          const before = t.rss.reset();
          const stop = t.cpu.start();
          const res = await client.request('GET', CM_PATH, { discardBody: true, timeoutMs: 120_000, headers: { accept: PROTOBUF } });
          protoCpus.push(stop().totalMs);
          protoGrowths.push(Math.max(0, t.rss.peakSinceReset() - before));
          if (res.status !== 200) throw new Error(`protobuf LIST: HTTP ${res.status}`);
          protoTimes.push(res.ms);
          protoBytes = res.bytes;
          await sleep(200);
        }

        const pagedTimes: number[] = [];
        let pages = 0;
        let pagedItems = 0;
        for (let run = 0; run < 3; run++) {
          let token = '';
          pages = 0;
          pagedItems = 0;
          const t0 = performance.now();
          for (let guard = 0; guard < Math.ceil(n / PAGE) + 10; guard++) {
            const q = `?limit=${PAGE}${token ? `&continue=${encodeURIComponent(token)}` : ''}`;
            const res = await client.request('GET', `${CM_PATH}${q}`, { timeoutMs: 60_000 });
            if (res.status !== 200) throw new Error(`paged LIST: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
            const body = JSON.parse(res.body) as ListBody;
            pages++;
            pagedItems += (body.items ?? []).length;
            token = body.metadata?.continue ?? '';
            if (token === '') break;
          }
          pagedTimes.push(performance.now() - t0);
          if (token !== '') throw new Error(`paged LIST did not finish within ${pages} pages`);
          if (pagedItems !== existing + n) throw new Error(`paged LIST returned ${pagedItems} items, expected ${existing + n}`);
        }
        t.assertAlive();
        const growth = Math.max(...growths);
        return {
          metrics: [
            metric('full LIST time, median of 5', median(fullTimes), 'ms'),
            metric('full LIST server CPU per LIST, mean of 5', mean(jsonCpus), 'ms'),
            metric('full LIST response size', bytes, 'bytes'),
            metric('full LIST throughput', bytes / (median(fullTimes) / 1000), 'bytes/s', { higherIsBetter: true }),
            metric('full protobuf LIST time, median of 5 after the first', median(protoTimes.slice(1)), 'ms'),
            metric('full protobuf LIST server CPU per LIST, mean of 5 after the first', mean(protoCpus.slice(1)), 'ms'),
            metric('first protobuf LIST server CPU (encodes every item)', protoCpus[0] ?? 0, 'ms'),
            metric('full protobuf LIST response size', protoBytes, 'bytes'),
            metric('peak RSS growth during protobuf LIST (max of 5 after the first)', Math.max(...protoGrowths.slice(1)), 'bytes'),
            metric(`paged LIST (limit=${PAGE}) total, median of 3`, median(pagedTimes), 'ms'),
            metric('paged LIST pages', pages, 'count'),
            metric('peak RSS growth during full LIST (max of 5)', growth, 'bytes'),
            metric('RSS growth / JSON size', growth / bytes, 'ratio', { goal: { op: '<', value: 2 } }),
          ],
          notes: [`${n} ConfigMaps of ${options.payloadBytes} B data`],
        };
      } finally {
        client.close();
      }
    });
  },
};
