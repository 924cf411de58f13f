import { badRequest, invalid } from '../api/errors.js';
import type { ResourceInfo, ScalePaths } from '../api/resource-info.js';
import { strategyFor } from './strategies.js';
import { isObject, metadataOf, stringField, type Obj } from '../api/object-util.js';

import { SCALE_API_VERSION } from '../api/scale-kind.js';

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

/**
 * Where objects of a scalable type keep the replicas their Scale shows, per served version (kube's
 * ResourcePathMappings): every version of a custom type that has a scale subresource, its
 * specReplicasPath; a built-in's `.spec.replicas` in its one version (`servedApiVersion`).
 */
export function replicasPathsOf(info: Pick<ResourceInfo, 'custom' | 'scale'>, servedApiVersion: string): Map<string, string> {
  if (info.custom !== true) return new Map([[servedApiVersion, '.spec.replicas']]);
  return new Map(Object.entries(info.scale?.replicasPaths ?? {}));
}

/** The segments of a simple `.a.b.c` path. */
function pathSegments(path: string): string[] {
  return path
    .replace(/^\./, '')
    .split('.')
    .filter((s) => s !== '');
}

function readPath(obj: Obj, path: string): unknown {
  let v: unknown = obj;
  for (const seg of pathSegments(path)) {
    if (!isObject(v)) return undefined;
    v = v[seg];
  }
  return v;
}

function writePath(obj: Obj, path: string, value: unknown): void {
  const segs = pathSegments(path);
  let v: Obj = obj;
  for (const seg of segs.slice(0, -1)) {
    const next = v[seg];
    if (isObject(next)) v = next;
    else {
      const created: Obj = {};
      v[seg] = created;
      v = created;
    }
  }
  const last = segs[segs.length - 1];
  if (last !== undefined) v[last] = value;
}

/** kube's custom resource Scale: replicas and selector read from the CRD's paths (0 and '' when unset). */
function customScale(paths: ScalePaths, obj: Obj, scaleMeta: Obj): Obj {
  const specReplicas = readPath(obj, paths.specReplicasPath);
  const statusReplicas = readPath(obj, paths.statusReplicasPath);
  const selector = paths.labelSelectorPath === undefined ? undefined : readPath(obj, paths.labelSelectorPath);
  const status: Obj = { replicas: typeof statusReplicas === 'number' ? statusReplicas : 0 };
  if (typeof selector === 'string' && selector !== '') status.selector = selector;
  return {
    kind: 'Scale',
    apiVersion: SCALE_API_VERSION,
    metadata: scaleMeta,
    spec: typeof specReplicas === 'number' ? { replicas: specReplicas } : {},
    status,
  };
}

/** The Scale view of a scalable object of `info`'s version. */
export function toScale(info: ResourceInfo, obj: Obj): Obj {
  const meta = metadataOf(obj);
  const spec = isObject(obj.spec) ? obj.spec : {};
  const status = isObject(obj.status) ? obj.status : {};
  const scaleMeta: Obj = {};
  for (const k of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp']) if (meta[k] !== undefined) scaleMeta[k] = meta[k];
  if (info.custom === true && info.scale !== undefined) return customScale(info.scale, obj, scaleMeta);
  const isMap = strategyFor(info).scaleSelectorIsMap === true;
  return {
    kind: 'Scale',
    apiVersion: SCALE_API_VERSION,
    metadata: scaleMeta,
    spec: { replicas: typeof spec.replicas === 'number' ? spec.replicas : 1 },
    status: { replicas: typeof status.replicas === 'number' ? status.replicas : 0, selector: selectorString(spec.selector, isMap) },
  };
}

/** Applies a Scale's `spec.replicas` to `old`, an object of `info`'s version (a copy is returned). */
export function fromScale(info: ResourceInfo, scale: Obj, old: Obj): Obj {
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
  const custom = info.custom === true ? info.scale : undefined;
  if (custom !== undefined) writePath(result, custom.specReplicasPath, replicas);
  else {
    const resultSpec = isObject(result.spec) ? result.spec : {};
    resultSpec.replicas = replicas;
    result.spec = resultSpec;
  }
  metadataOf(result).resourceVersion = metadataOf(scale).resourceVersion ?? metadataOf(old).resourceVersion;
  return result;
}
