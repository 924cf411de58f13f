import type { ResourceInfo } from '../api/resource-info.js';
import { asObject } from '../api/values.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

/** The finalizers kube's pvc-protection and pv-protection controllers remove once the object is unused. */
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

/**
 * kube's StorageObjectInUseProtection plugin: a PersistentVolumeClaim or PersistentVolume created
 * without its protection finalizer gets it, so that deleting it waits until no scheduled pod uses the
 * claim / no claim is bound to the volume (the protection controllers then remove the finalizer).
 */
export class StorageObjectInUseProtection implements AdmissionPlugin {
  readonly name = 'StorageObjectInUseProtection';

  /** Creates of claims and volumes only. */
  handles(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return (
      operation === 'CREATE' &&
      subresource === '' &&
      ((info.group === '' && info.resource === 'persistentvolumeclaims') || (info.group === '' && info.resource === 'persistentvolumes'))
    );
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.info.group !== '' || a.subresource !== '' || a.object === undefined) return;
    const finalizer =
      a.info.resource === 'persistentvolumeclaims' ? PVC_PROTECTION_FINALIZER : a.info.resource === 'persistentvolumes' ? PV_PROTECTION_FINALIZER : undefined;
    if (finalizer === undefined) return;
    const metadata = asObject(a.object.metadata);
    const finalizers = Array.isArray(metadata.finalizers) ? (metadata.finalizers as unknown[]) : [];
    if (finalizers.includes(finalizer)) return;
    metadata.finalizers = [...finalizers, finalizer];
    a.object.metadata = metadata;
  }
}
