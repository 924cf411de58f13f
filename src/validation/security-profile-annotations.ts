/**
 * kube 1.36's checks of the deprecated seccomp and AppArmor annotations of a Pod or pod template
 * (ValidateSeccompPodAnnotations, ValidateAppArmorPodAnnotations) and of their agreement with the
 * `seccompProfile` and `appArmorProfile` fields where both are given (validateSeccompAnnotationsAndFields,
 * validateAppArmorAnnotationsAndFieldsMatchOnCreate; kube runs these on a Pod's create and on every
 * template write). A container's AppArmor profile is its own field, else the pod's; Windows pods skip
 * the AppArmor agreement check.
 */
import type { StatusCause } from '../api/errors.js';
import { forbiddenField, goQuote, invalidField } from './field-errors.js';
import { localDescendingPath } from './volumes.js';
import { asObject, asString, type Obj, objectOrUndefined } from '../api/values.js';
import { objects, stringEntries } from './value-access.js';

const SECCOMP_POD_KEY = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
const APPARMOR_CONTAINER_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const RUNTIME_DEFAULT = 'runtime/default';
const DOCKER_DEFAULT = 'docker/default';
const UNCONFINED = 'unconfined';
const LOCALHOST_PREFIX = 'localhost/';

/** Whether any annotation is a seccomp or AppArmor one (most objects have none: nothing to check). */
function anyProfileAnnotation(entries: ReadonlyArray<readonly [string, string]>): boolean {
  for (const [key] of entries) {
    if (key === SECCOMP_POD_KEY || key.startsWith(SECCOMP_CONTAINER_PREFIX) || key.startsWith(APPARMOR_CONTAINER_PREFIX)) return true;
  }
  return false;
}

/** Every container of a spec with its path, in kube's VisitContainersWithPath order. */
function containersWithPath(spec: Obj, specPath: string): Array<{ container: Obj; path: string }> {
  return ['initContainers', 'containers', 'ephemeralContainers'].flatMap((key) =>
    objects(spec[key]).map((container, i) => ({ container, path: `${specPath}.${key}[${i}]` })),
  );
}

/** ValidateSeccompProfile: an annotation value naming a known or relative local profile. */
function seccompAnnotationCauses(value: string, field: string): StatusCause[] {
  if (value === RUNTIME_DEFAULT || value === DOCKER_DEFAULT || value === UNCONFINED) return [];
  if (value.startsWith(LOCALHOST_PREFIX)) return localDescendingPath(value.slice(LOCALHOST_PREFIX.length), field);
  return [invalidField(field, value, 'must be a valid seccomp profile')];
}

/**
 * The seccomp and AppArmor annotations of a Pod or template (`annotations` at `field`, e.g.
 * `metadata.annotations`): well-formed values, and AppArmor keys naming a container of `spec`.
 */
export function validateSecurityProfileAnnotations(annotations: unknown, spec: Obj, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const entries = stringEntries(annotations);
  if (!anyProfileAnnotation(entries)) return causes;
  const names = new Set(containersWithPath(spec, '').map(({ container }) => asString(container.name)));
  for (const [key, value] of entries) {
    // kube names seccomp annotations as a child path and AppArmor ones as a map key.
    if (key === SECCOMP_POD_KEY || key.startsWith(SECCOMP_CONTAINER_PREFIX)) causes.push(...seccompAnnotationCauses(value, `${field}.${key}`));
    if (!key.startsWith(APPARMOR_CONTAINER_PREFIX)) continue;
    const container = key.slice(APPARMOR_CONTAINER_PREFIX.length);
    if (!names.has(container)) causes.push(invalidField(`${field}[${key}]`, container, 'container not found'));
    if (value !== '' && value !== RUNTIME_DEFAULT && value !== UNCONFINED && !value.startsWith(LOCALHOST_PREFIX)) {
      causes.push(invalidField(`${field}[${key}]`, value, `invalid AppArmor profile name: ${goQuote(value)}`));
    }
  }
  return causes;
}

/** validateSeccompAnnotationsAndFieldsMatch / the AppArmor equivalent: the annotation's profile is the field's. */
function mismatchCauses(kind: 'seccomp' | 'apparmor', annotation: string, profile: Obj, field: string): StatusCause[] {
  const typeMismatch = [forbiddenField(`${field}.type`, `${kind} type in annotation and field must match`)];
  switch (asString(profile.type)) {
    case 'Unconfined':
      return annotation === UNCONFINED ? [] : typeMismatch;
    case 'RuntimeDefault':
      return annotation === RUNTIME_DEFAULT || (kind === 'seccomp' && annotation === DOCKER_DEFAULT) ? [] : typeMismatch;
    case 'Localhost':
      if (!annotation.startsWith(LOCALHOST_PREFIX)) return typeMismatch;
      return profile.localhostProfile === annotation.slice(LOCALHOST_PREFIX.length)
        ? []
        : [forbiddenField(`${field}.localhostProfile`, `${kind} profile in annotation and field must match`)];
    default:
      return [];
  }
}

/**
 * Where a seccomp or AppArmor annotation and the matching field are both set (`annotations` of the
 * object whose pod spec is `spec` at `specPath`), they must name the same profile.
 */
export function validateAnnotationsMatchFields(annotations: unknown, spec: Obj, specPath: string): StatusCause[] {
  const entries = stringEntries(annotations);
  const causes: StatusCause[] = [];
  if (!anyProfileAnnotation(entries)) return causes;
  const byKey = new Map(entries);
  const podSc = asObject(spec.securityContext);
  const podSeccomp = objectOrUndefined(podSc.seccompProfile);
  const podAnnotation = byKey.get(SECCOMP_POD_KEY);
  if (podSeccomp !== undefined && podAnnotation !== undefined) {
    causes.push(...mismatchCauses('seccomp', podAnnotation, podSeccomp, `${specPath}.securityContext.seccompProfile`));
  }
  for (const { container, path } of containersWithPath(spec, specPath)) {
    const seccomp = objectOrUndefined(asObject(container.securityContext).seccompProfile);
    const annotation = byKey.get(`${SECCOMP_CONTAINER_PREFIX}${asString(container.name)}`);
    if (seccomp !== undefined && annotation !== undefined)
      causes.push(...mismatchCauses('seccomp', annotation, seccomp, `${path}.securityContext.seccompProfile`));
  }
  if (asObject(spec.os).name === 'windows') return causes;
  const podAppArmor = objectOrUndefined(podSc.appArmorProfile);
  for (const { container, path } of containersWithPath(spec, specPath)) {
    const profile = objectOrUndefined(asObject(container.securityContext).appArmorProfile) ?? podAppArmor;
    const annotation = byKey.get(`${APPARMOR_CONTAINER_PREFIX}${asString(container.name)}`);
    if (profile !== undefined && annotation !== undefined)
      causes.push(...mismatchCauses('apparmor', annotation, profile, `${path}.securityContext.appArmorProfile`));
  }
  return causes;
}
