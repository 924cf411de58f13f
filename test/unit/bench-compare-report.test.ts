import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatRatio, ratioToReference, type ComparisonResults, type ComparisonRow } from '../../bench/compare/results.js';
import { gcTableLines, renderTextReport } from '../../bench/compare/text-report.js';
import { gcSecondsIn } from '../../bench/compare/gc-time.js';
import { renderHtmlReport, writeReport } from '../../bench/report/html-report.js';
import { MAX_BAR_WIDTH } from '../../bench/report/svg-bars.js';

function row(scenario: string, target: string, cpuMsPerOp: number | null, throughput: number | null, p50Ms: number, p99Ms: number): ComparisonRow {
  return {
    scenario,
    target,
    throughput,
    cpuMsPerOp,
    p50Ms,
    p99Ms,
    latency: [
      [0.5, p50Ms],
      [0.99, p99Ms],
      [1, p99Ms * 1.5],
    ],
    ok: 100,
    failed: 0,
  };
}

/** Three targets (kube-apiserver the reference), three scenarios; redis has no LIST row. */
function sample(): ComparisonResults {
  const targets = ['memory', 'redis', 'kube-apiserver'];
  return {
    version: 1,
    date: '2025-01-01T00:00:00.000Z',
    host: { node: 'v20.0.0', cpus: 2, cpuModel: 'test cpu', memoryBytes: 8 * 1024 ** 3 },
    quick: true,
    sizes: { 'ops per verb': 100 },
    targets: targets.map((label) => ({ label, description: `${label} server`, cpuScope: 'its processes', loadBefore: [1, 1, 1], loadAfter: [2, 2, 2] })),
    reference: 'kube-apiserver',
    scenarios: [
      { id: 'create-fresh', title: 'create, first 100 after start', per: 'request', throughputUnit: 'ops/s' },
      { id: 'create', title: 'create', per: 'request', throughputUnit: 'ops/s' },
      { id: 'list-json', title: 'LIST, JSON (10,000)', per: 'LIST', throughputUnit: 'LISTs/s' },
    ],
    rows: [
      row('create-fresh', 'memory', 0.75, 1500, 10, 60),
      row('create', 'memory', 0.5, 2000, 8, 40),
      row('create', 'redis', 1.7, 600, 30, 150),
      row('create', 'kube-apiserver', 1.0, 1000, 12, 100),
      row('list-json', 'memory', 50, 8, 110, 130),
      { ...row('list-json', 'redis', null, null, 0, 0), latency: [], p50Ms: null, p99Ms: null, note: 'failed: boom & <crash>' },
      row('list-json', 'kube-apiserver', 200, 4, 250, 300),
    ],
    startup: [
      { target: 'memory', readyFreshMs: 900, readyExistingCertsMs: 600, idleRssBytes: 100 * 1048576, settledIdleRssBytes: 75 * 1048576 },
      { target: 'redis', readyFreshMs: 1200, readyExistingCertsMs: 800, idleRssBytes: 150 * 1048576 },
      { target: 'kube-apiserver', readyFreshMs: 3000, readyExistingCertsMs: null, idleRssBytes: 300 * 1048576, settledIdleRssBytes: 250 * 1048576 },
    ],
    notes: ['a note'],
  };
}

interface ParsedBar {
  scenario: string;
  target: string;
  width: number | undefined;
  label: string;
}

/** The bars of chart `chart` in `svg`: scenario, target, rect width (undefined without a rect) and value label. */
function bars(svg: string, chart: string): ParsedBar[] {
  const out: ParsedBar[] = [];
  const re = new RegExp(`<g class="bar" data-chart="${chart}" data-scenario="([^"]+)" data-target="([^"]+)">(.*?)</g>`, 'g');
  for (const m of svg.matchAll(re)) {
    const width = /<rect [^>]*width="([\d.]+)"/.exec(m[3])?.[1];
    const label = /<text class="bar-value"[^>]*>([^<]*)<\/text>/.exec(m[3])?.[1] ?? '';
    out.push({ scenario: m[1], target: m[2], width: width === undefined ? undefined : Number(width), label });
  }
  return out;
}

function find(list: ParsedBar[], scenario: string, target: string): ParsedBar {
  const found = list.find((b) => b.scenario === scenario && b.target === target);
  assert.ok(found, `no bar for ${scenario} / ${target}`);
  return found;
}

