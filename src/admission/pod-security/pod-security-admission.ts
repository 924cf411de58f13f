import type { ResourceInfo } from '../../api/resource-info.js';
import { forbidden, invalid } from '../../api/errors.js';
import type { Obj } from '../../api/object-util.js';
import type { Storage } from '../../storage/storage.js';
import { asObject } from '../../api/values.js';
import { objects } from '../../validation/value-access.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.js';
import { compareLevels, evaluatePod, levelVersionText, policyOf, sameLevelVersion, violationDetail, violationReasons, type LevelVersion } from './policy.js';
import { strategyFor } from '../../strategy/strategies.js';

/** Pod subresources PodSecurity never looks at. */
/** kube's audit annotation keys, prefixed with the plugin's name as kube's admission chain does. */
const ENFORCE_POLICY_ANNOTATION = 'pod-security.kubernetes.io/enforce-policy';
const AUDIT_VIOLATIONS_ANNOTATION = 'pod-security.kubernetes.io/audit-violations';

const IGNORED_POD_SUBRESOURCES = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);
/** How many existing pods a stricter enforce label is checked against (kube's default). */
const MAX_PODS_TO_CHECK = 3000;

/** Namespaces whose labels the plugin keeps parsed (it forgets them all past this many). */
const MAX_NAMESPACES_REMEMBERED = 10_000;

/**
 * kube's PodSecurity plugin with its default configuration (privileged everywhere unless namespace
 * labels say otherwise; no exemptions):
 * - Pods (creates, and updates that change an image or add an ephemeral container) violating the
 *   namespace's `enforce` level are refused with 403 `violates PodSecurity "restricted:latest": ...`;
 *   those violating its `warn` level get a `would violate PodSecurity ...` warning.
 * - Workloads with pod templates get the warning only.
 * - Namespaces with invalid labels are refused with 422; making `enforce` stricter warns about the
 *   existing pods that would now be refused.
 * Pod requests record kube's audit annotations: `pod-security.kubernetes.io/enforce-policy` (the
 * namespace's enforce level:version) and `pod-security.kubernetes.io/audit-violations` when the pod
 * breaks the namespace's audit level.
 */
export class PodSecurityAdmission implements AdmissionPlugin {
  readonly name = 'PodSecurity';

  constructor(private readonly storage: Storage) {}

  /** Namespaces, pods and the workloads with a pod template. */
  handles(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return (
      (operation === 'CREATE' || operation === 'UPDATE') &&
      ((info.group === '' && info.resource === 'namespaces') ||
        (info.group === '' && info.resource === 'pods') ||
        (subresource === '' && strategyFor(info).podTemplatePath !== undefined))
    );
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if ((a.operation !== 'CREATE' && a.operation !== 'UPDATE') || a.object === undefined) return;
    if (a.info.group === '' && a.info.resource === 'namespaces') return this.validateNamespace(a, a.object);
    if (a.info.group === '' && a.info.resource === 'pods') return this.validatePod(a, a.object);
    const path = strategyFor(a.info).podTemplatePath;
    if (path !== undefined && a.subresource === '') return this.validateWorkload(a, a.object, path);
  }

  /** Each namespace's labels as last read, with the stored text they came from (callers only read them). */
  private readonly labelsRead = new Map<string, { json: string; labels: Obj }>();

  private async namespaceLabels(name: string): Promise<Obj | undefined> {
    const stored = await this.storage.get('namespaces', name);
    if (stored === undefined) {
      this.labelsRead.delete(name);
      return undefined;
    }
    const known = this.labelsRead.get(name);
    if (known !== undefined && known.json === stored.json) return known.labels;
    const labels = asObject(asObject((JSON.parse(stored.json) as Obj).metadata).labels);
    if (this.labelsRead.size >= MAX_NAMESPACES_REMEMBERED) this.labelsRead.clear();
    this.labelsRead.set(name, { json: stored.json, labels });
    return labels;
  }

  private async validatePod(a: AdmissionAttributes, pod: Obj): Promise<void> {
    if (IGNORED_POD_SUBRESOURCES.has(a.subresource)) return;
    const labels = await this.namespaceLabels(a.namespace);
    if (labels === undefined) return;
    const { policy } = policyOf(labels);
    if (policy.enforce.level === 'privileged' && policy.audit.level === 'privileged' && policy.warn.level === 'privileged') {
      a.request?.annotate(ENFORCE_POLICY_ANNOTATION, 'privileged:latest');
      return;
    }
    if (a.operation === 'UPDATE' && a.oldObject !== undefined && !significantPodUpdate(pod, a.oldObject)) return;
    const meta = asObject(pod.metadata);
    const spec = asObject(pod.spec);
    a.request?.annotate(ENFORCE_POLICY_ANNOTATION, levelVersionText(policy.enforce));
    const enforced = evaluatePod(policy.enforce, meta, spec);
    const audited = sameLevelVersion(policy.audit, policy.enforce) ? enforced : evaluatePod(policy.audit, meta, spec);
    if (audited.length > 0) {
      a.request?.annotate(AUDIT_VIOLATIONS_ANNOTATION, `would violate PodSecurity "${levelVersionText(policy.audit)}": ${violationDetail(audited)}`);
    }
    if (enforced.length > 0) {
      throw forbidden({ group: '', resource: 'pods' }, a.name, `violates PodSecurity "${levelVersionText(policy.enforce)}": ${violationDetail(enforced)}`);
    }
    this.warn(a, policy.warn, sameLevelVersion(policy.warn, policy.enforce) ? [] : evaluatePod(policy.warn, meta, spec));
  }

