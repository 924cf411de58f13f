/**
 * Paired rounds: every target running at once, measured in turn, round after round. The sequential
 * phases measure one target after another, minutes apart, and this machine's speed drifts by a
 * third within an hour; here each round measures every target within seconds of the others, in an
 * order that rotates from round to round, so drift and disturbances reach all of them alike. A
 * round is `ops` ConfigMap creates, then as many GETs, updates, merge patches, server-side applies
 * and deletes, with `concurrency` in flight, over HTTP/1.1 (a keep-alive pool) and over one HTTP/2
 * connection (as client-go sends its requests), after a shorter round that is not counted (it wakes
 * a target that sat idle while the others were measured); a target's figure is the median over its
 * rounds.
 */
import { loadavg } from 'node:os';
import type { CpuMeter } from '../proc-cpu.js';
import { pinPlan, pinProcesses } from '../affinity.js';
import { Http2Session } from '../http2-session.js';
import { log, sleep } from '../scenario.js';
import { timedPhase, withCpu, type Phase } from '../scenario-crud.js';
import { createScratchNamespace, scratchNamespaceName } from '../scratch-namespace.js';
import { removeScratchNamespace } from './cleanup.js';
import { clientFor, type LiveTarget } from './live-target.js';
import type { CompareOptions } from './options.js';
import { verbRequests, VERB_SCENARIOS, type SendRequest, type Verb } from './verb-phases.js';
import { GcClock } from './gc-time.js';
import type { ComparisonRow, ScenarioInfo, TargetInfo } from './results.js';
import { latencyCurve, curveAt, missingRow } from './rows.js';

type Transport = 'h1' | 'h2';

const TRANSPORTS: readonly Transport[] = ['h1', 'h2'];
/**
 * The sequential verbs phase's verbs, titles and expected statuses, in the order a round runs them:
 * each works on the ConfigMaps the creates made, and the deletes remove them.
 */
const VERBS = VERB_SCENARIOS;
const TRANSPORT_TITLES: Record<Transport, string> = { h1: 'HTTP/1.1', h2: 'HTTP/2' };

/** The scenarios of the paired phase: each verb over each transport. */
export const PAIRED_SCENARIOS: readonly ScenarioInfo[] = TRANSPORTS.flatMap((transport) =>
  VERBS.map((verb) => ({
    id: pairedId(verb.id, transport),
    title: `${verb.title}, paired rounds, ${TRANSPORT_TITLES[transport]}`,
    per: 'request',
    throughputUnit: 'ops/s',
  })),
);

function pairedId(verb: Verb, transport: Transport): string {
  return `paired-${verb}-${transport}`;
}

/** A round's phase of one verb, with the garbage collection time the server reported for it. */
type PairedPhase = Phase & { gcMs?: number };

interface Subject {
  target: LiveTarget;
  ns: string;
  close: () => void;
  send: Record<Transport, SendRequest>;
  /** The server's garbage collection time (Capstan's; kube-apiserver does not report one). */
  gc: GcClock;
  /** Per scenario id: the rounds measured. */
  rounds: Map<string, PairedPhase[]>;
}

async function openSubject(t: LiveTarget, o: CompareOptions): Promise<Subject> {
  const client = clientFor(t, o.concurrency);
  // A server may close a connection that stayed idle while the others were measured (Go's HTTP/2
  // server does after its idle timeout): as client-go does, the next request opens a new one.
  let session = await Http2Session.open(t.url, t.access.token);
  let reopening: Promise<Http2Session> | undefined;
  const current = async (): Promise<Http2Session> => {
    if (!session.closed) return session;
    reopening ??= Http2Session.open(t.url, t.access.token).finally(() => (reopening = undefined));
    session = await reopening;
    return session;
  };
  const h2: SendRequest = async (method, path, options = {}) => {
    const t0 = performance.now();
    const res = await (await current()).request(method, path, options.body, options.headers?.['content-type']);
    return { status: res.status, body: options.discardBody === true ? '' : res.body, bytes: Buffer.byteLength(res.body), ms: performance.now() - t0 };
  };
  const h1: SendRequest = (method, path, options) => client.request(method, path, options);
  const ns = scratchNamespaceName('paired');
  await createScratchNamespace(client, ns);
  return {
    target: t,
    ns,
    send: { h1, h2 },
    gc: new GcClock(h1),
    rounds: new Map(),
    close: () => {
      session.close();
      client.close();
    },
  };
}

/**
 * One round on one transport: `o.ops` creates of fresh names (`${prefix}-i`), then as many GETs,
 * updates, merge patches, forced applies and deletes of them (the requests of the sequential verbs
 * phase, verbRequests), each verb timed with the target's CPU and, from the server's metrics read
 * before and after it (outside the CPU measurement), its garbage collection time. Leaves nothing
 * behind when every request succeeds.
 */
async function round(s: Subject, transport: Transport, prefix: string, o: CompareOptions, cpu: CpuMeter): Promise<Record<Verb, PairedPhase>> {
  const requests = verbRequests(s.send[transport], s.ns, prefix, o.payloadBytes, []);
  const measured = {} as Record<Verb, PairedPhase>;
  for (const verb of VERBS) {
    const gcBefore = await s.gc.read();
    const phase: PairedPhase = await withCpu(cpu, () => timedPhase(o.ops, o.concurrency, verb.expect, requests[verb.id]));
    const gcAfter = gcBefore === undefined ? undefined : await s.gc.read();
    if (gcBefore !== undefined && gcAfter !== undefined) phase.gcMs = (gcAfter - gcBefore) * 1000;
    measured[verb.id] = phase;
  }
  return measured;
}

