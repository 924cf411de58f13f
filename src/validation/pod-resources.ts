/**
 * kube 1.36's validation of pod-level `spec.resources` (validatePodResources; the PodLevelResources
 * gate is beta and on by default): not on a Windows pod, no `claims`, only cpu, memory and huge pages,
 * quantities and request/limit rules as for a container, pod requests at least what the containers
 * request in total, pod huge-page limits at least the containers' total, and no regular container
 * with a limit above the pod's.
 */
import type { StatusCause } from '../api/errors.js';
import { compareQuantities, quantityOf } from '../api/quantity.js';
import { forbiddenField, invalidField, notSupportedField } from './field-errors.js';
import { aggregateContainerLimits, aggregateContainerRequests } from './pod-resource-totals.js';
import { isHugePages, validateResourceName } from './resource-names.js';
import { validateResourceRequirements } from './resource-requirements.js';
import { asObject, type Obj, objectOrUndefined } from '../api/values.js';
import { objects, stringEntries } from './value-access.js';

/** The resources pod-level requests and limits may name (resourcehelper.SupportedPodLevelResources, sorted). */
const POD_LEVEL_RESOURCES = ['cpu', 'hugepages-', 'memory'];

/** IsSupportedPodLevelResource: cpu, memory or a huge-page size. */
export function isPodLevelResource(name: string): boolean {
  return name === 'cpu' || name === 'memory' || isHugePages(name);
}

/** validatePodResourceName: a valid resource name that pod-level resources support. */
function podResourceName(name: string, field: string): StatusCause[] {
  const causes = validateResourceName(name, field);
  if (causes.length > 0) return causes;
  return isPodLevelResource(name) ? [] : [notSupportedField(field, name, POD_LEVEL_RESOURCES)];
}

/** validatePodResourceConsistency: the pod's requests and limits against its containers'. */
function consistencyCauses(spec: Obj, resources: Obj, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const podRequests = new Map(stringEntries(resources.requests));
  const podLimits = new Map(stringEntries(resources.limits));
  for (const [name, total] of aggregateContainerRequests(spec)) {
    const podRequest = podRequests.get(name);
    if (podRequest === undefined || compareQuantities(total, podRequest) !== 1) continue;
    causes.push(
      invalidField(`${field}.requests[${name}]`, quantityOf(podRequest), `must be greater than or equal to aggregate container requests of ${total}`),
    );
  }
  for (const [name, total] of aggregateContainerLimits(spec)) {
    const podLimit = podLimits.get(name);
    if (!isHugePages(name) || podLimit === undefined || compareQuantities(total, podLimit) !== 1) continue;
    causes.push(invalidField(`${field}.limits[${name}]`, quantityOf(podLimit), `must be greater than or equal to aggregate container limits of ${total}`));
  }
  objects(spec.containers).forEach((container, i) => {
    for (const [name, limit] of stringEntries(asObject(container.resources).limits)) {
      const podLimit = podLimits.get(name);
      if (podLimit === undefined || compareQuantities(limit, podLimit) !== 1) continue;
      causes.push(
        invalidField(`${field}.containers[${i}][${name}].limits`, quantityOf(limit), `must be less than or equal to pod limits of ${quantityOf(podLimit)}`),
      );
    }
  });
  return causes;
}

/** validatePodResources: `spec.resources` of the pod spec at `field`, given the pod's claim names. */
export function validatePodResources(spec: Obj, podClaims: ReadonlySet<string>, field: string): StatusCause[] {
  const resources = objectOrUndefined(spec.resources);
  if (resources === undefined) return [];
  const at = `${field}.resources`;
  if (asObject(spec.os).name === 'windows') return [forbiddenField(at, 'may not be set for a windows pod')];
  const causes: StatusCause[] = [];
  if (Array.isArray(resources.claims)) causes.push(forbiddenField(`${at}.claims`, 'claims may not be set for Resources at pod-level'));
  causes.push(...validateResourceRequirements(resources, at, { podClaims, resourceName: podResourceName }));
  causes.push(...consistencyCauses(spec, resources, at));
  return causes;
}
