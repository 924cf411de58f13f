/**
 * What a durability test checks once its fault is over, from the recorded history, the live
 * watchers and a watch of the surviving history (opened after the fault from the first version):
 * acknowledged writes lost, watch events missed, duplicated or made up, resourceVersions going
 * backwards, the checker's verdict, and how long clients saw writes fail.
 */
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Cluster, Redis } from 'ioredis';
import { checkHistory, type HistoryEvent, type HistoryOperation, type Verdict } from '../helpers/linearizability.js';
import { fresh, sleep } from '../helpers/redis-workers.js';
import { ResumingWatch, type SeenEvent } from '../helpers/resuming-watch.js';
import type { UnexpectedAnswer } from './mixed-load.js';

/** The numbers a durability test reports (and asserts on). */
export interface DurabilityReport {
  scenario: string;
  operations: number;
  outcomes: Record<string, number>;
  acknowledgedWrites: number;
  acknowledgedWritesLost: string[];
  watchProblems: string[];
  resourceVersionRegressions: string[];
  unexpectedAnswers: UnexpectedAnswer[];
  verdict: Verdict;
  /** Longest time, from the fault on, during which no write was acknowledged (ms). */
  writeGapMs: number;
  /** Same for reads (gets and lists answered 200 or 404). */
  readGapMs: number;
  /** Writes answered 504 or cut off (outcome unknown), and how many of those took effect. */
  unknownWrites: number;
  unknownWritesApplied: number;
  /** Where the history was kept (when a check failed). */
  historyFile?: string;
}

const WRITES = new Set(['create', 'update', 'delete']);

/** The events of a watch as the checker reads them. */
export function historyEvents(events: readonly SeenEvent[]): HistoryEvent[] {
  return events
    .filter((e) => e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED')
    .map((e) => ({
      type: e.type as HistoryEvent['type'],
      name: String(e.object?.metadata?.name ?? ''),
      rv: e.rv,
      value: String(e.object?.data?.v ?? ''),
    }));
}

function describe(e: HistoryEvent | undefined): string {
  return e === undefined ? 'nothing' : `${e.type} ${e.name}@${e.rv}=${e.value}`;
}

/** The current resourceVersion of a namespace's ConfigMaps (the type's), retried while the server recovers. */
export async function configMapsRv(urls: readonly string[], namespace: string, timeoutMs = 30_000): Promise<{ rv: string; items: any[] }> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; ; i++) {
    try {
      const r = await fresh(urls[i % urls.length] ?? '', `/api/v1/namespaces/${namespace}/configmaps`);
      if (r.status === 200) return { rv: String(r.body.metadata.resourceVersion), items: r.body.items as any[] };
    } catch {
      // a connection lost to a recovering server: retry
    }
    if (Date.now() > deadline) throw new Error('no LIST of the ConfigMaps succeeded in time');
    await sleep(200);
  }
}

/** Opens a watch of the namespace's ConfigMaps from `fromRv` on `url` (resumes from its last version on every reconnect). */
export async function openWatch(url: string, namespace: string, fromRv: string): Promise<ResumingWatch> {
  const w = new ResumingWatch(url, { path: `/api/v1/namespaces/${namespace}/configmaps`, fromRv, retryMs: 100 });
  await w.start();
  return w;
}

/**
 * The ConfigMap changes of `namespace` after `afterRv` as Redis holds them now (the change stream of
 * the type, read directly from the primary with XRANGE): the history that survived the fault.
 */
export async function storedHistory(redis: Redis | Cluster, namespace: string, afterRv: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let cursor = `(${afterRv}-0`;
  for (;;) {
    const entries = (await redis.xrange('capstan:{configmaps}:changes', cursor, '+', 'COUNT', 1000)) as [string, string[]][];
    for (const [id, fields] of entries) {
      const f = new Map<string, string>();
      for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i] ?? '', fields[i + 1] ?? '');
      if (!(f.get('k') ?? '').startsWith(`${namespace}/`)) continue;
      const object = JSON.parse(f.get('o') ?? '{}') as { metadata?: { name?: string }; data?: { v?: string } };
      events.push({
        type: f.get('e') as HistoryEvent['type'],
        name: String(object.metadata?.name ?? ''),
        rv: id.slice(0, id.indexOf('-')),
        value: String(object.data?.v ?? ''),
      });
    }
    const last = entries[entries.length - 1];
    if (!last || entries.length < 1000) return events;
    cursor = `(${last[0]}`;
  }
}

