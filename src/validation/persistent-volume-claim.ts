/**
 * kube-apiserver 1.36's PersistentVolumeClaim validation beyond metadata (checked against
 * test/golden/validation/): access modes (at least one, supported, ReadWriteOncePod alone), a positive
 * storage request, the selector, storage class, volume mode and volume attributes class names, and
 * data sources; on update, a spec that is immutable except for binding a volume name once, moving a
 * beta storage-class annotation into storageClassName, and (for bound claims) storage requests and
 * the volume attributes class; storage requests never below status.capacity; the beta storage-class
 * annotation unchanged.
 * Data sources arrive as the strategy prepares them (src/strategy/claim-data-sources.ts).
 * Not checked yet: the relaxed rules kube keeps for claims stored with an invalid selector or API group.
 */
import type { StatusCause } from '../api/errors.js';
import { compareQuantities } from '../api/quantity.js';
import { forbiddenField, goJson, invalidField, notSupportedField, requiredField } from './field-errors.js';
import { validateLabelSelector } from './label-selector.js';
import { FIELD_IMMUTABLE } from './object-meta.js';
import { changedSpecFields, semanticEqual } from './semantic-equal.js';
import { isDNS1123Label, isDNS1123Subdomain } from './string-formats.js';
import { asObject, asString, type Obj, objectOrUndefined } from '../api/values.js';

export const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
export const VOLUME_MODES = ['Block', 'Filesystem'];
/** kube passes a *field.Path as the bad value here, which Go's JSON prints as `{}`. */
const FIELD_PATH_VALUE = { goSyntax: '{}' };
const BETA_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

