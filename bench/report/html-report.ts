/**
 * The comparison as one self-contained HTML page (no scripts, no external files): the run's
 * conditions, the at-a-glance table (per scenario and target: server CPU per operation with its
 * ratio to the reference, throughput with its ratio, latency p50 / p99), start-up and memory, the
 * charts as inline SVG, what each target is and the notes. `writeReport` also writes each chart as
 * an SVG file and the results as JSON beside it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ComparisonResults } from '../compare/results.js';
import { escapeXml } from './format.js';
import { cpuPanels, gcTable, latencyPanels, startupLines, startupPanels, summaryCell, targetColors, throughputPanels } from './report-model.js';
import { barChartSvg } from './svg-bars.js';
import { percentileChartSvg } from './svg-percentiles.js';

/** The charts of a report: file name and SVG document. */
export function reportCharts(results: ComparisonResults): Array<{ file: string; svg: string }> {
  const colors = targetColors(results);
  const legend = results.targets.map((t) => ({ target: t.label, color: colors.get(t.label) ?? '#000' }));
  const against = results.reference !== undefined ? ` (ratio to ${results.reference})` : '';
  return [
    { file: 'cpu-per-op.svg', svg: barChartSvg('cpu', `Server CPU per operation, incl. Redis or etcd; shorter is better${against}`, cpuPanels(results)) },
    { file: 'throughput.svg', svg: barChartSvg('throughput', `Throughput; longer is better${against}`, throughputPanels(results)) },
    { file: 'latency.svg', svg: percentileChartSvg('Latency percentiles (log scale; lower is better)', latencyPanels(results), legend) },
    // A run of paired rounds alone has no start-up figures.
    ...(results.startup.length > 0
      ? [{ file: 'startup.svg', svg: barChartSvg('startup', `Start-up and idle memory; shorter is better${against}`, startupPanels(results), 2) }]
      : []),
  ];
}

const STYLE = `
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 4px 8px; vertical-align: top; }
th { background: #f0f0f0; text-align: left; }
td.num { text-align: right; white-space: nowrap; }
.sub { color: #666; font-size: 85%; }
.better { color: #1a7f37; font-weight: bold; }
.worse { color: #b42318; font-weight: bold; }
.note { color: #8a6d00; font-size: 85%; }
`;

/** A ratio in a span coloured by whether it is below (better) or above 1; '' stays ''. */
function ratioSpan(r: string, lowerIsBetter: boolean): string {
  if (r === '') return '';
  const v = Number(r.replace(/x$/, ''));
  const better = lowerIsBetter ? v < 1 : v > 1;
  const cls = v === 1 ? '' : better ? 'better' : 'worse';
  return ` <span class="ratio ${cls}">${escapeXml(r)}</span>`;
}

function mainTable(results: ComparisonResults): string {
  const head = `<tr><th>scenario</th>${results.targets.map((t) => `<th>${escapeXml(t.label)}</th>`).join('')}</tr>`;
  const rows = results.scenarios.map((s) => {
    const cells = results.targets.map((t) => {
      const c = summaryCell(results, s.id, t.label);
      return (
        `<td class="num" data-scenario="${escapeXml(s.id)}" data-target="${escapeXml(t.label)}">` +
        `<span class="cpu">${escapeXml(c.cpu)}</span>${ratioSpan(c.cpuRatio, true)}<br>` +
        `<span class="sub">${escapeXml(c.throughput)}${ratioSpan(c.throughputRatio, false)}<br>p50 / p99 ${escapeXml(c.latency)}</span>` +
        (c.note !== undefined ? `<br><span class="note">${escapeXml(c.note)}</span>` : '') +
        '</td>'
      );
    });
    return `<tr><th>${escapeXml(s.title)}<br><span class="sub">server CPU per ${escapeXml(s.per)}; ${escapeXml(s.throughputUnit)}; latency</span></th>${cells.join('')}</tr>`;
  });
  return `<table class="summary">${head}${rows.join('')}</table>`;
}

function startupTable(results: ComparisonResults): string {
  const head = `<tr><th></th>${results.targets.map((t) => `<th>${escapeXml(t.label)}</th>`).join('')}</tr>`;
  const rows = startupLines(results).map(
    (l) =>
      `<tr><th>${escapeXml(l.name)}</th>${l.cells.map((c) => `<td class="num" data-target="${escapeXml(c.target)}">${escapeXml(c.text)}</td>`).join('')}</tr>`,
  );
  return `<table class="startup">${head}${rows.join('')}</table>`;
}