/**
 * Every ok write whose effect is missing from the surviving history: creates and updates matched by
 * name, version and value; deletes (answered with a Status, no version) by the DELETED event of the
 * state they were conditional on.
 */
function lostWrites(operations: readonly HistoryOperation[], surviving: readonly HistoryEvent[]): string[] {
  const byRv = new Map(surviving.map((e) => [e.rv, e]));
  const deleted = new Set(surviving.filter((e) => e.type === 'DELETED').map((e) => `${e.name}=${e.value}`));
  const problems: string[] = [];
  for (const o of operations) {
    if (!WRITES.has(o.op) || o.result.status !== 'ok') continue;
    if (o.op === 'delete') {
      const removed = byRv.get(o.expectRv);
      if (removed === undefined || removed.name !== o.name || !deleted.has(`${o.name}=${removed.value}`)) {
        problems.push(`acknowledged delete of ${o.name} at rv ${o.expectRv} (client ${o.client}): the surviving history does not delete ${describe(removed)}`);
      }
      continue;
    }
    const e = byRv.get(o.result.rv);
    const type = o.op === 'create' ? 'ADDED' : 'MODIFIED';
    if (e === undefined || e.type !== type || e.name !== o.name || e.value !== o.value) {
      problems.push(`acknowledged ${o.op} of ${o.name}=${o.value} at rv ${o.result.rv} (client ${o.client}): the surviving history has ${describe(e)}`);
    }
  }
  return problems;
}

/**
 * Checks every resourceVersion a client was given against everything answered before it was
 * asked: a write's must be greater than every earlier write's and list's, a list's not smaller.
 */
function regressions(operations: readonly HistoryOperation[]): string[] {
  const withRv = operations.filter((o) => o.result.status === 'ok' && (WRITES.has(o.op) || o.op === 'list') && o.result.rv !== '');
  const byReturn = [...withRv].sort((a, b) => a.return - b.return);
  const byCall = [...withRv].sort((a, b) => a.call - b.call);
  const problems: string[] = [];
  let max = 0n;
  let maxOp: HistoryOperation | undefined;
  let k = 0;
  for (const o of byCall) {
    while (k < byReturn.length && (byReturn[k]?.return ?? 0) < o.call) {
      const done = byReturn[k];
      if (done && BigInt(done.result.rv) > max) {
        max = BigInt(done.result.rv);
        maxOp = done;
      }
      k++;
    }
    const rv = BigInt(o.result.rv);
    if (o.op === 'list' ? rv < max : rv <= max) {
      problems.push(`${o.op} ${o.name} answered rv ${rv} after ${maxOp?.op ?? ''} ${maxOp?.name ?? ''} had answered rv ${max}`);
    }
  }
  return problems;
}

/** Differences between a live watch's events and the surviving history: missed, duplicated, out of order or made up. */
function watchDifferences(label: string, seen: readonly HistoryEvent[], surviving: readonly HistoryEvent[]): string[] {
  const problems: string[] = [];
  const n = Math.max(seen.length, surviving.length);
  for (let i = 0; i < n && problems.length < 5; i++) {
    const a = seen[i];
    const b = surviving[i];
    if (describe(a) !== describe(b)) problems.push(`${label}: event #${i} is ${describe(a)}, the surviving history has ${describe(b)}`);
  }
  if (seen.length !== surviving.length) problems.push(`${label}: ${seen.length} events, the surviving history has ${surviving.length}`);
  return problems;
}

/** Longest gap between consecutive successes of `ops` after `from` (µs in, ms out). */
function longestGap(ops: readonly HistoryOperation[], from: number, end: number): number {
  const times = ops
    .map((o) => o.return)
    .filter((t) => t >= from)
    .sort((a, b) => a - b);
  let previous = from;
  let gap = 0;
  for (const t of [...times, end]) {
    gap = Math.max(gap, t - previous);
    previous = t;
  }
  return Math.round(gap / 1000);
}

export interface ReportInput {
  scenario: string;
  operations: HistoryOperation[];
  unexpected: UnexpectedAnswer[];
  /** Live watchers that ran through the fault, by label. */
  watchers: Map<string, ResumingWatch>;
  /** The history that survived, read from Redis once the watches reached `finalRv` (see storedHistory). */
  stored: () => Promise<HistoryEvent[]>;
  /** A watch through Capstan opened after the fault from the first version: it must replay exactly the stored history. */
  replayed: ResumingWatch;
  /** The type's resourceVersion once the load stopped. */
  finalRv: string;
  /** When the fault began and the load ended (µs of the history's clock). */
  faultAt: number;
  endAt: number;
}