function dataSourceCauses(source: Obj, at: string, isRef: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  if (asString(source.name) === '') causes.push(requiredField(`${at}.name`));
  const kind = asString(source.kind);
  if (kind === '') causes.push(requiredField(`${at}.kind`));
  const group = asString(source.apiGroup);
  if (group === '' && kind !== 'PersistentVolumeClaim')
    causes.push(invalidField(at, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"));
  if (group !== '') causes.push(...isDNS1123Subdomain(group).map((m) => invalidField(`${at}.apiGroup`, group, m)));
  const namespace = asString(source.namespace);
  if (isRef && namespace !== '') causes.push(...isDNS1123Label(namespace).map((m) => invalidField(`${at}.namespace`, namespace, m)));
  return causes;
}

function storageRequest(spec: Obj): string | undefined {
  const requests = objectOrUndefined(asObject(spec.resources).requests);
  const v = requests?.storage;
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}

/** ValidatePersistentVolumeClaimSpec at `path` (also used for StatefulSet claim templates). */
export function validateClaimSpec(spec: Obj, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const modes = Array.isArray(spec.accessModes) ? spec.accessModes.map(asString) : [];
  if (modes.length === 0) causes.push(requiredField(`${path}.accessModes`, 'at least 1 access mode is required'));
  if (objectOrUndefined(spec.selector) !== undefined) causes.push(...validateLabelSelector(spec.selector, `${path}.selector`));
  let oncePod = false;
  let other = false;
  for (const mode of modes) {
    if (!ACCESS_MODES.includes(mode)) causes.push(notSupportedField(`${path}.accessModes`, mode, ACCESS_MODES));
    if (mode === 'ReadWriteOncePod') oncePod = true;
    else if (ACCESS_MODES.includes(mode)) other = true;
  }
  if (oncePod && other) causes.push(forbiddenField(`${path}.accessModes`, 'may not use ReadWriteOncePod with other access modes'));
  const storage = storageRequest(spec);
  if (storage === undefined) causes.push(requiredField(`${path}.resources[storage]`));
  else if ((compareQuantities(storage, '0') ?? 1) <= 0) causes.push(invalidField(`${path}.resources[storage]`, storage, 'must be greater than zero'));
  for (const key of ['storageClassName', 'volumeAttributesClassName']) {
    const name = asString(spec[key]);
    if (name !== '') causes.push(...isDNS1123Subdomain(name).map((m) => invalidField(`${path}.${key}`, name, m)));
  }
  if (spec.volumeMode !== undefined && spec.volumeMode !== null && !VOLUME_MODES.includes(asString(spec.volumeMode))) {
    causes.push(notSupportedField(`${path}.volumeMode`, asString(spec.volumeMode), VOLUME_MODES));
  }
  const source = objectOrUndefined(spec.dataSource);
  const ref = objectOrUndefined(spec.dataSourceRef);
  if (source !== undefined) causes.push(...dataSourceCauses(source, `${path}.dataSource`, false));
  if (ref !== undefined) causes.push(...dataSourceCauses(ref, `${path}.dataSourceRef`, true));
  if (ref !== undefined && asString(ref.namespace) !== '') {
    if (source !== undefined) causes.push(invalidField(path, FIELD_PATH_VALUE, 'may not be specified when dataSourceRef.namespace is specified'));
  } else if (source !== undefined && ref !== undefined) {
    const same = semanticEqual(source.apiGroup, ref.apiGroup) && asString(source.kind) === asString(ref.kind) && asString(source.name) === asString(ref.name);
    if (!same) causes.push(invalidField(path, FIELD_PATH_VALUE, 'must match dataSourceRef'));
  }
  return causes;
}

function annotationsOf(o: Obj): Obj {
  return asObject(asObject(o.metadata).annotations);
}

/** The spec rules of ValidatePersistentVolumeClaimUpdate beyond validating the new claim. */
function claimUpdateCauses(pvc: Obj, spec: Obj, old: Obj, oldSpec: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  const next: Obj = { ...spec };
  const prev: Obj = { ...oldSpec };
  if (asString(oldSpec.volumeName) === '') prev.volumeName = next.volumeName;
  const oldAnnotations = annotationsOf(old);
  const newAnnotations = annotationsOf(pvc);
  const oldClass = typeof oldSpec.storageClassName === 'string' ? oldSpec.storageClassName : undefined;
  const newClass = typeof spec.storageClassName === 'string' ? spec.storageClassName : undefined;
  const oldAnnotation = oldAnnotations[BETA_CLASS_ANNOTATION];
  const newAnnotation = newAnnotations[BETA_CLASS_ANNOTATION];
  const upgradeFromAnnotation =
    typeof oldAnnotation === 'string' &&
    oldClass === undefined &&
    newClass === oldAnnotation &&
    (newAnnotation === undefined || newAnnotation === oldAnnotation);
  if (upgradeFromAnnotation) {
    delete next.storageClassName;
  } else {
    if (asString(newAnnotation) !== asString(oldAnnotation))
      causes.push(invalidField(`metadata.annotations.${BETA_CLASS_ANNOTATION}`, asString(newAnnotation), FIELD_IMMUTABLE));
    if (newClass !== undefined && oldClass === undefined && (typeof oldAnnotation !== 'string' || newClass === oldAnnotation)) delete next.storageClassName;
  }
  const bound = asString(asObject(pvc.status).phase) === 'Bound';
  const nextResources = asObject(next.resources);
  if (bound && objectOrUndefined(nextResources.requests) !== undefined) {
    next.resources = { ...nextResources, requests: { ...asObject(nextResources.requests), storage: asObject(asObject(oldSpec.resources).requests).storage } };
  }
  if (bound) {
    if (oldSpec.volumeAttributesClassName === undefined) delete next.volumeAttributesClassName;
    else next.volumeAttributesClassName = oldSpec.volumeAttributesClassName;
  }
  if (!semanticEqual(next, prev)) {
    causes.push(
      forbiddenField(
        'spec',
        `spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n${changedSpecFields(next, prev)}`,
      ),
    );
  }
  const newSize = storageRequest(spec) ?? '0';
  const oldSize = storageRequest(oldSpec) ?? '0';
  if ((compareQuantities(newSize, oldSize) ?? 0) < 0) {
    const statusSize = asObject(asObject(old.status).capacity).storage;
    if ((compareQuantities(newSize, typeof statusSize === 'string' ? statusSize : '0') ?? 1) <= 0) {
      causes.push(forbiddenField('spec.resources.requests.storage', 'field can not be less than status.capacity'));
    }
  }
  if (!semanticEqual(spec.volumeMode, oldSpec.volumeMode)) causes.push(invalidField('volumeMode', goJson(spec.volumeMode ?? null), FIELD_IMMUTABLE));
  if (
    !semanticEqual(spec.volumeAttributesClassName, oldSpec.volumeAttributesClassName) &&
    typeof asObject(old.status).currentVolumeAttributesClassName === 'string'
  ) {
    if (spec.volumeAttributesClassName === undefined || spec.volumeAttributesClassName === null) {
      causes.push(forbiddenField('spec.volumeAttributesClassName', 'update to nil is forbidden when status.currentVolumeAttributesClassName is not nil'));
    } else if (spec.volumeAttributesClassName === '') {
      causes.push(
        forbiddenField('spec.volumeAttributesClassName', 'update to empty string is forbidden when status.currentVolumeAttributesClassName is not nil'),
      );
    }
  }
  return causes;
}

/** A PersistentVolumeClaim's own checks (create, or update given the stored claim). */
export function validatePersistentVolumeClaim(pvc: Obj, old?: Obj): StatusCause[] {
  const spec = asObject(pvc.spec);
  const causes = validateClaimSpec(spec, 'spec');
  if (old !== undefined) causes.push(...claimUpdateCauses({ ...pvc, status: old.status }, spec, old, asObject(old.spec)));
  return causes;
}
