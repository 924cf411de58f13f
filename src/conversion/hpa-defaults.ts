import { isObject, type Obj } from '../api/object-util.js';
import { defaultPointer, objectAt } from '../api/field-defaults.js';

/*
 * kube's defaulting of HorizontalPodAutoscalers, here because the autoscaling/v1 conversion
 * (hpa-conversion.ts) applies it to the v2 object it builds, as kube's conversion does.
 */

function specOf(obj: Obj): Obj {
  const spec = objectAt(obj, 'spec') ?? {};
  obj.spec = spec;
  return spec;
}

/** HPA scaling rules: kube's rules for the direction, with each field the client set kept (in Go's field order). */
function scalingRules(from: unknown, defaults: Obj): Obj {
  const rules: Obj = {};
  for (const key of ['stabilizationWindowSeconds', 'selectPolicy', 'policies', 'tolerance']) {
    const own = isObject(from) ? from[key] : undefined;
    const value = own !== undefined && own !== null ? own : defaults[key];
    if (value !== undefined) rules[key] = value;
  }
  return rules;
}

/**
 * autoscaling/v2: minReplicas 1, a CPU utilization target of 80% when no metric is given, and a
 * given `behavior` completed with kube's scale-up and scale-down rules. autoscaling/v1 defaults
 * only minReplicas: its CPU default is applied in the conversion to v2 (src/conversion), as kube does.
 */
export function defaultHorizontalPodAutoscaler(hpa: Obj, version: string): void {
  const spec = specOf(hpa);
  defaultPointer(spec, 'minReplicas', 1);
  if (version === 'v1') return;
  const metrics = Array.isArray(spec.metrics) ? spec.metrics : [];
  if (metrics.length === 0) {
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];
  }
  const behavior = objectAt(spec, 'behavior');
  if (behavior !== undefined) {
    behavior.scaleUp = scalingRules(behavior.scaleUp, {
      stabilizationWindowSeconds: 0,
      selectPolicy: 'Max',
      policies: [
        { type: 'Pods', value: 4, periodSeconds: 15 },
        { type: 'Percent', value: 100, periodSeconds: 15 },
      ],
    });
    behavior.scaleDown = scalingRules(behavior.scaleDown, { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });
  }
}
