import { isObject } from '../../api/object-util.js';
import { validatePersistentVolume } from '../../validation/persistent-volume.js';
import { validatePersistentVolumeClaim } from '../../validation/persistent-volume-claim.js';
import { validateStorageClass } from '../../validation/storage-class.js';
import { fillDataSources, prepareClaimDataSources } from '../claim-data-sources.js';
import { defaultCSIDriver, defaultPersistentVolume, defaultPersistentVolumeClaim, defaultStorageClass } from '../defaults.js';
import type { KindStrategy } from '../kind-strategy.js';
import { persistentVolumeClaimPrinter, persistentVolumePrinter } from '../printers/core.js';
import {
  csiDriverPrinter,
  csiNodePrinter,
  csiStorageCapacityPrinter,
  storageClassPrinter,
  volumeAttachmentPrinter,
  volumeAttributesClassPrinter,
} from '../printers/storage.js';

/** Persistent volumes, claims and storage classes. */

export const persistentVolumes: KindStrategy = {
  printer: persistentVolumePrinter,
  defaults: defaultPersistentVolume,
  validate: validatePersistentVolume,
  tracksGeneration: false,
  createStatus: () => ({ phase: 'Pending' }),
  statusUpdatesMetadata: 'all',
};

export const persistentVolumeClaims: KindStrategy = {
  printer: persistentVolumeClaimPrinter,
  defaults: defaultPersistentVolumeClaim,
  validate: validatePersistentVolumeClaim,
  tracksGeneration: false,
  createStatus: () => ({ phase: 'Pending' }),
  statusUpdatesMetadata: 'all',
  // dataSource and dataSourceRef mirror each other as kube's strategy keeps them.
  prepareForCreate: (pvc) => {
    if (isObject(pvc.spec)) prepareClaimDataSources(pvc.spec);
  },
  prepareForUpdate: (next, old) => {
    if (!isObject(next.spec)) return;
    const oldSpec = isObject(old.spec) ? old.spec : undefined;
    prepareClaimDataSources(next.spec, oldSpec);
    // kube also normalizes the stored claim's data sources, so objects saved before compare alike.
    if (oldSpec !== undefined) fillDataSources(oldSpec);
  },
};

export const storageClasses: KindStrategy = { printer: storageClassPrinter, defaults: defaultStorageClass, validate: validateStorageClass };

export const csiDrivers: KindStrategy = { printer: csiDriverPrinter, defaults: defaultCSIDriver };
export const csiNodes: KindStrategy = { printer: csiNodePrinter };
export const csiStorageCapacities: KindStrategy = { printer: csiStorageCapacityPrinter };
export const volumeAttachments: KindStrategy = { printer: volumeAttachmentPrinter };
export const volumeAttributesClasses: KindStrategy = { printer: volumeAttributesClassPrinter };

/** This file's kinds by `group/resource` (the core group is empty). */
export const STORAGE_KINDS: Readonly<Record<string, KindStrategy>> = {
  '/persistentvolumes': persistentVolumes,
  '/persistentvolumeclaims': persistentVolumeClaims,
  'storage.k8s.io/storageclasses': storageClasses,
  'storage.k8s.io/csidrivers': csiDrivers,
  'storage.k8s.io/csinodes': csiNodes,
  'storage.k8s.io/csistoragecapacities': csiStorageCapacities,
  'storage.k8s.io/volumeattachments': volumeAttachments,
  'storage.k8s.io/volumeattributesclasses': volumeAttributesClasses,
};
