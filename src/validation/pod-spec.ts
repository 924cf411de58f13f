/**
 * kube 1.36's validation of Pods and of the pod specs inside templates (ValidatePodSpec,
 * ValidatePodTemplateSpec, ValidatePodCreate and ValidatePodUpdate), checked against
 * test/golden/validation/. A pod spec is validated after defaulting, as kube does, so fields kube
 * defaults (policies, grace period, probe thresholds) are only missing when the client set them null.
 *
 * On update a Pod may change only its container images, a lower activeDeadlineSeconds, added
 * tolerations and a negative grace period to 1; anything else is `spec: Forbidden` with kube's first
 * line. kube appends a diff of its internal Go structs to that message; Capstan appends its own list
 * of the changed fields instead.
 *
 * Affinity is checked in ./node-affinity.ts and ./pod-affinity.ts; topology spread constraints in
 * ./topology-spread.ts. DNS config and host aliases in ./pod-dns.ts; security contexts (sysctls,
 * seccomp and AppArmor profiles) in ./pod-security-context.ts and the matching annotations in
 * ./security-profile-annotations.ts; resource claims in ./resource-claims.ts; pod-level resources in
 * ./pod-resources.ts; the OS and user-namespace rules in ./pod-os.ts. Scheduling gates may only be
 * removed on update, and while a pod has them its nodeSelector and node affinity may gain entries
 * (./gated-pod-updates.ts); pod-specific annotations in ./pod-annotations.ts. Not checked yet:
 * ephemeral volumes' claim templates.
 */
import type { StatusCause } from '../api/errors.js';
import { jsonEqual } from '../api/object-util.js';
import { duplicateField, forbiddenField, invalidField, notSupportedField, requiredField } from './field-errors.js';
import {
  validateContainerImagesForPod,
  validateEphemeralContainers,
  validateInitContainers,
  validateRegularContainers,
  type ContainerContext,
} from './containers.js';
import { validateAnnotations, validateLabels } from './object-meta.js';
import { isDNS1123Label, isDNS1123Subdomain, isLabelKey, isLabelValue } from './string-formats.js';
import { INT32_MAX, inclusiveRangeError } from './value-formats.js';
import { gatedPodUpdateCauses } from './gated-pod-updates.js';
import { validateNodeAffinity } from './node-affinity.js';
import { validatePodAffinities } from './pod-affinity.js';
import { validateHostUsers, validatePodOS } from './pod-os.js';
import { validatePodResources } from './pod-resources.js';
import { usesHostUsers, validatePodSecurityContext } from './pod-security-context.js';
import { podClaimNames, validatePodResourceClaims } from './resource-claims.js';
import { hasInvalidDeletionCost, validatePodAnnotationUpdates, validatePodSpecificAnnotations } from './pod-annotations.js';
import { validateAnnotationsMatchFields } from './security-profile-annotations.js';
import { validateHostAliases, validatePodDNSConfig } from './pod-dns.js';
import { validateTopologySpreadConstraints } from './topology-spread.js';
import { validateVolumes } from './volumes.js';
import { asArray, asNumber, asObject, asString, numberOrUndefined, type Obj, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const PREEMPTION_POLICIES = ['PreemptLowerPriority', 'Never'];
const UPDATABLE_POD_SPEC_FIELDS = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
];

/** Whether a spec belongs to a Pod itself (stricter host-port and image checks) or to a template. */
export interface PodSpecOptions {
  resourceIsPod: boolean;
  /** The Pod's metadata (a template's spec has none): static pods may not have resource claims. */
  podMeta?: Obj;
  /** The stored Pod's spec, on an update: a seLinuxChangePolicy it had may stay any valid policy. */
  oldSpec?: Obj;
}

function enumCauses(field: string, value: string, supported: readonly string[]): StatusCause[] {
  if (value === '') return [requiredField(field)];
  return supported.includes(value) ? [] : [notSupportedField(field, value, supported)];
}

function nameCauses(field: string, value: unknown, check: (v: string) => string[]): StatusCause[] {
  const name = asString(value);
  return name === '' ? [] : check(name).map((msg) => invalidField(field, name, msg));
}

