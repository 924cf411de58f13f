/**
 * HorizontalPodAutoscaler conversion between autoscaling/v1 and autoscaling/v2 (the storage
 * version), as kube-apiserver converts through its internal type:
 *
 * - v1's `targetCPUUtilizationPercentage` is v2's Resource metric `cpu` with an Utilization target;
 *   a v1 object without it and without other metrics gets kube's 80% CPU default in v2;
 * - what v1 cannot hold travels in annotations, written as kube writes them (Go's `json.Marshal`):
 *   `autoscaling.alpha.kubernetes.io/metrics` (the other metric specs, in v1's metric shape),
 *   `.../current-metrics` (every metric status, v1 shape), `.../behavior` (the behavior in the
 *   internal type's Go field names) and `.../conditions` (the conditions);
 * - reading those annotations back, a value Go could not decode is ignored, as kube ignores it; the
 *   round-trip annotations (and the two tolerance ones) never reach a v2 object or storage.
 *
 * Both directions return new objects; inputs are not modified.
 */
import { GoDecodeError, goArray, goField, goInt32, goInt64, goMarshal, goObject, goQuantity, goString, goTime } from './go-json.js';
import { v1MetricSpecToV2, v1MetricStatusToV2, v2MetricSpecToV1, v2MetricStatusToV1 } from './hpa-metrics.js';
import { defaultHorizontalPodAutoscaler } from './hpa-defaults.js';
import type { Obj } from '../api/object-util.js';
import { isObject } from '../api/values.js';

export const METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/metrics';
export const CURRENT_METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/current-metrics';
export const BEHAVIOR_ANNOTATION = 'autoscaling.alpha.kubernetes.io/behavior';
export const CONDITIONS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/conditions';

/** Every annotation kube drops when an HPA enters or leaves its internal form. */
const ROUND_TRIP_ANNOTATIONS = [
  METRICS_ANNOTATION,
  BEHAVIOR_ANNOTATION,
  CURRENT_METRICS_ANNOTATION,
  CONDITIONS_ANNOTATION,
  'autoscaling.alpha.kubernetes.io/scale-down-tolerance',
  'autoscaling.alpha.kubernetes.io/scale-up-tolerance',
];

/** kube's CPU utilization target for an HPA that names no metric. */
const DEFAULT_CPU_UTILIZATION = 80;

function objAt(o: Obj, key: string): Obj {
  const v = o[key];
  return isObject(v) ? v : {};
}

function listAt(o: Obj, key: string): unknown[] {
  const v = o[key];
  return Array.isArray(v) ? v : [];
}

function put(out: Obj, key: string, value: unknown): void {
  if (value !== undefined) out[key] = value;
}

/** The object's metadata copied, with the round-trip annotations removed (and an emptied map dropped). */
function metadataWithoutRoundTrip(obj: Obj): Obj {
  const meta = structuredClone(objAt(obj, 'metadata'));
  if (isObject(meta.annotations)) {
    const annotations = meta.annotations;
    for (const key of ROUND_TRIP_ANNOTATIONS) delete annotations[key];
    if (Object.keys(annotations).length === 0) delete meta.annotations;
  }
  return meta;
}

/** Whether a v2 metric spec is the one v1 holds in `targetCPUUtilizationPercentage`. */
function cpuUtilizationTarget(metric: unknown): number | undefined {
  if (!isObject(metric) || metric.type !== 'Resource' || !isObject(metric.resource) || metric.resource.name !== 'cpu') return undefined;
  const value = objAt(metric.resource, 'target').averageUtilization;
  return typeof value === 'number' ? value : undefined;
}

function cpuUtilizationMetric(percent: number): Obj {
  return { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: percent } } };
}

function crossVersionRef(raw: unknown): Obj {
  const o = isObject(raw) ? raw : {};
  const out: Obj = { kind: typeof o.kind === 'string' ? o.kind : '', name: typeof o.name === 'string' ? o.name : '' };
  if (typeof o.apiVersion === 'string' && o.apiVersion !== '') out.apiVersion = o.apiVersion;
  return out;
}

/** A condition in the JSON both versions share (a zero time marshals as null). */
function condition(raw: unknown): Obj {
  const c = goObject(raw) ?? {};
  const out: Obj = {
    type: goString(goField(c, 'type')) ?? '',
    status: goString(goField(c, 'status')) ?? '',
    lastTransitionTime: goTime(goField(c, 'lastTransitionTime')),
  };
  const reason = goString(goField(c, 'reason'));
  if (reason !== undefined && reason !== '') out.reason = reason;
  const message = goString(goField(c, 'message'));
  if (message !== undefined && message !== '') out.message = message;
  return out;
}

