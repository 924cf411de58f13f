/**
 * The garbage collection time a Node server has spent, read from its `/metrics`
 * (`nodejs_gc_duration_seconds`, every kind; a Capstan with `--workers` sums its workers). A
 * server that does not report it (kube-apiserver) gets undefined, and is not asked again.
 */
import type { SendRequest } from './verb-phases.js';

const SUM_LINE = /^nodejs_gc_duration_seconds_sum(?:\{[^}]*\})?\s+(\S+)\s*$/;

/** Seconds of garbage collection in a Prometheus text exposition; undefined without the metric. */
export function gcSecondsIn(text: string): number | undefined {
  let total: number | undefined;
  for (const line of text.split('\n')) {
    const m = SUM_LINE.exec(line);
    if (m === null) continue;
    const v = Number(m[1]);
    if (Number.isFinite(v)) total = (total ?? 0) + v;
  }
  return total;
}

/** Reads a server's garbage collection time, once it is known to report it; see the module comment. */
export class GcClock {
  private reports = true;

  constructor(private readonly send: SendRequest) {}

  /** Seconds so far, or undefined (not reported, or the scrape failed). */
  async read(): Promise<number | undefined> {
    if (!this.reports) return undefined;
    const res = await this.send('GET', '/metrics');
    const seconds = res.status === 200 ? gcSecondsIn(res.body) : undefined;
    if (seconds === undefined) this.reports = false;
    return seconds;
  }
}
