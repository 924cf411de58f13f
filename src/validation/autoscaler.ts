/**
 * kube-apiserver 1.36's HorizontalPodAutoscaler (autoscaling/v2 and v1) validation beyond metadata, checked
 * against test/golden/validation/: replica bounds, the scale target reference, each metric (its type,
 * exactly one source, the metric identifier and target) and the scaling behavior. Objects arrive
 * defaulted (minReplicas 1, a CPU metric, completed behavior rules), as kube validates them. An
 * autoscaling/v1 object is checked as kube's conversion presents it (its CPU target as the one metric,
 * errors named by the v2 paths); the v1 metric and behavior annotations are not read yet.
 * Update checks are the create checks, except that an unchanged target kind and apiVersion are not
 * re-parsed and a stored minReplicas of 0 keeps 0 allowed (HPAScaleToZero is off). Not checked yet:
 * the update leniency for object metrics whose stored apiVersion was already invalid (Capstan never
 * stores one). Status writes check only that the replica counts are not negative.
 */
import type { StatusCause } from '../api/errors.js';
import { compareQuantities, quantityOf } from '../api/quantity.js';
import { forbiddenField, goJson, invalidField, notSupportedField, requiredField } from './field-errors.js';
import { validateContainerResourceName } from './resource-names.js';
import { isDNS1123Label, isPathSegmentName } from './string-formats.js';
import { nonNegative } from './value-formats.js';
import { asNumber, asObject, asString, numberOrUndefined, type Obj, objectOrUndefined } from '../api/values.js';
import { isSet, objects } from './value-access.js';

const MAX_PERIOD_SECONDS = 1800;
const MAX_STABILIZATION_WINDOW_SECONDS = 3600;
const METRIC_SOURCE_TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
const SELECT_POLICIES = ['Disabled', 'Max', 'Min'];
const SCALING_POLICY_TYPES = ['Percent', 'Pods'];
const TARGET_TYPES = ['Utilization', 'Value', 'AverageValue'];

/** How a cross-version object reference's apiVersion is checked. */
interface ReferenceOptions {
  allowEmptyGroup: boolean;
  allowInvalidApiVersion: boolean;
}

/** schema.ParseGroupVersion's verdict: the group, or the error text. */
function parseGroupVersion(apiVersion: string): { group: string } | { error: string } {
  if (apiVersion === '' || apiVersion === '/') return { group: '' };
  const parts = apiVersion.split('/');
  if (parts.length === 1) return { group: '' };
  if (parts.length === 2) return { group: parts[0] ?? '' };
  return { error: `unexpected GroupVersion string: ${apiVersion}` };
}

/** ValidateAPIVersion: the error text for a reference's apiVersion, if any. */
function apiVersionProblem(apiVersion: string, opts: ReferenceOptions): string | undefined {
  if (opts.allowInvalidApiVersion) return undefined;
  const parsed = parseGroupVersion(apiVersion);
  if ('error' in parsed) return parsed.error;
  return !opts.allowEmptyGroup && parsed.group === '' ? 'apiVersion must specify API group' : undefined;
}

/** ValidateCrossVersionObjectReference. */
function validateReference(ref: Obj, field: string, opts: ReferenceOptions): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const key of ['kind', 'name']) {
    const value = asString(ref[key]);
    if (value === '') causes.push(requiredField(`${field}.${key}`));
    else causes.push(...isPathSegmentName(value).map((msg) => invalidField(`${field}.${key}`, value, msg)));
  }
  const apiVersion = asString(ref.apiVersion);
  const problem = apiVersionProblem(apiVersion, opts);
  if (problem !== undefined) causes.push(invalidField(`${field}.apiVersion`, apiVersion, problem));
  return causes;
}

/** A quantity's sign (-1, 0, 1); an unparseable one counts as zero. */
function sign(quantity: unknown): number {
  return compareQuantities(quantityOf(quantity, '0'), '0') ?? 0;
}

