/** The comparison as printed tables: server CPU per operation with ratios, throughput and latency, start-up and memory. */
import { startupLines, summaryCell } from '../report/report-model.js';
import { formatMs } from '../report/format.js';
import { alignColumns } from '../table.js';
import { findRow, type ComparisonResults } from './results.js';

const paren = (r: string): string => (r === '' ? '' : ` (${r})`);

/**
 * Garbage collection per operation of the servers that report it (paired rounds of Capstan
 * targets), with its share of the server's CPU per operation; empty when no row has it.
 */
export function gcTableLines(results: ComparisonResults): string[] {
  const targets = results.targets.map((t) => t.label);
  const reporting = targets.filter((t) => results.rows.some((r) => r.target === t && r.gcMsPerOp !== undefined));
  if (reporting.length === 0) return [];
  const rows = results.scenarios
    .filter((s) => reporting.some((t) => findRow(results, s.id, t)?.gcMsPerOp !== undefined))
    .map((s) => [
      `${s.title}, per ${s.per}`,
      ...reporting.map((t) => {
        const row = findRow(results, s.id, t);
        const gc = row?.gcMsPerOp ?? null;
        const cpu = row?.cpuMsPerOp ?? null;
        const share = gc !== null && cpu !== null && cpu > 0 ? ` (${Math.round((gc / cpu) * 100)}% of CPU)` : '';
        return `${formatMs(gc)}${share}`;
      }),
    ]);
  return [
    "== garbage collection per operation, as the server reports it (Node's nodejs_gc_duration_seconds)",
    ...alignColumns(['scenario', ...reporting], rows, 1),
    '',
  ];
}

/** The tables, each under a `==` title, then the notes of rows that have one. */
export function renderTextReport(results: ComparisonResults): string {
  const targets = results.targets.map((t) => t.label);
  const against = results.reference !== undefined ? ` (ratio to ${results.reference})` : '';
  const cpuRows = results.scenarios.map((s) => [
    `${s.title}, per ${s.per}`,
    ...targets.map((t) => {
      const c = summaryCell(results, s.id, t);
      return `${c.cpu}${paren(c.cpuRatio)}`;
    }),
  ]);
  const rateRows = results.scenarios.map((s) => [
    s.title,
    ...targets.map((t) => {
      const c = summaryCell(results, s.id, t);
      return `${c.throughput}${paren(c.throughputRatio)}, ${c.latency}`;
    }),
  ]);
  const startRows = startupLines(results).map((l) => [l.name, ...l.cells.map((c) => c.text)]);
  // A note shared by every scenario of a target (it did not start) is printed once.
  const notes: string[] = [];
  for (const t of targets) {
    const byScenario = results.scenarios.map((s) => ({ title: s.title, note: summaryCell(results, s.id, t).note }));
    const first = byScenario[0]?.note;
    if (first !== undefined && byScenario.length > 1 && byScenario.every((x) => x.note === first)) notes.push(`  [${t}] every scenario: ${first}`);
    else for (const x of byScenario) if (x.note !== undefined) notes.push(`  [${t}] ${x.title}: ${x.note}`);
  }
  return [
    `== server CPU per operation, including Redis or etcd${against}`,
    ...alignColumns(['scenario', ...targets], cpuRows, 1),
    '',
    `== throughput${against}, latency p50 / p99`,
    ...alignColumns(['scenario', ...targets], rateRows, 1),
    '',
    ...gcTableLines(results),
    // A run of paired rounds alone starts no target on its own, so it has no start-up figures.
    ...(results.startup.length > 0 ? [`== start-up and memory${against}`, ...alignColumns(['', ...targets], startRows, 1)] : []),
    ...(notes.length > 0 ? ['', ...notes] : []),
    ...results.notes.map((n) => `  ${n}`),
    '',
  ].join('\n');
}
