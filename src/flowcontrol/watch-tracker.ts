/** What the watch tracker needs of a request (kube's RequestInfo fields). */
export interface TrackedRequest {
  verb: string;
  apiGroup: string;
  resource: string;
  namespace: string;
  name: string;
}

const READ_ONLY_VERBS = new Set(['get', 'list', 'watch', 'proxy']);

function keyOf(apiGroup: string, resource: string, namespace: string, name: string): string {
  return `${apiGroup}\u0000${resource}\u0000${namespace}\u0000${name}`;
}

/**
 * kube's watchTracker: counts the open watches by group, resource, namespace and name, so that the
 * mutating work estimator can charge a write for the watchers it will notify. As in kube, a watch of
 * pods restricted to one node (`fieldSelector=spec.nodeName=X`) is not counted: only that node's
 * pods reach it.
 */
export class WatchTracker {
  private readonly counts = new Map<string, number>();

  /**
   * Counts a started watch; returns the function that forgets it (undefined when it is not
   * counted). `nodeName` is the value of an exact `spec.nodeName` field selector of a pods watch.
   */
  register(request: TrackedRequest, nodeName: string | undefined): (() => void) | undefined {
    if (request.verb !== 'watch') return undefined;
    if (request.resource === 'pods' && nodeName !== undefined && nodeName !== '') return undefined;
    const key = keyOf(request.apiGroup, request.resource, request.namespace, request.name);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    let forgotten = false;
    return () => {
      if (forgotten) return;
      forgotten = true;
      const left = (this.counts.get(key) ?? 1) - 1;
      if (left <= 0) this.counts.delete(key);
      else this.counts.set(key, left);
    };
  }

  /** The watches a write of `request` notifies: those of its resource, its namespace and its object. */
  interestedWatches(request: TrackedRequest): number {
    if (READ_ONLY_VERBS.has(request.verb) || this.counts.size === 0) return 0;
    let result = this.counts.get(keyOf(request.apiGroup, request.resource, '', '')) ?? 0;
    if (request.namespace !== '') result += this.counts.get(keyOf(request.apiGroup, request.resource, request.namespace, '')) ?? 0;
    if (request.name !== '') result += this.counts.get(keyOf(request.apiGroup, request.resource, request.namespace, request.name)) ?? 0;
    return result;
  }
}
