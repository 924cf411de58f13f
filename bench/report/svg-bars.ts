/**
 * Horizontal bar charts as plain SVG: small multiples, one panel per scenario with its own scale
 * (a LIST and a GET differ by orders of magnitude), one bar per target. Every bar is a
 * `<g class="bar" data-chart data-scenario data-target>` holding the target's name, a rect whose
 * width is proportional to the value (the longest bar of a panel fills the panel) and the value's
 * label, so a reader, a browser's tooltip (`<title>`) and a test see the same facts.
 */
import { escapeXml } from './format.js';

export interface Bar {
  target: string;
  /** null: not measured (no rect, label "n/a"). */
  value: number | null;
  /** The value as printed, e.g. "0.52 ms · 0.61x". */
  label: string;
  color: string;
}

export interface BarPanel {
  scenario: string;
  title: string;
  bars: Bar[];
}

/** Geometry of one panel. */
const PANEL_WIDTH = 380;
const NAME_WIDTH = 110;
const VALUE_WIDTH = 120;
const BAR_HEIGHT = 18;
const BAR_GAP = 6;
const TITLE_HEIGHT = 24;
const PADDING = 10;
/** The widest a bar can be. */
export const MAX_BAR_WIDTH = PANEL_WIDTH - NAME_WIDTH - VALUE_WIDTH - 2 * PADDING;

function panelHeight(bars: number): number {
  return TITLE_HEIGHT + bars * (BAR_HEIGHT + BAR_GAP) + PADDING;
}

/** Width of a bar for `value` when the panel's largest value is `max` (0 for missing or non-positive values). */
export function barWidth(value: number | null, max: number): number {
  if (value === null || !Number.isFinite(value) || value <= 0 || !(max > 0)) return 0;
  return (value / max) * MAX_BAR_WIDTH;
}

function renderPanel(chart: string, panel: BarPanel, x: number, y: number): string {
  const max = Math.max(0, ...panel.bars.map((b) => (b.value !== null && Number.isFinite(b.value) ? b.value : 0)));
  const parts = [
    `<g class="panel" data-chart="${escapeXml(chart)}" data-scenario="${escapeXml(panel.scenario)}" transform="translate(${x},${y})">`,
    `<rect class="panel-frame" x="0" y="0" width="${PANEL_WIDTH}" height="${panelHeight(panel.bars.length)}" fill="#fafafa" stroke="#ddd"/>`,
    `<text class="panel-title" x="${PADDING}" y="17" font-weight="bold">${escapeXml(panel.title)}</text>`,
  ];
  panel.bars.forEach((bar, i) => {
    const by = TITLE_HEIGHT + i * (BAR_HEIGHT + BAR_GAP);
    const width = barWidth(bar.value, max);
    const attrs = `data-chart="${escapeXml(chart)}" data-scenario="${escapeXml(panel.scenario)}" data-target="${escapeXml(bar.target)}"`;
    parts.push(
      `<g class="bar" ${attrs}>`,
      `<title>${escapeXml(`${panel.title}, ${bar.target}: ${bar.label}`)}</title>`,
      `<text class="bar-target" x="${PADDING}" y="${by + 13}">${escapeXml(bar.target)}</text>`,
      width > 0 ? `<rect x="${PADDING + NAME_WIDTH}" y="${by}" width="${width.toFixed(1)}" height="${BAR_HEIGHT}" fill="${escapeXml(bar.color)}"/>` : '',
      `<text class="bar-value" x="${(PADDING + NAME_WIDTH + width + 4).toFixed(1)}" y="${by + 13}">${escapeXml(bar.label)}</text>`,
      `</g>`,
    );
  });
  parts.push('</g>');
  return parts.filter((p) => p !== '').join('');
}

/** An SVG document of `panels` in a grid of `columns`, titled `title`; `chart` names it in data attributes. */
export function barChartSvg(chart: string, title: string, panels: readonly BarPanel[], columns = 3): string {
  const cols = Math.max(1, Math.min(columns, panels.length));
  const rows: BarPanel[][] = [];
  for (let i = 0; i < panels.length; i += cols) rows.push(panels.slice(i, i + cols));
  const body: string[] = [];
  let y = 36;
  for (const row of rows) {
    row.forEach((panel, c) => body.push(renderPanel(chart, panel, PADDING + c * (PANEL_WIDTH + PADDING), y)));
    y += Math.max(...row.map((p) => panelHeight(p.bars.length))) + PADDING;
  }
  const width = PADDING + cols * (PANEL_WIDTH + PADDING);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="${escapeXml(chart)}" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}" font-family="sans-serif" font-size="12">`,
    `<text x="${PADDING}" y="22" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
    ...body,
    '</svg>',
  ].join('\n');
}
