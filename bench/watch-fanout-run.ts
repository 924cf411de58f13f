/**
 * One watch fan-out measurement against any server: W watchers from the list resourceVersion of a
 * ConfigMap collection while a writer creates R ConfigMaps per second for D seconds; every watcher
 * must get every acknowledged write exactly once, in resourceVersion order. Delivery latency runs
 * from the writer's acknowledgement (201 received) to the event's arrival (events that arrive
 * before it count as 0). When given a CPU meter, the server CPU from the first write until the last
 * event was delivered is part of the outcome.
 */
import { configMapBody, p50p99 } from './fixtures.js';
import { HttpClient, type ServerAccess } from './http-client.js';
import type { CpuMeter } from './proc-cpu.js';
import { histogramCount, histogramPercentile, mergeHistogram, newHistogram, nowMs } from './stats.js';
import { startWatchPool } from './watch-pool.js';
import type { WatchWorkerConfig } from './watch-worker.js';
import { log, sleep } from './scenario.js';

/** Beyond this the writer falls behind schedule instead of queueing more work in the server. */
const MAX_WRITES_IN_FLIGHT = 64;
const DRAIN_TIMEOUT_MS = 60_000;
const STALL_MS = 15_000;

/** Where the fan-out runs. */
export interface FanoutServer {
  /** Base URL: http://127.0.0.1:P for a spawned server, or any https URL. */
  url: string;
  /** Credentials and trust for HTTPS (undefined: plain HTTP on 127.0.0.1). */
  access: ServerAccess | undefined;
  /** The ConfigMap collection written to and watched, e.g. /api/v1/namespaces/default/configmaps. */
  path: string;
  /** Throws when the server is known to be gone. */
  assertAlive(): void;
  /** Whether the server is known to be gone (ends the wait for delivery early). */
  exited(): boolean;
  /** Server CPU to measure over the writes and their delivery (optional). */
  cpu?: CpuMeter;
}

export interface FanoutLoad {
  watchers: number;
  /** Writes per second. */
  rate: number;
  seconds: number;
  /** Bytes of padding per write besides sequence number and timestamp. */
  payloadBytes: number;
  /** Client worker threads holding the watchers. */
  threads: number;
  /** Over HTTPS: the watchers share HTTP/2 connections (100 watches each) instead of one HTTP/1.1 connection each. */
  http2?: boolean;
}

export interface FanoutOutcome {
  watchersStarted: number;
  connectMs: number;
  acked: number;
  failedWrites: number;
  writeRate: number;
  writeP50: number;
  writeP99: number;
  /** Writer ticks at which it was behind schedule. */
  late: number;
  events: number;
  eventsPerSecond: number;
  /** Delivery latency histograms (stats.ts buckets): from acknowledgement and from the writer's send time. */
  histAck: Float64Array;
  histSend: Float64Array;
  beforeAck: number;
  failedToStart: number;
  endedEarly: number;
  incomplete: number;
  missing: number;
  extra: number;
  notIncreasing: number;
  errorLines: number;
  unackedEvents: number;
  /** Server CPU (ms) from the first write until delivery ended; undefined without a meter. */
  cpuMs: number | undefined;
  firstWriteError: string | undefined;
  firstWatcherError: string | undefined;
}

/** What went wrong with delivery, or undefined when every watcher got every acknowledged write once, in order. */
export function deliveryProblems(f: FanoutOutcome): string | undefined {
  const problems: string[] = [];
  if (f.failedToStart > 0) problems.push(`${f.failedToStart} watchers failed to start`);
  if (f.endedEarly > 0) problems.push(`${f.endedEarly} watch streams ended early`);
  if (f.missing > 0) problems.push(`${f.missing} events missing`);
  if (f.extra > 0) problems.push(`${f.extra} extra events`);
  if (f.notIncreasing > 0) problems.push(`${f.notIncreasing} out of order`);
  if (f.errorLines > 0) problems.push(`${f.errorLines} ERROR events`);
  if (f.failedWrites > 0) problems.push(`${f.failedWrites} writes failed`);
  if (problems.length === 0) return undefined;
  const first = f.firstWatcherError ?? f.firstWriteError;
  return `${problems.join(', ')}${first !== undefined ? `; first: ${first}` : ''}`;
}

/** The access fields of a watch worker for `server`. */
function workerAccess(server: FanoutServer): Pick<WatchWorkerConfig, 'host' | 'port' | 'https' | 'token' | 'ca' | 'insecureTls'> {
  const u = new URL(server.url);
  const https = u.protocol === 'https:';
  const a = server.access;
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: Number(u.port !== '' ? u.port : https ? 443 : 80),
    https,
    ...(a?.token !== undefined ? { token: a.token } : {}),
    ...(a?.ca !== undefined ? { ca: a.ca } : {}),
    ...(a?.insecureTls === true ? { insecureTls: true } : {}),
  };
}

