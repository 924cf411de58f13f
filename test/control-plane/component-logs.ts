/** Reading the logs of kube-controller-manager, kube-scheduler and kwok (klog lines). */

/**
 * Stale-cache requeues per group resource: kube-controller-manager's consistency check logs
 * `read version: N is not as new as written version: M for group resource G` when a controller's
 * informer has not yet seen the controller's own write, and requeues it with back-off.
 */
export function countStaleCacheRequeues(log: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const m of log.matchAll(/is not as new as written version: \d+ for group resource ([\w.-]+)/g)) counts[m[1]] = (counts[m[1]] ?? 0) + 1;
  return counts;
}

/** klog error and warning lines (`E1129 ...`, `W1129 ...`) with their message, minus `ignore` patterns. */
export function errorLines(log: string, ignore: RegExp[] = []): string[] {
  return log
    .split('\n')
    .filter((l) => /^[EW]\d{4} /.test(l))
    .filter((l) => !ignore.some((re) => re.test(l)));
}
