/**
 * Latency distributions as plain SVG: one panel per scenario, one percentile curve per target. The
 * x axis spreads the tail ("nines" scale: p50, p90, p99, p99.9, max equally spaced, x = -log10(1-q),
 * the maximum drawn at 4), the y axis is logarithmic in ms, so a fast median and a slow tail are both
 * readable. Each curve is a `<g class="curve" data-scenario data-target>` with a polyline and one
 * circle per percentile (its `<title>` states the value).
 */
import { escapeXml, formatMs } from './format.js';

export interface Curve {
  target: string;
  color: string;
  /** [quantile 0..1, ms], quantile ascending. */
  points: ReadonlyArray<readonly [number, number]>;
}

export interface CurvePanel {
  scenario: string;
  title: string;
  curves: Curve[];
}

const WIDTH = 380;
const HEIGHT = 220;
const LEFT = 56;
const RIGHT = 12;
const TOP = 28;
const BOTTOM = 30;
const PADDING = 10;
/** x of the maximum (q = 1) on the nines scale. */
const X_MAX = 4;

/** Position on the nines scale: 0 at p0, 1 at p90, 2 at p99, …, X_MAX for the maximum. */
export function ninesX(q: number): number {
  return q >= 1 ? X_MAX : Math.min(X_MAX, -Math.log10(1 - q));
}

const QUANTILE_TICKS: Array<[number, string]> = [
  [0.5, 'p50'],
  [0.9, 'p90'],
  [0.99, 'p99'],
  [0.999, 'p99.9'],
  [1, 'max'],
];

/** Powers of ten and their 2x and 5x between `lo` and `hi`; finer steps while that gives fewer than 3. */
function logTicks(lo: number, hi: number): number[] {
  const between = (multiples: number[]): number[] => {
    const ticks: number[] = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      for (const m of multiples) {
        const v = m * 10 ** e;
        if (v >= lo && v <= hi) ticks.push(v);
      }
    }
    return ticks;
  };
  for (const multiples of [
    [1, 2, 5],
    [1, 2, 3, 5],
  ]) {
    const ticks = between(multiples);
    if (ticks.length >= 3) return ticks;
  }
  return between([1, 2, 3, 4, 5, 6, 7, 8, 9]);
}

/** A tick label: "200 ms", "5 ms", "0.5 ms", "20 µs". */
function tickLabel(ms: number): string {
  if (ms < 0.1) return `${+(ms * 1000).toPrecision(2)} µs`;
  return `${+ms.toPrecision(2)} ms`;
}

function renderPanel(panel: CurvePanel, x0: number, y0: number): string {
  const values = panel.curves.flatMap((c) => c.points.map(([, ms]) => ms)).filter((v) => Number.isFinite(v) && v > 0);
  const lo = values.length > 0 ? Math.min(...values) : 1;
  const hi = values.length > 0 ? Math.max(...values) : 10;
  const yLo = Math.log10(lo) - 0.05;
  const yHi = Math.max(Math.log10(hi) + 0.05, yLo + 0.3);
  const plotW = WIDTH - LEFT - RIGHT;
  const plotH = HEIGHT - TOP - BOTTOM;
  const px = (q: number): number => LEFT + (ninesX(q) / X_MAX) * plotW;
  const py = (ms: number): number => TOP + plotH - ((Math.log10(Math.max(ms, 1e-6)) - yLo) / (yHi - yLo)) * plotH;
  const parts = [
    `<g class="panel" data-chart="latency" data-scenario="${escapeXml(panel.scenario)}" transform="translate(${x0},${y0})">`,
    `<rect x="0" y="0" width="${WIDTH}" height="${HEIGHT}" fill="#fafafa" stroke="#ddd"/>`,
    `<text x="${PADDING}" y="18" font-weight="bold">${escapeXml(panel.title)}</text>`,
  ];
  for (const tick of logTicks(10 ** yLo, 10 ** yHi)) {
    const y = py(tick).toFixed(1);
    parts.push(
      `<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y}" y2="${y}" stroke="#e4e4e4"/>`,
      `<text x="${LEFT - 4}" y="${y}" dy="4" text-anchor="end" font-size="10">${escapeXml(tickLabel(tick))}</text>`,
    );
  }
  for (const [q, name] of QUANTILE_TICKS) {
    const x = px(q).toFixed(1);
    parts.push(
      `<line x1="${x}" x2="${x}" y1="${TOP}" y2="${TOP + plotH}" stroke="#e4e4e4"/>`,
      `<text x="${x}" y="${HEIGHT - 12}" text-anchor="middle" font-size="10">${name}</text>`,
    );
  }
  for (const curve of panel.curves) {
    const pts = curve.points.filter(([, ms]) => Number.isFinite(ms) && ms > 0);
    if (pts.length === 0) continue;
    const color = escapeXml(curve.color);
    parts.push(
      `<g class="curve" data-scenario="${escapeXml(panel.scenario)}" data-target="${escapeXml(curve.target)}">`,
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map(([q, ms]) => `${px(q).toFixed(1)},${py(ms).toFixed(1)}`).join(' ')}"/>`,
      ...pts.map(
        ([q, ms]) =>
          `<circle cx="${px(q).toFixed(1)}" cy="${py(ms).toFixed(1)}" r="2.5" fill="${color}"><title>${escapeXml(`${curve.target} p${+(q * 100).toFixed(1)}: ${formatMs(ms)}`)}</title></circle>`,
      ),
      '</g>',
    );
  }
  parts.push('</g>');
  return parts.join('');
}

/** An SVG document of latency panels in a grid of `columns` with a legend of `legend` (target, color). */
export function percentileChartSvg(
  title: string,
  panels: readonly CurvePanel[],
  legend: ReadonlyArray<{ target: string; color: string }>,
  columns = 3,
): string {
  const cols = Math.max(1, Math.min(columns, panels.length));
  const body: string[] = [];
  const legendY = 40;
  legend.forEach((l, i) => {
    const x = PADDING + i * 150;
    body.push(
      `<g class="legend" data-target="${escapeXml(l.target)}"><rect x="${x}" y="${legendY - 9}" width="14" height="10" fill="${escapeXml(l.color)}"/><text x="${x + 18}" y="${legendY}">${escapeXml(l.target)}</text></g>`,
    );
  });
  const top = legendY + 14;
  panels.forEach((panel, i) => {
    body.push(renderPanel(panel, PADDING + (i % cols) * (WIDTH + PADDING), top + Math.floor(i / cols) * (HEIGHT + PADDING)));
  });
  const width = PADDING + cols * (WIDTH + PADDING);
  const height = top + Math.ceil(panels.length / cols) * (HEIGHT + PADDING);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="latency" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<text x="${PADDING}" y="22" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
    ...body,
    '</svg>',
  ].join('\n');
}
