import { badRequest, invalid } from '../api/errors.js';
import type { ResourceTarget } from './resource-target.js';
import { isObject, metadataOf, stringField, type Obj } from '../api/object-util.js';

/** The `scale` subresource speaks autoscaling/v1 Scale for every scalable built-in type. */
export const SCALE_API_VERSION = 'autoscaling/v1';

/** Renders a label selector object (matchLabels, matchExpressions) or an RC's map as a selector string. */
function selectorString(selector: unknown, isMap: boolean): string {
  if (!isObject(selector)) return '';
  if (isMap)
    return Object.entries(selector)
      .map(([k, v]) => `${k}=${String(v)}`)
      .sort()
      .join(',');
  const parts: string[] = [];
  if (isObject(selector.matchLabels)) {
    for (const [k, v] of Object.entries(selector.matchLabels).sort(([a], [b]) => a.localeCompare(b))) parts.push(`${k}=${String(v)}`);
  }
  if (Array.isArray(selector.matchExpressions)) {
    for (const e of selector.matchExpressions) {
      if (!isObject(e)) continue;
      const values = Array.isArray(e.values) ? (e.values as unknown[]).map((x) => String(x as string)).sort() : [];
      switch (e.operator) {
        case 'In':
          parts.push(`${String(e.key)} in (${values.join(',')})`);
          break;
        case 'NotIn':
          parts.push(`${String(e.key)} notin (${values.join(',')})`);
          break;
        case 'Exists':
          parts.push(String(e.key));
          break;
        case 'DoesNotExist':
          parts.push(`!${String(e.key)}`);
          break;
      }
    }
  }
  return parts.join(',');
}

/** The Scale view of a scalable object. */
export function toScale(r: ResourceTarget, obj: Obj): Obj {
  const meta = metadataOf(obj);
  const spec = isObject(obj.spec) ? obj.spec : {};
  const status = isObject(obj.status) ? obj.status : {};
  const scaleMeta: Obj = {};
  for (const k of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp']) if (meta[k] !== undefined) scaleMeta[k] = meta[k];
  const isRc = r.info.group === '' && r.info.resource === 'replicationcontrollers';
  return {
    kind: 'Scale',
    apiVersion: SCALE_API_VERSION,
    metadata: scaleMeta,
    spec: { replicas: typeof spec.replicas === 'number' ? spec.replicas : 1 },
    status: { replicas: typeof status.replicas === 'number' ? status.replicas : 0, selector: selectorString(spec.selector, isRc) },
  };
}

/** Applies a Scale's `spec.replicas` to the stored object (a copy is returned). */
export function fromScale(scale: Obj, old: Obj): Obj {
  const spec = isObject(scale.spec) ? scale.spec : {};
  const replicas = spec.replicas ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas)) {
    throw badRequest(
      `Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal ${typeof replicas} into Go struct field ScaleSpec.spec.replicas of type int32`,
    );
  }
  if (replicas < 0) {
    throw invalid('Scale', 'autoscaling', stringField(metadataOf(old), 'name'), [
      { reason: 'FieldValueInvalid', message: `Invalid value: ${replicas}: must be greater than or equal to 0`, field: 'spec.replicas' },
    ]);
  }
  const result = structuredClone(old);
  const resultSpec = isObject(result.spec) ? result.spec : {};
  resultSpec.replicas = replicas;
  result.spec = resultSpec;
  metadataOf(result).resourceVersion = metadataOf(scale).resourceVersion ?? metadataOf(old).resourceVersion;
  return result;
}
