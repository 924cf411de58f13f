/**
 * kube 1.36's validation of a container's `resources` (ValidateContainerResourceRequirements): resource
 * names standard or fully qualified, quantities non-negative (whole numbers for extended resources),
 * requests at most the limits (equal for extended resources and huge pages, which need a limit), and
 * huge pages only beside cpu or memory, and `claims` naming the pod's resource claims. Quantities arrive
 * in canonical form from the typed decoder. Pod-level `spec.resources` go through the same checks with
 * their own resource-name rule.
 */
import type { StatusCause } from '../api/errors.js';
import { compareQuantities } from '../api/quantity.js';
import { forbiddenField, invalidField, requiredField } from './field-errors.js';
import { isHugePages, isOvercommitAllowed, validateContainerResourceName, validateResourceQuantity } from './resource-names.js';
import { validateClaimReferences } from './resource-claims.js';
import { asObject } from '../api/values.js';
import { stringEntries } from './value-access.js';

/** What a ResourceRequirements is checked against: the pod's claim names and a resource-name rule. */
export interface ResourceRequirementsOptions {
  podClaims: ReadonlySet<string>;
  /** validateContainerResourceName unless given (pod-level resources have their own). */
  resourceName?: (name: string, field: string) => StatusCause[];
}

/** The causes of a container's (or the pod's) `resources` at `path`. */
export function validateResourceRequirements(resources: unknown, path: string, opts: ResourceRequirementsOptions): StatusCause[] {
  const r = asObject(resources);
  const validateName = opts.resourceName ?? validateContainerResourceName;
  const limitsPath = `${path}.limits`;
  const requestsPath = `${path}.requests`;
  const limits = new Map(stringEntries(r.limits));
  const causes: StatusCause[] = [];
  let cpuOrMemory = false;
  let hugePages = false;
  for (const [name, quantity] of limits) {
    const field = `${limitsPath}[${name}]`;
    causes.push(...validateName(name, field), ...validateResourceQuantity(name, quantity, field));
    if (isHugePages(name)) hugePages = true;
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
  }
  for (const [name, quantity] of stringEntries(r.requests)) {
    const field = `${requestsPath}[${name}]`;
    causes.push(...validateName(name, field), ...validateResourceQuantity(name, quantity, field));
    const limit = limits.get(name);
    if (limit !== undefined) {
      const cmp = compareQuantities(quantity, limit);
      if (cmp !== 0 && !isOvercommitAllowed(name)) causes.push(invalidField(requestsPath, quantity, `must be equal to ${name} limit of ${limit}`));
      else if (cmp === 1) causes.push(invalidField(requestsPath, quantity, `must be less than or equal to ${name} limit of ${limit}`));
    } else if (!isOvercommitAllowed(name)) {
      causes.push(requiredField(limitsPath, 'Limit must be set for non overcommitable resources'));
    }
    if (isHugePages(name)) hugePages = true;
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
  }
  if (hugePages && !cpuOrMemory) causes.push(forbiddenField(path, 'HugePages require cpu or memory'));
  causes.push(...validateClaimReferences(r.claims, opts.podClaims, `${path}.claims`));
  return causes;
}
