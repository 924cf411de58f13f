/**
 * Small statistics for benchmark samples: exact percentiles over arrays, and a log-bucket latency
 * histogram (2% resolution) that worker threads can fill cheaply and merge by adding counts.
 */

/** The q-quantile (0..1) of `values` by nearest rank; NaN when empty. Does not modify `values`. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

/** The median of `values`; NaN when empty. */
export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

/** The arithmetic mean of `values`; NaN when empty. */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/** Monotonic milliseconds on a clock shared by all threads and processes of the host (CLOCK_MONOTONIC). */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

const GROWTH = 1.02;
const LOG_GROWTH = Math.log(GROWTH);
/** Smallest resolved latency: 1 microsecond (in ms); everything below lands in bucket 0. */
const MIN_MS = 0.001;
/** Buckets cover 1 µs .. ~10 minutes. */
export const HISTOGRAM_BUCKETS = Math.ceil(Math.log(600_000 / MIN_MS) / LOG_GROWTH) + 1;

/** A new, empty histogram: counts per bucket. */
export function newHistogram(): Float64Array {
  return new Float64Array(HISTOGRAM_BUCKETS);
}

/** Records one latency in milliseconds (negative values count as 0). */
export function recordLatency(hist: Float64Array, ms: number): void {
  const v = ms > MIN_MS ? ms : MIN_MS;
  const i = Math.min(HISTOGRAM_BUCKETS - 1, Math.floor(Math.log(v / MIN_MS) / LOG_GROWTH));
  hist[i] = (hist[i] ?? 0) + 1;
}

/** Adds the counts of `from` into `into`. */
export function mergeHistogram(into: Float64Array, from: ArrayLike<number>): void {
  for (let i = 0; i < into.length && i < from.length; i++) into[i] = (into[i] ?? 0) + (from[i] ?? 0);
}

/** Total samples in a histogram. */
export function histogramCount(hist: ArrayLike<number>): number {
  let n = 0;
  for (let i = 0; i < hist.length; i++) n += hist[i] ?? 0;
  return n;
}

/** The q-quantile of a histogram as its bucket's upper bound (ms); NaN when empty. */
export function histogramPercentile(hist: ArrayLike<number>, q: number): number {
  const total = histogramCount(hist);
  if (total === 0) return Number.NaN;
  const target = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    seen += hist[i] ?? 0;
    if (seen >= target) return MIN_MS * GROWTH ** (i + 1);
  }
  return MIN_MS * GROWTH ** hist.length;
}
