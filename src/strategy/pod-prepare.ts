import { isObject, type Obj } from '../api/object-util.js';
import { validateAppArmorProfile } from '../validation/pod-security-context.js';
import { objectAt, objectsAt, unset } from './field-defaults.js';

/**
 * What kube-apiserver 1.36's pod strategy does to a Pod on create beyond defaulting (PrepareForCreate
 * in pkg/registry/core/pod/strategy.go), after the status is reset: a deprecated
 * `container.apparmor.security.beta.kubernetes.io/<name>` annotation is copied to a
 * container's `appArmorProfile` when the container has none, the annotation is valid and it differs
 * from the pod-level profile (not for Windows pods). Updates change none of these.
 */

const APPARMOR_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const LOCALHOST_PREFIX = 'localhost/';

function stringMap(v: unknown): Record<string, string> {
  if (!isObject(v)) return {};
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** ApparmorFieldForAnnotation: the profile an annotation value names, or undefined. */
function appArmorFieldFor(annotation: string): Obj | undefined {
  if (annotation === 'unconfined') return { type: 'Unconfined' };
  if (annotation === 'runtime/default') return { type: 'RuntimeDefault' };
  if (annotation.startsWith(LOCALHOST_PREFIX) && annotation.length > LOCALHOST_PREFIX.length) {
    return { type: 'Localhost', localhostProfile: annotation.slice(LOCALHOST_PREFIX.length) };
  }
  return undefined;
}

function sameProfile(a: Obj, b: Obj | undefined): boolean {
  return b !== undefined && a.type === b.type && (a.localhostProfile ?? null) === (b.localhostProfile ?? null);
}

/** applyAppArmorVersionSkew: annotations copied to the containers' empty appArmorProfile fields. */
function syncAppArmorAnnotations(spec: Obj, annotations: Record<string, string>): void {
  if (objectAt(spec, 'os')?.name === 'windows') return;
  const podProfile = objectAt(objectAt(spec, 'securityContext') ?? {}, 'appArmorProfile');
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const container of objectsAt(spec, key)) {
      const annotation = annotations[`${APPARMOR_PREFIX}${typeof container.name === 'string' ? container.name : ''}`];
      const sc = objectAt(container, 'securityContext');
      if (annotation === undefined || (sc !== undefined && !unset(sc.appArmorProfile))) continue;
      const profile = appArmorFieldFor(annotation);
      if (profile === undefined || validateAppArmorProfile(profile, '').length > 0 || sameProfile(profile, podProfile)) continue;
      container.securityContext = { ...(sc ?? {}), appArmorProfile: profile };
    }
  }
}

/** The pod strategy's create-only changes (see above), applied to a defaulted Pod whose status was reset. */
export function preparePodForCreate(pod: Obj): void {
  const spec = objectAt(pod, 'spec');
  if (spec === undefined) return;
  const meta = objectAt(pod, 'metadata') ?? {};
  syncAppArmorAnnotations(spec, stringMap(meta.annotations));
}