/** Waits for every watch to reach the final version, then runs every check and the checker. */
export async function durabilityReport(input: ReportInput): Promise<DurabilityReport> {
  const watchProblems: string[] = [];
  const watchers = new Map(input.watchers);
  watchers.set('watch opened after the fault', input.replayed);
  const surviving = await input.stored();
  for (const [label, w] of watchers) {
    try {
      await w.waitForRv(input.finalRv, 30_000);
    } catch (err) {
      watchProblems.push(`${label}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (w.errors.length > 0) watchProblems.push(`${label}: ERROR events ${JSON.stringify(w.errors.map((e) => e.object)).slice(0, 500)}`);
    watchProblems.push(...watchDifferences(label, historyEvents(w.events), surviving));
  }
  const outcomes: Record<string, number> = {};
  for (const o of input.operations) outcomes[`${o.op} ${o.result.status}`] = (outcomes[`${o.op} ${o.result.status}`] ?? 0) + 1;
  const writes = input.operations.filter((o) => WRITES.has(o.op));
  const acked = writes.filter((o) => o.result.status === 'ok');
  const reads = input.operations.filter((o) => !WRITES.has(o.op) && (o.result.status === 'ok' || o.result.status === 'notfound'));
  const verdict = await checkHistory({ operations: input.operations, events: surviving }, { timeoutSeconds: 300 });
  const report: DurabilityReport = {
    scenario: input.scenario,
    operations: input.operations.length,
    outcomes,
    acknowledgedWrites: acked.length,
    acknowledgedWritesLost: lostWrites(input.operations, surviving),
    watchProblems,
    resourceVersionRegressions: regressions(input.operations),
    unexpectedAnswers: input.unexpected,
    verdict,
    writeGapMs: longestGap(acked, input.faultAt, input.endAt),
    readGapMs: longestGap(reads, input.faultAt, input.endAt),
    unknownWrites: writes.filter((o) => o.result.status === 'unknown').length,
    unknownWritesApplied: verdict.unknownResolved,
  };
  if (!passed(report)) {
    const file = join(tmpdir(), `capstan-durability-${input.scenario.replace(/\W+/g, '-')}-${Date.now()}.json`);
    await checkHistory({ operations: input.operations, events: surviving }, { keep: file, visualize: `${file}.html`, timeoutSeconds: 300 });
    report.historyFile = file;
  }
  return report;
}

/** Whether every check held. */
export function passed(r: DurabilityReport): boolean {
  return (
    r.acknowledgedWritesLost.length === 0 &&
    r.watchProblems.length === 0 &&
    r.resourceVersionRegressions.length === 0 &&
    r.unexpectedAnswers.length === 0 &&
    r.verdict.exitCode === 0
  );
}

/** The report in one line per fact, for the test's diagnostics and the docs' tables. */
export function summary(r: DurabilityReport): string {
  return [
    `${r.scenario}: ${r.operations} operations (${r.acknowledgedWrites} acknowledged writes, ${r.unknownWrites} with unknown outcome of which ${r.unknownWritesApplied} took effect)`,
    `acknowledged writes lost: ${r.acknowledgedWritesLost.length}; watch problems: ${r.watchProblems.length}; resourceVersion regressions: ${r.resourceVersionRegressions.length}; unexpected answers: ${r.unexpectedAnswers.length}`,
    `checker: ${r.verdict.result} (${r.verdict.checked} operations checked in ${r.verdict.seconds.toFixed(1)} s)`,
    `clients saw no write succeed for ${r.writeGapMs} ms, no read for ${r.readGapMs} ms`,
    `outcomes: ${JSON.stringify(r.outcomes)}`,
    ...(r.historyFile ? [`history kept in ${r.historyFile} (visualization: ${r.historyFile}.html)`] : []),
    ...r.acknowledgedWritesLost.slice(0, 5),
    ...r.watchProblems.slice(0, 5),
    ...r.resourceVersionRegressions.slice(0, 5),
    ...r.unexpectedAnswers.slice(0, 5).map((u) => `unexpected: ${JSON.stringify(u)}`),
  ].join('\n');
}
