/** The comparison as printed tables: server CPU per operation with ratios, throughput and latency, garbage collection (servers that report it), start-up and memory. */
import { gcTable, startupLines, summaryCell } from '../report/report-model.js';
import { alignColumns } from '../table.js';
import type { ComparisonResults } from './results.js';

const paren = (r: string): string => (r === '' ? '' : ` (${r})`);

/** The garbage collection table (see gcTable) under its title, then a blank line; nothing when no target reports it. */
export function gcTableLines(results: ComparisonResults): string[] {
  const gc = gcTable(results);
  if (gc.targets.length === 0) return [];
  return [
    "== garbage collection per operation, as the server reports it (Node's nodejs_gc_duration_seconds)",
    ...alignColumns(
      ['scenario', ...gc.targets],
      gc.lines.map((l) => [l.name, ...l.cells]),
      1,
    ),
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