describe('bench --compare report', () => {
  test('ratios to the reference are value / reference value, null when either is missing', () => {
    const r = sample();
    assert.equal(ratioToReference(r, 'create', 'memory', 'cpuMsPerOp'), 0.5);
    assert.equal(ratioToReference(r, 'create', 'redis', 'cpuMsPerOp'), 1.7);
    assert.equal(ratioToReference(r, 'create', 'redis', 'throughput'), 0.6);
    assert.equal(ratioToReference(r, 'list-json', 'memory', 'cpuMsPerOp'), 0.25);
    assert.equal(ratioToReference(r, 'list-json', 'redis', 'cpuMsPerOp'), null);
    assert.equal(ratioToReference(r, 'create-fresh', 'memory', 'cpuMsPerOp'), null, 'the reference has no row for it');
    assert.equal(ratioToReference({ ...r, reference: undefined }, 'create', 'memory', 'cpuMsPerOp'), null);
    assert.equal(formatRatio(0.5), '0.50x');
    assert.equal(formatRatio(1.7), '1.7x');
    assert.equal(formatRatio(null), '');
  });

  test('the CPU chart has a bar per target per scenario, labelled with value and ratio, widths proportional', () => {
    const html = renderHtmlReport(sample());
    const cpu = bars(html, 'cpu');
    assert.equal(cpu.length, 3 * 3, 'three scenarios × three targets');
    for (const scenario of ['create-fresh', 'create', 'list-json']) {
      for (const target of ['memory', 'redis', 'kube-apiserver']) find(cpu, scenario, target);
    }
    assert.equal(find(cpu, 'create', 'memory').label, '0.50 ms · 0.50x');
    assert.equal(find(cpu, 'create', 'redis').label, '1.70 ms · 1.7x');
    assert.equal(find(cpu, 'create', 'kube-apiserver').label, '1.00 ms', 'the reference has no ratio to itself');
    assert.equal(find(cpu, 'list-json', 'memory').label, '50.0 ms · 0.25x');
    // The largest value of a panel fills it; the others are in proportion.
    assert.equal(find(cpu, 'create', 'redis').width, Number(MAX_BAR_WIDTH.toFixed(1)));
    const memoryWidth = find(cpu, 'create', 'memory').width ?? Number.NaN;
    assert.ok(Math.abs(memoryWidth - (0.5 / 1.7) * MAX_BAR_WIDTH) < 0.1, `memory bar width ${memoryWidth}`);
    // Not measured: no rect, "n/a".
    const missing = find(cpu, 'list-json', 'redis');
    assert.equal(missing.width, undefined);
    assert.equal(missing.label, 'n/a');
  });

  test('the throughput chart states throughput ratios (higher is faster)', () => {
    const throughput = bars(renderHtmlReport(sample()), 'throughput');
    assert.equal(throughput.length, 9);
    assert.equal(find(throughput, 'create', 'memory').label, '2,000 ops/s · 2.0x');
    assert.equal(find(throughput, 'create', 'redis').label, '600 ops/s · 0.60x');
    assert.equal(find(throughput, 'list-json', 'kube-apiserver').label, '4.0 LISTs/s');
    assert.equal(find(throughput, 'create', 'memory').width, Number(MAX_BAR_WIDTH.toFixed(1)));
  });

  test('latency distributions: a curve per target with one point per percentile', () => {
    const html = renderHtmlReport(sample());
    const curves = [...html.matchAll(/<g class="curve" data-scenario="([^"]+)" data-target="([^"]+)">(.*?)<\/g>/g)];
    assert.deepEqual(
      curves.map((c) => `${c[1]}/${c[2]}`),
      ['create-fresh/memory', 'create/memory', 'create/redis', 'create/kube-apiserver', 'list-json/memory', 'list-json/kube-apiserver'],
    );
    const memoryCreate = curves.find((c) => c[1] === 'create' && c[2] === 'memory')?.[3] ?? '';
    assert.equal([...memoryCreate.matchAll(/<circle /g)].length, 3);
    assert.match(memoryCreate, /<title>memory p99: 40\.0 ms<\/title>/);
  });

  test('the tables: CPU with ratio per cell, start-up ratios, first requests against steady state, escaped notes', () => {
    const r = sample();
    const html = renderHtmlReport(r);
    const cell = /<td class="num" data-scenario="create" data-target="redis">(.*?)<\/td>/.exec(html)?.[1] ?? '';
    assert.match(cell, /<span class="cpu">1\.70 ms<\/span> <span class="ratio worse">1\.7x<\/span>/);
    assert.match(cell, /600 ops\/s <span class="ratio worse">0\.60x<\/span>/);
    assert.match(cell, /p50 \/ p99 30\.0 ms \/ 150 ms/);
    assert.match(html, /boom &amp; &lt;crash&gt;/);
    assert.doesNotMatch(html, /<crash>/);

    const text = renderTextReport(r);
    assert.match(text, /0\.50 ms \(0\.50x\)/);
    assert.match(text, /1\.70 ms \(1\.7x\)/);
    assert.match(text, /start to ready, fresh certificate directory\s+900 ms · 0\.30x\s+1,200 ms · 0\.40x\s+3,000 ms/);
    assert.match(text, /idle RSS \(server \+ Redis or etcd\)\s+100 MiB · 0\.33x\s+150 MiB · 0\.50x\s+300 MiB/);
    // A target without the settled figure (results of an older run) shows none and no ratio.
    assert.match(text, /idle RSS after 30 s without requests\s+75 MiB · 0\.30x\s+n\/a\s+250 MiB/);
    // First 100 creates cost 0.75 ms against 0.5 ms in steady state.
    assert.match(text, /first 100 creates: CPU ÷ steady state\s+1\.5x\s+n\/a\s+n\/a/);
  });

  test('a run without start-up figures (paired rounds alone) prints no start-up table', () => {
    const r = { ...sample(), startup: [] };
    const text = renderTextReport(r);
    assert.match(text, /== server CPU per operation/);
    assert.doesNotMatch(text, /== start-up and memory/);
    assert.match(renderTextReport(sample()), /== start-up and memory/);
    const html = renderHtmlReport(r);
    assert.doesNotMatch(html, /<h2>Start-up and memory<\/h2>/);
    assert.match(renderHtmlReport(sample()), /<h2>Start-up and memory<\/h2>/);
  });

  test("garbage collection: the servers' reported time per operation and its share of CPU, only for targets that report it", () => {
    assert.deepEqual(gcTableLines(sample()), []);
    assert.doesNotMatch(renderTextReport(sample()), /garbage collection/);
    const r = sample();
    r.rows = r.rows.map((x) => (x.target === 'memory' && x.scenario === 'create' ? { ...x, gcMsPerOp: 0.05 } : x));
    const lines = gcTableLines(r);
    assert.match(lines[0], /^== garbage collection per operation/);
    // Only the reporting target has a column, and only scenarios it reported have a row.
    assert.match(lines[1], /^scenario\s+memory$/);
    assert.equal(lines.length, 5);
    assert.match(lines[3], /^create, per request\s+50 µs \(10% of CPU\)$/);
    assert.equal(lines[4], '');
    assert.match(renderTextReport(r), /== garbage collection per operation[^\n]*\nscenario +memory\n-+ +-+\ncreate, per request +50 µs \(10% of CPU\)\n/);
    // The HTML report has the same table, and none without the figures.
    const html = renderHtmlReport(r);
    assert.match(html, /<h2>Garbage collection<\/h2>/);
    assert.match(
      html,
      /<table class="gc"><tr><th>scenario<\/th><th>memory<\/th><\/tr><tr><th>create, per request<\/th><td class="num" data-target="memory">50 µs \(10% of CPU\)<\/td><\/tr><\/table>/,
    );
    assert.doesNotMatch(renderHtmlReport(sample()), /Garbage collection/);
  });

  test('the garbage collection time of a metrics text: every kind summed, undefined without the metric', () => {
    const text = [
      '# HELP nodejs_gc_duration_seconds Garbage collection duration by kind.',
      '# TYPE nodejs_gc_duration_seconds histogram',
      'nodejs_gc_duration_seconds_bucket{le="0.001",kind="minor"} 3',
      'nodejs_gc_duration_seconds_sum{kind="minor"} 0.25',
      'nodejs_gc_duration_seconds_count{kind="minor"} 3',
      'nodejs_gc_duration_seconds_sum{kind="major"} 1.5',
      'nodejs_gc_duration_seconds_sum{kind="incremental"} 2.5e-1',
      'process_cpu_seconds_total 12',
    ].join('\n');
    assert.equal(gcSecondsIn(text), 2);
    assert.equal(gcSecondsIn('go_gc_duration_seconds_sum 0.5\napiserver_request_total 3\n'), undefined);
    assert.equal(gcSecondsIn(''), undefined);
  });

  test('writeReport writes the page, an SVG per chart and the results as JSON', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-report-'));
    try {
      const r = sample();
      const page = writeReport(dir, r);
      assert.equal(page, join(dir, 'index.html'));
      assert.deepEqual(readdirSync(dir).sort(), ['cpu-per-op.svg', 'index.html', 'latency.svg', 'results.json', 'startup.svg', 'throughput.svg']);
      const svg = readFileSync(join(dir, 'cpu-per-op.svg'), 'utf8');
      assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      assert.equal(bars(svg, 'cpu').length, 9);
      assert.deepEqual(JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')), r);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
