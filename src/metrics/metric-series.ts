import { performance } from 'node:perf_hooks';
import { Histogram, type HistogramConfiguration } from 'prom-client';

type HistogramObject = Awaited<ReturnType<Histogram['get']>>;
type HistogramValue = HistogramObject['values'][number];

declare module 'prom-client' {
  interface Histogram<T extends string = string> {
    /** What prom-client's registry renders as text when a metric has it (lib/histogram.js, lib/registry.js). */
    getForPromString(): Promise<Awaited<ReturnType<Histogram<T>['get']>>>;
  }
}

/** The bucket index of `value` among ascending upper bounds (the last index is +Inf). */
function bucketOf(bounds: readonly number[], value: number): number {
  for (let i = 0; i < bounds.length; i++) if (value <= bounds[i]) return i;
  return bounds.length;
}

/** Cumulative buckets, sum and count of one histogram series, ready to render. */
export interface HistogramSnapshot {
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * One histogram series kept as plain numbers: an observation is an array increment, with none of
 * prom-client's per-call label hashing (these are observed on every request).
 */
export class HistogramSeries {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  /** How many values were observed. */
  get observed(): number {
    return this.count;
  }

  observe(value: number): void {
    this.counts[bucketOf(this.bounds, value)]++;
    this.sum += value;
    this.count++;
  }

  snapshot(): HistogramSnapshot {
    let acc = 0;
    return { buckets: this.counts.map((c) => (acc += c)), sum: this.sum, count: this.count };
  }
}

/** Nanoseconds on a monotonic clock (fractional). */
function nowNs(): number {
  return performance.now() * 1e6;
}

/**
 * kube's timing ratio histogram: a value divided by a denominator, "observed at the end of every
 * nanosecond": each bucket counts the nanoseconds the ratio spent in it, the sum is the integral of
 * the ratio over time. A zero denominator counts the value itself.
 */
export class TimingRatioSeries {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;
  private value = 0;
  private last = nowNs();

  constructor(
    private readonly bounds: readonly number[],
    private denominator: number,
  ) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  private accumulate(): void {
    const now = nowNs();
    const dt = now - this.last;
    this.last = now;
    if (dt <= 0) return;
    const ratio = this.denominator > 0 ? this.value / this.denominator : this.value;
    this.counts[bucketOf(this.bounds, ratio)] += dt;
    this.sum += ratio * dt;
    this.count += dt;
  }

  set(value: number): void {
    if (value === this.value) return;
    this.accumulate();
    this.value = value;
  }

  add(delta: number): void {
    this.set(this.value + delta);
  }

  setDenominator(denominator: number): void {
    if (denominator === this.denominator) return;
    this.accumulate();
    this.denominator = denominator;
  }

  snapshot(): HistogramSnapshot {
    this.accumulate();
    let acc = 0;
    return { buckets: this.counts.map((c) => (acc += c)), sum: this.sum, count: this.count };
  }
}

/** One labelled series of a {@link SeriesHistogram}. */
export interface LabelledSnapshot {
  labels: Record<string, string>;
  snapshot: HistogramSnapshot;
}

/**
 * A prom-client Histogram whose series come from `source` at scrape time (HistogramSeries or
 * TimingRatioSeries kept by their owner), rendered exactly as prom-client renders its own
 * histograms, and summed across cluster workers like them.
 */
export class SeriesHistogram extends Histogram {
  private readonly bounds: readonly number[];
  private readonly seriesName: string;

  constructor(
    configuration: HistogramConfiguration<string> & { buckets: number[] },
    private readonly source: () => Iterable<LabelledSnapshot>,
  ) {
    super(configuration);
    this.bounds = configuration.buckets;
    this.seriesName = configuration.name;
  }

  override async get(): Promise<HistogramObject> {
    return this.getForPromString();
  }

  override async getForPromString(): Promise<HistogramObject> {
    const base = await super.getForPromString();
    const values: HistogramValue[] = [];
    for (const { labels: unsorted, snapshot } of this.source()) {
      const labels: Record<string, string> = {};
      for (const key of Object.keys(unsorted).sort()) labels[key] = unsorted[key];
      this.bounds.forEach((le, i) => values.push({ labels: { ...labels, le }, value: snapshot.buckets[i], metricName: `${this.seriesName}_bucket` }));
      values.push({ labels: { ...labels, le: '+Inf' }, value: snapshot.count, metricName: `${this.seriesName}_bucket` });
      values.push({ labels, value: snapshot.sum, metricName: `${this.seriesName}_sum` });
      values.push({ labels, value: snapshot.count, metricName: `${this.seriesName}_count` });
    }
    return { ...base, values };
  }
}