/** Reads an annotation as Go's `json.Unmarshal` would, then converts it: undefined when absent or undecodable. */
function fromAnnotation<T>(annotations: Obj, key: string, convert: (decoded: unknown) => T): T | undefined {
  const text = annotations[key];
  if (typeof text !== 'string') return undefined;
  try {
    return convert(JSON.parse(text) as unknown);
  } catch (err) {
    if (err instanceof GoDecodeError || err instanceof SyntaxError) return undefined;
    throw err;
  }
}

// ---- behavior: v2 JSON <-> the internal type's Go field names ----------------------------------

function internalRules(raw: unknown): Obj | null {
  if (!isObject(raw)) return null;
  const policies = Array.isArray(raw.policies)
    ? raw.policies.map((p) =>
        isObject(p) ? { Type: p.type ?? '', Value: p.value ?? 0, PeriodSeconds: p.periodSeconds ?? 0 } : { Type: '', Value: 0, PeriodSeconds: 0 },
      )
    : null;
  return {
    StabilizationWindowSeconds: raw.stabilizationWindowSeconds ?? null,
    SelectPolicy: raw.selectPolicy ?? null,
    Policies: policies,
    Tolerance: raw.tolerance ?? null,
  };
}

function v2Rules(raw: unknown): Obj | undefined {
  const rules = goObject(raw);
  if (rules === undefined) return undefined;
  const out: Obj = {};
  put(out, 'stabilizationWindowSeconds', goInt32(goField(rules, 'StabilizationWindowSeconds')));
  put(out, 'selectPolicy', goString(goField(rules, 'SelectPolicy')));
  const policies = goArray(goField(rules, 'Policies'));
  if (policies !== undefined && policies.length > 0) {
    out.policies = policies.map((p) => {
      const policy = goObject(p) ?? {};
      return {
        type: goString(goField(policy, 'Type')) ?? '',
        value: goInt32(goField(policy, 'Value')) ?? 0,
        periodSeconds: goInt32(goField(policy, 'PeriodSeconds')) ?? 0,
      };
    });
  }
  put(out, 'tolerance', goQuantity(goField(rules, 'Tolerance')));
  return out;
}

/** The behavior annotation's value as a v2 behavior; undefined when it sets neither direction (kube ignores it then). */
function behaviorFromInternal(decoded: unknown): Obj | undefined {
  const behavior = goObject(decoded) ?? {};
  const scaleUp = v2Rules(goField(behavior, 'ScaleUp'));
  const scaleDown = v2Rules(goField(behavior, 'ScaleDown'));
  if (scaleUp === undefined && scaleDown === undefined) return undefined;
  const out: Obj = {};
  put(out, 'scaleUp', scaleUp);
  put(out, 'scaleDown', scaleDown);
  return out;
}

// ---- the two directions -------------------------------------------------------------------------

