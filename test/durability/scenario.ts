/**
 * One durability scenario: watches opened, the mixed load started, a fault injected while it runs,
 * the load kept going until writes succeed again and a while after, then every check of
 * durability-checks.ts over what was recorded.
 */
import { clock } from '../helpers/linearizability.js';
import { createNamespace, sleep } from '../helpers/redis-workers.js';
import { configMapsRv, durabilityReport, openWatch, type DurabilityReport } from './durability-checks.js';
import { startMixedLoad } from './mixed-load.js';
import type { ResumingWatch } from '../helpers/resuming-watch.js';
import type { HistoryEvent } from '../helpers/linearizability.js';

/** Load sizes: CI runs the short one; DURABILITY_SIZE=long runs the documented longer one. */
export interface LoadSize {
  clients: number;
  /** Load before the fault. */
  warmupMs: number;
  /** Load after writes succeed again. */
  afterRecoveryMs: number;
  /** Faults in a row (each on the primary of the moment). */
  rounds: number;
}

export const SIZES: Record<'ci' | 'long', LoadSize> = {
  ci: { clients: 6, warmupMs: 2000, afterRecoveryMs: 3000, rounds: 1 },
  long: { clients: 12, warmupMs: 10_000, afterRecoveryMs: 20_000, rounds: 5 },
};

/** The size chosen by DURABILITY_SIZE (ci unless `long`). */
export function loadSize(): LoadSize {
  return process.env.DURABILITY_SIZE === 'long' ? SIZES.long : SIZES.ci;
}

export interface ScenarioOptions {
  scenario: string;
  /** Servers the clients spread their requests over. */
  urls: string[];
  /** Servers with one live watch each (default `urls`; two watches when there is one). */
  watchUrls?: string[];
  size: LoadSize;
  /**
   * Injects the fault (round `round`) and resolves once it is over from the test's side (the
   * failover happened, the node is back or replaced). Resolves with a description for the report.
   */
  fault(round: number): Promise<void>;
  /** The namespace's ConfigMap changes after a version, as Redis holds them at the end (see storedHistory). */
  storedHistory(namespace: string, afterRv: string): Promise<HistoryEvent[]>;
}

/** Runs the scenario; resolves with the report (assertions are the caller's). */
export async function runScenario(o: ScenarioOptions): Promise<DurabilityReport> {
  const namespace = `dur-${Math.random().toString(36).slice(2, 8)}`;
  await createNamespace(o.urls[0] ?? '', namespace);
  const { rv: startRv } = await configMapsRv(o.urls, namespace);
  const watched = o.watchUrls ?? o.urls;
  const watchUrls = watched.length > 1 ? watched : [watched[0] ?? '', watched[0] ?? ''];
  const watchers = new Map<string, ResumingWatch>();
  for (const [i, url] of watchUrls.entries()) watchers.set(`watch ${i} (${url})`, await openWatch(url, namespace, startRv));
  const now = clock(process.hrtime.bigint());
  let stop = false;
  const load = startMixedLoad({
    urls: o.urls,
    namespace,
    clients: o.size.clients,
    label: `run=${namespace}`,
    now,
    shouldStop: () => stop,
  });
  let faultAt = 0;
  const acknowledgedSince = (t: number): boolean =>
    load.operations.some((op) => op.call > t && op.result.status === 'ok' && op.op !== 'get' && op.op !== 'list');
  try {
    await sleep(o.size.warmupMs);
    for (let round = 0; round < o.size.rounds; round++) {
      const started = now();
      if (round === 0) faultAt = started;
      await o.fault(round);
      // Writes succeed again: some write called after the fault was acknowledged.
      await waitUntil(() => acknowledgedSince(started), 60_000, 'a write acknowledged after the fault');
      await sleep(o.size.afterRecoveryMs);
    }
  } catch (err) {
    // A fault that failed ends the run: the load and the watches stop too (a watch left resuming
    // against servers the test then stops would keep the test process alive).
    stop = true;
    await load.done.catch(() => undefined);
    await Promise.all([...watchers.values()].map((w) => w.stop()));
    throw err;
  } finally {
    stop = true;
  }
  await load.done;
  const { operations, unexpected } = load;
  const endAt = now();
  const { rv: finalRv } = await configMapsRv(watched, namespace);
  const replayed = await openWatch(watched[0] ?? '', namespace, startRv);
  try {
    return await durabilityReport({
      scenario: o.scenario,
      operations,
      unexpected,
      watchers,
      replayed,
      stored: () => o.storedHistory(namespace, startRv),
      finalRv,
      faultAt,
      endAt,
    });
  } finally {
    await Promise.all([...watchers.values(), replayed].map((w) => w.stop()));
  }
}

async function waitUntil(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
