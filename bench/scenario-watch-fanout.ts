/**
 * watch-fanout: W watchers from the list resourceVersion while a writer creates R ConfigMaps per
 * second for D seconds. Every watcher must get every write exactly once, in resourceVersion order.
 * Delivery latency runs from the writer's acknowledgement (201 received) to the event's arrival;
 * events that arrive before the acknowledgement count as 0.
 */
import { CM_PATH, configMapBody, p50p99 } from './fixtures.js';
import { HttpClient } from './http-client.js';
import { metric } from './metrics.js';
import { histogramPercentile, mergeHistogram, newHistogram, nowMs } from './stats.js';
import { startWatchPool } from './watch-pool.js';
import type { BenchOptions, ScenarioName } from './options.js';
import { log, sleep, withTarget, type Scenario } from './scenario.js';

/** Beyond this the writer falls behind schedule instead of queueing more work in the server. */
const MAX_WRITES_IN_FLIGHT = 64;
const DRAIN_TIMEOUT_MS = 60_000;
const STALL_MS = 15_000;

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
        const client = new HttpClient(t.server.url, MAX_WRITES_IN_FLIGHT);
        try {
          const list = await client.request('GET', `${CM_PATH}?limit=1`);
          const rv = (JSON.parse(list.body) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
          if (list.status !== 200 || rv === undefined) throw new Error(`LIST for the start resourceVersion failed: HTTP ${list.status}`);

          const maxWrites = Math.ceil(R * D) + 16;
          const ackSab = new SharedArrayBuffer(8 * maxWrites);
          const ack = new Float64Array(ackSab);
          const path = `${CM_PATH}?watch=1&resourceVersion=${rv}&timeoutSeconds=${D + 600}`;
          log(`watch-fanout: opening ${W} watchers over ${options.watchThreads} worker threads`);
          const c0 = nowMs();
          const pool = startWatchPool({ mode: 'fanout', port: client.port, path, connectTimeoutMs: 60_000, ackTimes: ackSab }, W, options.watchThreads);
          let stopped = false;
          try {
            const started = await pool.started;
            const connectMs = nowMs() - c0;
            t.assertAlive();
            if (started.connected === 0) throw new Error(`no watcher could start: ${started.firstError ?? ''}`);
            log(`watch-fanout: ${started.connected} watchers open in ${connectMs.toFixed(0)} ms; writing ${R}/s for ${D} s`);
            await sleep(500);

            // Open-loop writer: write #i is due at t0 + i/R; at most MAX_WRITES_IN_FLIGHT outstanding.
            const writeLatencies: number[] = [];
            let sent = 0;
            let inFlight = 0;
            let acked = 0;
            let failed = 0;
            let late = 0;
            let firstError: string | undefined;
            const write = async (seq: number): Promise<void> => {
              inFlight++;
              try {
                const body = configMapBody(`w-${seq}`, options.watchPayload, seq, { 'bench-seq': String(seq), 'bench-t': nowMs().toFixed(3) });
                const res = await client.request('POST', CM_PATH, { body, timeoutMs: 60_000 });
                if (res.status === 201) {
                  ack[seq] = nowMs();
                  acked++;
                  writeLatencies.push(res.ms);
                } else {
                  failed++;
                  firstError ??= `HTTP ${res.status}: ${res.body.slice(0, 200)}`;
                }
              } catch (err) {
                failed++;
                firstError ??= err instanceof Error ? err.message : String(err);
              } finally {
                inFlight--;
              }
            };
            const t0 = nowMs();
            const writeEnd = t0 + D * 1000;
            let lastReport = t0;
            for (let guard = 0; guard < D * 2000 + 1000; guard++) {
              const now = nowMs();
              if (now >= writeEnd) break;
              const due = Math.min(maxWrites, Math.floor(((now - t0) * R) / 1000) + 1);
              while (sent < due && inFlight < MAX_WRITES_IN_FLIGHT) void write(sent++);
              if (sent < due) late++;
              if (now - lastReport > 5000) {
                lastReport = now;
                const p = pool.progress();
                log(
                  `watch-fanout: ${((now - t0) / 1000).toFixed(0)} s, ${acked} writes acked, ${p.events} events delivered, slowest watcher ${p.minAlive}, ${p.ended} ended`,
                );
              }
              await sleep(2);
            }
            for (let guard = 0; guard < 7_000 && inFlight > 0; guard++) await sleep(10);
            const writerDone = nowMs();
            const expected = acked;
            log(`watch-fanout: writer done (${acked} acked, ${failed} failed); waiting for delivery`);

            // Wait until every open watcher has every acknowledged write, or delivery stalls.
            let lastEvents = -1;
            let lastChange = nowMs();
            for (let guard = 0; guard < DRAIN_TIMEOUT_MS / 50; guard++) {
              const p = pool.progress();
              if (p.minAlive >= expected) break;
              if (p.events !== lastEvents) {
                lastEvents = p.events;
                lastChange = nowMs();
              } else if (nowMs() - lastChange > STALL_MS) break;
              if (t.server.exited()) break;
              await sleep(50);
            }
            const results = await pool.stop();
            stopped = true;
            t.assertAlive();

            const histAck = newHistogram();
            const histSend = newHistogram();
            let events = 0;
            let missing = 0;
            let extra = 0;
            let incomplete = 0;
            let notIncreasing = 0;
            let beforeAck = 0;
            let endedEarly = 0;
            let failedToStart = 0;
            let errorLines = 0;
            let unackedEvents = 0;
            let lastRecv = t0;
            let watcherError: string | undefined;
            for (const r of results) {
              mergeHistogram(histAck, r.histAck);
              mergeHistogram(histSend, r.histSend);
              events += r.events;
              notIncreasing += r.notIncreasing;
              beforeAck += r.beforeAck;
              endedEarly += r.endedEarly;
              failedToStart += r.failedToStart;
              errorLines += r.errorLines;
              unackedEvents += r.unackedEvents;
              if (Number.isFinite(r.lastRecv)) lastRecv = Math.max(lastRecv, r.lastRecv);
              watcherError ??= r.firstError;
            }
            for (const count of results.flatMap((r) => r.counts)) {
              if (count < expected) missing += expected - count;
              if (count > expected) extra += count - expected;
              if (count !== expected) incomplete++;
            }
            // Watchers that never started are reported separately, not as missing events.
            missing -= failedToStart * expected;
            const deliverySeconds = (lastRecv - t0) / 1000;
            const w = p50p99(writeLatencies);
            return {
              metrics: [
                metric('watchers started', started.connected, 'count'),
                metric('time to open all watchers', connectMs, 'ms'),
                metric('writes acknowledged', acked, 'count'),
                metric('writes failed or timed out', failed, 'count', { goal: { op: '<', value: 1 } }),
                metric('write rate achieved', acked / ((writerDone - t0) / 1000), 'ops/s', { higherIsBetter: true }),
                metric('write p50', w.p50, 'ms'),
                metric('write p99', w.p99, 'ms'),
                metric('events delivered', events, 'count'),
                metric('events delivered/s', events / deliverySeconds, 'events/s', { higherIsBetter: true }),
                metric('delivery p50 (ack -> received)', histogramPercentile(histAck, 0.5), 'ms'),
                metric('delivery p99 (ack -> received)', histogramPercentile(histAck, 0.99), 'ms'),
                metric('delivery p50 (send -> received)', histogramPercentile(histSend, 0.5), 'ms'),
                metric('delivery p99 (send -> received)', histogramPercentile(histSend, 0.99), 'ms'),
                metric('events received before write ack', beforeAck, 'count'),
                metric('watchers failed to start', failedToStart, 'count', { goal: { op: '<', value: 1 } }),
                metric('watchers dropped (stream ended early)', endedEarly, 'count', { goal: { op: '<', value: 1 } }),
                metric('watchers with count != writes', incomplete - failedToStart, 'count', { goal: { op: '<', value: 1 } }),
                metric('missing events (sum over watchers)', missing, 'count', { goal: { op: '<', value: 1 } }),
                metric('duplicate/extra events', extra, 'count', { goal: { op: '<', value: 1 } }),
                metric('out-of-order events (rv not increasing)', notIncreasing, 'count', { goal: { op: '<', value: 1 } }),
                metric('ERROR events', errorLines, 'count', { goal: { op: '<', value: 1 } }),
                metric('events of writes that timed out (not counted)', unackedEvents, 'count'),
                metric('writer ticks behind schedule', late, 'count'),
                metric('server peak RSS', t.rss.peak(), 'bytes'),
                ...(t.redis ? [metric('Redis used_memory', await t.redis.usedMemory(), 'bytes')] : []),
              ],
              notes: [
                `W=${W} watchers on ${Math.min(options.watchThreads, W)} client worker threads (the client shares the host's cores with the server), R=${R}/s, D=${D} s, ${options.watchPayload} B padding per write`,
                ...(firstError ? [`first write error: ${firstError}`] : []),
                ...(watcherError ? [`first watcher problem: ${watcherError}`] : []),
              ],
            };
          } finally {
            if (!stopped) await pool.stop(10_000).catch(() => undefined);
          }
        } finally {
          client.close();
        }
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
