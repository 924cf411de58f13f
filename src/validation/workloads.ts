/**
 * kube 1.36's validation of the apps/v1 workloads, ReplicationControllers and PodTemplates beyond
 * their metadata (checked against test/golden/validation/): selectors (required, non-empty, valid,
 * matching the template's labels, immutable on update), counts non-negative, rollout strategies, the
 * pod template (restartPolicy Always, no activeDeadlineSeconds) and, for StatefulSets, which spec
 * fields an update may change.
 */
import type { StatusCause } from '../api/errors.js';
import { validateClaimSpec } from './persistent-volume-claim.js';
import { jsonEqual } from '../api/object-util.js';
import { forbiddenField, goJson, invalidField, notSupportedField, requiredField } from './field-errors.js';
import { labelsValue, selectorConverts, selectorMatches, selectorValue, selectsEverything, validateLabelSelector } from './label-selector.js';
import { validateAnnotations, validateLabels } from './object-meta.js';
import { validatePodTemplateSpec } from './pod-spec.js';
import { isDNS1123Label } from './string-formats.js';
import { intOrStringValue, nonNegative, percentProblems } from './value-formats.js';
import { asObject, asString, numberOrUndefined, type Obj, objectOrUndefined } from '../api/values.js';
import { isSet, objects, stringEntries } from './value-access.js';

const FIELD_IMMUTABLE = 'field is immutable';

/** An int-or-string as Go's JSON writes the internal intstr value (0 when unset). */
function intOrStringJson(v: unknown): number | string {
  return typeof v === 'string' || typeof v === 'number' ? v : 0;
}

/** ValidatePositiveIntOrPercent: a non-negative int or a valid percent string. */
export function positiveIntOrPercent(v: unknown, field: string): StatusCause[] {
  if (typeof v === 'string') return percentProblems(v).map((msg) => invalidField(field, v, msg));
  return nonNegative(field, typeof v === 'number' ? v : 0);
}

/** The value of an int-or-percent (the percentage for a valid percent, else the int, else 0). */
function intOrPercentValue(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && percentProblems(v).length === 0) return Number(v.slice(0, -1));
  return 0;
}

/** IsNotMoreThan100Percent: a valid percent string is at most 100% (ints are not checked). */
export function notMoreThan100Percent(v: unknown, field: string): StatusCause[] {
  return typeof v === 'string' && percentProblems(v).length === 0 && Number(v.slice(0, -1)) > 100
    ? [invalidField(field, v, 'must not be greater than 100%')]
    : [];
}

/** The template checks every replicated workload shares (ValidatePodTemplateSpecForReplicaSet and kin). */
function templateForReplicas(spec: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  const template = asObject(spec.template);
  const labels = asObject(template.metadata).labels;
  if (!selectsEverything(spec.selector) && !selectorMatches(spec.selector, labels)) {
    causes.push(invalidField('spec.template.metadata.labels', labelsValue(labels), '`selector` does not match template `labels`'));
  }
  return [...causes, ...validatePodTemplateSpec(template, 'spec.template')];
}

function alwaysRestartCauses(spec: Obj, kind: string): StatusCause[] {
  const podSpec = asObject(asObject(spec.template).spec);
  const causes: StatusCause[] = [];
  const restartPolicy = asString(podSpec.restartPolicy);
  if (restartPolicy !== 'Always') causes.push(notSupportedField('spec.template.spec.restartPolicy', restartPolicy, ['Always']));
  if (isSet(podSpec.activeDeadlineSeconds))
    causes.push(forbiddenField('spec.template.spec.activeDeadlineSeconds', `activeDeadlineSeconds in ${kind} is not Supported`));
  return causes;
}

/** Selector required, valid and non-empty; returns the causes and whether kube could convert it. */
function requiredSelector(spec: Obj, kindWord: string): { causes: StatusCause[]; converts: boolean } {
  const causes: StatusCause[] = [];
  if (!isSet(spec.selector)) causes.push(requiredField('spec.selector'));
  else {
    causes.push(...validateLabelSelector(spec.selector, 'spec.selector'));
    if (selectsEverything(spec.selector)) causes.push(invalidField('spec.selector', selectorValue(spec.selector), `empty selector is invalid for ${kindWord}`));
  }
  return { causes, converts: selectorConverts(spec.selector) };
}

function immutableSelector(next: Obj, old: Obj | undefined): StatusCause[] {
  if (old === undefined) return [];
  const a = selectorValue(asObject(next.spec).selector);
  return a.goSyntax === selectorValue(asObject(old.spec).selector).goSyntax ? [] : [invalidField('spec.selector', a, FIELD_IMMUTABLE)];
}

