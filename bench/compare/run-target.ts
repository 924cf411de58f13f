/**
 * One target's part of the comparison, in this order on one server: start-up time and idle RSS
 * (2 s after ready, before any request), the first creates on the fresh server, the warm-up, the
 * verbs, the LISTs and the watch fan-out. A failing part leaves rows that say why and the next part
 * still runs, unless the server is gone. The server is always stopped at the end.
 */
import { loadavg } from 'node:os';
import { pinPlan, pinProcesses } from '../affinity.js';
import { settledRss } from '../proc-memory.js';
import { log, sleep } from '../scenario.js';
import type { LiveTarget } from './live-target.js';
import { measureLists } from './list-phase.js';
import type { CompareOptions, ComparePhase } from './options.js';
import type { ComparisonRow, ScenarioInfo, StartupRow, TargetInfo } from './results.js';
import { missingRow } from './rows.js';
import { freshAndWarmUp, measureVerbs } from './verb-phases.js';
import { measureWatch } from './watch-phase.js';

export interface TargetMeasurement {
  info: TargetInfo;
  rows: ComparisonRow[];
  startup: StartupRow;
  /** Errors of parts that failed (their rows carry the same text). */
  errors: string[];
}

/** The scenarios of each phase (they get a row each, measured or saying why not). */
export type PhaseScenarios = Record<Exclude<ComparePhase, 'startup'>, readonly ScenarioInfo[]>;

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Starts the target with `start`, measures the phases `o.phases` and stops it. */
export async function measureTarget(label: string, start: () => Promise<LiveTarget>, o: CompareOptions, scenarios: PhaseScenarios): Promise<TargetMeasurement> {
  const loadBefore = loadavg();
  const rows: ComparisonRow[] = [];
  const errors: string[] = [];
  const missing = (phase: keyof PhaseScenarios, why: string): void => {
    for (const s of scenarios[phase]) rows.push(missingRow(s.id, label, why));
  };
  log(`${label}: starting`);
  const pins = o.pin ? pinPlan() : undefined;
  let t: LiveTarget;
  try {
    // The target's processes inherit this client's affinity when spawned, so they start on the
    // server's core (Go sizes GOMAXPROCS and Node its thread pools from it at start).
    if (pins !== undefined) pinProcesses([process.pid], pins.server);
    t = await start();
  } catch (err) {
    const why = `did not start: ${message(err)}`;
    for (const phase of ['fresh', 'verbs', 'list', 'watch'] as const) if (o.phases.includes(phase)) missing(phase, why);
    return {
      info: { label, description: 'failed to start', cpuScope: '', loadBefore, loadAfter: loadavg() },
      rows,
      startup: { target: label, readyFreshMs: null, readyExistingCertsMs: null, idleRssBytes: null, note: why },
      errors: [`${label}: ${why}`],
    };
  }
  try {
    if (pins !== undefined) {
      pinProcesses(t.pids(), pins.server);
      pinProcesses([process.pid], pins.client);
      log(`${label}: its processes on core ${pins.server}, the client on ${pins.client}`);
    }
    await sleep(2000);
    const startup: StartupRow = {
      target: label,
      readyFreshMs: t.readyFreshMs,
      readyExistingCertsMs: t.readyExistingCertsMs,
      idleRssBytes: t.rssBytes(),
      settledIdleRssBytes: await settledRss(() => t.rssBytes()),
      ...(t.startupNote !== undefined ? { note: t.startupNote } : {}),
    };
    const run = async (phase: keyof PhaseScenarios, body: () => Promise<ComparisonRow[]>): Promise<void> => {
      if (!o.phases.includes(phase)) return;
      if (t.exited()) {
        missing(phase, 'the server is gone');
        return;
      }
      try {
        rows.push(...(await body()));
      } catch (err) {
        errors.push(`${label} ${phase}: ${message(err)}`);
        missing(phase, `failed: ${message(err)}`);
      }
    };
    const needsWarmUp = o.phases.some((p) => p === 'verbs' || p === 'list' || p === 'watch');
    const measureFresh = o.phases.includes('fresh') && t.startedHere;
    if (o.phases.includes('fresh') && !t.startedHere) missing('fresh', 'started elsewhere: not a fresh server');
    if (measureFresh || needsWarmUp) {
      try {
        const fresh = await freshAndWarmUp(t, o, measureFresh);
        if (fresh !== undefined) rows.push(fresh);
      } catch (err) {
        errors.push(`${label} fresh start and warm-up: ${message(err)}`);
        if (measureFresh) missing('fresh', `failed: ${message(err)}`);
      }
    }
    await run('verbs', () => measureVerbs(t, o));
    await run('list', () => measureLists(t, o));
    await run('watch', async () => [await measureWatch(t, o), await measureWatch(t, o, true)]);
    return {
      info: { label, description: t.description, cpuScope: t.cpuScope, loadBefore, loadAfter: loadavg() },
      rows,
      startup,
      errors,
    };
  } finally {
    log(`${label}: stopping`);
    await t.stop();
    if (pins !== undefined) pinProcesses([process.pid], pins.all);
  }
}
