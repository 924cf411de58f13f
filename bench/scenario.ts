/** The shape every scenario shares, and helpers for running one against a fresh target. */
import type { ScenarioResult } from './metrics.js';
import type { BenchOptions, ScenarioName, TargetName } from './options.js';
import { builtinTarget, startTarget, type RunningTarget } from './target.js';

export interface Scenario {
  name: ScenarioName;
  title: string;
  /** Runs against `target`, starting and stopping whatever it needs; throws on failure. */
  run(target: TargetName, options: BenchOptions): Promise<ScenarioResult>;
  /** Lines printed under the scenario's tables, comparing rows of one target (optional). */
  summarize?(byTarget: ReadonlyArray<{ target: string; result: ScenarioResult }>): string[];
}

/** Starts `name` (a target the benchmark starts; throws for `url`), runs `body`, and always stops the processes. */
export async function withTarget<T>(name: TargetName, options: BenchOptions, body: (t: RunningTarget) => Promise<T>, extraArgs: string[] = []): Promise<T> {
  const target = await startTarget(builtinTarget(name), options, extraArgs);
  try {
    return await body(target);
  } finally {
    await target.stop();
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Progress line on stderr (tables go to stdout). */
export function log(msg: string): void {
  process.stderr.write(`  ${msg}\n`);
}
