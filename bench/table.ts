/** Plain-text tables: one per scenario, one column per target, values with units and goal marks. */
import { meetsGoal, type Metric, type OperationRow, type ScenarioResult, type Unit } from './metrics.js';

/** Formats a number in `unit` for people. */
export function formatValue(value: number | null, unit: Unit, text?: string): string {
  if (unit === 'text') return text ?? '';
  if (value === null || !Number.isFinite(value)) return 'n/a';
  const grouped = (v: number, digits = 0): string => v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  switch (unit) {
    case 'µs':
      return `${value < 10 ? value.toFixed(2) : value.toFixed(1)} µs`;
    case 'ms':
      return `${value < 10 ? value.toFixed(2) : value < 1000 ? value.toFixed(1) : grouped(value)} ms`;
    case 's':
      return `${value.toFixed(2)} s`;
    case 'ops/s':
    case 'events/s':
      return `${grouped(value)} ${unit}`;
    case 'bytes':
    case 'bytes/s': {
      const suffix = unit === 'bytes/s' ? '/s' : '';
      const abs = Math.abs(value);
      if (abs >= 1024 ** 3) return `${(value / 1024 ** 3).toFixed(2)} GiB${suffix}`;
      if (abs >= 1024 ** 2) return `${(value / 1024 ** 2).toFixed(1)} MiB${suffix}`;
      if (abs >= 1024) return `${(value / 1024).toFixed(1)} KiB${suffix}`;
      return `${grouped(value)} B${suffix}`;
    }
    case 'B/obj':
      return `${grouped(value)} B`;
    case 'count':
      return grouped(value);
    case 'ratio':
      return `${value.toFixed(2)}x`;
  }
}

function goalText(m: Metric): string {
  return m.goal ? `${m.goal.op} ${formatValue(m.goal.value, m.unit)}` : '';
}

/** The change against a baseline value, as "+12%" (or '' when not comparable). */
function change(value: number | null, base: number | null | undefined): string {
  if (value === null || base === null || base === undefined || !Number.isFinite(value) || !Number.isFinite(base) || base === 0) return '';
  const pct = ((value - base) / Math.abs(base)) * 100;
  return ` (${pct >= 0 ? '+' : ''}${pct.toFixed(0)}%)`;
}

/** Header, dashes and rows in aligned columns: the first `leftColumns` left-aligned, the rest right-aligned. */
export function alignColumns(header: string[], rows: string[][], leftColumns: number): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i < leftColumns ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

/**
 * The per-operation rows of all targets, grouped by operation so that each target sits beside the
 * others: operation | target | ops/s | server CPU ms/op | p50 / p99 | failed. Empty when no target
 * reported operations.
 */
export function renderOperationRows(byTarget: ReadonlyArray<{ target: string; result: ScenarioResult }>): string[] {
  const order: string[] = [];
  for (const { result } of byTarget) for (const r of result.operations ?? []) if (!order.includes(r.operation)) order.push(r.operation);
  if (order.length === 0) return [];
  const rows: string[][] = [];
  for (const operation of order) {
    for (const { target, result } of byTarget) {
      const r: OperationRow | undefined = result.operations?.find((x) => x.operation === operation);
      if (!r) {
        rows.push([operation, target, result.error !== undefined ? 'error' : '', '', '', '']);
        continue;
      }
      rows.push([
        operation,
        target,
        formatValue(r.opsPerSecond, 'ops/s'),
        r.cpuMsPerOp === null ? 'n/a' : r.cpuMsPerOp.toFixed(2),
        `${formatValue(r.p50Ms, 'ms')} / ${formatValue(r.p99Ms, 'ms')}`,
        String(r.failed),
      ]);
    }
  }
  return alignColumns(['operation', 'target', 'throughput', 'server CPU ms/op', 'latency p50 / p99', 'failed'], rows, 2);
}

/** Renders one scenario's results for several targets side by side. */
export function renderTable(title: string, byTarget: ReadonlyArray<{ target: string; result: ScenarioResult; baseline?: ScenarioResult }>): string {
  const names: string[] = [];
  const templates = new Map<string, Metric>();
  for (const { result } of byTarget) {
    for (const m of result.metrics) {
      if (!templates.has(m.name)) {
        names.push(m.name);
        templates.set(m.name, m);
      }
    }
  }
  const header = ['metric', 'goal', ...byTarget.map((t) => t.target)];
  const rows: string[][] = [];
  for (const name of names) {
    const template = templates.get(name);
    const row = [name, template ? goalText(template) : ''];
    for (const { result, baseline } of byTarget) {
      const m = result.metrics.find((x) => x.name === name);
      if (!m) {
        row.push(result.error !== undefined ? 'error' : '');
        continue;
      }
      const ok = meetsGoal(m);
      const base = baseline?.metrics.find((x) => x.name === name);
      row.push(`${formatValue(m.value, m.unit, m.text)}${ok === false ? ' !' : ''}${change(m.value, base?.value)}`);
    }
    rows.push(row);
  }
  if (names.length === 0) rows.push(['(no results)', '', ...byTarget.map((t) => (t.result.error !== undefined ? 'error' : ''))]);
  const out = [`== ${title}`, ...alignColumns(header, rows, 2)];
  const operations = renderOperationRows(byTarget);
  if (operations.length > 0) out.push('', ...operations);
  for (const { target, result } of byTarget) {
    const prefix = byTarget.length > 1 ? `[${target}] ` : '';
    for (const note of result.notes) out.push(`  ${prefix}${note}`);
    if (result.error !== undefined) out.push(`  ${prefix}ERROR: ${result.error.split('\n').slice(0, 12).join('\n    ')}`);
  }
  return `${out.join('\n')}\n`;
}
