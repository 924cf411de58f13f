/**
 * `apiserver_request_total` and `apiserver_request_duration_seconds`, kept per label set as plain
 * numbers: every request adds to its series through one string key, where prom-client's Counter
 * and Histogram would copy, validate, sort and hash the label object of each request. prom-client
 * reads the series only when /metrics is scraped (a Counter filled in its `collect`, a
 * SeriesHistogram), so the exposition and the workers' aggregation are prom-client's own.
 */
import { Counter, type Registry } from 'prom-client';
import { HistogramSeries, SeriesHistogram, type LabelledSnapshot } from './metric-series.js';
import type { RequestLabels } from './request-labels.js';

const LABEL_NAMES = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'];

/** One label set's requests: counts by response code and the latency of those not long-running. */
interface Series {
  readonly labels: Readonly<Record<string, string>>;
  readonly byCode: Map<number, number>;
  readonly latency: HistogramSeries;
}

/** Names and help texts of the two metrics. */
export interface RequestSeriesNames {
  total: string;
  totalHelp: string;
  duration: string;
  durationHelp: string;
}

/** The request counter and latency histogram of one process. */
export class RequestSeries {
  private readonly series = new Map<string, Series>();

  constructor(
    private readonly bounds: number[],
    names: RequestSeriesNames,
    registry: Registry,
  ) {
    const series = this.series;
    new Counter({
      name: names.total,
      help: names.totalHelp,
      labelNames: [...LABEL_NAMES, 'code'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of series.values()) for (const [code, n] of s.byCode) this.inc({ ...s.labels, code: String(code) }, n);
      },
    });
    new SeriesHistogram({ name: names.duration, help: names.durationHelp, labelNames: LABEL_NAMES, buckets: bounds, registers: [registry] }, () =>
      this.latencies(),
    );
  }

  /** Counts one finished request with `code`; `seconds` goes to the histogram unless undefined (a long-running request). */
  record(labels: RequestLabels, code: number, seconds: number | undefined): void {
    const key = `${labels.verb}\u0000${labels.dry_run}\u0000${labels.group}\u0000${labels.version}\u0000${labels.resource}\u0000${labels.subresource}\u0000${labels.scope}\u0000${labels.component}`;
    let s = this.series.get(key);
    if (s === undefined) {
      s = { labels: { ...labels }, byCode: new Map(), latency: new HistogramSeries(this.bounds) };
      this.series.set(key, s);
    }
    s.byCode.set(code, (s.byCode.get(code) ?? 0) + 1);
    if (seconds !== undefined) s.latency.observe(seconds);
  }

  private *latencies(): Iterable<LabelledSnapshot> {
    for (const s of this.series.values()) if (s.latency.observed > 0) yield { labels: s.labels, snapshot: s.latency.snapshot() };
  }
}
