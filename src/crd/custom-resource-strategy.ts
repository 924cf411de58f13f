import type { StatusCause } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import type { KindStrategy } from '../strategy/kind-strategy.js';

/**
 * Validates a custom resource against its CRD version's schema. The seam for schema validation and
 * pruning (a later slice): today every object passes, so custom resources get only the generic
 * metadata validation. `subresource` is '' for the object, 'status' or 'scale' for those writes.
 */
export function validateCustomResource(_obj: Obj, _old: Obj | undefined, _subresource: string): StatusCause[] {
  return [];
}

/**
 * The KindStrategy of every custom resource, after kube's customresource strategy: generation tracked,
 * a status subresource keeps status out of main writes (resource-strategy.ts decides both for custom
 * types), and validation through `validateCustomResource`.
 */
export const customResources: KindStrategy = {
  tracksGeneration: true,
  validate: validateCustomResource,
};