/** ValidateTolerations. */
export function validateTolerations(tolerations: unknown, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  objects(tolerations).forEach((t, i) => {
    const at = `${field}[${i}]`;
    const key = asString(t.key);
    const operator = asString(t.operator);
    const value = asString(t.value);
    const effect = asString(t.effect);
    if (key !== '') causes.push(...isLabelKey(key).map((msg) => invalidField(`${at}.key`, key, msg)));
    if (key === '' && operator !== 'Exists') {
      causes.push(invalidField(`${at}.operator`, operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    }
    if (numberOrUndefined(t.tolerationSeconds) !== undefined && effect !== 'NoExecute') {
      causes.push(invalidField(`${at}.effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (operator === 'Equal' || operator === '') {
      const problems = isLabelValue(value);
      if (problems.length > 0) causes.push(invalidField(`${at}.operator`, value, problems.join(';')));
    } else if (operator === 'Exists') {
      if (value !== '') causes.push(invalidField(`${at}.operator`, value, "value must be empty when `operator` is 'Exists'"));
    } else if (operator === 'Lt' || operator === 'Gt') {
      causes.push(notSupportedField(`${at}.operator`, operator, ['Equal', 'Exists', 'Lt', 'Gt']));
    } else {
      causes.push(notSupportedField(`${at}.operator`, operator, ['Equal', 'Exists']));
    }
    if (effect !== '' && !TAINT_EFFECTS.includes(effect)) causes.push(notSupportedField(`${at}.effect`, effect, TAINT_EFFECTS));
  });
  return causes;
}

/** validateReadinessGates: each condition type a qualified name. */
function validateReadinessGates(gates: unknown, field: string): StatusCause[] {
  return objects(gates).flatMap((gate, i) => {
    const type = asString(gate.conditionType);
    return isLabelKey(type).map((msg) => invalidField(`${field}[${i}].conditionType`, type, msg));
  });
}

/** validateSchedulingGates: qualified names, each once. */
function validateSchedulingGates(gates: unknown, field: string): StatusCause[] {
  const seen = new Set<string>();
  return objects(gates).flatMap((gate, i) => {
    const name = asString(gate.name);
    const causes = isLabelKey(name).map((msg) => invalidField(`${field}[${i}]`, name, msg));
    if (seen.has(name)) causes.push(duplicateField(`${field}[${i}]`, name));
    seen.add(name);
    return causes;
  });
}

/** validateOnlyDeletedSchedulingGates: an update may remove scheduling gates, not add them. */
function schedulingGateUpdateCauses(next: unknown, old: unknown, field: string): StatusCause[] {
  const oldNames = new Set(objects(old).map((g) => asString(g.name)));
  // kube reports each new name once, at the last index it appears at.
  const added = new Map<string, number>();
  objects(next).forEach((g, i) => {
    const name = asString(g.name);
    if (!oldNames.has(name)) added.set(name, i);
  });
  return [...added].map(([name, i]) => forbiddenField(`${field}[${i}].name`, `only deletion is allowed, but found new scheduling gate '${name}'`));
}

/** validatePodHostNetworkDeps: with hostNetwork, host ports equal container ports (0 allowed in templates). */
function hostNetworkCauses(spec: Obj, field: string, opts: PodSpecOptions): StatusCause[] {
  if (spec.hostNetwork !== true) return [];
  return objects(spec.containers).flatMap((c, ci) =>
    objects(c.ports).flatMap((p, pi) => {
      const hostPort = asNumber(p.hostPort);
      return (opts.resourceIsPod || hostPort !== 0) && hostPort !== asNumber(p.containerPort)
        ? [invalidField(`${field}.containers[${ci}].ports[${pi}].hostPort`, hostPort, 'must match `containerPort` when `hostNetwork` is true')]
        : [];
    }),
  );
}

/** hasRestartContainerForNonSidecarInitContainer: an init container without restartPolicy Always has a RestartContainer resize policy. */
function hasRestartContainerForNonSidecarInit(spec: Obj | undefined): boolean {
  return objects(spec?.initContainers).some((c) => c.restartPolicy !== 'Always' && objects(c.resizePolicy).some((p) => p.restartPolicy === 'RestartContainer'));
}

/** ValidatePodSpec at `field` (`spec`, `spec.template.spec`, ...). */
export function validatePodSpec(specValue: unknown, field: string, opts: PodSpecOptions): StatusCause[] {
  const spec = asObject(specValue);
  const causes: StatusCause[] = [];
  if (numberOrUndefined(spec.terminationGracePeriodSeconds) === undefined) causes.push(requiredField(`${field}.terminationGracePeriodSeconds`));
  const volumes = validateVolumes(spec.volumes, `${field}.volumes`);
  causes.push(...volumes.causes);
  const ctx: ContainerContext = {
    volumeNames: volumes.names,
    podClaims: podClaimNames(spec),
    hostUsers: usesHostUsers(spec),
    allowRestartContainerForNonSidecarInit: hasRestartContainerForNonSidecarInit(opts.oldSpec),
  };
  causes.push(...validatePodResourceClaims(spec, opts.podMeta, `${field}.resourceClaims`));
  causes.push(...validateRegularContainers(spec.containers, ctx, `${field}.containers`));
  causes.push(...validateInitContainers(spec.initContainers, spec.containers, ctx, `${field}.initContainers`));
  causes.push(...validateEphemeralContainers(spec.ephemeralContainers, spec.containers, spec.initContainers, ctx, `${field}.ephemeralContainers`));
  causes.push(...validatePodResources(spec, ctx.podClaims, field));
  causes.push(...hostNetworkCauses(spec, field, opts));
  causes.push(...enumCauses(`${field}.restartPolicy`, asString(spec.restartPolicy), RESTART_POLICIES));
  causes.push(...enumCauses(`${field}.dnsPolicy`, asString(spec.dnsPolicy), DNS_POLICIES));
  causes.push(...validateLabels(spec.nodeSelector, `${field}.nodeSelector`));
  const hadChangePolicy = typeof asObject(opts.oldSpec?.securityContext).seLinuxChangePolicy === 'string';
  causes.push(...validatePodSecurityContext(spec, field, hadChangePolicy));
  causes.push(...validateNodeAffinity(objectOrUndefined(spec.affinity)?.nodeAffinity, `${field}.affinity.nodeAffinity`));
  causes.push(...validatePodAffinities(spec.affinity, `${field}.affinity`));
  causes.push(...nameCauses(`${field}.serviceAccountName`, spec.serviceAccountName, isDNS1123Subdomain));
  causes.push(...nameCauses(`${field}.nodeName`, spec.nodeName, isDNS1123Subdomain));
  const deadline = numberOrUndefined(spec.activeDeadlineSeconds);
  if (deadline !== undefined && (deadline < 1 || deadline > INT32_MAX)) {
    causes.push(invalidField(`${field}.activeDeadlineSeconds`, deadline, inclusiveRangeError(1, INT32_MAX)));
  }
  causes.push(...nameCauses(`${field}.hostname`, spec.hostname, isDNS1123Label));
  causes.push(...nameCauses(`${field}.subdomain`, spec.subdomain, isDNS1123Label));
  causes.push(...validateTolerations(spec.tolerations, `${field}.tolerations`));
  causes.push(...validateTopologySpreadConstraints(spec.topologySpreadConstraints, `${field}.topologySpreadConstraints`));
  causes.push(...validateReadinessGates(spec.readinessGates, `${field}.readinessGates`));
  causes.push(...validateSchedulingGates(spec.schedulingGates, `${field}.schedulingGates`));
  causes.push(...validateHostUsers(spec, field));
  causes.push(...validatePodDNSConfig(spec.dnsConfig, asString(spec.dnsPolicy), `${field}.dnsConfig`));
  causes.push(...validateHostAliases(spec.hostAliases, `${field}.hostAliases`));
  causes.push(...nameCauses(`${field}.priorityClassName`, spec.priorityClassName, isDNS1123Subdomain));
  if (typeof spec.runtimeClassName === 'string')
    causes.push(...isDNS1123Subdomain(spec.runtimeClassName).map((msg) => invalidField(`${field}.runtimeClassName`, spec.runtimeClassName as string, msg)));
  if (typeof spec.preemptionPolicy === 'string') causes.push(...enumCauses(`${field}.preemptionPolicy`, spec.preemptionPolicy, PREEMPTION_POLICIES));
  causes.push(...validatePodOS(spec, field));
  return causes;
}

/** ValidatePodTemplateSpec: template labels and annotations, and its pod spec. */
export function validatePodTemplateSpec(templateValue: unknown, field: string): StatusCause[] {
  const template = asObject(templateValue);
  const meta = asObject(template.metadata);
  const spec = asObject(template.spec);
  const causes = [
    ...validateLabels(meta.labels, `${field}.labels`),
    ...validateAnnotations(meta.annotations, `${field}.annotations`),
    ...validatePodSpecificAnnotations(meta.annotations, spec, `${field}.annotations`),
    ...validatePodSpec(spec, `${field}.spec`, { resourceIsPod: false }),
    ...validateAnnotationsMatchFields(meta.annotations, spec, `${field}.spec`),
  ];
  if (asArray(asObject(template.spec).ephemeralContainers).length > 0) {
    causes.push(forbiddenField(`${field}.spec.ephemeralContainers`, 'ephemeral containers not allowed in pod template'));
  }
  return causes;
}

/** ValidateContainerUpdates: the same number of containers, each with an image. */
function containerUpdateCauses(next: unknown, old: unknown, field: string): { causes: StatusCause[]; stop: boolean } {
  const nextList = objects(next);
  if (nextList.length !== asArray(old).length) return { causes: [forbiddenField(field, 'pod updates may not add or remove containers')], stop: true };
  const causes: StatusCause[] = [];
  nextList.forEach((c, i) => {
    const image = asString(c.image);
    if (image === '') causes.push(requiredField(`${field}[${i}].image`));
    if (image.trim() !== image) causes.push(invalidField(`${field}[${i}].image`, image, 'must not have leading or trailing whitespace'));
  });
  return { causes, stop: false };
}

/** validateOnlyAddedTolerations: every old toleration is still there (its tolerationSeconds may change). */
function tolerationUpdateCauses(next: unknown, old: unknown, field: string): StatusCause[] {
  const nextList = objects(next);
  for (const o of objects(old)) {
    const kept = nextList.some((n) => jsonEqual({ ...o, tolerationSeconds: n.tolerationSeconds }, n));
    if (!kept) return [forbiddenField(field, 'existing toleration can not be modified except its tolerationSeconds')];
  }
  return validateTolerations(next, field);
}

/** The spec as kube compares it on update: the fields a Pod may change taken from the stored spec. */
function withUpdatableFieldsFrom(next: Obj, old: Obj): Obj {
  const munged: Obj = { ...next };
  for (const key of ['containers', 'initContainers'] as const) {
    const oldList = objects(old[key]);
    if (Array.isArray(next[key])) munged[key] = objects(next[key]).map((c, i) => ({ ...c, image: oldList[i]?.image }));
  }
  for (const key of ['activeDeadlineSeconds', 'schedulingGates', 'tolerations'] as const) {
    if (old[key] === undefined) delete munged[key];
    else munged[key] = old[key];
  }
  const oldGrace = numberOrUndefined(old.terminationGracePeriodSeconds);
  if (oldGrace !== undefined && oldGrace < 0 && next.terminationGracePeriodSeconds === 1) munged.terminationGracePeriodSeconds = oldGrace;
  return munged;
}

/** The changed top-level spec fields, one per line, as the detail of the `spec: Forbidden` error. */
function changedFields(next: Obj, old: Obj): string {
  const keys = [...new Set([...Object.keys(old), ...Object.keys(next)])].sort();
  return keys
    .filter((k) => !jsonEqual(next[k], old[k]))
    .map((k) => `  spec.${k}: ${JSON.stringify(old[k] ?? null)} -> ${JSON.stringify(next[k] ?? null)}`)
    .join('\n');
}

/** The spec rules of ValidatePodUpdate beyond validating the new spec. */
function podSpecUpdateCauses(next: Obj, old: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const key of ['containers', 'initContainers'] as const) {
    const result = containerUpdateCauses(next[key], old[key], `spec.${key}`);
    causes.push(...result.causes);
    if (result.stop) return causes;
  }
  const deadline = numberOrUndefined(next.activeDeadlineSeconds);
  const oldDeadline = numberOrUndefined(old.activeDeadlineSeconds);
  if (deadline !== undefined) {
    if (deadline < 0 || deadline > INT32_MAX) return [...causes, invalidField('spec.activeDeadlineSeconds', deadline, inclusiveRangeError(0, INT32_MAX))];
    if (oldDeadline !== undefined && oldDeadline < deadline) {
      return [...causes, invalidField('spec.activeDeadlineSeconds', deadline, 'must be less than or equal to previous value')];
    }
  } else if (oldDeadline !== undefined) {
    causes.push(invalidField('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'));
  }
  causes.push(...tolerationUpdateCauses(next.tolerations, old.tolerations, 'spec.tolerations'));
  causes.push(...schedulingGateUpdateCauses(next.schedulingGates, old.schedulingGates, 'spec.schedulingGates'));
  if (jsonEqual(next, old)) return causes;
  const munged = withUpdatableFieldsFrom(next, old);
  if (asArray(old.schedulingGates).length > 0) causes.push(...gatedPodUpdateCauses(munged, old));
  if (!jsonEqual(munged, old)) {
    causes.push(forbiddenField('spec', `pod updates may not change fields other than ${UPDATABLE_POD_SPEC_FIELDS.join(',')}\n${changedFields(munged, old)}`));
  }
  return causes;
}

/** A Pod's own checks beyond its metadata: ValidatePodCreate, or ValidatePodUpdate given the stored Pod. */
export function validatePod(pod: Obj, old?: Obj): StatusCause[] {
  const spec = asObject(pod.spec);
  const meta = asObject(pod.metadata);
  const causes = validatePodMetadataAndSpec(pod, old);
  if (old === undefined) {
    if (asArray(spec.ephemeralContainers).length > 0) causes.push(forbiddenField('spec.ephemeralContainers', 'cannot be set on create'));
    if (asString(spec.nodeName) !== '' && asArray(spec.schedulingGates).length > 0) {
      causes.push(forbiddenField('spec.nodeName', 'cannot be set until all schedulingGates have been cleared'));
    }
    causes.push(...validateAnnotationsMatchFields(meta.annotations, spec, 'spec'));
    return causes;
  }
  return [...causes, ...validatePodAnnotationUpdates(pod, old, 'metadata.annotations'), ...podSpecUpdateCauses(spec, asObject(old.spec))];
}

/**
 * kube's validatePodMetadataAndSpec, what every pod write checks (but the object metadata, checked
 * by the write path): the pod's annotations, its spec (`old`'s spec ratchets what was already
 * stored), image names, and no service account token volume without a service account.
 */
export function validatePodMetadataAndSpec(pod: Obj, old?: Obj): StatusCause[] {
  const spec = asObject(pod.spec);
  const meta = asObject(pod.metadata);
  const causes = [
    ...validatePodSpecificAnnotations(meta.annotations, spec, 'metadata.annotations', old !== undefined && hasInvalidDeletionCost(old)),
    ...validatePodSpec(spec, 'spec', { resourceIsPod: true, podMeta: meta, oldSpec: old === undefined ? undefined : asObject(old.spec) }),
    ...validateContainerImagesForPod(spec.containers, 'spec.containers'),
    ...validateContainerImagesForPod(spec.initContainers, 'spec.initContainers'),
  ];
  if (asString(spec.serviceAccountName) === '') {
    objects(spec.volumes).forEach((v, vi) => {
      objects(asObject(v.projected).sources).forEach((s, si) => {
        if (objectOrUndefined(s.serviceAccountToken) !== undefined) {
          causes.push(
            forbiddenField(`spec.volumes[${vi}].projected.sources[${si}].serviceAccountToken`, 'must not be specified when serviceAccountName is not set'),
          );
        }
      });
    });
  }
  return causes;
}
