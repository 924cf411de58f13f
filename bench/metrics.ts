/** What a scenario reports: named metrics with units and optional goals, plus free-form notes. */

export type Unit = 'µs' | 'ms' | 's' | 'ops/s' | 'events/s' | 'bytes' | 'bytes/s' | 'B/obj' | 'count' | 'ratio' | 'text';

export interface Goal {
  /** The value must be below (`<`) or above (`>`) `value`. */
  op: '<' | '>';
  value: number;
}

export interface Metric {
  name: string;
  /** null when not measured (for example after an error). */
  value: number | null;
  unit: Unit;
  goal?: Goal;
  /** For unit 'text': the value to print. */
  text?: string;
  /** Whether a larger value is better (for the change against a baseline). */
  higherIsBetter?: boolean;
}

/** One measured operation (e.g. "Deployment create"): throughput, server CPU per operation, latency. */
export interface OperationRow {
  operation: string;
  /** Successful operations per second. */
  opsPerSecond: number;
  /** Server CPU (all its processes) per successful operation in ms; null when not measured. */
  cpuMsPerOp: number | null;
  p50Ms: number;
  p99Ms: number;
  ok: number;
  failed: number;
}

export interface ScenarioResult {
  metrics: Metric[];
  /** Per-operation rows, printed as their own table (scenario | target | ops/s | CPU ms/op | p50/p99). */
  operations?: OperationRow[];
  notes: string[];
  error?: string;
}

/** Shorthand constructors. */
export const metric = (name: string, value: number | null, unit: Unit, extra: Partial<Metric> = {}): Metric => ({
  name,
  value: value === null || Number.isFinite(value) ? value : null,
  unit,
  ...extra,
});
export const textMetric = (name: string, text: string): Metric => ({ name, value: null, unit: 'text', text });

/** Whether `m` meets its goal (undefined when there is no goal or value). */
export function meetsGoal(m: Metric): boolean | undefined {
  if (!m.goal || m.value === null) return undefined;
  return m.goal.op === '<' ? m.value < m.goal.value : m.value > m.goal.value;
}
