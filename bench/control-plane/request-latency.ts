/**
 * API call latency from a server's own `apiserver_request_duration_seconds` histogram: the buckets
 * read from two /metrics scrapes, subtracted (what happened between them), summed into kube's SLO
 * classes and turned into percentiles the way Prometheus' histogram_quantile does (linear inside the
 * bucket). kube-apiserver and Capstan expose the same histogram, so both are measured alike.
 */

/** Cumulative bucket counts by upper bound (seconds; Infinity for +Inf), per series key. */
export type Buckets = Map<string, Map<number, number>>;

const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** kube's API call latency SLO classes (mutating calls, single-object reads, namespace and cluster LISTs). */
export type SloClass = 'mutating' | 'get' | 'list namespace' | 'list cluster';

/**
 * The SLO class of a request with these labels; undefined for what the SLOs leave out (WATCH,
 * CONNECT, and non-resource requests such as /readyz, which have no scope).
 */
export function sloClassOf(verb: string, scope: string): SloClass | undefined {
  if (scope === '') return undefined;
  switch (verb) {
    case 'POST':
    case 'PUT':
    case 'PATCH':
    case 'APPLY':
    case 'DELETE':
    case 'DELETECOLLECTION':
      return 'mutating';
    case 'GET':
      return 'get';
    case 'LIST':
      return scope === 'cluster' ? 'list cluster' : 'list namespace';
    default:
      return undefined;
  }
}

/** kube's SLO thresholds, in seconds, for the p99 of each class. */
export const SLO_P99_SECONDS: Record<SloClass, number> = { mutating: 1, get: 1, 'list namespace': 5, 'list cluster': 30 };

/** The request-duration buckets of a /metrics text, summed per SLO class (keyed by class name). */
export function parseRequestBuckets(metricsText: string): Buckets {
  return parseRequestBucketsBy(metricsText, (cls) => cls);
}

/**
 * The request-duration buckets of a /metrics text, summed per call (`class verb resource[/subresource]`,
 * for example `mutating PATCH pods/status`): which calls make a class's tail.
 */
export function parseRequestBucketsByCall(metricsText: string): Buckets {
  return parseRequestBucketsBy(metricsText, (cls, labels) => {
    const sub = labels.get('subresource') ?? '';
    return `${cls} ${labels.get('verb') ?? ''} ${labels.get('resource') ?? ''}${sub === '' ? '' : `/${sub}`}`;
  });
}

/** Each sample of the series `pattern` matches (its first group: the text between the braces), with its labels and value. */
export function* samplesOf(metricsText: string, pattern: RegExp): Generator<{ labels: Map<string, string>; value: number }> {
  for (const line of metricsText.split('\n')) {
    const m = pattern.exec(line);
    if (m === null) continue;
    const labels = new Map<string, string>();
    for (const l of (m[1] ?? '').matchAll(LABEL)) labels.set(l[1] ?? '', l[2] ?? '');
    yield { labels, value: Number(m[2]) };
  }
}

function parseRequestBucketsBy(metricsText: string, keyOf: (cls: SloClass, labels: Map<string, string>) => string): Buckets {
  return parseHistogramBuckets(metricsText, 'apiserver_request_duration_seconds', (labels) => {
    const cls = sloClassOf(labels.get('verb') ?? '', labels.get('scope') ?? '');
    return cls === undefined ? undefined : keyOf(cls, labels);
  });
}

/**
 * The buckets of the histogram `name` in a /metrics text, summed per key: `keyOf` names the key of a
 * series by its labels (`le` aside), or undefined to leave the series out.
 */
export function parseHistogramBuckets(metricsText: string, name: string, keyOf: (labels: Map<string, string>) => string | undefined): Buckets {
  const line = new RegExp(`^${name}_bucket\\{([^}]*)\\}\\s+([0-9.eE+-]+)`);
  const out: Buckets = new Map();
  for (const { labels, value } of samplesOf(metricsText, line)) {
    const key = keyOf(labels);
    if (key === undefined) continue;
    const le = labels.get('le') ?? '';
    const bound = le === '+Inf' ? Infinity : Number(le);
    if (Number.isNaN(bound)) continue;
    let series = out.get(key);
    if (series === undefined) out.set(key, (series = new Map<number, number>()));
    series.set(bound, (series.get(bound) ?? 0) + value);
  }
  return out;
}

/** AFTER minus BEFORE, per class and bucket. */
export function subtractBuckets(after: Buckets, before: Buckets): Buckets {
  const out: Buckets = new Map();
  for (const [cls, series] of after) {
    const base = before.get(cls);
    out.set(cls, new Map([...series].map(([bound, n]) => [bound, n - (base?.get(bound) ?? 0)])));
  }
  return out;
}

/** Requests counted in one class's buckets. */
export function countOf(series: Map<number, number>): number {
  return series.get(Infinity) ?? 0;
}

/**
 * The Q quantile (0..1) in seconds of one class's cumulative buckets, interpolated linearly inside
 * its bucket; the highest finite bound when it falls in +Inf; NaN with no requests.
 */
export function quantileOf(series: Map<number, number>, q: number): number {
  const bounds = [...series.keys()].sort((a, b) => a - b);
  const total = countOf(series);
  if (total <= 0) return NaN;
  const rank = q * total;
  let prevBound = 0;
  let prevCount = 0;
  for (const bound of bounds) {
    const count = series.get(bound) ?? 0;
    if (count >= rank) {
      if (bound === Infinity) return prevBound;
      const inBucket = count - prevCount;
      return inBucket <= 0 ? bound : prevBound + ((bound - prevBound) * (rank - prevCount)) / inBucket;
    }
    prevBound = bound;
    prevCount = count;
  }
  return prevBound;
}
