import type { StatusCause } from '../api/errors.js';
import { isObject, type Obj } from '../api/object-util.js';
import { goJson, invalidField } from './field-errors.js';

/**
 * Validation of access reviews (SubjectAccessReview, SelfSubjectAccessReview, LocalSubjectAccessReview)
 * as kube's authorization validation words it. Values kube prints from its internal types (Go structs
 * without JSON tags) are printed with their Go field names.
 */

/** Go's JSON of kube's internal NonResourceAttributes (no JSON tags: field names as declared). */
function internalNonResource(attrs: Obj): { goSyntax: string } {
  return goJson({ Path: typeof attrs.path === 'string' ? attrs.path : '', Verb: typeof attrs.verb === 'string' ? attrs.verb : '' });
}

/** Exactly one of resourceAttributes and nonResourceAttributes. */
function attributeCauses(spec: Obj): StatusCause[] {
  const resource = isObject(spec.resourceAttributes);
  const nonResource = isObject(spec.nonResourceAttributes);
  if (!resource && !nonResource) {
    return [invalidField('spec.resourceAttributes', null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified')];
  }
  if (resource && nonResource) {
    return [
      invalidField(
        'spec.nonResourceAttributes',
        internalNonResource(spec.nonResourceAttributes as Obj),
        'cannot be specified in combination with resourceAttributes',
      ),
    ];
  }
  return [];
}

/** The metadata fields a request set (what kube's comparison with an empty ObjectMeta sees). */
function setFields(meta: Obj): Obj {
  return Object.fromEntries(Object.entries(meta).filter(([, v]) => v !== undefined && v !== null && v !== ''));
}

/** Metadata other than what the kind allows makes the review invalid. */
function metadataCauses(meta: Obj, ignoreNamespace = false): StatusCause[] {
  const set = setFields(meta);
  const others = Object.keys(set).filter((k) => !(ignoreNamespace && k === 'namespace'));
  if (others.length === 0) return [];
  return [invalidField('metadata', goJson(set), ignoreNamespace ? 'must be empty except for namespace' : 'must be empty')];
}

/** The spec of any subject access review: attributes, and a user or a group to ask about. */
function subjectSpecCauses(spec: Obj): StatusCause[] {
  const causes = attributeCauses(spec);
  const user = typeof spec.user === 'string' ? spec.user : '';
  const groups = Array.isArray(spec.groups) ? spec.groups : [];
  if (user === '' && groups.length === 0) causes.push(invalidField('spec.user', '', 'at least one of user or group must be specified'));
  return causes;
}

/** A SubjectAccessReview: a user or a group to ask about, and empty metadata. */
export function validateSubjectAccessReview(spec: Obj, meta: Obj): StatusCause[] {
  return [...subjectSpecCauses(spec), ...metadataCauses(meta)];
}

/** A SelfSubjectAccessReview: attributes only, empty metadata. */
export function validateSelfSubjectAccessReview(spec: Obj, meta: Obj): StatusCause[] {
  return [...attributeCauses(spec), ...metadataCauses(meta)];
}

/** A LocalSubjectAccessReview: a SubjectAccessReview confined to the request's namespace. */
export function validateLocalSubjectAccessReview(spec: Obj, meta: Obj, namespace: string): StatusCause[] {
  const causes = [...subjectSpecCauses(spec), ...metadataCauses({ ...meta, namespace }, true)];
  if (isObject(spec.resourceAttributes)) {
    const ns = typeof spec.resourceAttributes.namespace === 'string' ? spec.resourceAttributes.namespace : '';
    if (ns !== namespace) causes.push(invalidField('spec.resourceAttributes.namespace', ns, 'must match metadata.namespace'));
  }
  if (isObject(spec.nonResourceAttributes)) {
    causes.push(invalidField('spec.nonResourceAttributes', internalNonResource(spec.nonResourceAttributes), 'disallowed on this kind of request'));
  }
  return causes;
}
