import { invalid, type StatusCause } from '../api/errors.js';
import { validateConfigMap, validateSecret } from '../validation/config-data.js';
import { generateNameFrom } from '../validation/generate-name.js';
import { nameRuleFor } from '../validation/name-rules.js';
import { validateObjectMeta } from '../validation/object-meta.js';
import type { ResourceRequest } from './context.js';
import { metadataOf, stringField, type Obj } from './object-util.js';

/** The kind's own checks (ConfigMaps and Secrets so far); other kinds have only their metadata checked. */
function validateKind(info: ResourceRequest['info'], obj: Obj, old: Obj | undefined): StatusCause[] {
  if (info.group !== '') return [];
  if (info.resource === 'configmaps') return validateConfigMap(obj, old);
  if (info.resource === 'secrets') return validateSecret(obj, old);
  return [];
}

/** The validation step of writes: 422 Invalid with one cause per field error. */
function check(r: ResourceRequest, obj: Obj, isCreate: boolean, old?: Obj): void {
  const causes = [
    ...validateObjectMeta(obj.metadata, {
      namespaced: r.info.namespaced,
      nameRule: nameRuleFor(r.info.group, r.info.resource),
      isCreate,
      old: old?.metadata,
      object: obj,
    }),
    ...validateKind(r.info, obj, old),
  ];
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
