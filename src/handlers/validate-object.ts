import { invalid } from '../api/errors.js';
import { generateNameFrom } from '../validation/generate-name.js';
import { nameRuleFor } from '../validation/name-rules.js';
import { validateObjectMeta } from '../validation/object-meta.js';
import type { ResourceRequest } from './context.js';
import { metadataOf, stringField, type Obj } from './object-util.js';

/** The validation step of writes: 422 Invalid with one cause per field error. */
function check(r: ResourceRequest, obj: Obj, isCreate: boolean, old?: Obj): void {
  const causes = validateObjectMeta(obj.metadata, {
    namespaced: r.info.namespaced,
    nameRule: nameRuleFor(r.info.group, r.info.resource),
    isCreate,
    old: old?.metadata,
    object: obj,
  });
  if (causes.length > 0) {
    const meta = metadataOf(obj);
    throw invalid(r.info.kind, r.info.group, stringField(meta, 'name') || stringField(meta, 'generateName'), causes);
  }
}

export function validateCreate(r: ResourceRequest, obj: Obj): void {
  check(r, obj, true);
}

export function validateUpdate(r: ResourceRequest, obj: Obj, old: Obj): void {
  check(r, obj, false, old);
}

/** A name from `generateName`, as kube's SimpleNameGenerator makes it. */
export function generateName(prefix: string): string {
  return generateNameFrom(prefix);
}
