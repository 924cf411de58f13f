import { parseDuration } from '../config/duration.js';

/**
 * The deadline of a request that is not long-running (kube's WithRequestDeadline): its `timeout`
 * parameter when that is a positive Go duration under `maxMs`, else `maxMs` (`--request-timeout`).
 */
export function requestDeadlineMs(query: URLSearchParams, maxMs: number): number {
  const timeout = query.get('timeout');
  if (timeout === null || timeout === '') return maxMs;
  let ms: number;
  try {
    ms = parseDuration(timeout);
  } catch {
    return maxMs;
  }
  return ms > 0 && ms < maxMs ? ms : maxMs;
}