  private async validateWorkload(a: AdmissionAttributes, object: Obj, path: readonly string[]): Promise<void> {
    const labels = await this.namespaceLabels(a.namespace);
    if (labels === undefined) return;
    const { policy } = policyOf(labels);
    if (policy.warn.level === 'privileged') return;
    let template: unknown = object;
    for (const key of path) template = asObject(template)[key];
    if (template === undefined || template === null) return;
    this.warn(a, policy.warn, evaluatePod(policy.warn, asObject(asObject(template).metadata), asObject(asObject(template).spec)));
  }

  private warn(a: AdmissionAttributes, lv: LevelVersion, violations: ReturnType<typeof evaluatePod>): void {
    if (violations.length > 0) a.request?.warn(`would violate PodSecurity "${levelVersionText(lv)}": ${violationDetail(violations)}`);
  }

  private async validateNamespace(a: AdmissionAttributes, namespace: Obj): Promise<void> {
    if (a.subresource !== '') return;
    const { policy, errors } = policyOf(asObject(asObject(namespace.metadata).labels));
    if (a.operation === 'CREATE') {
      if (errors.length > 0) throw invalid('Namespace', '', a.name, errors);
      return;
    }
    const old = policyOf(asObject(asObject(a.oldObject?.metadata).labels));
    if (errors.length > 0 && (old.errors.length === 0 || JSON.stringify(errors) !== JSON.stringify(old.errors))) {
      throw invalid('Namespace', '', a.name, errors);
    }
    const next = policy.enforce;
    const previous = old.policy.enforce;
    if (sameLevelVersion(next, previous) || next.level === 'privileged') return;
    if (next.version === previous.version && compareLevels(next.level, previous.level) < 1) return;
    for (const w of await this.existingPodWarnings(a.name, next)) a.request?.warn(w);
  }

  /** EvaluatePodsInNamespace: the existing pods a new enforce level would refuse, grouped by reasons. */
  private async existingPodWarnings(namespace: string, enforce: LevelVersion): Promise<string[]> {
    const listed = await this.storage.list('pods', { namespace });
    const pods = prioritized(listed.items.map((item) => JSON.parse(item.json) as Obj));
    const checked = pods.slice(0, MAX_PODS_TO_CHECK);
    const byReason = new Map<string, { first: string; count: number }>();
    for (const pod of checked) {
      const violations = evaluatePod(enforce, asObject(pod.metadata), asObject(pod.spec));
      if (violations.length === 0) continue;
      const reasons = violationReasons(violations);
      const name = String(asObject(pod.metadata).name);
      const seen = byReason.get(reasons);
      if (seen === undefined) byReason.set(reasons, { first: name, count: 1 });
      else {
        seen.count += 1;
        if (name < seen.first) seen.first = name;
      }
    }
    const warnings: string[] = [];
    if (checked.length < pods.length)
      warnings.push(`new PodSecurity enforce level only checked against the first ${checked.length} of ${pods.length} existing pods`);
    if (byReason.size > 0) warnings.push(`existing pods in namespace "${namespace}" violate the new PodSecurity enforce level "${levelVersionText(enforce)}"`);
    const podWarnings = [...byReason].map(([reasons, { first, count }]) => {
      if (count === 1) return `${first}: ${reasons}`;
      if (count === 2) return `${first} (and 1 other pod): ${reasons}`;
      return `${first} (and ${count - 1} other pods): ${reasons}`;
    });
    return [...warnings, ...podWarnings.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))];
  }
}

/** isSignificantPodUpdate: a container's image changed, or an ephemeral container was added or changed. */
function significantPodUpdate(pod: Obj, old: Obj): boolean {
  const spec = asObject(pod.spec);
  const oldSpec = asObject(old.spec);
  for (const key of ['containers', 'initContainers'] as const) {
    const now = objects(spec[key]);
    const before = objects(oldSpec[key]);
    if (now.length !== before.length) return true;
    if (now.some((c, i) => c.image !== before[i]?.image)) return true;
  }
  const oldEphemeral = objects(oldSpec.ephemeralContainers);
  return objects(spec.ephemeralContainers).some((c) => {
    const previous = oldEphemeral.find((o) => o.name === c.name);
    return previous === undefined || previous.image !== c.image;
  });
}

/** prioritizePods: one pod per controller first, then the other replicas. */
function prioritized(pods: Obj[]): Obj[] {
  const first: Obj[] = [];
  const replicas: Obj[] = [];
  const controllers = new Set<string>();
  for (const pod of pods) {
    const controller = objects(asObject(pod.metadata).ownerReferences).find((ref) => ref.controller === true);
    if (controller === undefined) first.push(pod);
    else if (controllers.has(String(controller.uid))) replicas.push(pod);
    else {
      first.push(pod);
      controllers.add(String(controller.uid));
    }
  }
  return [...first, ...replicas];
}