/** ReplicaSet and Deployment share the replica, selector and template rules. */
function replicaSetLikeSpec(spec: Obj, kind: string): StatusCause[] {
  const causes = [...nonNegative('spec.replicas', numberOrUndefined(spec.replicas))];
  if (kind === 'ReplicaSet') causes.push(...nonNegative('spec.minReadySeconds', numberOrUndefined(spec.minReadySeconds)));
  const selector = requiredSelector(spec, 'deployment');
  causes.push(...selector.causes);
  if (!selector.converts) causes.push(invalidField('spec.selector', selectorValue(spec.selector), 'invalid label selector'));
  else causes.push(...templateForReplicas(spec), ...alwaysRestartCauses(spec, 'ReplicaSet'));
  return causes;
}

function deploymentStrategyCauses(strategy: Obj): StatusCause[] {
  const type = asString(strategy.type);
  const rolling = objectOrUndefined(strategy.rollingUpdate);
  if (type === 'Recreate') {
    return rolling !== undefined ? [forbiddenField('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'")] : [];
  }
  if (type === 'RollingUpdate') {
    if (rolling === undefined) return [requiredField('spec.strategy.rollingUpdate', 'this should be defaulted and never be nil')];
    const at = 'spec.strategy.rollingUpdate';
    const causes = [...positiveIntOrPercent(rolling.maxUnavailable, `${at}.maxUnavailable`), ...positiveIntOrPercent(rolling.maxSurge, `${at}.maxSurge`)];
    if (intOrPercentValue(rolling.maxUnavailable) === 0 && intOrPercentValue(rolling.maxSurge) === 0) {
      causes.push(invalidField(`${at}.maxUnavailable`, intOrStringValue(rolling.maxUnavailable ?? 0), 'may not be 0 when `maxSurge` is 0'));
    }
    return [...causes, ...notMoreThan100Percent(rolling.maxUnavailable, `${at}.maxUnavailable`)];
  }
  const internal = {
    Type: type,
    RollingUpdate: rolling === undefined ? null : { MaxUnavailable: intOrStringJson(rolling.maxUnavailable), MaxSurge: intOrStringJson(rolling.maxSurge) },
  };
  return [notSupportedField('spec.strategy', goJson(internal), ['Recreate', 'RollingUpdate'])];
}

export function validateDeployment(d: Obj, old?: Obj): StatusCause[] {
  const spec = asObject(d.spec);
  const causes = replicaSetLikeSpec(spec, 'Deployment');
  causes.push(...deploymentStrategyCauses(asObject(spec.strategy)));
  const minReady = numberOrUndefined(spec.minReadySeconds) ?? 0;
  causes.push(...nonNegative('spec.minReadySeconds', minReady));
  causes.push(...nonNegative('spec.revisionHistoryLimit', numberOrUndefined(spec.revisionHistoryLimit)));
  const deadline = numberOrUndefined(spec.progressDeadlineSeconds);
  if (deadline !== undefined) {
    causes.push(...nonNegative('spec.progressDeadlineSeconds', deadline));
    if (deadline <= minReady) causes.push(invalidField('spec.progressDeadlineSeconds', deadline, 'must be greater than minReadySeconds'));
  }
  return [...causes, ...immutableSelector(d, old)];
}

export function validateReplicaSet(rs: Obj, old?: Obj): StatusCause[] {
  return [...replicaSetLikeSpec(asObject(rs.spec), 'ReplicaSet'), ...immutableSelector(rs, old)];
}

function statefulSetStrategyCauses(strategy: Obj): StatusCause[] {
  const type = asString(strategy.type);
  const rolling = objectOrUndefined(strategy.rollingUpdate);
  const internalRolling =
    rolling === undefined
      ? null
      : { Partition: numberOrUndefined(rolling.partition) ?? 0, MaxUnavailable: isSet(rolling.maxUnavailable) ? rolling.maxUnavailable : null };
  switch (type) {
    case '':
      return [requiredField('spec.updateStrategy')];
    case 'OnDelete':
      return rolling !== undefined
        ? [invalidField('spec.updateStrategy.rollingUpdate', goJson(internalRolling), "only allowed for updateStrategy 'RollingUpdate'")]
        : [];
    case 'RollingUpdate':
      return rolling !== undefined ? nonNegative('spec.updateStrategy.rollingUpdate.partition', numberOrUndefined(rolling.partition) ?? 0) : [];
    default:
      return [invalidField('spec.updateStrategy', goJson({ Type: type, RollingUpdate: internalRolling }), "must be 'RollingUpdate' or 'OnDelete'")];
  }
}

/** The volumes a StatefulSet's claim templates add to its pods (checked with the template's own). */
function withClaimTemplateVolumes(template: Obj, claims: Obj[]): Obj {
  if (claims.length === 0) return template;
  const spec = asObject(template.spec);
  const claimVolumes = claims.map((c) => ({
    name: asString(asObject(c.metadata).name),
    persistentVolumeClaim: { claimName: asString(asObject(c.metadata).name) },
  }));
  const names = new Set(claimVolumes.map((v) => v.name));
  const volumes = [...claimVolumes, ...objects(spec.volumes).filter((v) => !names.has(asString(v.name)))];
  return { ...template, spec: { ...spec, volumes } };
}

function statefulSetSpecCauses(spec: Obj, isUpdate: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  const policy = asString(spec.podManagementPolicy);
  if (policy === '') causes.push(requiredField('spec.podManagementPolicy'));
  else if (policy !== 'OrderedReady' && policy !== 'Parallel')
    causes.push(invalidField('spec.podManagementPolicy', policy, "must be 'OrderedReady' or 'Parallel'"));
  causes.push(...statefulSetStrategyCauses(asObject(spec.updateStrategy)));
  const retention = objectOrUndefined(spec.persistentVolumeClaimRetentionPolicy);
  if (retention !== undefined) {
    for (const key of ['whenDeleted', 'whenScaled']) {
      const v = asString(retention[key]);
      if (v !== 'Retain' && v !== 'Delete') causes.push(notSupportedField(`spec.persistentVolumeClaimRetentionPolicy.${key}`, v, ['Retain', 'Delete']));
    }
  }
  const claims = objects(spec.volumeClaimTemplates);
  if (!isUpdate) claims.forEach((c, i) => causes.push(...validateClaimSpec(asObject(c.spec), `spec.volumeClaimTemplates[${i}].spec`)));
  causes.push(...nonNegative('spec.replicas', numberOrUndefined(spec.replicas)));
  causes.push(...nonNegative('spec.minReadySeconds', numberOrUndefined(spec.minReadySeconds)));
  const ordinals = objectOrUndefined(spec.ordinals);
  if (ordinals !== undefined) causes.push(...nonNegative('spec.ordinals.start', numberOrUndefined(ordinals.start) ?? 0));
  const serviceName = asString(spec.serviceName);
  if (!isUpdate && serviceName !== '') causes.push(...isDNS1123Label(serviceName).map((msg) => invalidField('spec.serviceName', serviceName, msg)));
  const selector = requiredSelector(spec, 'statefulset');
  causes.push(...selector.causes);
  if (!selector.converts) causes.push(invalidField('spec.selector', selectorValue(spec.selector), ''));
  else {
    const template = asObject(spec.template);
    const checked = withClaimTemplateVolumes({ ...template, spec: { ...asObject(template.spec), hostname: undefined, subdomain: undefined } }, claims);
    const labels = asObject(template.metadata).labels;
    if (!selectsEverything(spec.selector) && !selectorMatches(spec.selector, labels)) {
      causes.push(invalidField('spec.template.metadata.labels', labelsValue(labels), '`selector` does not match template `labels`'));
    }
    causes.push(...validatePodTemplateSpec(checked, 'spec.template'));
    causes.push(
      ...validateLabels(labels, 'spec.template.labels'),
      ...validateAnnotations(asObject(template.metadata).annotations, 'spec.template.annotations'),
    );
  }
  return [...causes, ...alwaysRestartCauses(spec, 'StatefulSet')];
}

/** The StatefulSet spec fields an update may change (ValidateStatefulSetUpdate). */
const STATEFULSET_MUTABLE = [
  'replicas',
  'template',
  'updateStrategy',
  'minReadySeconds',
  'ordinals',
  'revisionHistoryLimit',
  'persistentVolumeClaimRetentionPolicy',
];

export function validateStatefulSet(sts: Obj, old?: Obj): StatusCause[] {
  const spec = asObject(sts.spec);
  const causes = statefulSetSpecCauses(spec, old !== undefined);
  if (old !== undefined) {
    const strip = (s: Obj): Obj => Object.fromEntries(Object.entries(s).filter(([k]) => !STATEFULSET_MUTABLE.includes(k)));
    if (!jsonEqual(strip(spec), strip(asObject(old.spec)))) {
      causes.push(
        forbiddenField(
          'spec',
          "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ),
      );
    }
  }
  return causes;
}

function daemonSetStrategyCauses(strategy: Obj): StatusCause[] {
  const type = asString(strategy.type);
  const rolling = objectOrUndefined(strategy.rollingUpdate);
  if (type === 'OnDelete') return [];
  if (type === 'RollingUpdate') {
    if (rolling === undefined) return [requiredField('spec.updateStrategy.rollingUpdate')];
    const at = 'spec.updateStrategy.rollingUpdate';
    const causes = [
      ...positiveIntOrPercent(rolling.maxUnavailable, `${at}.maxUnavailable`),
      ...positiveIntOrPercent(rolling.maxSurge, `${at}.maxSurge`),
      ...notMoreThan100Percent(rolling.maxUnavailable, `${at}.maxUnavailable`),
      ...notMoreThan100Percent(rolling.maxSurge, `${at}.maxSurge`),
    ];
    const unavailable = intOrPercentValue(rolling.maxUnavailable) !== 0;
    const surge = intOrPercentValue(rolling.maxSurge) !== 0;
    if (unavailable && surge) causes.push(invalidField(`${at}.maxSurge`, intOrStringValue(rolling.maxSurge), 'may not be set when maxUnavailable is non-zero'));
    if (!unavailable && !surge) causes.push(requiredField(`${at}.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
    return causes;
  }
  const internal = {
    Type: type,
    RollingUpdate: rolling === undefined ? null : { MaxUnavailable: intOrStringJson(rolling.maxUnavailable), MaxSurge: intOrStringJson(rolling.maxSurge) },
  };
  return [notSupportedField('spec.updateStrategy', goJson(internal), ['RollingUpdate', 'OnDelete'])];
}

export function validateDaemonSet(ds: Obj, old?: Obj): StatusCause[] {
  const spec = asObject(ds.spec);
  const causes = [...immutableSelector(ds, old), ...validateLabelSelector(spec.selector, 'spec.selector')];
  const template = asObject(spec.template);
  const labels = asObject(template.metadata).labels;
  if (selectorConverts(spec.selector) && !selectsEverything(spec.selector) && !selectorMatches(spec.selector, labels)) {
    causes.push(invalidField('spec.template.metadata.labels', labelsValue(labels), '`selector` does not match template `labels`'));
  }
  if (selectsEverything(spec.selector)) causes.push(invalidField('spec.selector', selectorValue(spec.selector), 'empty selector is invalid for daemonset'));
  causes.push(...validatePodTemplateSpec(template, 'spec.template'), ...alwaysRestartCauses(spec, 'DaemonSet'));
  causes.push(...nonNegative('spec.minReadySeconds', numberOrUndefined(spec.minReadySeconds)));
  causes.push(...daemonSetStrategyCauses(asObject(spec.updateStrategy)));
  causes.push(...nonNegative('spec.revisionHistoryLimit', numberOrUndefined(spec.revisionHistoryLimit)));
  return causes;
}

export function validateReplicationController(rc: Obj): StatusCause[] {
  const spec = asObject(rc.spec);
  const causes = [...nonNegative('spec.minReadySeconds', numberOrUndefined(spec.minReadySeconds))];
  const selector = stringEntries(spec.selector);
  if (selector.length === 0) causes.push(requiredField('spec.selector'));
  const replicas = numberOrUndefined(spec.replicas);
  if (replicas === undefined) causes.push(requiredField('spec.replicas'));
  else causes.push(...nonNegative('spec.replicas', replicas));
  const template = objectOrUndefined(spec.template);
  if (template === undefined) return [...causes, requiredField('spec.template')];
  const labels = new Map(stringEntries(asObject(template.metadata).labels));
  if (selector.length > 0 && !selector.every(([k, v]) => labels.get(k) === v)) {
    causes.push(invalidField('spec.template.metadata.labels', labelsValue(asObject(template.metadata).labels), '`selector` does not match template `labels`'));
  }
  causes.push(...validatePodTemplateSpec(template, 'spec.template'));
  const podSpec = asObject(template.spec);
  const restartPolicy = asString(podSpec.restartPolicy);
  if (restartPolicy !== 'Always') causes.push(notSupportedField('spec.template.spec.restartPolicy', restartPolicy, ['Always']));
  if (isSet(podSpec.activeDeadlineSeconds))
    causes.push(forbiddenField('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in ReplicationController is not Supported'));
  return causes;
}

export function validatePodTemplate(pt: Obj): StatusCause[] {
  return validatePodTemplateSpec(pt.template, 'template');
}
