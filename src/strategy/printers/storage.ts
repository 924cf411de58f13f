/**
 * Printers of storage.k8s.io types: storage classes, volume attributes classes, volume
 * attachments, CSI drivers, nodes and storage capacities.
 */
import { ageColumn, col, nameColumn } from '../../codec/table-columns.js';
import { age, nameOf } from './format.js';
import { quantityOf } from '../../api/quantity.js';
import type { Obj, TablePrinter } from '../../codec/table-printer.js';
import { arrayField, booleanField, booleanFieldOrUndefined, objectField, stringField, stringFieldOrUndefined } from '../../api/values.js';
import { objs, strMap, strs } from './values.js';

export function annotation(o: Obj, key: string): string | undefined {
  return strMap(objectField(o, 'metadata'), 'annotations')[key];
}

export const storageClassPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Provisioner', 'string', 'The provisioner (volume plugin) of this storage class.'),
    col('ReclaimPolicy', 'string', 'The reclaim policy of dynamically provisioned volumes.'),
    col('VolumeBindingMode', 'string', 'When volumes are provisioned and bound.'),
    col('AllowVolumeExpansion', 'string', 'Whether volumes of this class can be expanded.'),
    ageColumn(),
  ],
  row(sc, now) {
    const isDefault =
      annotation(sc, 'storageclass.kubernetes.io/is-default-class') === 'true' || annotation(sc, 'storageclass.beta.kubernetes.io/is-default-class') === 'true';
    return {
      cells: [
        isDefault ? `${nameOf(sc)} (default)` : nameOf(sc),
        stringField(sc, 'provisioner'),
        stringFieldOrUndefined(sc, 'reclaimPolicy') ?? 'Delete',
        stringFieldOrUndefined(sc, 'volumeBindingMode') ?? 'Immediate',
        booleanField(sc, 'allowVolumeExpansion'),
        age(sc, now),
      ],
    };
  },
};

export const volumeAttributesClassPrinter: TablePrinter = {
  columns: [nameColumn(), col('DriverName', 'string', 'The CSI driver this class applies to.'), ageColumn()],
  row(vac, now) {
    const isDefault =
      annotation(vac, 'volumeattributesclass.alpha.kubernetes.io/is-default-class') === 'true' ||
      annotation(vac, 'volumeattributesclass.kubernetes.io/is-default-class') === 'true';
    return { cells: [isDefault ? `${nameOf(vac)} (default)` : nameOf(vac), stringField(vac, 'driverName'), age(vac, now)] };
  },
};

export const volumeAttachmentPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('Attacher', 'string', 'The volume driver that handles the attachment.', 0, 'name'),
    col('PV', 'string', 'The persistent volume to attach.'),
    col('Node', 'string', 'The node the volume is attached to.'),
    col('Attached', 'boolean', 'Whether the attach operation succeeded.'),
    ageColumn(),
  ],
  row(va, now) {
    const spec = objectField(va, 'spec');
    return {
      cells: [
        nameOf(va),
        stringField(spec, 'attacher'),
        stringFieldOrUndefined(objectField(spec, 'source'), 'persistentVolumeName') ?? '',
        stringField(spec, 'nodeName'),
        booleanField(objectField(va, 'status'), 'attached'),
        age(va, now),
      ],
    };
  },
};

export const csiNodePrinter: TablePrinter = {
  columns: [nameColumn(), col('Drivers', 'integer', 'Drivers indicates the number of CSI drivers registered on the node'), ageColumn()],
  row: (n, now) => ({ cells: [nameOf(n), arrayField(objectField(n, 'spec'), 'drivers').length, age(n, now)] }),
};

export const csiDriverPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('AttachRequired', 'boolean', 'Whether the driver requires an attach operation.'),
    col('PodInfoOnMount', 'boolean', 'Whether the driver needs pod information on mount.'),
    col('StorageCapacity', 'boolean', 'Whether the driver reports storage capacity.'),
    col('TokenRequests', 'string', 'Audiences of service account tokens passed to the driver.'),
    col('RequiresRepublish', 'boolean', 'Whether the driver wants NodePublishVolume called periodically.'),
    col('Modes', 'string', 'The volume lifecycle modes the driver supports.'),
    ageColumn(),
  ],
  row(d, now) {
    const spec = objectField(d, 'spec');
    const tokenRequests = Array.isArray(spec.tokenRequests)
      ? objs(spec, 'tokenRequests')
          .map((t) => stringField(t, 'audience'))
          .join(',')
      : '<unset>';
    return {
      cells: [
        nameOf(d),
        booleanFieldOrUndefined(spec, 'attachRequired') ?? true,
        booleanField(spec, 'podInfoOnMount'),
        booleanField(spec, 'storageCapacity'),
        tokenRequests,
        booleanField(spec, 'requiresRepublish'),
        strs(spec, 'volumeLifecycleModes').join(',') || '<none>',
        age(d, now),
      ],
    };
  },
};

export const csiStorageCapacityPrinter: TablePrinter = {
  columns: [
    nameColumn(),
    col('StorageClassName', 'string', 'The storage class the capacity applies to.'),
    col('Capacity', 'string', 'The available capacity.'),
  ],
  row: (c) => ({ cells: [nameOf(c), stringField(c, 'storageClassName'), quantityOf(c.capacity, '<unset>')] }),
};