/** validateMetricTarget. */
function validateTarget(target: Obj, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const type = asString(target.type);
  if (type === '') causes.push(requiredField(`${field}.type`, 'must specify a metric target type'));
  if (!TARGET_TYPES.includes(type)) causes.push(invalidField(`${field}.type`, goJson(type), 'must be either Utilization, Value, or AverageValue'));
  for (const key of ['value', 'averageValue']) {
    if (isSet(target[key]) && sign(target[key]) !== 1) causes.push(invalidField(`${field}.${key}`, quantityOf(target[key]), 'must be positive'));
  }
  const utilization = numberOrUndefined(target.averageUtilization);
  if (utilization !== undefined && utilization < 1) causes.push(invalidField(`${field}.averageUtilization`, utilization, 'must be greater than 0'));
  return causes;
}

/** validateMetricIdentifier. */
function validateMetricName(metric: Obj, field: string): StatusCause[] {
  const name = asString(metric.name);
  if (name === '') return [requiredField(`${field}.name`, 'must specify a metric name')];
  return isPathSegmentName(name).map((msg) => invalidField(`${field}.name`, name, msg));
}

/** The checks of a Resource or ContainerResource source's target: a utilization or a raw value, not both. */
function resourceTargetCauses(target: Obj, field: string): StatusCause[] {
  const causes = validateTarget(target, field);
  const hasUtilization = isSet(target.averageUtilization);
  const hasValue = isSet(target.averageValue);
  if (!hasUtilization && !hasValue) causes.push(requiredField(`${field}.averageUtilization`, 'must set either a target raw value or a target utilization'));
  if (hasUtilization && hasValue) causes.push(forbiddenField(`${field}.averageValue`, 'may not set both a target raw value and a target utilization'));
  return causes;
}

function validateObjectSource(src: Obj, field: string, opts: ReferenceOptions): StatusCause[] {
  const target = asObject(src.target);
  const causes = [
    ...validateReference(asObject(src.describedObject), `${field}.describedObject`, opts),
    ...validateMetricName(asObject(src.metric), `${field}.metric`),
    ...validateTarget(target, `${field}.target`),
  ];
  if (!isSet(target.value) && !isSet(target.averageValue)) {
    causes.push(requiredField(`${field}.target.averageValue`, 'must set either a target value or averageValue'));
  }
  return causes;
}

function validateExternalSource(src: Obj, field: string): StatusCause[] {
  const target = asObject(src.target);
  const causes = [...validateMetricName(asObject(src.metric), `${field}.metric`), ...validateTarget(target, `${field}.target`)];
  const hasValue = isSet(target.value);
  const hasAverage = isSet(target.averageValue);
  if (!hasValue && !hasAverage) causes.push(requiredField(`${field}.target.averageValue`, 'must set either a target value for metric or a per-pod target'));
  if (hasValue && hasAverage) causes.push(forbiddenField(`${field}.target.value`, 'may not set both a target value for metric and a per-pod target'));
  return causes;
}

function validatePodsSource(src: Obj, field: string): StatusCause[] {
  const target = asObject(src.target);
  const causes = [...validateMetricName(asObject(src.metric), `${field}.metric`), ...validateTarget(target, `${field}.target`)];
  if (!isSet(target.averageValue)) causes.push(requiredField(`${field}.target.averageValue`, 'must specify a positive target averageValue'));
  return causes;
}

function validateResourceSource(src: Obj, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (asString(src.name) === '') causes.push(requiredField(`${field}.name`, 'must specify a resource name'));
  return [...causes, ...resourceTargetCauses(asObject(src.target), `${field}.target`)];
}

function validateContainerResourceSource(src: Obj, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = asString(src.name);
  if (name === '') causes.push(requiredField(`${field}.name`, 'must specify a resource name'));
  else causes.push(...validateContainerResourceName(name, `${field}.name`));
  const container = asString(src.container);
  if (container === '') causes.push(requiredField(`${field}.container`, 'must specify a container'));
  else causes.push(...isDNS1123Label(container).map((msg) => invalidField(`${field}.container`, container, msg)));
  return [...causes, ...resourceTargetCauses(asObject(src.target), `${field}.target`)];
}

/** Metric source fields in the order kube looks at them, with the metric type each belongs to. */
const SOURCES: Array<{ key: string; type: string }> = [
  { key: 'object', type: 'Object' },
  { key: 'external', type: 'External' },
  { key: 'pods', type: 'Pods' },
  { key: 'resource', type: 'Resource' },
  { key: 'containerResource', type: 'ContainerResource' },
];

