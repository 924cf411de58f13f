/**
 * What a side-by-side comparison (`npm run bench -- --compare`) measured: one row per scenario and
 * target, start-up and idle memory per target, and the run's conditions. Pure data (written as
 * results.json) plus the ratio arithmetic the tables and charts share, so that every view states
 * the same ratios.
 */

/** A scenario of the comparison, in the order the report shows them. */
export interface ScenarioInfo {
  /** Stable id, e.g. `create`, `list-json`, `watch`. */
  id: string;
  /** What a person reads, e.g. "create". */
  title: string;
  /** What one operation is, for "server CPU ms per …" (e.g. "request", "LIST", "delivered event"). */
  per: string;
  /** Unit of the throughput column (e.g. "ops/s", "events/s"). */
  throughputUnit: string;
}

/** One scenario measured on one target. */
export interface ComparisonRow {
  scenario: string;
  target: string;
  /** Successful operations (or delivered events) per second; null when not measured. */
  throughput: number | null;
  /** Server CPU (all its processes, including Redis or etcd) per operation, ms; null when not measured. */
  cpuMsPerOp: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  /** Latency distribution: [quantile 0..1, ms] pairs, quantile ascending (may be empty). */
  latency: Array<[number, number]>;
  ok: number;
  failed: number;
  /** Paired rounds: the server CPU per operation of each round, ms, in the order measured (the row holds their median). */
  roundsCpuMsPerOp?: number[];
  /**
   * Paired rounds, a server that reports it (Capstan: Node's `nodejs_gc_duration_seconds`): the
   * median over the rounds of its garbage collection time per operation, ms (part of `cpuMsPerOp`).
   */
  gcMsPerOp?: number | null;
  /** The same, each round's, in the order measured. */
  roundsGcMsPerOp?: number[];
  /** Why the numbers are missing or what qualifies them (e.g. an error). */
  note?: string;
}

/** Start-up and idle memory of one target. */
export interface StartupRow {
  target: string;
  /** Process spawn to the first /readyz 200 with a fresh certificate directory, ms. */
  readyFreshMs: number | null;
  /** The same with the certificates of an earlier start (Capstan only), ms. */
  readyExistingCertsMs: number | null;
  /** RSS of the server's processes (with Redis or etcd) about 2 s after ready, before any load. */
  idleRssBytes: number | null;
  /**
   * The same after 30 s without requests: what an idle server holds once its runtime has given back
   * start-up's garbage (V8's memory reducer, Go's scavenger). Absent in results of older runs.
   */
  settledIdleRssBytes?: number | null;
  note?: string;
}

/** One compared server. */
export interface TargetInfo {
  label: string;
  /** E.g. "Capstan, Redis (AOF fsync always), 2 workers" or "kube-apiserver v1.36.4 + etcd". */
  description: string;
  /** Which processes the CPU and memory numbers cover. */
  cpuScope: string;
  /** Load average (1/5/15 min) when its measurement started and ended. */
  loadBefore: number[];
  loadAfter: number[];
}

export interface ComparisonResults {
  version: 1;
  date: string;
  host: { node: string; cpus: number; cpuModel: string; memoryBytes: number };
  quick: boolean;
  /** The sizes used (operations per phase, watchers, …), for the report's header. */
  sizes: Record<string, number>;
  targets: TargetInfo[];
  /** Label of the target the ratios are relative to (kube-apiserver), when it was measured. */
  reference: string | undefined;
  scenarios: ScenarioInfo[];
  rows: ComparisonRow[];
  startup: StartupRow[];
  notes: string[];
}

/** The numeric fields of a row that a ratio can be taken of. */
export type RatioField = 'throughput' | 'cpuMsPerOp' | 'p50Ms' | 'p99Ms';

/** The row of `scenario` on `target`, if measured. */
export function findRow(results: ComparisonResults, scenario: string, target: string): ComparisonRow | undefined {
  return results.rows.find((r) => r.scenario === scenario && r.target === target);
}

/** `value / base` when both are finite and base is not 0; null otherwise. */
export function ratio(value: number | null | undefined, base: number | null | undefined): number | null {
  if (value === null || value === undefined || base === null || base === undefined) return null;
  if (!Number.isFinite(value) || !Number.isFinite(base) || base === 0) return null;
  return value / base;
}

/** `field` of `target`'s row over the reference's row of the same scenario; null without a reference or value. */
export function ratioToReference(results: ComparisonResults, scenario: string, target: string, field: RatioField): number | null {
  if (results.reference === undefined) return null;
  return ratio(findRow(results, scenario, target)?.[field], findRow(results, scenario, results.reference)?.[field]);
}

/** A ratio as the report prints it: "0.35x" (two significant digits below 10), "" for null. */
export function formatRatio(r: number | null): string {
  if (r === null) return '';
  return `${r < 10 ? r.toPrecision(2) : r.toFixed(0)}x`;
}

/** Scenario id of the first creates on a freshly started server, and of the steady-state creates they are compared with. */
export const FRESH_CREATE_SCENARIO = 'create-fresh';
export const STEADY_CREATE_SCENARIO = 'create';

/** Latency percentiles the rows carry for the distribution charts. */
export const LATENCY_QUANTILES: readonly number[] = [0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1];
