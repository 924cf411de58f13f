/**
 * Watch fan-out in the comparison: W watchers of a scratch namespace's ConfigMaps while a writer
 * creates R per second for D seconds (watch-fanout-run.ts), over the target's HTTPS and token; each
 * watcher on its own connection (a thousand separate clients), then 100 watchers to an HTTP/2
 * connection (as client-go programs hold their informers' watches). The
 * row's throughput is events delivered per second, its CPU the server CPU from the first write until
 * the last delivery divided by the delivered events, its latency the delivery latency from each
 * write's acknowledgement. A note says when not every event reached every watcher.
 */
import { configMapsPath } from '../fixtures.js';
import { createScratchNamespace, scratchNamespaceName } from '../scratch-namespace.js';
import { histogramPercentile } from '../stats.js';
import { deliveryProblems, runFanout } from '../watch-fanout-run.js';
import { WATCHES_PER_HTTP2_CONNECTION } from '../watch-http2.js';
import { removeScratchNamespace } from './cleanup.js';
import { clientFor, type LiveTarget } from './live-target.js';
import type { CompareOptions } from './options.js';
import { LATENCY_QUANTILES, type ComparisonRow, type ScenarioInfo } from './results.js';

/** The fan-out scenario for `o`'s load: each watcher on its own HTTP/1.1 connection, or (`http2`) 100 watchers to an HTTP/2 connection. */
export function watchScenario(o: CompareOptions, http2 = false): ScenarioInfo {
  return http2
    ? {
        id: 'watch-h2',
        title: `watch fan-out over HTTP/2 (${o.watchers} watchers on ${Math.ceil(o.watchers / WATCHES_PER_HTTP2_CONNECTION)} connections × ${o.writeRate} writes/s)`,
        per: 'delivered event',
        throughputUnit: 'events/s',
      }
    : { id: 'watch', title: `watch fan-out (${o.watchers} watchers × ${o.writeRate} writes/s)`, per: 'delivered event', throughputUnit: 'events/s' };
}

/** Runs the fan-out on `t` (over HTTP/2 connections with `http2`) and returns its row. */
export async function measureWatch(t: LiveTarget, o: CompareOptions, http2 = false): Promise<ComparisonRow> {
  const client = clientFor(t, 4);
  const ns = scratchNamespaceName('watch');
  try {
    await createScratchNamespace(client, ns);
    const f = await runFanout(
      { url: t.url, access: t.access, path: configMapsPath(ns), assertAlive: () => t.assertAlive(), exited: () => t.exited(), cpu: t.cpu },
      { watchers: o.watchers, rate: o.writeRate, seconds: o.watchSeconds, payloadBytes: o.payloadBytes, threads: o.watchThreads, http2 },
    );
    const problems = deliveryProblems(f);
    // Events that arrived before their write's acknowledgement count as 0 (the histogram's first
    // bucket, 1 µs): left out of the curve, whose log scale they would stretch to microseconds.
    const latency: Array<[number, number]> =
      f.events > 0 ? LATENCY_QUANTILES.map((q): [number, number] => [q, histogramPercentile(f.histAck, q)]).filter(([, ms]) => ms > 0.0011) : [];
    const at = (q: number): number | null => (f.events > 0 ? histogramPercentile(f.histAck, q) : null);
    return {
      scenario: watchScenario(o, http2).id,
      target: t.label,
      throughput: f.eventsPerSecond,
      cpuMsPerOp: f.cpuMs !== undefined && f.events > 0 ? f.cpuMs / f.events : null,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      latency,
      ok: f.events,
      failed: f.missing,
      note: [
        problems ?? `all ${f.events.toLocaleString('en-US')} events delivered (${f.acked} writes × ${f.watchersStarted} watchers)`,
        `watchers opened in ${(f.connectMs / 1000).toFixed(1)} s`,
        // The writer holds at most 64 creates in flight: below the rate, the server could not take the load.
        ...(f.writeRate < o.writeRate * 0.95
          ? [`writes reached only ${f.writeRate.toFixed(1)}/s of ${o.writeRate}/s (create p99 ${Math.round(f.writeP99)} ms)`]
          : []),
      ].join('; '),
    };
  } finally {
    await removeScratchNamespace(client, ns, o.concurrency, t.label);
    client.close();
  }
}