function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * A target's row of one scenario: the medians of its rounds' CPU per request, garbage collection
 * per request (when the server reports it) and throughput, latency over all of them.
 */
function pairedRow(scenario: string, target: string, rounds: readonly PairedPhase[]): ComparisonRow {
  const ok = rounds.reduce((n, p) => n + p.ok, 0);
  const failed = rounds.reduce((n, p) => n + p.failed, 0);
  const latency = latencyCurve(rounds.flatMap((p) => p.latencies));
  const firstError = rounds.find((p) => p.firstError !== undefined)?.firstError;
  const perRound = rounds.filter((p) => p.cpuMs !== undefined && p.ok > 0).map((p) => (p.cpuMs as number) / p.ok);
  const gcPerRound = rounds.filter((p) => p.gcMs !== undefined && p.ok > 0).map((p) => (p.gcMs as number) / p.ok);
  return {
    scenario,
    target,
    throughput: median(rounds.filter((p) => p.seconds > 0).map((p) => p.ok / p.seconds)),
    cpuMsPerOp: median(perRound),
    p50Ms: curveAt(latency, 0.5),
    p99Ms: curveAt(latency, 0.99),
    latency,
    ok,
    failed,
    roundsCpuMsPerOp: perRound,
    ...(gcPerRound.length > 0 ? { gcMsPerOp: median(gcPerRound), roundsGcMsPerOp: gcPerRound } : {}),
    ...(firstError !== undefined ? { note: `${failed} failed; first error: ${firstError}` } : {}),
  };
}

/**
 * Starts every target, warms each up (one round over each transport, not counted), measures
 * `o.pairedRounds` rounds in rotating order, and stops them all. A target that does not start gets
 * rows saying why; the others are measured.
 */
export async function measurePaired(
  planned: ReadonlyArray<{ label: string; start: () => Promise<LiveTarget> }>,
  o: CompareOptions,
): Promise<{ rows: ComparisonRow[]; targets: TargetInfo[] }> {
  const rows: ComparisonRow[] = [];
  const loadBefore = loadavg();
  const subjects: Subject[] = [];
  const failedToStart: TargetInfo[] = [];
  const pins = o.pin ? pinPlan() : undefined;
  try {
    for (const p of planned) {
      log(`paired: starting ${p.label}`);
      try {
        if (pins !== undefined) pinProcesses([process.pid], pins.server);
        const t = await p.start();
        if (pins !== undefined) pinProcesses(t.pids(), pins.server);
        subjects.push(
          await openSubject(t, o).catch(async (err: unknown) => {
            await t.stop();
            throw err;
          }),
        );
      } catch (err) {
        const why = `did not start: ${err instanceof Error ? err.message : String(err)}`;
        for (const s of PAIRED_SCENARIOS) rows.push(missingRow(s.id, p.label, why));
        failedToStart.push({ label: p.label, description: 'failed to start', cpuScope: '', loadBefore, loadAfter: loadavg() });
      } finally {
        if (pins !== undefined) pinProcesses([process.pid], pins.all);
      }
    }
    if (pins !== undefined) pinProcesses([process.pid], pins.client);
    await sleep(2000);
    for (const s of subjects) {
      log(`paired: warming up ${s.target.label}`);
      for (const transport of TRANSPORTS) await round(s, transport, `warm-${transport}`, o, s.target.cpu);
    }
    for (let r = 0; r < o.pairedRounds; r++) {
      const order = subjects.map((_, i) => subjects[(i + r) % subjects.length]);
      log(`paired: round ${r + 1} of ${o.pairedRounds}: ${order.map((s) => s.target.label).join(', ')}`);
      for (const s of order) {
        s.target.assertAlive();
        // A target that sat idle while the others were measured is woken first, uncounted: after
        // seconds without requests V8's memory reducer has shrunk the heap, and the first requests
        // after it cost a Node server up to half again as much (see docs/benchmarks.md).
        await round(s, 'h1', `wake-r${r}`, { ...o, ops: Math.max(200, Math.floor(o.ops / 4)) }, s.target.cpu);
        for (const transport of TRANSPORTS) {
          const measured = await round(s, transport, `r${r}-${transport}`, o, s.target.cpu);
          for (const verb of VERBS) {
            const id = pairedId(verb.id, transport);
            const list = s.rounds.get(id) ?? [];
            list.push(measured[verb.id]);
            s.rounds.set(id, list);
          }
        }
      }
    }
    for (const s of subjects) for (const sc of PAIRED_SCENARIOS) rows.push(pairedRow(sc.id, s.target.label, s.rounds.get(sc.id) ?? []));
    const loadAfter = loadavg();
    const measured = subjects.map((s): TargetInfo => ({
      label: s.target.label,
      description: s.target.description,
      cpuScope: s.target.cpuScope,
      loadBefore,
      loadAfter,
    }));
    const order = planned.map((p) => p.label);
    const targets = [...measured, ...failedToStart].sort((a, b) => order.indexOf(a.label) - order.indexOf(b.label));
    return { rows, targets };
  } finally {
    if (pins !== undefined) pinProcesses([process.pid], pins.all);
    for (const s of subjects) {
      log(`paired: stopping ${s.target.label}`);
      const client = clientFor(s.target, o.concurrency);
      await removeScratchNamespace(client, s.ns, o.concurrency, s.target.label).catch(() => undefined);
      client.close();
      s.close();
      await s.target.stop();
    }
  }
}
