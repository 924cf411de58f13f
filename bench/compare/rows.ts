/** Turning measured phases into comparison rows: throughput, server CPU per operation, latency percentiles. */
import type { Phase } from '../scenario-crud.js';
import { LATENCY_QUANTILES, type ComparisonRow } from './results.js';

/** Nearest-rank quantiles of `samples` (ms) at LATENCY_QUANTILES; empty when there are none. */
export function latencyCurve(samples: readonly number[]): Array<[number, number]> {
  if (samples.length === 0) return [];
  const sorted = [...samples].sort((a, b) => a - b);
  return LATENCY_QUANTILES.map((q) => [q, sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]]);
}

/** The value at quantile `q` of a curve from latencyCurve; null when absent. */
export function curveAt(curve: ReadonlyArray<[number, number]>, q: number): number | null {
  return curve.find(([x]) => x === q)?.[1] ?? null;
}

/** A row from a timed phase: successful operations per second, server CPU per success, latency of successes. */
export function phaseRow(scenario: string, target: string, p: Phase): ComparisonRow {
  const latency = latencyCurve(p.latencies);
  return {
    scenario,
    target,
    throughput: p.seconds > 0 ? p.ok / p.seconds : null,
    cpuMsPerOp: p.cpuMs !== undefined && p.ok > 0 ? p.cpuMs / p.ok : null,
    p50Ms: curveAt(latency, 0.5),
    p99Ms: curveAt(latency, 0.99),
    latency,
    ok: p.ok,
    failed: p.failed,
    ...(p.firstError !== undefined ? { note: `${p.failed} failed; first error: ${p.firstError}` } : {}),
  };
}

/** A row for a scenario that could not be measured on a target. */
export function missingRow(scenario: string, target: string, note: string): ComparisonRow {
  return { scenario, target, throughput: null, cpuMsPerOp: null, p50Ms: null, p99Ms: null, latency: [], ok: 0, failed: 0, note };
}
