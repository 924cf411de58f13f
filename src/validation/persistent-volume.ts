/**
 * kube-apiserver 1.36's PersistentVolume validation beyond metadata (checked against
 * test/golden/validation/): access modes, a capacity of exactly a positive `storage`, the reclaim
 * policy, required node affinity, exactly one volume source (hostPath, nfs, local and csi checked
 * field by field here, the in-tree sources in pv-sources.ts; local needs node affinity), no Recycle of a hostPath '/', class names, volume mode,
 * and mount options only for the source types that take them. On update kube validates the new
 * volume twice (so every spec error is reported twice, as here), keeps the volume source immutable
 * (a CSI controllerExpandSecretRef may be added), and the volume mode and node affinity (beta
 * topology labels may move to their GA names).
 * In-tree cloud and legacy sources are checked by pv-sources.ts. An absent volumeMode reads as its
 * default, Filesystem, so a volume stored before defaulting compares as kube's would.
 */
import type { StatusCause } from '../api/errors.js';
import { compareQuantities, quantityIntegerValue } from '../api/quantity.js';
import { forbiddenField, goJson, invalidField, notSupportedField, requiredField, tooLongField } from './field-errors.js';
import { validateNodeSelector } from './node-affinity.js';
import { goVolumeNodeAffinity } from './node-selector.js';
import { FIELD_IMMUTABLE } from './object-meta.js';
import { ACCESS_MODES, VOLUME_MODES } from './persistent-volume-claim.js';
import { changedSpecFields, semanticEqual } from './semantic-equal.js';
import { isDNS1123Label, isDNS1123Subdomain } from './string-formats.js';
import { asObject, asString, type Obj, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';
import { sourceCauses } from './volumes.js';
import { legacySourceCauses } from './pv-sources.js';

const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'];
const MOUNT_OPTIONS_ANNOTATION = 'volume.beta.kubernetes.io/mount-options';

/** PV source keys in kube's checking order, with the path a second source is reported at and its own checks' path. */
const SOURCES: ReadonlyArray<readonly [key: string, reportedAs: string, checkedAt: string]> = [
  ['hostPath', 'hostPath', 'hostPath'],
  ['gcePersistentDisk', 'gcePersistentDisk', 'persistentDisk'],
  ['awsElasticBlockStore', 'awsElasticBlockStore', 'awsElasticBlockStore'],
  ['glusterfs', 'glusterfs', 'glusterfs'],
  ['flocker', 'flocker', 'flocker'],
  ['nfs', 'nfs', 'nfs'],
  ['rbd', 'rbd', 'rbd'],
  ['quobyte', 'quobyte', 'quobyte'],
  ['cephfs', 'cephFS', 'cephfs'],
  ['iscsi', 'iscsi', 'iscsi'],
  ['cinder', 'cinder', 'cinder'],
  ['fc', 'fc', 'fc'],
  ['flexVolume', 'flexVolume', 'flexVolume'],
  ['azureFile', 'azureFile', 'azureFile'],
  ['vsphereVolume', 'vsphereVolume', 'vsphereVolume'],
  ['photonPersistentDisk', 'photonPersistentDisk', 'photonPersistentDisk'],
  ['portworxVolume', 'portworxVolume', 'portworxVolume'],
  ['azureDisk', 'azureDisk', 'azureDisk'],
  ['scaleIO', 'scaleIO', 'scaleIO'],
  ['local', 'local', 'local'],
  ['storageos', 'storageos', 'storageos'],
  ['csi', 'csi', 'csi'],
];

/** Sources whose volumes take mount options. */
const MOUNT_OPTION_SOURCES = [
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'glusterfs',
  'nfs',
  'rbd',
  'quobyte',
  'iscsi',
  'cinder',
  'cephfs',
  'azureFile',
  'vsphereVolume',
  'azureDisk',
  'photonPersistentDisk',
];

/** Labels a node affinity may move from their beta name to their GA name. */
const BETA_TO_GA_LABEL: Record<string, string> = {
  'failure-domain.beta.kubernetes.io/zone': 'topology.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region': 'topology.kubernetes.io/region',
  'beta.kubernetes.io/os': 'kubernetes.io/os',
  'beta.kubernetes.io/arch': 'kubernetes.io/arch',
  'beta.kubernetes.io/instance-type': 'node.kubernetes.io/instance-type',
};

function secretReferenceCauses(ref: Obj, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = asString(ref.name);
  if (name === '') causes.push(requiredField(`${at}.name`));
  else causes.push(...isDNS1123Subdomain(name).map((m) => invalidField(`${at}.name`, name, m)));
  const namespace = asString(ref.namespace);
  if (namespace === '') causes.push(requiredField(`${at}.namespace`));
  else causes.push(...isDNS1123Label(namespace).map((m) => invalidField(`${at}.namespace`, namespace, m)));
  return causes;
}

function csiCauses(csi: Obj, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const driver = asString(csi.driver);
  if (driver === '') causes.push(requiredField(`${at}.driver`));
  else {
    if (Buffer.byteLength(driver) > 63) causes.push(tooLongField(`${at}.driver`, 63));
    causes.push(...isDNS1123Subdomain(driver.toLowerCase()).map((m) => invalidField(`${at}.driver`, driver, m)));
  }
  if (asString(csi.volumeHandle) === '') causes.push(requiredField(`${at}.volumeHandle`));
  for (const key of ['controllerPublishSecretRef', 'controllerExpandSecretRef', 'nodePublishSecretRef', 'nodeExpandSecretRef']) {
    const ref = objectOrUndefined(csi[key]);
    if (ref !== undefined) causes.push(...secretReferenceCauses(ref, `${at}.${key}`));
  }
  return causes;
}

function ownSourceCauses(key: string, source: Obj, pvName: string, at: string): StatusCause[] {
  switch (key) {
    case 'hostPath':
    case 'nfs':
      return sourceCauses(key, source, at);
    case 'local': {
      const path = asString(source.path);
      if (path === '') return [requiredField(`${at}.path`)];
      return path.split('/').includes('..') ? [invalidField(`${at}.path`, path, "must not contain '..'")] : [];
    }
    case 'csi':
      return csiCauses(source, at);
    default:
      return legacySourceCauses(key, source, pvName, at);
  }
}

/** The Go JSON of a ResourceList (keys sorted, quantities as their text). */
function goResourceList(v: unknown): unknown {
  const o = objectOrUndefined(v);
  if (o === undefined) return null;
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, o[k]]),
  );
}

