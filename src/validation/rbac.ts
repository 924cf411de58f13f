import type { StatusCause } from '../api/errors.js';
import { goJson, invalidField, notSupportedField, requiredField } from './field-errors.js';
import { selectorConverts, validateLabelSelector } from './label-selector.js';
import { validatePathSegment } from './name-rules.js';
import { isDNS1123Subdomain } from './string-formats.js';
import type { Obj } from '../api/object-util.js';
import { asArray, asString } from '../api/values.js';

/**
 * kube-apiserver 1.36's RBAC validation beyond metadata (checked against test/golden/validation/):
 * policy rules (verbs, api groups and resources, non-resource URLs only in cluster roles and never
 * mixed with resources), aggregation rules (at least one selector, each a valid label selector), role references (group, kind, name; immutable on
 * update) and subjects. kube 1.36 prints list and struct values of field errors as JSON.
 */

const RBAC_GROUP = 'rbac.authorization.k8s.io';

function objectAt(parent: Obj, key: string): Obj {
  const v = parent[key];
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

function rulesCauses(rules: unknown, namespaced: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  asArray(rules).forEach((raw, i) => {
    const rule = typeof raw === 'object' && raw !== null ? (raw as Obj) : {};
    const path = `rules[${i}]`;
    if (asArray(rule.verbs).length === 0) causes.push(requiredField(`${path}.verbs`, 'verbs must contain at least one value'));
    const urls = asArray(rule.nonResourceURLs);
    if (urls.length > 0) {
      const value = goJson(urls);
      if (namespaced) causes.push(invalidField(`${path}.nonResourceURLs`, value, 'namespaced rules cannot apply to non-resource URLs'));
      if (asArray(rule.apiGroups).length > 0 || asArray(rule.resources).length > 0 || asArray(rule.resourceNames).length > 0) {
        causes.push(invalidField(`${path}.nonResourceURLs`, value, 'rules cannot apply to both regular resources and non-resource URLs'));
      }
      return;
    }
    if (asArray(rule.apiGroups).length === 0) causes.push(requiredField(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
    if (asArray(rule.resources).length === 0) causes.push(requiredField(`${path}.resources`, 'resource rules must supply at least one resource'));
  });
  return causes;
}

export function validateRole(role: Obj): StatusCause[] {
  return rulesCauses(role.rules, true);
}

export function validateClusterRole(role: Obj): StatusCause[] {
  const causes = rulesCauses(role.rules, false);
  const aggregation = role.aggregationRule;
  if (typeof aggregation === 'object' && aggregation !== null) {
    const selectors = asArray((aggregation as Obj).clusterRoleSelectors);
    if (selectors.length === 0) {
      causes.push(requiredField('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
    }
    selectors.forEach((selector, i) => {
      const path = `aggregationRule.clusterRoleSelectors[${i}]`;
      causes.push(...validateLabelSelector(selector, path));
      // kube also converts each selector and, when that fails, prints the (nil) converted selector.
      if (!selectorConverts(selector)) causes.push(invalidField(path, null, 'invalid label selector.'));
    });
  }
  return causes;
}

function subjectCauses(subjects: unknown, namespaced: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  asArray(subjects).forEach((raw, i) => {
    const subject = typeof raw === 'object' && raw !== null ? (raw as Obj) : {};
    const path = `subjects[${i}]`;
    const name = asString(subject.name);
    const apiGroup = asString(subject.apiGroup);
    if (name === '') causes.push(requiredField(`${path}.name`));
    switch (subject.kind) {
      case 'ServiceAccount':
        if (name !== '') for (const msg of isDNS1123Subdomain(name)) causes.push(invalidField(`${path}.name`, name, msg));
        if (apiGroup !== '') causes.push(notSupportedField(`${path}.apiGroup`, apiGroup, ['']));
        if (!namespaced && asString(subject.namespace) === '') causes.push(requiredField(`${path}.namespace`));
        break;
      case 'User':
      case 'Group':
        if (apiGroup !== RBAC_GROUP) causes.push(notSupportedField(`${path}.apiGroup`, apiGroup, [RBAC_GROUP]));
        break;
      default:
        causes.push(notSupportedField(`${path}.kind`, asString(subject.kind), ['ServiceAccount', 'User', 'Group']));
    }
  });
  return causes;
}

/** The role reference as kube prints it in "cannot change roleRef" (internal field names, JSON). */
function roleRefValue(ref: Obj): { goSyntax: string } {
  return goJson({ APIGroup: asString(ref.apiGroup), Kind: asString(ref.kind), Name: asString(ref.name) });
}

function bindingCauses(binding: Obj, old: Obj | undefined, namespaced: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  const ref = objectAt(binding, 'roleRef');
  const group = asString(ref.apiGroup);
  if (group !== RBAC_GROUP) causes.push(notSupportedField('roleRef.apiGroup', group, [RBAC_GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(asString(ref.kind))) causes.push(notSupportedField('roleRef.kind', asString(ref.kind), kinds));
  const name = asString(ref.name);
  if (name === '') causes.push(requiredField('roleRef.name'));
  else for (const msg of validatePathSegment(name, false)) causes.push(invalidField('roleRef.name', name, msg));
  causes.push(...subjectCauses(binding.subjects, namespaced));
  if (old !== undefined) {
    const oldRef = objectAt(old, 'roleRef');
    if (asString(oldRef.apiGroup) !== group || asString(oldRef.kind) !== asString(ref.kind) || asString(oldRef.name) !== name) {
      causes.push(invalidField('roleRef', roleRefValue(ref), 'cannot change roleRef'));
    }
  }
  return causes;
}

export function validateRoleBinding(binding: Obj, old?: Obj): StatusCause[] {
  return bindingCauses(binding, old, true);
}

export function validateClusterRoleBinding(binding: Obj, old?: Obj): StatusCause[] {
  return bindingCauses(binding, old, false);
}
