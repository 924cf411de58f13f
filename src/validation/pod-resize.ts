import type { StatusCause } from '../api/errors.js';
import { podQosClass } from './pod-qos.js';
import { forbiddenField, invalidField } from './field-errors.js';
import { validatePodMetadataAndSpec } from './pod-spec.js';
import { semanticEqual } from './semantic-equal.js';
import { asArray, asObject, asString, type Obj, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';

const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/**
 * kube 1.36's ValidatePodResize for a `pods/NAME/resize` write (after dropNonResizeUpdates): the pod
 * as a whole, then what a resize may not do: resize a static or Windows pod, change the QoS class,
 * resize a pod whose running containers report no resources, remove requests or limits (of the
 * pod, containers and init containers), change anything but cpu and memory, add, remove, rename or
 * reorder containers, or resize a non-sidecar init container whose resize policy restarts it.
 * InPlacePodLevelResourcesVerticalScaling, InPlacePodVerticalScalingInitContainers and
 * SidecarContainers are on, as in 1.36.
 */
export function validatePodResize(pod: Obj, old: Obj): StatusCause[] {
  const causes = validatePodMetadataAndSpec(pod, old);
  const oldMeta = asObject(old.metadata);
  const oldSpec = asObject(old.spec);
  const spec = asObject(pod.spec);
  if (MIRROR_POD_ANNOTATION in asObject(oldMeta.annotations)) {
    return [forbiddenField('[]', 'static pods cannot be resized')];
  }
  if (asObject(oldSpec.os).name === 'windows') return [forbiddenField('[]', 'windows pods cannot be resized')];
  const oldQos = asString(asObject(old.status).qosClass) || podQosClass(old);
  if (oldQos !== podQosClass(pod))
    causes.push(invalidField('spec', asString(asObject(pod.status).qosClass), 'Pod QOS Class may not change as a result of resizing'));
  if (!resizeSupported(old)) causes.push(forbiddenField('spec', 'Pod running on node without support for resize'));

  const specCopy: Obj = structuredClone(spec);
  if (podLevelResourcesSet(old) || podLevelResourcesSet(pod)) causes.push(...podLevelResizeCauses(spec, oldSpec, specCopy));
  if (asArray(asObject(old.status).nodeAllocatableResourceClaimStatuses).length > 0) {
    causes.push(forbiddenField('spec', 'pods with node allocatable resource claims cannot be resized'));
  }
  const ordering = orderingCauses(spec, oldSpec);
  causes.push(...ordering);
  if (ordering.length > 0) return causes;

  const oldInit = objects(oldSpec.initContainers);
  const oldContainers = objects(oldSpec.containers);
  const newInit = objects(spec.initContainers);
  const newContainers = objects(spec.containers);
  oldInit.forEach((c, i) => causes.push(...removalCauses(asObject(newInit[i].resources), asObject(c.resources), `spec.initContainers[${i}].resources`)));
  oldContainers.forEach((c, i) =>
    causes.push(...removalCauses(asObject(newContainers[i].resources), asObject(c.resources), `spec.containers[${i}].resources`)),
  );

  specCopy.containers = objects(specCopy.containers).map((c, i) => {
    const dropped = withoutCpuMemoryChanges(c, oldContainers[i]);
    if (!semanticEqual(dropped, oldContainers[i])) causes.push(forbiddenField('spec', 'only cpu and memory resources are mutable'));
    return dropped;
  });
  specCopy.initContainers = objects(specCopy.initContainers).map((c, i) => {
    const restartable = c.restartPolicy === 'Always';
    const modified = !semanticEqual(c, oldInit[i]);
    const dropped = withoutCpuMemoryChanges(c, oldInit[i]);
    if (!semanticEqual(dropped, oldInit[i])) {
      causes.push(forbiddenField(`spec.initContainers[${i}]`, 'only cpu and memory resources for init or sidecar containers are mutable'));
    }
    if (modified && !restartable) {
      for (const policy of objects(dropped.resizePolicy)) {
        if (policy.restartPolicy === 'RestartContainer') {
          causes.push(forbiddenField(`spec.initContainers[${i}]`, 'non-sidecar init containers with a resize policy of RestartContainer cannot be resized'));
        }
      }
    }
    return dropped;
  });
  if (causes.length > 0) return causes;
  if (!semanticEqual(specCopy, oldSpec)) causes.push(forbiddenField('spec', 'only cpu and memory resources are mutable'));
  return causes;
}

/** isPodResizeRequestSupported: the first running container's status must report its resources. */
function resizeSupported(pod: Obj): boolean {
  for (const c of objects(asObject(pod.status).containerStatuses)) {
    if (objectOrUndefined(asObject(c.state).running) !== undefined) return objectOrUndefined(c.resources) !== undefined;
  }
  return true;
}

function podLevelResourcesSet(pod: Obj): boolean {
  const resources = objectOrUndefined(asObject(pod.spec).resources);
  return resources !== undefined && Object.keys(asObject(resources.requests)).length + Object.keys(asObject(resources.limits)).length > 0;
}

/** validatePodLevelResourcesResize; leaves `specCopy.resources` with its cpu and memory changes undone. */
function podLevelResizeCauses(spec: Obj, oldSpec: Obj, specCopy: Obj): StatusCause[] {
  const oldResources = objectOrUndefined(oldSpec.resources);
  const resources = objectOrUndefined(spec.resources);
  if (oldResources !== undefined && resources === undefined) return [forbiddenField('spec.resources', 'pod-level resources cannot be removed')];
  const causes: StatusCause[] = [];
  if (oldResources !== undefined && resources !== undefined) {
    if (removed(resources.requests, oldResources.requests))
      causes.push(forbiddenField('spec.resources.requests', 'pod-level resource requests cannot be removed'));
    if (removed(resources.limits, oldResources.limits)) causes.push(forbiddenField('spec.resources.limits', 'pod-level resource limits cannot be removed'));
  }
  const copy = objectOrUndefined(specCopy.resources);
  if (copy !== undefined) {
    copy.requests = withoutCpuMemoryUpdates(copy.requests, oldResources?.requests);
    copy.limits = withoutCpuMemoryUpdates(copy.limits, oldResources?.limits);
    if (
      oldResources === undefined &&
      Object.keys(asObject(copy.requests)).length === 0 &&
      Object.keys(asObject(copy.limits)).length === 0 &&
      asArray(copy.claims).length === 0
    ) {
      delete specCopy.resources;
    }
  }
  if (!semanticEqual(specCopy.resources, oldSpec.resources)) causes.push(forbiddenField('spec', 'only cpu and memory resources are mutable at pod-level'));
  return causes;
}

/** validatePodResizeContainerOrdering. */
function orderingCauses(spec: Obj, oldSpec: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const [field, what] of [
    ['containers', 'containers'],
    ['initContainers', 'initContainers'],
  ] as const) {
    const next = objects(spec[field]);
    const old = objects(oldSpec[field]);
    if (next.length !== old.length) causes.push(forbiddenField(`spec.${field}`, `${what} may not be added or removed on resize`));
    else
      old.forEach(
        (c, i) => next[i].name !== c.name && causes.push(forbiddenField(`spec.${field}[${i}].name`, `${what} may not be renamed or reordered on resize`)),
      );
  }
  return causes;
}

