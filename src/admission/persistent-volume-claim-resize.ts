import type { ResourceInfo } from '../api/resource-info.js';
import { forbidden } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import { compareQuantities } from '../api/quantity.js';
import type { Storage } from '../storage/storage.js';
import { asObject } from '../api/values.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

const CLAIMS = { group: '', resource: 'persistentvolumeclaims' };
const BETA_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** A claim's requested storage ("0" when none). */
function requestedStorage(claim: Obj | undefined): string {
  const value = asObject(asObject(asObject(claim?.spec).resources).requests).storage;
  return typeof value === 'string' ? value : '0';
}

/** A claim's class as kube's GetPersistentVolumeClaimClass reads it: the beta annotation first, then `spec.storageClassName`. */
function claimClass(claim: Obj | undefined): string {
  const annotations = asObject(asObject(claim?.metadata).annotations);
  if (BETA_CLASS_ANNOTATION in annotations) return String(annotations[BETA_CLASS_ANNOTATION]);
  const name = asObject(claim?.spec).storageClassName;
  return typeof name === 'string' ? name : '';
}

/**
 * kube's PersistentVolumeClaimResize plugin: an update that raises a claim's storage request is
 * refused (403) unless the claim is Bound and keeps a StorageClass with `allowVolumeExpansion: true`.
 */
export class PersistentVolumeClaimResize implements AdmissionPlugin {
  readonly name = 'PersistentVolumeClaimResize';

  constructor(private readonly storage: Storage) {}

  /** Claim updates only. */
  handles(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return operation === 'UPDATE' && subresource === '' && info.group === '' && info.resource === 'persistentvolumeclaims';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'UPDATE' || a.info.group !== '' || a.info.resource !== 'persistentvolumeclaims' || a.subresource !== '') return;
    if (a.object === undefined || a.oldObject === undefined) return;
    if ((compareQuantities(requestedStorage(a.object), requestedStorage(a.oldObject)) ?? 0) <= 0) return;
    if (asObject(a.oldObject.status).phase !== 'Bound') throw forbidden(CLAIMS, a.name, 'Only bound persistent volume claims can be expanded');
    if (!(await this.classAllowsExpansion(a.object, a.oldObject))) {
      throw forbidden(CLAIMS, a.name, 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
    }
  }

  private async classAllowsExpansion(claim: Obj, oldClaim: Obj): Promise<boolean> {
    const name = claimClass(claim);
    if (name === '' || name !== claimClass(oldClaim)) return false;
    const stored = await this.storage.get('storageclasses.storage.k8s.io', name);
    return stored !== undefined && (JSON.parse(stored.json) as Obj).allowVolumeExpansion === true;
  }
}
