import type { ResourceInfo } from '../api/resource-info.js';
import type { Obj } from '../api/object-util.js';
import type { Storage } from '../storage/storage.js';
import { asObject } from '../api/values.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

const DEFAULT_CLASS_ANNOTATIONS = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'];
/** The pre-`storageClassName` way of naming a claim's class. */
const BETA_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/**
 * kube's DefaultStorageClass plugin: a PersistentVolumeClaim created without a class
 * (`spec.storageClassName` absent and no beta class annotation; an explicit `""` is a class) gets the
 * default StorageClass, the one annotated `is-default-class: "true"`; of several, the newest
 * (ties: the first by name). Without a default class the claim is left alone.
 */
export class DefaultStorageClass implements AdmissionPlugin {
  readonly name = 'DefaultStorageClass';

  constructor(private readonly storage: Storage) {}

  /** Claim creates only. */
  handles(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return operation === 'CREATE' && subresource === '' && info.group === '' && info.resource === 'persistentvolumeclaims';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.info.group !== '' || a.info.resource !== 'persistentvolumeclaims' || a.subresource !== '') return;
    const claim = a.object;
    if (claim === undefined) return;
    const spec = asObject(claim.spec);
    if (spec.storageClassName != null || BETA_CLASS_ANNOTATION in asObject(asObject(claim.metadata).annotations)) return;
    const chosen = await this.defaultClass();
    if (chosen === undefined) return;
    spec.storageClassName = chosen;
    claim.spec = spec;
  }

  private async defaultClass(): Promise<string | undefined> {
    const listed = await this.storage.list('storageclasses.storage.k8s.io');
    const defaults = listed.items
      .map((item) => asObject((JSON.parse(item.json) as Obj).metadata))
      .filter((meta) => DEFAULT_CLASS_ANNOTATIONS.some((key) => asObject(meta.annotations)[key] === 'true'))
      .map((meta) => ({ name: String(meta.name), created: Date.parse(String(meta.creationTimestamp)) || 0 }));
    defaults.sort((x, y) => (x.created === y.created ? (x.name < y.name ? -1 : 1) : y.created - x.created));
    return defaults[0]?.name;
  }
}
