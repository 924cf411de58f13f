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

/** Where a custom resource keeps what its Scale shows (a CRD version's `subresources.scale`). */
export interface CustomScalePaths {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

const customScales = new Map<string, CustomScalePaths>();

/**
 * Makes the Scale of objects of `apiVersion` and `kind` read and write the given paths (undefined:
 * back to the built-in layout). Process-wide, as served custom types are keyed by group and kind.
 */
export function setCustomScale(apiVersion: string, kind: string, paths: CustomScalePaths | undefined): void {
  if (paths === undefined) customScales.delete(`${apiVersion}/${kind}`);
  else customScales.set(`${apiVersion}/${kind}`, paths);
}

function customScaleOf(obj: Obj): CustomScalePaths | undefined {
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
  return customScales.get(`${apiVersion}/${kind}`);
}

/**
 * Where objects of `kind` in `group` keep the replicas their Scale shows, per served version
 * (kube's ResourcePathMappings): every version of a custom type that has a scale subresource, its
 * specReplicasPath; a built-in's `.spec.replicas` in its one version (`servedApiVersion`).
 */
export function replicasPathsOf(group: string, kind: string, custom: boolean, servedApiVersion: string): Map<string, string> {
  const out = new Map<string, string>();
  if (!custom) {
    out.set(servedApiVersion, '.spec.replicas');
    return out;
  }
  for (const [key, paths] of customScales) {
    const cut = key.lastIndexOf('/');
    const apiVersion = key.slice(0, cut);
    const slash = apiVersion.indexOf('/');
    if (key.slice(cut + 1) === kind && (slash < 0 ? '' : apiVersion.slice(0, slash)) === group) out.set(apiVersion, paths.specReplicasPath);
  }
  return out;
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
function customScale(paths: CustomScalePaths, obj: Obj, scaleMeta: Obj): Obj {
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

/** The Scale view of a scalable object. */
export function toScale(r: Pick<ResourceTarget, 'info'>, obj: Obj): Obj {
  const meta = metadataOf(obj);
  const spec = isObject(obj.spec) ? obj.spec : {};
  const status = isObject(obj.status) ? obj.status : {};
  const scaleMeta: Obj = {};
  for (const k of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp']) if (meta[k] !== undefined) scaleMeta[k] = meta[k];
  const custom = r.info.custom === true ? customScaleOf(obj) : undefined;
  if (custom !== undefined) return customScale(custom, obj, scaleMeta);
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
  const custom = customScaleOf(old);
  if (custom !== undefined) writePath(result, custom.specReplicasPath, replicas);
  else {
    const resultSpec = isObject(result.spec) ? result.spec : {};
    resultSpec.replicas = replicas;
    result.spec = resultSpec;
  }
  metadataOf(result).resourceVersion = metadataOf(scale).resourceVersion ?? metadataOf(old).resourceVersion;
  return result;
}
