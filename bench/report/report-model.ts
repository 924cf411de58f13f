/**
 * What the comparison's tables and charts show, derived once from the results: per scenario and
 * target the CPU per operation, the throughput and the latency with their ratios to the reference;
 * start-up, idle memory and the first requests against steady state; a colour per target. The
 * printed tables and the HTML report both render this, so they cannot disagree.
 */
import {
  FRESH_CREATE_SCENARIO,
  STEADY_CREATE_SCENARIO,
  findRow,
  formatRatio,
  ratio,
  ratioToReference,
  type ComparisonResults,
  type StartupRow,
} from '../compare/results.js';
import { SETTLE_SECONDS } from '../proc-memory.js';
import { formatMiB, formatMs, formatRate } from './format.js';
import type { BarPanel } from './svg-bars.js';
import type { CurvePanel } from './svg-percentiles.js';

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#edc948', '#76b7b2', '#ff9da7'];
const REFERENCE_COLOR = '#6b6b6b';

/** A colour per target: the reference grey, the others from a fixed palette in their order. */
export function targetColors(results: ComparisonResults): Map<string, string> {
  const colors = new Map<string, string>();
  let i = 0;
  for (const t of results.targets) colors.set(t.label, t.label === results.reference ? REFERENCE_COLOR : (PALETTE[i++ % PALETTE.length] ?? '#000'));
  return colors;
}

/** One scenario on one target as the tables print it. */
export interface SummaryCell {
  /** e.g. "0.52 ms"; "n/a" when not measured. */
  cpu: string;
  /** Ratio of CPU per operation to the reference, e.g. "0.61x"; '' without one. */
  cpuRatio: string;
  throughput: string;
  throughputRatio: string;
  /** "p50 / p99", e.g. "12.1 ms / 83.0 ms". */
  latency: string;
  note: string | undefined;
}

/** The cell of `scenario` on `target` (the reference's own cell has no ratios). */
export function summaryCell(results: ComparisonResults, scenario: string, target: string): SummaryCell {
  const row = findRow(results, scenario, target);
  const ratioOf = (field: 'cpuMsPerOp' | 'throughput'): string =>
    target === results.reference ? '' : formatRatio(ratioToReference(results, scenario, target, field));
  const unit = results.scenarios.find((s) => s.id === scenario)?.throughputUnit ?? 'ops/s';
  if (row === undefined) return { cpu: 'n/a', cpuRatio: '', throughput: 'n/a', throughputRatio: '', latency: 'n/a', note: 'not run' };
  return {
    cpu: formatMs(row.cpuMsPerOp),
    cpuRatio: ratioOf('cpuMsPerOp'),
    throughput: formatRate(row.throughput, unit),
    throughputRatio: ratioOf('throughput'),
    latency: `${formatMs(row.p50Ms)} / ${formatMs(row.p99Ms)}`,
    note: row.note,
  };
}

/** A label with its ratio: "0.52 ms · 0.61x". */
function withRatio(text: string, r: string): string {
  return r === '' ? text : `${text} · ${r}`;
}

/** Bar panels of server CPU per operation, one per scenario. */
export function cpuPanels(results: ComparisonResults): BarPanel[] {
  const colors = targetColors(results);
  return results.scenarios.map((s) => ({
    scenario: s.id,
    title: `${s.title}: CPU per ${s.per}`,
    bars: results.targets.map((t) => {
      const cell = summaryCell(results, s.id, t.label);
      return {
        target: t.label,
        value: findRow(results, s.id, t.label)?.cpuMsPerOp ?? null,
        label: withRatio(cell.cpu, cell.cpuRatio),
        color: colors.get(t.label) ?? '#000',
      };
    }),
  }));
}

/** Bar panels of throughput, one per scenario. */
export function throughputPanels(results: ComparisonResults): BarPanel[] {
  const colors = targetColors(results);
  return results.scenarios.map((s) => ({
    scenario: s.id,
    title: `${s.title}: ${s.throughputUnit}`,
    bars: results.targets.map((t) => {
      const cell = summaryCell(results, s.id, t.label);
      return {
        target: t.label,
        value: findRow(results, s.id, t.label)?.throughput ?? null,
        label: withRatio(cell.throughput, cell.throughputRatio),
        color: colors.get(t.label) ?? '#000',
      };
    }),
  }));
}

