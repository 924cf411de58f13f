import { isObject } from '../../api/object-util.js';
import { validatePersistentVolume } from '../../validation/persistent-volume.js';
import { validatePersistentVolumeClaim } from '../../validation/persistent-volume-claim.js';
import { validateStorageClass } from '../../validation/storage-class.js';
import { fillDataSources, prepareClaimDataSources } from '../claim-data-sources.js';
import { defaultCSIDriver, defaultPersistentVolume, defaultPersistentVolumeClaim, defaultStorageClass } from '../defaults.js';
import type { KindStrategy } from '../kind-strategy.js';

/** Persistent volumes, claims and storage classes. */

export const persistentVolumes: KindStrategy = {
  defaults: defaultPersistentVolume,
  validate: validatePersistentVolume,
  tracksGeneration: false,
  createStatus: () => ({ phase: 'Pending' }),
};

export const persistentVolumeClaims: KindStrategy = {
  defaults: defaultPersistentVolumeClaim,
  validate: validatePersistentVolumeClaim,
  tracksGeneration: false,
  createStatus: () => ({ phase: 'Pending' }),
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

export const storageClasses: KindStrategy = { defaults: defaultStorageClass, validate: validateStorageClass };

export const csiDrivers: KindStrategy = { defaults: defaultCSIDriver };