/** An autoscaling/v2 HPA as autoscaling/v1: v2-only fields move into the round-trip annotations. */
export function hpaV2ToV1(v2: Obj): Obj {
  const metadata = metadataWithoutRoundTrip(v2);
  const spec = objAt(v2, 'spec');
  const status = objAt(v2, 'status');
  const metrics = listAt(spec, 'metrics');

  const v1Spec: Obj = { scaleTargetRef: crossVersionRef(spec.scaleTargetRef) };
  put(v1Spec, 'minReplicas', spec.minReplicas ?? undefined);
  v1Spec.maxReplicas = spec.maxReplicas ?? 0;
  const cpuTarget = metrics.map(cpuUtilizationTarget).find((t) => t !== undefined);
  put(v1Spec, 'targetCPUUtilizationPercentage', cpuTarget);

  const v1Status: Obj = {};
  put(v1Status, 'observedGeneration', status.observedGeneration ?? undefined);
  put(v1Status, 'lastScaleTime', status.lastScaleTime ?? undefined);
  v1Status.currentReplicas = status.currentReplicas ?? 0;
  v1Status.desiredReplicas = status.desiredReplicas ?? 0;
  let currentCpu: number | undefined;
  for (const m of listAt(status, 'currentMetrics')) {
    if (!isObject(m) || m.type !== 'Resource' || !isObject(m.resource) || m.resource.name !== 'cpu') continue;
    const utilization = objAt(m.resource, 'current').averageUtilization;
    if (typeof utilization === 'number') currentCpu = utilization;
  }
  put(v1Status, 'currentCPUUtilizationPercentage', currentCpu);

  const added: Record<string, string> = {};
  const otherMetrics = metrics.filter((m) => cpuUtilizationTarget(m) === undefined).map(v2MetricSpecToV1);
  if (otherMetrics.length > 0) added[METRICS_ANNOTATION] = goMarshal(otherMetrics);
  const currentMetrics = listAt(status, 'currentMetrics');
  if (currentMetrics.length > 0) added[CURRENT_METRICS_ANNOTATION] = goMarshal(currentMetrics.map(v2MetricStatusToV1));
  if (isObject(spec.behavior)) {
    added[BEHAVIOR_ANNOTATION] = goMarshal({ ScaleUp: internalRules(spec.behavior.scaleUp), ScaleDown: internalRules(spec.behavior.scaleDown) });
  }
  const conditions = listAt(status, 'conditions');
  if (conditions.length > 0) added[CONDITIONS_ANNOTATION] = goMarshal(conditions.map(condition));
  if (Object.keys(added).length > 0) {
    const annotations: Obj = { ...(isObject(metadata.annotations) ? metadata.annotations : {}), ...added };
    // Go writes a map's keys sorted.
    metadata.annotations = Object.fromEntries(Object.entries(annotations).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
  return { kind: v2.kind, apiVersion: 'autoscaling/v1', metadata, spec: v1Spec, status: v1Status };
}

/**
 * An autoscaling/v1 HPA as autoscaling/v2: the CPU target and the round-trip annotations become
 * metrics, behavior, current metrics and conditions; then v2's defaults apply, as kube applies them
 * when it decodes the stored object.
 */
export function hpaV1ToV2(v1: Obj): Obj {
  const annotations = objAt(objAt(v1, 'metadata'), 'annotations');
  const metadata = metadataWithoutRoundTrip(v1);
  const spec = objAt(v1, 'spec');
  const status = objAt(v1, 'status');

  const v2Spec: Obj = { scaleTargetRef: crossVersionRef(spec.scaleTargetRef) };
  put(v2Spec, 'minReplicas', spec.minReplicas ?? undefined);
  v2Spec.maxReplicas = spec.maxReplicas ?? 0;
  const cpuTarget = typeof spec.targetCPUUtilizationPercentage === 'number' ? cpuUtilizationMetric(spec.targetCPUUtilizationPercentage) : undefined;
  let metrics: Obj[] = cpuTarget === undefined ? [] : [cpuTarget];
  const others = fromAnnotation(annotations, METRICS_ANNOTATION, (d) => (goArray(d) ?? []).map(v1MetricSpecToV2));
  if (others !== undefined) metrics = [...others, ...metrics];
  v2Spec.metrics = metrics.length > 0 ? metrics : [cpuUtilizationMetric(DEFAULT_CPU_UTILIZATION)];
  put(v2Spec, 'behavior', fromAnnotation(annotations, BEHAVIOR_ANNOTATION, behaviorFromInternal));

  const v2Status: Obj = {};
  put(v2Status, 'observedGeneration', goInt64(status.observedGeneration));
  put(v2Status, 'lastScaleTime', status.lastScaleTime ?? undefined);
  v2Status.currentReplicas = status.currentReplicas ?? 0;
  v2Status.desiredReplicas = status.desiredReplicas ?? 0;
  v2Status.currentMetrics =
    typeof status.currentCPUUtilizationPercentage === 'number'
      ? [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } } }]
      : null;
  const currentMetrics = fromAnnotation(annotations, CURRENT_METRICS_ANNOTATION, (d) => (goArray(d) ?? []).map(v1MetricStatusToV2));
  if (currentMetrics !== undefined) v2Status.currentMetrics = currentMetrics;
  const conditions = fromAnnotation(annotations, CONDITIONS_ANNOTATION, (d) => (goArray(d) ?? []).map(condition));
  if (conditions !== undefined && conditions.length > 0) v2Status.conditions = conditions;

  const v2: Obj = { kind: v1.kind, apiVersion: 'autoscaling/v2', metadata, spec: v2Spec, status: v2Status };
  defaultHorizontalPodAutoscaler(v2, 'v2');
  return v2;
}

/** An autoscaling/v2 HPA as it enters or leaves storage: only the round-trip annotations go. */
export function hpaV2ToV2(v2: Obj): Obj {
  return { ...structuredClone(v2), metadata: metadataWithoutRoundTrip(v2) };
}
