import { strategyFor } from '../strategy/strategies.js';
import { invalid, type StatusCause } from '../api/errors.js';
import { generateNameFrom } from '../validation/generate-name.js';
import { nameRuleFor } from '../validation/name-rules.js';
import { repeatedUpdateCauses, validateObjectMeta } from '../validation/object-meta.js';
import type { ResourceTarget } from './server-context.js';
import { metadataOf, stringField, type Obj } from '../api/object-util.js';

function validateKind(r: ResourceTarget, obj: Obj, old: Obj | undefined): StatusCause[] {
  return strategyFor(r.info).validate?.(obj, old, r.ri.subresource, r.server.catalog.customResources) ?? [];
}

/** The validation step of writes: 422 Invalid with one cause per field error. */
function check(r: ResourceTarget, obj: Obj, isCreate: boolean, old?: Obj): void {
  const metaOptions = {
    namespaced: r.info.namespaced,
    nameRule: nameRuleFor(r.info.group, r.info.resource),
    isCreate,
    old: old?.metadata,
    object: obj,
  };
  const strategy = strategyFor(r.info);
  const passes = isCreate ? undefined : strategy.updateMetadataPasses;
  const causes = [
    ...validateObjectMeta(obj.metadata, metaOptions),
    ...(passes === undefined ? [] : repeatedUpdateCauses(obj.metadata, metaOptions, passes)),
    ...validateKind(r, obj, old),
  ];
  if (causes.length > 0) {
    const meta = metadataOf(obj);
    throw invalid(r.info.kind, strategy.errorGroup ?? r.info.group, stringField(meta, 'name') || stringField(meta, 'generateName'), causes);
  }
}

export function validateCreate(r: ResourceTarget, obj: Obj): void {
  check(r, obj, true);
}

export function validateUpdate(r: ResourceTarget, obj: Obj, old: Obj): void {
  check(r, obj, false, old);
}

/** A name from `generateName`, as kube's SimpleNameGenerator makes it. */
export function generateName(prefix: string): string {
  return generateNameFrom(prefix);
}
