/**
 * Where requests' time went, from a server's own histograms. The APF queue wait
 * (`apiserver_flowcontrol_request_wait_duration_seconds`, which kube-apiserver and Capstan both
 * expose): the buckets of the requests that went on to execute (`execute="true"`), summed per
 * priority level; a call's latency minus its level's wait is the time it spent running. Capstan's
 * Redis commands and scripts, by command.
 */
import { parseHistogramBuckets, type Buckets } from './request-latency.js';

/** The queue-wait buckets of a /metrics text, per priority level (executed requests only). */
export function parseQueueWaitBuckets(metricsText: string): Buckets {
  return parseHistogramBuckets(metricsText, 'apiserver_flowcontrol_request_wait_duration_seconds', (labels) =>
    labels.get('execute') === 'true' ? (labels.get('priority_level') ?? '') : undefined,
  );
}

/**
 * Capstan's time per Redis command and script (`capstan_redis_request_duration_seconds`, from the
 * command's send to its reply, by command), summed per command; empty for other servers.
 */
export function parseRedisCommandBuckets(metricsText: string): Buckets {
  return parseHistogramBuckets(metricsText, 'capstan_redis_request_duration_seconds', (labels) => labels.get('command') ?? '');
}
