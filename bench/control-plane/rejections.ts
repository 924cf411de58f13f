/**
 * Requests API Priority and Fairness answered with 429, from a server's own
 * `apiserver_flowcontrol_rejected_requests_total` counter (kube-apiserver and Capstan expose the same
 * series): counted per priority level and reason (`queue-full`, `time-out`, `concurrency-limit`).
 */
import { samplesOf } from './request-latency.js';

const REJECTED_LINE = /^apiserver_flowcontrol_rejected_requests_total\{([^}]*)\}\s+([0-9.eE+-]+)/;

/** Rejections by `level reason` (for example `workload-high queue-full`). */
export type Rejections = Map<string, number>;

/** The rejection counters of a /metrics text, summed per priority level and reason. */
export function parseRejections(metricsText: string): Rejections {
  const out: Rejections = new Map();
  for (const { labels, value } of samplesOf(metricsText, REJECTED_LINE)) {
    const key = `${labels.get('priority_level') ?? ''} ${labels.get('reason') ?? ''}`;
    out.set(key, (out.get(key) ?? 0) + value);
  }
  return out;
}

/** AFTER minus BEFORE per key, leaving out keys that did not grow. */
export function rejectionsBetween(before: Rejections, after: Rejections): Rejections {
  const out: Rejections = new Map();
  for (const [key, n] of after) {
    const grew = n - (before.get(key) ?? 0);
    if (grew > 0) out.set(key, grew);
  }
  return out;
}