/** The garbage collection section (see gcTable), or nothing when no target reports it. */
function gcSection(results: ComparisonResults): string {
  const gc = gcTable(results);
  if (gc.targets.length === 0) return '';
  const head = `<tr><th>scenario</th>${gc.targets.map((t) => `<th>${escapeXml(t)}</th>`).join('')}</tr>`;
  const rows = gc.lines.map(
    (l) =>
      `<tr><th>${escapeXml(l.name)}</th>${l.cells.map((c, i) => `<td class="num" data-target="${escapeXml(gc.targets[i])}">${escapeXml(c)}</td>`).join('')}</tr>`,
  );
  return (
    "<h2>Garbage collection</h2>\n<p>Per operation, as each Capstan server reports it (Node's nodejs_gc_duration_seconds, read before and after each verb of its paired rounds), with its share of the server CPU per operation. kube-apiserver reports no such figure.</p>\n" +
    `<table class="gc">${head}${rows.join('')}</table>`
  );
}

function targetsList(results: ComparisonResults): string {
  const load = (l: number[]): string => l.map((v) => v.toFixed(2)).join(' / ');
  return `<table class="targets"><tr><th>target</th><th>what</th><th>CPU and memory count</th><th>load average before → after</th></tr>${results.targets
    .map(
      (t) =>
        `<tr><td>${escapeXml(t.label)}${t.label === results.reference ? ' (reference)' : ''}</td><td>${escapeXml(t.description)}</td><td>${escapeXml(t.cpuScope)}</td><td>${escapeXml(`${load(t.loadBefore)} → ${load(t.loadAfter)}`)}</td></tr>`,
    )
    .join('')}</table>`;
}

/** The report page. */
export function renderHtmlReport(results: ComparisonResults): string {
  const sizes = Object.entries(results.sizes)
    .map(([k, v]) => `${k} ${v.toLocaleString('en-US')}`)
    .join(', ');
  const h = results.host;
  const refText =
    results.reference !== undefined
      ? `Ratios are to <b>${escapeXml(results.reference)}</b> (CPU: below 1 is less CPU than it; throughput: above 1 is faster).`
      : 'No reference server was measured: no ratios.';
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Capstan side-by-side benchmark ${escapeXml(results.date)}</title><style>${STYLE}</style></head>
<body>
<h1>Capstan side-by-side benchmark</h1>
<p>${escapeXml(results.date)} · node ${escapeXml(h.node)} · ${h.cpus} × ${escapeXml(h.cpuModel)} · ${(h.memoryBytes / 1024 ** 3).toFixed(0)} GiB · ${results.quick ? 'quick' : 'full'} run (${escapeXml(sizes)})</p>
<p>Same client, same run; every target over HTTPS with a system:masters bearer token and RBAC authorization. The sequential phases measure one target at a time; paired rounds (scenarios so named) run every target at once and measure them in turn, each figure the median of a target's rounds. Server CPU is utime + stime of the server's processes, including Redis or etcd. ${refText}</p>
<h2>At a glance</h2>
${mainTable(results)}
${results.startup.length > 0 ? `<h2>Start-up and memory</h2>\n${startupTable(results)}` : ''}
${gcSection(results)}
<h2>Charts</h2>
${reportCharts(results)
  .map((c) => `<figure>${c.svg}</figure>`)
  .join('\n')}
<h2>Targets</h2>
${targetsList(results)}
${results.notes.length > 0 ? `<h2>Notes</h2><ul>${results.notes.map((n) => `<li>${escapeXml(n)}</li>`).join('')}</ul>` : ''}
</body></html>
`;
}

/** Writes index.html, the charts as SVG files and results.json into `dir` (created if needed); returns the page's path. */
export function writeReport(dir: string, results: ComparisonResults): string {
  mkdirSync(dir, { recursive: true });
  for (const c of reportCharts(results)) writeFileSync(join(dir, c.file), `${c.svg}\n`);
  writeFileSync(join(dir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  const page = join(dir, 'index.html');
  writeFileSync(page, renderHtmlReport(results));
  return page;
}