/** validateMetricSpec: a known type, its source present, and no other source (only the first present is checked). */
function validateMetric(metric: Obj, field: string, opts: ReferenceOptions): StatusCause[] {
  const causes: StatusCause[] = [];
  const type = asString(metric.type);
  if (type === '') causes.push(requiredField(`${field}.type`, 'must specify a metric source type'));
  const unsupported = notSupportedField(`${field}.type`, goJson(type), METRIC_SOURCE_TYPES);
  if (!METRIC_SOURCE_TYPES.includes(type)) causes.push(unsupported);
  const present = SOURCES.filter((s) => objectOrUndefined(metric[s.key]) !== undefined);
  const first = present[0];
  if (first !== undefined) {
    const src = asObject(metric[first.key]);
    const at = `${field}.${first.key}`;
    switch (first.key) {
      case 'object':
        causes.push(...validateObjectSource(src, at, opts));
        break;
      case 'external':
        causes.push(...validateExternalSource(src, at));
        break;
      case 'pods':
        causes.push(...validatePodsSource(src, at));
        break;
      case 'resource':
        causes.push(...validateResourceSource(src, at));
        break;
      default:
        causes.push(...validateContainerResourceSource(src, at));
    }
  }
  const expected = SOURCES.find((s) => s.type === type);
  if (expected === undefined) causes.push(unsupported);
  else if (objectOrUndefined(metric[expected.key]) === undefined) {
    causes.push(requiredField(`${field}.${expected.key}`, 'must populate information for the given metric source'));
  }
  if (present.length !== 1) {
    for (const s of present) if (s !== expected) causes.push(forbiddenField(`${field}.${s.key}`, 'must populate the given metric source only'));
  }
  return causes;
}

/** validateMetrics: each metric, and an Object or External one when scaling to zero. */
function validateMetrics(spec: Obj, opts: ReferenceOptions): StatusCause[] {
  const metrics = objects(spec.metrics);
  const causes = metrics.flatMap((m, i) => validateMetric(m, `spec.metrics[${i}]`, opts));
  const scalesOnObjects = metrics.some((m) => m.type === 'Object' || m.type === 'External');
  if (numberOrUndefined(spec.minReplicas) === 0 && !scalesOnObjects) {
    causes.push(forbiddenField('spec.metrics', 'must specify at least one Object or External metric to support scaling to zero replicas'));
  }
  return causes;
}

/** validateScalingRules for one direction (nothing to check when absent). */
function validateScalingRules(rulesValue: unknown, field: string): StatusCause[] {
  const rules = objectOrUndefined(rulesValue);
  if (rules === undefined) return [];
  const causes: StatusCause[] = [];
  const window = numberOrUndefined(rules.stabilizationWindowSeconds);
  if (window !== undefined && window < 0) causes.push(invalidField(`${field}.stabilizationWindowSeconds`, window, 'must be greater than or equal to zero'));
  if (window !== undefined && window > MAX_STABILIZATION_WINDOW_SECONDS) {
    causes.push(invalidField(`${field}.stabilizationWindowSeconds`, window, `must be less than or equal to ${MAX_STABILIZATION_WINDOW_SECONDS}`));
  }
  if (typeof rules.selectPolicy === 'string' && !SELECT_POLICIES.includes(rules.selectPolicy)) {
    causes.push(notSupportedField(`${field}.selectPolicy`, goJson(rules.selectPolicy), SELECT_POLICIES));
  }
  const policies = objects(rules.policies);
  if (policies.length === 0) causes.push(requiredField(`${field}.policies`, 'must specify at least one Policy'));
  policies.forEach((p, i) => {
    const at = `${field}.policies[${i}]`;
    const type = asString(p.type);
    if (!SCALING_POLICY_TYPES.includes(type)) causes.push(notSupportedField(`${at}.type`, goJson(type), SCALING_POLICY_TYPES));
    const value = numberOrUndefined(p.value) ?? 0;
    if (value <= 0) causes.push(invalidField(`${at}.value`, value, 'must be greater than zero'));
    const period = numberOrUndefined(p.periodSeconds) ?? 0;
    if (period <= 0) causes.push(invalidField(`${at}.periodSeconds`, period, 'must be greater than zero'));
    if (period > MAX_PERIOD_SECONDS) causes.push(invalidField(`${at}.periodSeconds`, period, `must be less than or equal to ${MAX_PERIOD_SECONDS}`));
  });
  if (isSet(rules.tolerance) && sign(rules.tolerance) < 0) {
    causes.push(invalidField(`${field}.tolerance`, quantityOf(rules.tolerance), 'must be greater than or equal to 0'));
  }
  return causes;
}

