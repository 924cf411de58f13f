/**
 * The five-field cron schedule of a CronJob, parsed as kube does (robfig/cron's standard parser:
 * minute, hour, day of month, month, day of week; names for months and weekdays; `*`, `?`, ranges,
 * lists and steps; `@hourly`-style descriptors and `@every <duration>`; a `TZ=`/`CRON_TZ=` prefix).
 * Returns the parser's error text, or undefined for a valid schedule.
 */

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const MONTHS = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };
const DAYS = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };
const FIELDS: Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS },
  { min: 0, max: 6, names: DAYS },
];
const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/** Go's strconv.Atoi with robfig's wording around it. */
function parseNumber(expr: string): number | string {
  if (!/^[+-]?\d+$/.test(expr)) return `failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`;
  const n = Number(expr);
  if (!Number.isSafeInteger(n)) return `failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: value out of range`;
  if (n < 0) return `negative number (${n}) not allowed: ${expr}`;
  return n;
}

function parseIntOrName(expr: string, bounds: Bounds): number | string {
  const named = bounds.names?.[expr.toLowerCase()];
  return named !== undefined ? named : parseNumber(expr);
}

function rangeError(expr: string, bounds: Bounds): string | undefined {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = (rangeAndStep[0] ?? '').split('-');
  let start: number;
  let end: number;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = bounds.min;
    end = bounds.max;
  } else {
    const s = parseIntOrName(lowAndHigh[0] ?? '', bounds);
    if (typeof s === 'string') return s;
    start = s;
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) {
      const e = parseIntOrName(lowAndHigh[1] ?? '', bounds);
      if (typeof e === 'string') return e;
      end = e;
    } else return `too many hyphens: ${expr}`;
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    const s = parseNumber(rangeAndStep[1] ?? '');
    if (typeof s === 'string') return s;
    step = s;
    if (lowAndHigh.length === 1) end = bounds.max;
  } else if (rangeAndStep.length > 2) return `too many slashes: ${expr}`;
  if (start < bounds.min) return `beginning of range (${start}) below minimum (${bounds.min}): ${expr}`;
  if (end > bounds.max) return `end of range (${end}) above maximum (${bounds.max}): ${expr}`;
  if (start > end) return `beginning of range (${start}) beyond end of range (${end}): ${expr}`;
  if (step === 0) return `step of range should be a positive number: ${expr}`;
  return undefined;
}

/** Whether the host's time-zone database knows the zone (Go's time.LoadLocation succeeding). */
export function knownTimeZone(zone: string): boolean {
  if (zone === '' || zone === 'UTC' || zone === 'Local') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The parse error of a schedule, or undefined when it parses. */
export function cronScheduleError(input: string): string | undefined {
  let spec = input;
  if (spec.length === 0) return 'empty spec string';
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ');
    const zone = spec.slice(spec.indexOf('=') + 1, space < 0 ? undefined : space);
    if (!knownTimeZone(zone)) return `provided bad location ${zone}: unknown time zone ${zone}`;
    spec = space < 0 ? '' : spec.slice(space).trim();
  }
  if (spec.startsWith('@')) {
    if (DESCRIPTORS.has(spec)) return undefined;
    if (spec.startsWith('@every ')) {
      const duration = spec.slice('@every '.length);
      return /^([0-9]*(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$/.test(duration) && /[0-9]/.test(duration)
        ? undefined
        : `failed to parse duration ${spec}: time: invalid duration ${JSON.stringify(duration)}`;
    }
    return `unrecognized descriptor: ${spec}`;
  }
  const fields = spec.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5) return `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`;
  for (const [i, field] of fields.entries()) {
    for (const expr of field.split(',').filter((e) => e !== '')) {
      const err = rangeError(expr, FIELDS[i]);
      if (err !== undefined) return err;
    }
  }
  return undefined;
}
