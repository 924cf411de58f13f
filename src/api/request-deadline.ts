/** Milliseconds per unit of Go's time.ParseDuration. */
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

const NUMBER = /^(\d*)(\.\d*)?/;

/** Go's time.ParseDuration in milliseconds; throws Go's error text (`time: missing unit in duration "30"`). */
export function parseGoDuration(text: string): number {
  const quoted = JSON.stringify(text);
  const invalid = new Error(`time: invalid duration ${quoted}`);
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest.startsWith('-')) sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw invalid;
  let total = 0;
  while (rest !== '') {
    const m = NUMBER.exec(rest);
    const whole = m?.[1] ?? '';
    const fraction = m?.[2] ?? '';
    if (whole === '' && fraction.length <= 1) throw invalid;
    rest = rest.slice(whole.length + fraction.length);
    let u = 0;
    while (u < rest.length && rest[u] !== '.' && !(rest[u] >= '0' && rest[u] <= '9')) u++;
    if (u === 0) throw new Error(`time: missing unit in duration ${quoted}`);
    const unit = rest.slice(0, u);
    rest = rest.slice(u);
    const scale = UNIT_MS[unit];
    if (scale === undefined) throw new Error(`time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}`);
    total += Number(`${whole === '' ? '0' : whole}${fraction === '.' ? '' : fraction}`) * scale;
  }
  return sign * total;
}

/**
 * kube's check of a request's `timeout` parameter (WithRequestDeadline): the message of its 400 when
 * the value is not a Go duration, else undefined.
 */
export function timeoutParameterProblem(query: URLSearchParams): string | undefined {
  const timeout = query.get('timeout');
  if (timeout === null || timeout === '') return undefined;
  try {
    parseGoDuration(timeout);
    return undefined;
  } catch (err) {
    return `invalid timeout specified in the request URL - ${err instanceof Error ? err.message : String(err)}`;
  }
}

/**
 * The deadline of a request that is not long-running (kube's WithRequestDeadline): its `timeout`
 * parameter when that is a positive Go duration under `maxMs`, else `maxMs` (`--request-timeout`).
 */
export function requestDeadlineMs(query: URLSearchParams, maxMs: number): number {
  const timeout = query.get('timeout');
  if (timeout === null || timeout === '') return maxMs;
  let ms: number;
  try {
    ms = parseGoDuration(timeout);
  } catch {
    return maxMs;
  }
  return ms > 0 && ms < maxMs ? ms : maxMs;
}