/** Go's path.Clean(p) === "/" for an absolute path. */
function cleansToRoot(p: string): boolean {
  return p.startsWith('/') && p.split('/').every((part) => part === '' || part === '.' || part === '..');
}

function specCauses(spec: Obj, pvName: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const modes = Array.isArray(spec.accessModes) ? spec.accessModes.map(asString) : [];
  if (modes.length === 0) causes.push(requiredField('spec.accessModes'));
  let oncePod = false;
  let other = false;
  for (const mode of modes) {
    if (!ACCESS_MODES.includes(mode)) causes.push(notSupportedField('spec.accessModes', mode, ACCESS_MODES));
    if (mode === 'ReadWriteOncePod') oncePod = true;
    else if (ACCESS_MODES.includes(mode)) other = true;
  }
  if (oncePod && other) causes.push(forbiddenField('spec.accessModes', 'may not use ReadWriteOncePod with other access modes'));
  const capacity = asObject(spec.capacity);
  const names = Object.keys(capacity);
  if (names.length === 0) causes.push(requiredField('spec.capacity'));
  if (!('storage' in capacity) || names.length > 1) causes.push(notSupportedField('spec.capacity', goJson(goResourceList(spec.capacity)), ['storage']));
  for (const name of names) {
    const q = asString(capacity[name]);
    const at = `spec.capacity[${name}]`;
    if ((compareQuantities(q, '0') ?? 0) < 0) {
      causes.push(invalidField(at, { goSyntax: String(quantityIntegerValue(q) ?? 0n) }, 'must be a valid resource quantity'));
    }
    if ((compareQuantities(q, '0') ?? 1) <= 0) causes.push(invalidField(at, q, 'must be greater than zero'));
  }
  const policy = asString(spec.persistentVolumeReclaimPolicy);
  if (policy !== '' && !RECLAIM_POLICIES.includes(policy)) causes.push(notSupportedField('spec.persistentVolumeReclaimPolicy', policy, RECLAIM_POLICIES));
  const affinity = objectOrUndefined(spec.nodeAffinity);
  if (affinity !== undefined) {
    const required = objectOrUndefined(affinity.required);
    if (required !== undefined) causes.push(...validateNodeSelector(required, 'spec.nodeAffinity.required'));
    else causes.push(requiredField('spec.nodeAffinity.required', 'must specify required node constraints'));
  }
  let count = 0;
  for (const [key, reportedAs, checkedAt] of SOURCES) {
    const source = objectOrUndefined(spec[key]);
    if (source === undefined) continue;
    if (count > 0 && key !== 'flexVolume') {
      causes.push(forbiddenField(`spec.${reportedAs}`, 'may not specify more than 1 volume type'));
      continue;
    }
    count++;
    causes.push(...ownSourceCauses(key, source, pvName, `spec.${checkedAt}`));
    if (key === 'local' && affinity === undefined) causes.push(requiredField('spec.nodeAffinity', 'Local volume requires node affinity'));
  }
  if (count === 0) causes.push(requiredField('spec', 'must specify a volume type'));
  const hostPath = objectOrUndefined(spec.hostPath);
  if (hostPath !== undefined && cleansToRoot(asString(hostPath.path)) && policy === 'Recycle') {
    causes.push(forbiddenField('spec.persistentVolumeReclaimPolicy', "may not be 'recycle' for a hostPath mount of '/'"));
  }
  const className = asString(spec.storageClassName);
  if (className !== '') causes.push(...isDNS1123Subdomain(className).map((m) => invalidField('spec.storageClassName', className, m)));
  if (spec.volumeMode !== undefined && spec.volumeMode !== null && !VOLUME_MODES.includes(asString(spec.volumeMode))) {
    causes.push(notSupportedField('spec.volumeMode', asString(spec.volumeMode), VOLUME_MODES));
  }
  if (typeof spec.volumeAttributesClassName === 'string') {
    const vac = spec.volumeAttributesClassName;
    if (vac === '') causes.push(requiredField('spec.volumeAttributesClassName', 'an empty string is disallowed'));
    else causes.push(...isDNS1123Subdomain(vac).map((m) => invalidField('spec.volumeAttributesClassName', vac, m)));
    if (objectOrUndefined(spec.csi) === undefined) causes.push(requiredField('spec.csi', 'has to be specified when using volumeAttributesClassName'));
  }
  return causes;
}