/** The v2 spec kube's conversion makes of an autoscaling/v1 spec (validation needs only its metrics). */
function v2SpecOfV1(spec: Obj): Obj {
  const { targetCPUUtilizationPercentage: target, ...rest } = spec;
  const averageUtilization = numberOrUndefined(target) ?? 80;
  return { ...rest, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization } } }] };
}

/** The spec as autoscaling/v2 has it, whichever version the object is in. */
function v2Spec(hpa: Obj): Obj {
  return hpa.apiVersion === 'autoscaling/v1' ? v2SpecOfV1(asObject(hpa.spec)) : asObject(hpa.spec);
}

/**
 * ValidateHorizontalPodAutoscaler / ...Update for autoscaling/v2 and v1 objects (`old` set on update), with
 * the options kube's strategy derives from the stored object.
 */
export function validateHorizontalPodAutoscaler(hpa: Obj, old?: Obj): StatusCause[] {
  const spec = v2Spec(hpa);
  const oldSpec = old === undefined ? undefined : v2Spec(old);
  const causes: StatusCause[] = [];
  const minReplicas = numberOrUndefined(spec.minReplicas);
  const maxReplicas = numberOrUndefined(spec.maxReplicas) ?? 0;
  const minLowerBound = oldSpec !== undefined && numberOrUndefined(oldSpec.minReplicas) === 0 ? 0 : 1;
  if (minReplicas !== undefined && minReplicas < minLowerBound) {
    causes.push(invalidField('spec.minReplicas', minReplicas, `must be greater than or equal to ${minLowerBound}`));
  }
  if (maxReplicas === 0) causes.push(requiredField('spec.maxReplicas', 'must be set and greater than 0'));
  else if (maxReplicas < 0) causes.push(invalidField('spec.maxReplicas', maxReplicas, 'must be greater than or equal to 1'));
  if (minReplicas !== undefined && maxReplicas < minReplicas) {
    causes.push(invalidField('spec.maxReplicas', maxReplicas, 'must be greater than or equal to `minReplicas`'));
  }
  const ref = asObject(spec.scaleTargetRef);
  const oldRef = oldSpec === undefined ? undefined : asObject(oldSpec.scaleTargetRef);
  const unchangedTarget = oldRef !== undefined && asString(oldRef.apiVersion) === asString(ref.apiVersion) && asString(oldRef.kind) === asString(ref.kind);
  causes.push(
    ...validateReference(ref, 'spec.scaleTargetRef', {
      allowInvalidApiVersion: unchangedTarget,
      allowEmptyGroup: !unchangedTarget && asString(ref.kind) === 'ReplicationController',
    }),
  );
  causes.push(...validateMetrics(spec, { allowEmptyGroup: true, allowInvalidApiVersion: false }));
  const behavior = objectOrUndefined(spec.behavior);
  if (behavior !== undefined) {
    causes.push(...validateScalingRules(behavior.scaleUp, 'spec.behavior.scaleUp'), ...validateScalingRules(behavior.scaleDown, 'spec.behavior.scaleDown'));
  }
  return causes;
}

/** ValidateHorizontalPodAutoscalerStatusUpdate: current and desired replicas not negative. */
export function validateHorizontalPodAutoscalerStatus(hpa: Obj): StatusCause[] {
  const status = asObject(hpa.status);
  return [
    ...nonNegative('status.currentReplicas', asNumber(status.currentReplicas)),
    ...nonNegative('status.desiredReplicas', asNumber(status.desiredReplicas)),
  ];
}
