import { isObject, metadataOf, stringField, type Obj } from '../api/object-util.js';
import type { PrinterColumn, ScalePaths } from '../api/resource-info.js';
import { stringElements } from '../api/values.js';

export type { PrinterColumn } from '../api/resource-info.js';

/**
 * The parts of a stored apiextensions.k8s.io/v1 CustomResourceDefinition that serving needs, narrowed
 * from the stored JSON. Narrowing never throws: a field of the wrong type reads as absent, so a
 * malformed stored object is served as far as it can be (validation keeps such objects out of the API).
 */

/** `spec.names` (or `status.acceptedNames`). */
export interface CrdNames {
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  shortNames: string[];
  categories: string[];
}

/** One entry of `spec.versions`. */
export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  /** `schema.openAPIV3Schema`, if any. */
  schema: Obj | undefined;
  status: boolean;
  scale: ScalePaths | undefined;
  printerColumns: PrinterColumn[];
  selectableFields: string[];
  deprecated: boolean;
  /** `deprecationWarning`, if set. */
  deprecationWarning: string | undefined;
}

/** A CRD as the controllers read it. */
export interface CrdModel {
  name: string;
  uid: string;
  group: string;
  namespaced: boolean;
  names: CrdNames;
  versions: CrdVersion[];
  deleting: boolean;
  finalizers: string[];
}

/** kube's finalizer that holds a CRD until its custom resources are deleted. */
export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/** `names` narrowed; `listKind` defaults to `<kind>List` as kube's defaulting does. */
export function namesOf(value: unknown): CrdNames {
  const n = isObject(value) ? value : {};
  const kind = stringField(n, 'kind');
  const listKind = stringField(n, 'listKind');
  const plural = stringField(n, 'plural');
  return {
    plural,
    singular: stringField(n, 'singular') || plural.toLowerCase(),
    kind,
    listKind: listKind || (kind ? `${kind}List` : ''),
    shortNames: stringElements(n.shortNames),
    categories: stringElements(n.categories),
  };
}

function printerColumnsOf(value: unknown): PrinterColumn[] {
  if (!Array.isArray(value)) return [];
  const out: PrinterColumn[] = [];
  for (const c of value) {
    if (!isObject(c)) continue;
    out.push({
      name: stringField(c, 'name'),
      type: stringField(c, 'type'),
      format: stringField(c, 'format'),
      description: stringField(c, 'description'),
      priority: typeof c.priority === 'number' ? c.priority : 0,
      jsonPath: stringField(c, 'jsonPath'),
    });
  }
  return out;
}

function versionOf(v: Obj): CrdVersion {
  const subresources = isObject(v.subresources) ? v.subresources : {};
  const scale = isObject(subresources.scale) ? subresources.scale : undefined;
  const schema = isObject(v.schema) && isObject(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : undefined;
  const selectable = Array.isArray(v.selectableFields) ? v.selectableFields.filter(isObject).map((f) => stringField(f, 'jsonPath').replace(/^\./, '')) : [];
  return {
    name: stringField(v, 'name'),
    served: v.served === true,
    storage: v.storage === true,
    schema,
    status: isObject(subresources.status),
    scale:
      scale === undefined
        ? undefined
        : {
            specReplicasPath: stringField(scale, 'specReplicasPath'),
            statusReplicasPath: stringField(scale, 'statusReplicasPath'),
            ...(typeof scale.labelSelectorPath === 'string' && scale.labelSelectorPath !== '' ? { labelSelectorPath: scale.labelSelectorPath } : {}),
          },
    printerColumns: printerColumnsOf(v.additionalPrinterColumns),
    selectableFields: selectable,
    deprecated: v.deprecated === true,
    deprecationWarning: typeof v.deprecationWarning === 'string' ? v.deprecationWarning : undefined,
  };
}

/** Reads a stored CRD object. */
export function crdModelOf(obj: Obj): CrdModel {
  const meta = metadataOf(obj);
  const spec = isObject(obj.spec) ? obj.spec : {};
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isObject).map(versionOf) : [];
  return {
    name: stringField(meta, 'name'),
    uid: stringField(meta, 'uid'),
    group: stringField(spec, 'group'),
    namespaced: stringField(spec, 'scope') !== 'Cluster',
    names: namesOf(spec.names),
    versions,
    deleting: meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null,
    finalizers: stringElements(meta.finalizers),
  };
}

/** The `storage: true` version's name ('' when there is none). */
export function storageVersionName(crd: CrdModel): string {
  return crd.versions.find((v) => v.storage)?.name ?? '';
}

/**
 * kube's version priority (`version.CompareKubeAwareVersionStrings`): GA before beta before alpha,
 * higher numbers first; versions that do not look like Kube versions last, alphabetically.
 */
export function compareKubeVersions(a: string, b: string): number {
  const parse = (v: string): [number, number, number] | undefined => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    const stage = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
    return [stage, Number(m[1]), m[3] === undefined ? 0 : Number(m[3])];
  };
  const pa = parse(a);
  const pb = parse(b);
  if (pa && !pb) return -1;
  if (!pa && pb) return 1;
  if (!pa || !pb) return a < b ? -1 : a > b ? 1 : 0;
  if (pa[0] !== pb[0]) return pb[0] - pa[0];
  if (pa[1] !== pb[1]) return pb[1] - pa[1];
  return pb[2] - pa[2];
}

/** kube's definition name prefix of a group: its DNS labels reversed (`example.com` -> `com.example`). */
export function definitionPrefix(group: string): string {
  return group.split('.').reverse().join('.');
}