/** Mount options (an annotation) only for the source types that take them. */
function mountOptionCauses(pv: Obj, spec: Obj): StatusCause[] {
  const annotations = asObject(asObject(pv.metadata).annotations);
  if (!(MOUNT_OPTIONS_ANNOTATION in annotations) || MOUNT_OPTION_SOURCES.some((k) => objectOrUndefined(spec[k]) !== undefined)) return [];
  return [forbiddenField(`metadata.annotations.${MOUNT_OPTIONS_ANNOTATION}`, 'may not specify mount options for this volume type')];
}

/** The volume source part of a PV spec (every source key). */
function volumeSource(spec: Obj): Obj {
  return Object.fromEntries(SOURCES.filter(([key]) => spec[key] !== undefined).map(([key]) => [key, spec[key]]));
}

/** Node affinities equal up to beta topology labels renamed to their GA names. */
function affinityEqual(next: unknown, old: unknown): boolean {
  const rename = (prev: unknown, cur: unknown): unknown => {
    const p = objectOrUndefined(prev);
    const required = objectOrUndefined(p?.required);
    if (p === undefined || required === undefined) return prev;
    const curTerms = objects(asObject(asObject(cur).required).nodeSelectorTerms);
    const terms = objects(required.nodeSelectorTerms).map((t, i) => ({
      ...t,
      matchExpressions: objects(t.matchExpressions).map((e, j) => {
        const newKey = asString(objects(curTerms[i]?.matchExpressions)[j]?.key);
        return BETA_TO_GA_LABEL[asString(e.key)] === newKey ? { ...e, key: newKey } : e;
      }),
    }));
    return { ...p, required: { ...required, nodeSelectorTerms: terms } };
  };
  return semanticEqual(next, rename(old, next));
}

function updateCauses(spec: Obj, oldSpec: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  const source = volumeSource(spec);
  const oldSource = volumeSource(oldSpec);
  const oldCsi = objectOrUndefined(oldSpec.csi);
  const csi = objectOrUndefined(source.csi);
  if (oldCsi !== undefined && oldCsi.controllerExpandSecretRef === undefined && csi !== undefined && csi.controllerExpandSecretRef !== undefined) {
    const { controllerExpandSecretRef: _added, ...rest } = csi;
    source.csi = rest;
  }
  if (!semanticEqual(source, oldSource)) {
    causes.push(
      forbiddenField('spec.persistentvolumesource', `spec.persistentvolumesource is immutable after creation\n${changedSpecFields(source, oldSource)}`),
    );
  }
  const mode = asString(spec.volumeMode) || 'Filesystem';
  if (mode !== (asString(oldSpec.volumeMode) || 'Filesystem')) causes.push(invalidField('volumeMode', goJson(mode), FIELD_IMMUTABLE));
  if (objectOrUndefined(oldSpec.nodeAffinity) !== undefined && !affinityEqual(spec.nodeAffinity, oldSpec.nodeAffinity)) {
    causes.push(invalidField('nodeAffinity', goJson(goVolumeNodeAffinity(spec.nodeAffinity)), `${FIELD_IMMUTABLE}, except for updating from beta label to GA`));
  }
  if (typeof oldSpec.volumeAttributesClassName === 'string' && (spec.volumeAttributesClassName === undefined || spec.volumeAttributesClassName === null)) {
    causes.push(forbiddenField('spec.volumeAttributesClassName', 'update from non-nil value to nil is forbidden'));
  }
  return causes;
}

/** A PersistentVolume's own checks (create, or update given the stored volume). */
export function validatePersistentVolume(pv: Obj, old?: Obj): StatusCause[] {
  const spec = asObject(pv.spec);
  const causes = specCauses(spec, asString(asObject(pv.metadata).name));
  const mountOptions = mountOptionCauses(pv, spec);
  if (old === undefined) return [...causes, ...mountOptions];
  return [...causes, ...mountOptions, ...causes, ...updateCauses(spec, asObject(old.spec))];
}
