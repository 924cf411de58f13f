/** The request facts kube's long-running check reads. */
export interface LongRunningFacts {
  resourceRequest: boolean;
  verb: string;
  subresource: string;
}

const LONG_RUNNING_VERBS = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/**
 * kube-apiserver's long-running request check (BasicLongRunningRequestCheck with the verbs `watch`
 * and `proxy` and the subresources attach, exec, proxy, log and portforward): such requests are not
 * held to the in-flight limits, and APF sees only a watch's initialisation.
 */
export function isLongRunning(facts: LongRunningFacts): boolean {
  if (LONG_RUNNING_VERBS.has(facts.verb)) return true;
  return facts.resourceRequest && LONG_RUNNING_SUBRESOURCES.has(facts.subresource);
}