/** validateContainerResize: requests and limits may not be removed. */
function removalCauses(resources: Obj, oldResources: Obj, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (removed(resources.requests, oldResources.requests)) causes.push(forbiddenField(`${path}.requests`, 'resource requests cannot be removed'));
  if (removed(resources.limits, oldResources.limits)) causes.push(forbiddenField(`${path}.limits`, 'resource limits cannot be removed'));
  return causes;
}

/** resourcesRemoved: a resource of `old` is missing from `next`. */
function removed(next: unknown, old: unknown): boolean {
  const n = asObject(next);
  return Object.keys(asObject(old)).some((name) => !(name in n));
}

/** dropCPUMemoryUpdates: `quantities` with its cpu and memory entries taken from `old` (undefined when both lists are). */
function withoutCpuMemoryUpdates(quantities: unknown, old: unknown): Obj | undefined {
  if (quantities === undefined && old === undefined) return undefined;
  const result: Obj = { ...asObject(quantities) };
  const o = asObject(old);
  for (const name of ['cpu', 'memory']) {
    if (name in o) result[name] = o[name];
    else delete result[name];
  }
  return result;
}

/** dropCPUMemoryResourcesFromContainer: the container with only its requests and limits (cpu and memory as in `old`) as resources. */
function withoutCpuMemoryChanges(container: Obj, old: Obj): Obj {
  const resources = asObject(container.resources);
  const oldResources = asObject(old.resources);
  const requests = withoutCpuMemoryUpdates(resources.requests, oldResources.requests);
  const limits = withoutCpuMemoryUpdates(resources.limits, oldResources.limits);
  return { ...container, resources: { ...(limits === undefined ? {} : { limits }), ...(requests === undefined ? {} : { requests }) } };
}
