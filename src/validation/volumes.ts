/**
 * kube 1.36's validation of a pod spec's `volumes` and of a container's `volumeMounts`: volume names
 * (DNS labels, unique), exactly one source per volume, the required fields and file modes of the
 * common sources (emptyDir, hostPath, secret, configMap, persistentVolumeClaim, nfs, downwardAPI,
 * projected), and mounts naming a declared volume at a unique path without '..' in sub-paths.
 * Cloud and legacy sources are checked for the one-source rule only.
 */
import type { StatusCause } from '../api/errors.js';
import { compareQuantities } from '../api/quantity.js';
import { duplicateField, forbiddenField, invalidField, notFoundField, notSupportedField, requiredField } from './field-errors.js';
import { isDNS1123Label } from './string-formats.js';
import { asString, numberOrUndefined, type Obj, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';

/** Volume source keys in kube's checking order, with the path name kube reports for a second source. */
const SOURCES: ReadonlyArray<readonly [string, string]> = [
  ['emptyDir', 'emptyDir'],
  ['hostPath', 'hostPath'],
  ['gitRepo', 'gitRepo'],
  ['gcePersistentDisk', 'gcePersistentDisk'],
  ['awsElasticBlockStore', 'awsElasticBlockStore'],
  ['secret', 'secret'],
  ['nfs', 'nfs'],
  ['iscsi', 'iscsi'],
  ['glusterfs', 'glusterfs'],
  ['flocker', 'flocker'],
  ['persistentVolumeClaim', 'persistentVolumeClaim'],
  ['rbd', 'rbd'],
  ['cinder', 'cinder'],
  ['cephfs', 'cephFS'],
  ['quobyte', 'quobyte'],
  ['downwardAPI', 'downwarAPI'],
  ['fc', 'fc'],
  ['flexVolume', 'flexVolume'],
  ['configMap', 'configMap'],
  ['azureFile', 'azureFile'],
  ['vsphereVolume', 'vsphereVolume'],
  ['photonPersistentDisk', 'photonPersistentDisk'],
  ['portworxVolume', 'portworxVolume'],
  ['azureDisk', 'azureDisk'],
  ['storageos', 'storageos'],
  ['projected', 'projected'],
  ['scaleIO', 'scaleIO'],
  ['csi', 'csi'],
  ['ephemeral', 'ephemeral'],
  ['image', 'image'],
];
const FILE_MODE = 'must be a number between 0 and 0777 (octal), both inclusive';
const HOST_PATH_TYPES = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'];

function fileModeCauses(mode: number | undefined, field: string): StatusCause[] {
  return mode !== undefined && (mode > 0o777 || mode < 0) ? [invalidField(field, mode, FILE_MODE)] : [];
}

/** validatePathNoBacksteps: no '..' element. */
function noBacksteps(path: string, field: string): StatusCause[] {
  return path.split('/').includes('..') ? [invalidField(field, path, "must not contain '..'")] : [];
}

/** validateLocalDescendingPath: relative, without '..'. */
export function localDescendingPath(path: string, field: string): StatusCause[] {
  const causes = path.startsWith('/') ? [invalidField(field, path, 'must be a relative path')] : [];
  return [...causes, ...noBacksteps(path, field)];
}

/** ValidateLocalNonReservedPath: a local descending path that does not start with '..'. */
function localNonReservedPath(path: string, field: string): StatusCause[] {
  const causes = localDescendingPath(path, field);
  if (path.startsWith('..') && !path.startsWith('../')) causes.push(invalidField(field, path, "must not start with '..'"));
  return causes;
}

function keyToPathCauses(items: unknown, field: string): StatusCause[] {
  return objects(items).flatMap((item, i) => {
    const at = `${field}.items[${i}]`;
    const causes: StatusCause[] = [];
    if (asString(item.key) === '') causes.push(requiredField(`${at}.key`));
    if (asString(item.path) === '') causes.push(requiredField(`${at}.path`));
    causes.push(...localNonReservedPath(asString(item.path), `${at}.path`), ...fileModeCauses(numberOrUndefined(item.mode), `${at}.mode`));
    return causes;
  });
}

/** The checks of one volume source's own fields (pod volumes; PersistentVolumes share hostPath and nfs). */
export function sourceCauses(key: string, source: Obj, field: string): StatusCause[] {
  switch (key) {
    case 'emptyDir': {
      const limit = source.sizeLimit;
      return typeof limit === 'string' && compareQuantities(limit, '0') === -1
        ? [forbiddenField(`${field}.sizeLimit`, 'SizeLimit field must be a valid resource quantity')]
        : [];
    }
    case 'hostPath': {
      const path = asString(source.path);
      if (path === '') return [requiredField(`${field}.path`)];
      const type = source.type;
      const causes = noBacksteps(path, `${field}.path`);
      if (typeof type === 'string' && !HOST_PATH_TYPES.includes(type)) causes.push(notSupportedField(`${field}.type`, type, HOST_PATH_TYPES));
      return causes;
    }
    case 'secret':
      return [
        ...(asString(source.secretName) === '' ? [requiredField(`${field}.secretName`)] : []),
        ...fileModeCauses(numberOrUndefined(source.defaultMode), `${field}.defaultMode`),
        ...keyToPathCauses(source.items, field),
      ];
    case 'configMap':
      return [
        ...(asString(source.name) === '' ? [requiredField(`${field}.name`)] : []),
        ...fileModeCauses(numberOrUndefined(source.defaultMode), `${field}.defaultMode`),
        ...keyToPathCauses(source.items, field),
      ];
    case 'persistentVolumeClaim':
      return asString(source.claimName) === '' ? [requiredField(`${field}.claimName`)] : [];
    case 'nfs': {
      const causes: StatusCause[] = [];
      if (asString(source.server) === '') causes.push(requiredField(`${field}.server`));
      if (asString(source.path) === '') causes.push(requiredField(`${field}.path`));
      if (!asString(source.path).startsWith('/')) causes.push(invalidField(`${field}.path`, asString(source.path), 'must be an absolute path'));
      return causes;
    }
    case 'downwardAPI':
    case 'projected':
      return fileModeCauses(numberOrUndefined(source.defaultMode), `${field}.defaultMode`);
    default:
      return [];
  }
}

/** validateVolumeSource: exactly one source, and that source's own checks. */
function volumeSourceCauses(volume: Obj, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  let count = 0;
  for (const [key, reportedAs] of SOURCES) {
    const source = objectOrUndefined(volume[key]);
    if (source === undefined) continue;
    if (count > 0 && key !== 'emptyDir') {
      causes.push(forbiddenField(`${field}.${reportedAs}`, 'may not specify more than 1 volume type'));
      continue;
    }
    count += 1;
    causes.push(...sourceCauses(key, source, `${field}.${key}`));
  }
  if (count === 0) causes.push(requiredField(field, 'must specify a volume type'));
  return causes;
}

/** ValidateVolumes: the causes, and the names of the volumes that are valid (mounts may name only those). */
export function validateVolumes(volumes: unknown, field: string): { causes: StatusCause[]; names: Set<string> } {
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  objects(volumes).forEach((volume, i) => {
    const at = `${field}[${i}]`;
    const name = asString(volume.name);
    const own = volumeSourceCauses(volume, at);
    if (name === '') own.push(requiredField(`${at}.name`));
    else own.push(...isDNS1123Label(name).map((msg) => invalidField(`${at}.name`, name, msg)));
    if (names.has(name)) own.push(duplicateField(`${at}.name`, name));
    if (own.length === 0) names.add(name);
    else causes.push(...own);
  });
  return { causes, names };
}

/** ValidateVolumeMounts for one container. */
export function validateVolumeMounts(mounts: unknown, volumeNames: Set<string>, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const paths = new Set<string>();
  objects(mounts).forEach((mount, i) => {
    const at = `${field}[${i}]`;
    const name = asString(mount.name);
    const mountPath = asString(mount.mountPath);
    if (name === '') causes.push(requiredField(`${at}.name`));
    if (!volumeNames.has(name)) causes.push(notFoundField(`${at}.name`, name));
    if (mountPath === '') causes.push(requiredField(`${at}.mountPath`));
    if (paths.has(mountPath)) causes.push(invalidField(`${at}.mountPath`, mountPath, 'must be unique'));
    paths.add(mountPath);
    const subPath = asString(mount.subPath);
    const subPathExpr = asString(mount.subPathExpr);
    if (subPath !== '') causes.push(...localDescendingPath(subPath, `${field}.subPath`));
    if (subPathExpr !== '') {
      if (subPath !== '') causes.push(invalidField(`${at}.subPathExpr`, subPathExpr, 'subPathExpr and subPath are mutually exclusive'));
      causes.push(...localDescendingPath(subPathExpr, `${field}.subPathExpr`));
    }
  });
  return causes;
}
