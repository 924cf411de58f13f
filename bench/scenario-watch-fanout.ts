/**
 * watch-fanout: W watchers from the list resourceVersion while a writer creates R ConfigMaps per
 * second for D seconds (watch-fanout-run.ts). Every watcher must get every write exactly once, in
 * resourceVersion order.
 */
import { CM_PATH } from './fixtures.js';
import { metric } from './metrics.js';
import { histogramPercentile } from './stats.js';
import type { BenchOptions, ScenarioName } from './options.js';
import { withTarget, type Scenario } from './scenario.js';
import { runFanout } from './watch-fanout-run.js';

/** The fan-out scenario for one load: `load` picks watchers and write rate from the options. */
function fanoutScenario(name: ScenarioName, title: string, load: (o: BenchOptions) => { watchers: number; rate: number }): Scenario {
  return {
    name,
    title,
    async run(target, options) {
      return withTarget(target, options, async (t) => {
        const W = load(options).watchers;
        const R = load(options).rate;
        const D = options.watchSeconds;
        const o = await runFanout(
          { url: t.server.url, access: undefined, path: CM_PATH, assertAlive: () => t.assertAlive(), exited: () => t.server.exited() },
          { watchers: W, rate: R, seconds: D, payloadBytes: options.watchPayload, threads: options.watchThreads },
        );
        return {
          metrics: [
            metric('watchers started', o.watchersStarted, 'count'),
            metric('time to open all watchers', o.connectMs, 'ms'),
            metric('writes acknowledged', o.acked, 'count'),
            metric('writes failed or timed out', o.failedWrites, 'count', { goal: { op: '<', value: 1 } }),
            metric('write rate achieved', o.writeRate, 'ops/s', { higherIsBetter: true }),
            metric('write p50', o.writeP50, 'ms'),
            metric('write p99', o.writeP99, 'ms'),
            metric('events delivered', o.events, 'count'),
            metric('events delivered/s', o.eventsPerSecond, 'events/s', { higherIsBetter: true }),
            metric('delivery p50 (ack -> received)', histogramPercentile(o.histAck, 0.5), 'ms'),
            metric('delivery p99 (ack -> received)', histogramPercentile(o.histAck, 0.99), 'ms'),
            metric('delivery p50 (send -> received)', histogramPercentile(o.histSend, 0.5), 'ms'),
            metric('delivery p99 (send -> received)', histogramPercentile(o.histSend, 0.99), 'ms'),
            metric('events received before write ack', o.beforeAck, 'count'),
            metric('watchers failed to start', o.failedToStart, 'count', { goal: { op: '<', value: 1 } }),
            metric('watchers dropped (stream ended early)', o.endedEarly, 'count', { goal: { op: '<', value: 1 } }),
            metric('watchers with count != writes', o.incomplete, 'count', { goal: { op: '<', value: 1 } }),
            metric('missing events (sum over watchers)', o.missing, 'count', { goal: { op: '<', value: 1 } }),
            metric('duplicate/extra events', o.extra, 'count', { goal: { op: '<', value: 1 } }),
            metric('out-of-order events (rv not increasing)', o.notIncreasing, 'count', { goal: { op: '<', value: 1 } }),
            metric('ERROR events', o.errorLines, 'count', { goal: { op: '<', value: 1 } }),
            metric('events of writes that timed out (not counted)', o.unackedEvents, 'count'),
            metric('writer ticks behind schedule', o.late, 'count'),
            metric('server peak RSS', t.rss.peak(), 'bytes'),
            ...(t.redis ? [metric('Redis used_memory', await t.redis.usedMemory(), 'bytes')] : []),
          ],
          notes: [
            `W=${W} watchers on ${Math.min(options.watchThreads, W)} client worker threads (the client shares the host's cores with the server), R=${R}/s, D=${D} s, ${options.watchPayload} B padding per write`,
            ...(o.firstWriteError !== undefined ? [`first write error: ${o.firstWriteError}`] : []),
            ...(o.firstWatcherError !== undefined ? [`first watcher problem: ${o.firstWatcherError}`] : []),
          ],
        };
      });
    },
  };
}

export const watchFanoutScenario = fanoutScenario('watch-fanout', 'watch-fanout: W watchers, writer at R creates/s for D s', (o) => ({
  watchers: o.watchers,
  rate: o.writeRate,
}));

/** The many-watchers target: 5,000 watchers served at 100 writes/s with none dropped. */
export const watchFanoutManyScenario = fanoutScenario(
  'watch-fanout-many',
  'watch-fanout-many: W watchers (default 5,000), writer at R creates/s (default 100) for D s',
  (o) => ({ watchers: o.manyWatchers, rate: o.manyWriteRate }),
);