/** Runs the fan-out once; throws when no watcher could start or the list for the start resourceVersion fails. */
export async function runFanout(server: FanoutServer, load: FanoutLoad): Promise<FanoutOutcome> {
  const { watchers: W, rate: R, seconds: D } = load;
  const client = new HttpClient(server.url, MAX_WRITES_IN_FLIGHT, server.access);
  try {
    const list = await client.request('GET', `${server.path}?limit=1`);
    const rv = list.status === 200 ? (JSON.parse(list.body) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion : undefined;
    if (rv === undefined) throw new Error(`LIST for the start resourceVersion failed: HTTP ${list.status}: ${list.body.slice(0, 200)}`);

    const maxWrites = Math.ceil(R * D) + 16;
    const ackSab = new SharedArrayBuffer(8 * maxWrites);
    const ack = new Float64Array(ackSab);
    const path = `${server.path}?watch=1&resourceVersion=${rv}&timeoutSeconds=${D + 600}`;
    log(`watch-fanout: opening ${W} watchers over ${load.threads} worker threads${load.http2 === true ? ', sharing HTTP/2 connections' : ''}`);
    const c0 = nowMs();
    const pool = startWatchPool(
      { mode: 'fanout', ...workerAccess(server), path, connectTimeoutMs: 60_000, ackTimes: ackSab, http2: load.http2 === true },
      W,
      load.threads,
    );
    let stopped = false;
    try {
      const started = await pool.started;
      const connectMs = nowMs() - c0;
      server.assertAlive();
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
          const body = configMapBody(`w-${seq}`, load.payloadBytes, seq, { 'bench-seq': String(seq), 'bench-t': nowMs().toFixed(3) });
          const res = await client.request('POST', server.path, { body, timeoutMs: 60_000 });
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
      const stopCpu = server.cpu?.available() === true ? server.cpu.start() : undefined;
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
        if (server.exited()) break;
        await sleep(50);
      }
      const cpuMs = stopCpu?.().totalMs;
      const results = await pool.stop();
      stopped = true;
      server.assertAlive();

      const histAck = newHistogram();
      const histSend = newHistogram();
      const writes = p50p99(writeLatencies);
      const outcome: FanoutOutcome = {
        watchersStarted: started.connected,
        connectMs,
        acked,
        failedWrites: failed,
        writeRate: acked / ((writerDone - t0) / 1000),
        writeP50: writes.p50,
        writeP99: writes.p99,
        late,
        events: 0,
        eventsPerSecond: 0,
        histAck,
        histSend,
        beforeAck: 0,
        failedToStart: 0,
        endedEarly: 0,
        incomplete: 0,
        missing: 0,
        extra: 0,
        notIncreasing: 0,
        errorLines: 0,
        unackedEvents: 0,
        cpuMs,
        firstWriteError: firstError,
        firstWatcherError: undefined,
      };
      let lastRecv = t0;
      for (const r of results) {
        mergeHistogram(histAck, r.histAck);
        mergeHistogram(histSend, r.histSend);
        outcome.events += r.events;
        outcome.notIncreasing += r.notIncreasing;
        outcome.beforeAck += r.beforeAck;
        outcome.endedEarly += r.endedEarly;
        outcome.failedToStart += r.failedToStart;
        outcome.errorLines += r.errorLines;
        outcome.unackedEvents += r.unackedEvents;
        if (Number.isFinite(r.lastRecv)) lastRecv = Math.max(lastRecv, r.lastRecv);
        outcome.firstWatcherError ??= r.firstError;
      }
      for (const count of results.flatMap((r) => r.counts)) {
        if (count < expected) outcome.missing += expected - count;
        if (count > expected) outcome.extra += count - expected;
        if (count !== expected) outcome.incomplete++;
      }
      // Watchers that never started are reported separately, not as missing events.
      outcome.missing -= outcome.failedToStart * expected;
      outcome.incomplete -= outcome.failedToStart;
      outcome.eventsPerSecond = outcome.events / ((lastRecv - t0) / 1000);
      return outcome;
    } finally {
      if (!stopped) await pool.stop(10_000).catch(() => undefined);
    }
  } finally {
    client.close();
  }
}

/** The q-quantile (0..1) of delivery latency from acknowledgement, ms; NaN without events. */
export function deliveryPercentile(outcome: FanoutOutcome, q: number): number {
  return histogramCount(outcome.histAck) === 0 ? Number.NaN : histogramPercentile(outcome.histAck, q);
}
