/** Parses a Go duration (`300ms`, `1.5h`, `2m30s`, `0`) into milliseconds; throws on bad input. */
export function parseDuration(value: string): number {
  if (value === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  const unitMs: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let pos = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(value)) !== null) {
    total += Number(m[1]) * unitMs[m[2]];
    pos = re.lastIndex;
  }
  if (pos !== value.length || value.length === 0) throw new Error(`time: invalid duration "${value}"`);
  return Math.round(total);
}
