/**
 * informer-start: W watchers with sendInitialEvents=true over N objects, as client-go informers
 * start with WatchList: time until every watcher has the BOOKMARK annotated
 * `k8s.io/initial-events-end: "true"`, and the server's peak RSS meanwhile.
 */
import { CM_PATH, bulkCreate } from './fixtures.js';
import { HttpClient } from './http-client.js';
import { metric } from './metrics.js';
import { median, percentile } from './stats.js';
import { startWatchPool } from './watch-pool.js';
import { log, sleep, withTarget, type Scenario } from './scenario.js';

const TIMEOUT_MS = 180_000;

export const informerStartScenario: Scenario = {
  name: 'informer-start',
  title: 'informer-start: W watchers with sendInitialEvents=true over N objects',
  async run(target, options) {
    return withTarget(target, options, async (t) => {
      const W = options.informers;
      const n = options.informerObjects;
      const client = new HttpClient(t.server.url, options.concurrency);
      // The namespace's own ConfigMaps (kube-root-ca.crt, which the server publishes in every
      // namespace) are in every watcher's initial state too.
      let present = 0;
      try {
        const listed = await client.request('GET', CM_PATH);
        if (listed.status !== 200) throw new Error(`LIST ${CM_PATH}: HTTP ${listed.status}`);
        present = (JSON.parse(listed.body) as { items: unknown[] }).items.length;
        log(`informer-start: creating ${n} ConfigMaps`);
        const created = await bulkCreate(client, {
          prefix: 'inf',
          count: n,
          bytes: options.payloadBytes,
          concurrency: options.concurrency,
          timeoutMs: 300_000,
        });
        if (created.created !== n) throw new Error(`only ${created.created} of ${n} ConfigMaps were created: ${created.firstError ?? ''}`);
      } finally {
        client.close();
      }
      await sleep(500);
      const before = t.rss.reset();
      const path = `${CM_PATH}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=900`;
      log(`informer-start: opening ${W} watchers over ${options.watchThreads} worker threads`);
      const pool = startWatchPool({ mode: 'informer', port: t.server.port, path, connectTimeoutMs: TIMEOUT_MS }, W, options.watchThreads);
      let stopped = false;
      try {
        const waitStart = performance.now();
        const deadline = waitStart + TIMEOUT_MS;
        let lastLog = performance.now();
        for (let guard = 0; guard < TIMEOUT_MS / 50 + 10; guard++) {
          const p = pool.progress();
          if (p.done + p.ended >= W) break;
          if (performance.now() > deadline || t.server.exited()) break;
          if (performance.now() - lastLog > 5000) {
            lastLog = performance.now();
            log(`informer-start: ${p.done}/${W} have the bookmark, ${p.ended} ended, RSS ${(t.rss.current() / 1048576).toFixed(0)} MiB`);
          }
          await sleep(50);
        }
        const peak = t.rss.peakSinceReset();
        const elapsed = performance.now() - waitStart;
        const results = await pool.stop();
        stopped = true;
        // A server that died (or was killed at the memory ceiling) still gets its partial numbers.
        const died = t.deathReason();
        const t0 = Math.min(...results.map((r) => r.openedAt));
        const bookmarks = results.flatMap((r) => r.bookmarkAt);
        const times = bookmarks.filter((x) => Number.isFinite(x)).map((x) => x - t0);
        const counts = results.flatMap((r) => r.counts);
        const received = times.length;
        // Only watchers that got the bookmark have a complete initial state to check.
        const wrongCount = counts.filter((c, i) => Number.isFinite(bookmarks[i]) && c !== n + present).length;
        const failed = results.reduce((s, r) => s + r.failedToStart, 0);
        const ended = results.reduce((s, r) => s + r.endedEarly, 0);
        const problem = results.find((r) => r.firstError !== undefined)?.firstError;
        return {
          metrics: [
            metric('watchers with initial-events-end bookmark', received, 'count', { goal: { op: '>', value: W - 1 } }),
            metric('time until all have the bookmark', received === W ? Math.max(...times) : null, 'ms'),
            metric('per-watcher time to bookmark, p50', median(times), 'ms'),
            metric('per-watcher time to bookmark, p99', percentile(times, 0.99), 'ms'),
            metric('watchers with initial events != objects', wrongCount, 'count', { goal: { op: '<', value: 1 } }),
            metric('watchers failed to start', failed, 'count', { goal: { op: '<', value: 1 } }),
            metric('watchers dropped (stream ended early)', ended, 'count', { goal: { op: '<', value: 1 } }),
            metric('server RSS before', before, 'bytes'),
            metric('server peak RSS', peak, 'bytes'),
            metric(
              'initial events received (sum)',
              counts.reduce((s, c) => s + c, 0),
              'count',
            ),
            metric('time waited', elapsed, 'ms'),
          ],
          ...(died !== undefined
            ? { error: died }
            : received < W
              ? { error: `only ${received} of ${W} watchers got the bookmark within ${TIMEOUT_MS / 1000} s` }
              : {}),
          notes: [
            `W=${W} watchers on ${Math.min(options.watchThreads, W)} client worker threads, N=${n} ConfigMaps of ${options.payloadBytes} B data (and the ${present} the namespace held before)`,
            ...(problem ? [`first watcher problem: ${problem}`] : []),
          ],
        };
      } finally {
        if (!stopped) await pool.stop(10_000).catch(() => undefined);
      }
    });
  },
};
