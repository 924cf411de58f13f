/**
 * kube 1.36's checks of resource names and quantities outside container specs (core validation's
 * validateResourceName, validateContainerResourceName, ValidateResourceQuotaResourceName and
 * ValidateResourceQuantityValue), used by LimitRanges and ResourceQuotas. Each returns the causes in
 * kube's order; names are printed as kube prints a core.ResourceName.
 */
import type { StatusCause } from '../api/errors.js';
import { compareQuantities, isWholeQuantity, quantityOf } from '../api/quantity.js';
import { invalidField } from './field-errors.js';
import { isLabelKey } from './string-formats.js';

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const STANDARD_QUOTA_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.storage',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'persistentvolumeclaims',
  'configmaps',
  'services.nodeports',
  'services.loadbalancers',
]);
const STANDARD_RESOURCES = new Set([...STANDARD_QUOTA_RESOURCES, 'storage']);
const INTEGER_RESOURCES = new Set([
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'services.nodeports',
  'services.loadbalancers',
]);

/** IsHugePageResourceName. */
export const isHugePages = (name: string): boolean => name.startsWith('hugepages-');
/** IsQuotaHugePageResourceName. */
const isQuotaHugePages = (name: string): boolean => name.startsWith('hugepages-') || name.startsWith('requests.hugepages-');
const isUnprefixed = (name: string): boolean => !name.includes('/');
/** IsNativeResource: unprefixed or in the kubernetes.io namespace. */
export const isNativeResource = (name: string): boolean => isUnprefixed(name) || name.includes('kubernetes.io/');
/** IsExtendedResourceName. */
export const isExtendedResource = (name: string): boolean =>
  !isNativeResource(name) && !name.startsWith('requests.') && isLabelKey(`requests.${name}`).length === 0;
/** IsOvercommitAllowed: native resources other than huge pages. */
export const isOvercommitAllowed = (name: string): boolean => isNativeResource(name) && !isHugePages(name);

/** validateResourceName: a qualified name, standard when unprefixed. */
export function validateResourceName(name: string, field: string): StatusCause[] {
  const qualified = isLabelKey(name).map((msg) => invalidField(field, name, msg));
  if (qualified.length > 0) return qualified;
  if (isUnprefixed(name) && !STANDARD_RESOURCES.has(name) && !isQuotaHugePages(name)) {
    return [invalidField(field, name, 'must be a standard resource type or fully qualified')];
  }
  return [];
}

/** validateContainerResourceName: also a container resource when unprefixed, an extended one when foreign. */
export function validateContainerResourceName(name: string, field: string): StatusCause[] {
  const causes = validateResourceName(name, field);
  if (isUnprefixed(name)) {
    if (!STANDARD_CONTAINER_RESOURCES.has(name) && !isHugePages(name)) causes.push(invalidField(field, name, 'must be a standard resource for containers'));
  } else if (!isNativeResource(name) && !isExtendedResource(name)) {
    causes.push(invalidField(field, name, "doesn't follow extended resource name standard"));
  }
  return causes;
}

/** IsStandardQuotaResourceName: a resource quota tracks it. */
export function isStandardQuotaResource(name: string): boolean {
  return STANDARD_QUOTA_RESOURCES.has(name) || isQuotaHugePages(name);
}

/** ValidateResourceQuotaResourceName: also known to quota when unprefixed. */
export function validateQuotaResourceName(name: string, field: string): StatusCause[] {
  const causes = validateResourceName(name, field);
  if (isUnprefixed(name) && !isStandardQuotaResource(name)) {
    causes.push(invalidField(field, name, 'must be a standard resource for quota'));
  }
  return causes;
}

/** ValidateResourceQuantityValue: not negative, and whole for counted and extended resources. */
export function validateResourceQuantity(name: string, value: unknown, field: string): StatusCause[] {
  const quantity = quantityOf(value, '0');
  const causes: StatusCause[] = [];
  if (compareQuantities(quantity, '0') === -1) causes.push(invalidField(field, quantity, 'must be greater than or equal to 0'));
  if ((INTEGER_RESOURCES.has(name) || isExtendedResource(name)) && !isWholeQuantity(quantity)) causes.push(invalidField(field, quantity, 'must be an integer'));
  return causes;
}
