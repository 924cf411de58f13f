/** Number formatting shared by the comparison's printed tables and its HTML report, so both read alike. */

/** Server CPU (or a latency) in ms for people: "12 µs" below 0.1 ms, "0.52 ms", "14.1 ms", "1,204 ms"; "n/a" for null. */
export function formatMs(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return 'n/a';
  if (ms === 0) return '0 ms';
  if (ms < 0.1) return `${(ms * 1000).toPrecision(2)} µs`;
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms).toLocaleString('en-US')} ms`;
}

/** A rate with its unit: "1,867 ops/s", "4.2 LISTs/s"; "n/a" for null. */
export function formatRate(value: number | null, unit: string): string {
  if (value === null || !Number.isFinite(value)) return 'n/a';
  return `${value < 100 ? value.toPrecision(2) : Math.round(value).toLocaleString('en-US')} ${unit}`;
}

/** Bytes as MiB: "164 MiB"; "n/a" for null. */
export function formatMiB(bytes: number | null): string {
  if (bytes === null || !Number.isFinite(bytes)) return 'n/a';
  return `${Math.round(bytes / 1048576).toLocaleString('en-US')} MiB`;
}

/** Escapes text for HTML and SVG (element content and attribute values). */
export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}