/** Percentile-curve panels of latency, one per scenario that has distributions. */
export function latencyPanels(results: ComparisonResults): CurvePanel[] {
  const colors = targetColors(results);
  return results.scenarios
    .map((s) => ({
      scenario: s.id,
      title: `${s.title}: latency`,
      curves: results.targets
        .map((t) => ({ target: t.label, color: colors.get(t.label) ?? '#000', points: findRow(results, s.id, t.label)?.latency ?? [] }))
        .filter((c) => c.points.length > 0),
    }))
    .filter((p) => p.curves.length > 0);
}

/** CPU per create of the first requests after start over the steady-state CPU per create, per target. */
export function freshOverSteady(results: ComparisonResults, target: string): number | null {
  return ratio(findRow(results, FRESH_CREATE_SCENARIO, target)?.cpuMsPerOp, findRow(results, STEADY_CREATE_SCENARIO, target)?.cpuMsPerOp);
}

/** One line of the start-up table: a name and, per target, the value as printed (with its ratio). */
export interface StartupLine {
  name: string;
  cells: Array<{ target: string; value: number | null; text: string }>;
}

/** Start to ready, idle RSS and first requests against steady state, per target. */
export function startupLines(results: ComparisonResults): StartupLine[] {
  const byTarget = (t: string): StartupRow | undefined => results.startup.find((s) => s.target === t);
  const ref = results.reference !== undefined ? byTarget(results.reference) : undefined;
  const line = (name: string, pick: (s: StartupRow) => number | null, format: (v: number | null) => string): StartupLine => ({
    name,
    cells: results.targets.map((t) => {
      const s = byTarget(t.label);
      const value = s !== undefined ? pick(s) : null;
      const r = formatRatio(ref !== undefined && t.label !== results.reference ? ratio(value, pick(ref)) : null);
      return { target: t.label, value, text: withRatio(format(value), r) };
    }),
  });
  const fresh = results.scenarios.find((s) => s.id === FRESH_CREATE_SCENARIO);
  const lines = [
    line('start to ready, fresh certificate directory', (s) => s.readyFreshMs, formatMs),
    line('start to ready, existing certificates', (s) => s.readyExistingCertsMs, formatMs),
    line('idle RSS (server + Redis or etcd)', (s) => s.idleRssBytes, formatMiB),
    line(`idle RSS after ${SETTLE_SECONDS} s without requests`, (s) => s.settledIdleRssBytes ?? null, formatMiB),
  ];
  if (fresh !== undefined) {
    lines.push({
      name: `${/first [\d,]+/.exec(fresh.title)?.[0] ?? 'first'} creates: CPU ÷ steady state`,
      cells: results.targets.map((t) => {
        const v = freshOverSteady(results, t.label);
        return { target: t.label, value: v, text: v === null ? 'n/a' : formatRatio(v) };
      }),
    });
  }
  return lines;
}

/** Bar panels of the start-up lines. */
export function startupPanels(results: ComparisonResults): BarPanel[] {
  const colors = targetColors(results);
  return startupLines(results).map((l, i) => ({
    scenario: `startup-${i}`,
    title: l.name,
    bars: l.cells.map((c) => ({ target: c.target, value: c.value, label: c.text, color: colors.get(c.target) ?? '#000' })),
  }));
}

/** The garbage collection table: the targets that report it and a line per scenario one of them reported. */
export interface GcTable {
  targets: string[];
  lines: Array<{ name: string; cells: string[] }>;
}

/**
 * Garbage collection per operation of the servers that report it (paired rounds of Capstan
 * targets), each cell with its share of the server's CPU per operation ("50 µs (10% of CPU)");
 * no targets when no row has it.
 */
export function gcTable(results: ComparisonResults): GcTable {
  const targets = results.targets.map((t) => t.label).filter((t) => results.rows.some((r) => r.target === t && r.gcMsPerOp !== undefined));
  const lines = results.scenarios
    .filter((s) => targets.some((t) => findRow(results, s.id, t)?.gcMsPerOp !== undefined))
    .map((s) => ({
      name: `${s.title}, per ${s.per}`,
      cells: targets.map((t) => {
        const row = findRow(results, s.id, t);
        const gc = row?.gcMsPerOp ?? null;
        const cpu = row?.cpuMsPerOp ?? null;
        const share = gc !== null && cpu !== null && cpu > 0 ? ` (${Math.round((gc / cpu) * 100)}% of CPU)` : '';
        return `${formatMs(gc)}${share}`;
      }),
    }));
  return { targets, lines };
}
