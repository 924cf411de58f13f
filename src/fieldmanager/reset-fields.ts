import { FieldSet } from './field-set.js';
import { fieldElement as f } from './path-element.js';
import { strategyFor } from '../strategy/strategies.js';

/** The resource facts reset fields depend on. */
export interface ResetTarget {
  group: string;
  resource: string;
  /** True when the type has a status subresource. */
  hasStatus: boolean;
  /** True for custom resources, whose status subresource also resets `metadata`. */
  custom?: boolean;
}

/**
 * The fields a write to `subresource` of `t` never records as owned, as kube's strategies declare
 * them (GetResetFields): the main resource of a type with a status subresource resets `status`;
 * its status subresource resets `spec` (custom resources also `metadata`) and whatever else the
 * kind's strategy names (statusResetFields). Undefined when nothing is reset.
 */
export function resetFieldsFor(t: ResetTarget, subresource: string): FieldSet | undefined {
  if (!t.hasStatus) return undefined;
  if (subresource === '') return FieldSet.of([f('status')]);
  if (subresource !== 'status') return undefined;
  const set = FieldSet.of([f('spec')]);
  if (t.custom === true) set.insert([f('metadata')]);
  for (const path of strategyFor(t).statusResetFields ?? []) set.insert(path.map((name) => f(name)));
  return set;
}
