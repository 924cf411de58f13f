/**
 * kube 1.36's validation of a container's `resources` (ValidateContainerResourceRequirements): resource
 * names standard or fully qualified, quantities non-negative (whole numbers for extended resources),
 * requests at most the limits (equal for extended resources and huge pages, which need a limit), and
 * huge pages only beside cpu or memory. Quantities arrive in canonical form from the typed decoder.
 */
import type { StatusCause } from '../api/errors.js';
import { compareQuantities, isWholeQuantity } from '../codec/printers/quantity.js';
import { forbiddenField, invalidField, requiredField } from './field-errors.js';
import { isLabelKey } from './string-formats.js';
import { obj, stringEntries } from './value-access.js';

const HUGE_PAGES_PREFIX = 'hugepages-';
const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const STANDARD_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'storage',
  'requests.storage',
  'services.nodeports',
  'services.loadbalancers',
]);
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

const isHugePages = (name: string): boolean => name.startsWith(HUGE_PAGES_PREFIX);
const isQuotaHugePages = (name: string): boolean => name.startsWith(`requests.${HUGE_PAGES_PREFIX}`) || name.startsWith(`limits.${HUGE_PAGES_PREFIX}`);
/** Names in the kubernetes.io namespace (unprefixed ones are implicitly there). */
const isNative = (name: string): boolean => !name.includes('/') || name.includes('kubernetes.io/');
const isExtended = (name: string): boolean => !isNative(name) && !name.startsWith('requests.') && isLabelKey(`requests.${name}`).length === 0;
const overcommitAllowed = (name: string): boolean => isNative(name) && !isHugePages(name);

/** validateContainerResourceName: a qualified name, standard for containers when unprefixed. */
function resourceNameCauses(name: string, field: string): StatusCause[] {
  const qualified = isLabelKey(name).map((msg) => invalidField(field, name, msg));
  if (qualified.length > 0) return qualified;
  const causes: StatusCause[] = [];
  if (!name.includes('/')) {
    if (!STANDARD_RESOURCES.has(name) && !isQuotaHugePages(name)) causes.push(invalidField(field, name, 'must be a standard resource type or fully qualified'));
    if (!STANDARD_CONTAINER_RESOURCES.has(name) && !isHugePages(name)) causes.push(invalidField(field, name, 'must be a standard resource for containers'));
  } else if (!isNative(name) && !isExtended(name)) {
    causes.push(invalidField(field, name, "doesn't follow extended resource name standard"));
  }
  return causes;
}

/** ValidateResourceQuantityValue: non-negative, and whole for integer resources. */
export function quantityCauses(name: string, quantity: string, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (compareQuantities(quantity, '0') === -1) causes.push(invalidField(field, quantity, 'must be greater than or equal to 0'));
  if ((INTEGER_RESOURCES.has(name) || isExtended(name)) && !isWholeQuantity(quantity)) causes.push(invalidField(field, quantity, 'must be an integer'));
  return causes;
}

/** The causes of a container's `resources` at `path`. */
export function validateResourceRequirements(resources: unknown, path: string): StatusCause[] {
  const r = obj(resources);
  const limitsPath = `${path}.limits`;
  const requestsPath = `${path}.requests`;
  const limits = new Map(stringEntries(r.limits));
  const causes: StatusCause[] = [];
  let cpuOrMemory = false;
  let hugePages = false;
  for (const [name, quantity] of limits) {
    const field = `${limitsPath}[${name}]`;
    causes.push(...resourceNameCauses(name, field), ...quantityCauses(name, quantity, field));
    if (isHugePages(name)) hugePages = true;
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
  }
  for (const [name, quantity] of stringEntries(r.requests)) {
    const field = `${requestsPath}[${name}]`;
    causes.push(...resourceNameCauses(name, field), ...quantityCauses(name, quantity, field));
    const limit = limits.get(name);
    if (limit !== undefined) {
      const cmp = compareQuantities(quantity, limit);
      if (cmp !== 0 && !overcommitAllowed(name)) causes.push(invalidField(requestsPath, quantity, `must be equal to ${name} limit of ${limit}`));
      else if (cmp === 1) causes.push(invalidField(requestsPath, quantity, `must be less than or equal to ${name} limit of ${limit}`));
    } else if (!overcommitAllowed(name)) {
      causes.push(requiredField(limitsPath, 'Limit must be set for non overcommitable resources'));
    }
    if (isHugePages(name)) hugePages = true;
    if (name === 'cpu' || name === 'memory') cpuOrMemory = true;
  }
  if (hugePages && !cpuOrMemory) causes.push(forbiddenField(path, 'HugePages require cpu or memory'));
  return causes;
}
