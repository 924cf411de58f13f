import { isObject, type Obj } from '../api/object-util.js';

/**
 * What kube-apiserver 1.36's PersistentVolumeClaim strategy does to a claim's data sources before
 * validating and storing it (KEP 1495): a cross-namespace dataSourceRef is dropped (the
 * CrossNamespaceVolumeDataSource gate is off) unless the stored claim already had a dataSourceRef;
 * a legacy dataSource other than a PVC or VolumeSnapshot is silently ignored when no data source was
 * in use and no dataSourceRef is given; then dataSource and dataSourceRef fill each other.
 */

const hasRef = (spec: Obj | undefined, key: string): boolean => spec !== undefined && isObject(spec[key]);

/** A copy of a reference's kind, name and (when set) apiGroup. */
function localReference(from: Obj): Obj {
  const out: Obj = { kind: from.kind, name: from.name };
  if (typeof from.apiGroup === 'string') out.apiGroup = from.apiGroup;
  return out;
}

/** NormalizeDataSources: dataSource and dataSourceRef fill each other (a namespaced ref has no dataSource). */
export function fillDataSources(spec: Obj): void {
  const source = isObject(spec.dataSource) ? spec.dataSource : undefined;
  const ref = isObject(spec.dataSourceRef) ? spec.dataSourceRef : undefined;
  if (source !== undefined && ref === undefined) spec.dataSourceRef = localReference(source);
  else if (ref !== undefined && source === undefined && (typeof ref.namespace !== 'string' || ref.namespace === '')) {
    spec.dataSource = localReference(ref);
  }
}

/** The whole preparation of a new claim spec (`oldSpec` is the stored claim's, on update). */
export function prepareClaimDataSources(spec: Obj, oldSpec?: Obj): void {
  const ref = isObject(spec.dataSourceRef) ? spec.dataSourceRef : undefined;
  if (ref !== undefined && typeof ref.namespace === 'string' && ref.namespace !== '' && !hasRef(oldSpec, 'dataSourceRef')) delete spec.dataSourceRef;
  const inUse = hasRef(oldSpec, 'dataSource') || hasRef(oldSpec, 'dataSourceRef');
  const source = isObject(spec.dataSource) ? spec.dataSource : undefined;
  if (!inUse && !isObject(spec.dataSourceRef) && source !== undefined) {
    const group = typeof source.apiGroup === 'string' ? source.apiGroup : '';
    const pvcOrSnapshot =
      (source.kind === 'PersistentVolumeClaim' && group === '') || (source.kind === 'VolumeSnapshot' && group === 'snapshot.storage.k8s.io');
    if (!pvcOrSnapshot) delete spec.dataSource;
  }
  fillDataSources(spec);
}
