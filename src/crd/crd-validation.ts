import type { StatusCause } from '../api/errors.js';
import { isObject, type Obj } from '../api/object-util.js';
import { goVersionsDump, identical } from './crd-go-dump.js';
import { validateCrdSchema } from './crd-schema.js';
import { validateConversion, validateDeprecationWarning, validatePrinterColumns, validateSelectableFields, validateSubresources } from './crd-versions.js';
import { goJson, invalidField, notSupportedField, requiredField } from '../validation/field-errors.js';
import { isDNS1035Label, isDNS1123Subdomain } from '../validation/string-formats.js';
import { stringField } from '../api/values.js';

/**
 * kube's static validation of an apiextensions.k8s.io/v1 CustomResourceDefinition (after defaults),
 * for the common mistakes: group, scope, per-version names and schemas, unique versions, exactly one
 * storage version, required and well-formed names, stored versions. Causes come in kube's order.
 * The metadata.name rule (`<plural>.<group>`) is the name rule of the kind (validation/name-rules.ts).
 * With CHECKSCHEMAS, each schema is checked as kube checks it on create (crd-schema.ts: structural,
 * defaults, field rules); versions' deprecation warnings, scale paths, printer columns and the
 * conversion settings and selectable fields as crd-versions.ts checks them.
 * A version list in an Invalid value is printed as kube prints it (crd-go-dump.ts).
 */
export function validateCustomResourceDefinition(obj: Obj, checkSchemas = true): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = isObject(obj.spec) ? obj.spec : {};
  const group = typeof spec.group === 'string' ? spec.group : '';
  if (group === '') causes.push(requiredField('spec.group'));
  else {
    const errs = isDNS1123Subdomain(group);
    if (errs.length > 0) causes.push(invalidField('spec.group', group, errs.join(',')));
    else if (group.split('.').length < 2) causes.push(invalidField('spec.group', group, 'should be a domain with at least one dot'));
  }
  const scope = typeof spec.scope === 'string' ? spec.scope : '';
  if (scope === '') causes.push(requiredField('spec.scope'));
  else if (scope !== 'Cluster' && scope !== 'Namespaced') causes.push(notSupportedField('spec.scope', scope, ['Cluster', 'Namespaced']));

  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isObject) : [];
  versions.forEach((v, i) => {
    const schema = isObject(v.schema) ? v.schema.openAPIV3Schema : undefined;
    if (!isObject(schema)) causes.push(requiredField(`spec.versions[${i}].schema.openAPIV3Schema`));
  });
  let storageCount = 0;
  const seen = new Set<string>();
  let unique = true;
  // kube's v1 conversion lifts a schema every version shares to spec.validation, checked after the names.
  const sharedSchema = identical(versions, 'schema');
  const sharedSubresources = identical(versions, 'subresources');
  const sharedColumns = identical(versions, 'additionalPrinterColumns');
  const sharedSelectable = identical(versions, 'selectableFields');
  versions.forEach((v, i) => {
    const name = typeof v.name === 'string' ? v.name : '';
    if (v.storage === true) storageCount++;
    if (seen.has(name)) unique = false;
    seen.add(name);
    const errs = isDNS1035Label(name);
    if (errs.length > 0) causes.push(invalidField(`spec.versions[${i}].name`, name, errs.join(',')));
    causes.push(...validateDeprecationWarning(v, `spec.versions[${i}]`));
    if (checkSchemas && !sharedSchema) causes.push(...validateCrdSchema(v.schema, `spec.versions[${i}].schema`, hasStatus(v)));
    if (!sharedSubresources) causes.push(...validateSubresources(v.subresources, `spec.versions[${i}].subresources`));
    if (!sharedColumns) causes.push(...validatePrinterColumns(v.additionalPrinterColumns, `spec.versions[${i}].additionalPrinterColumns`));
    const schema = isObject(v.schema) ? v.schema.openAPIV3Schema : undefined;
    if (!sharedSelectable) causes.push(...validateSelectableFields(v.selectableFields, schema, `spec.versions[${i}].selectableFields`));
  });
  if (!unique) causes.push(invalidField('spec.versions', goJson(goVersionsDump(spec.versions)), 'must contain unique version names'));
  if (storageCount !== 1)
    causes.push(invalidField('spec.versions', goJson(goVersionsDump(spec.versions)), 'must have exactly one version marked as storage version'));
  // kube's internal spec.version mirrors the first version's name.
  const first = versions[0];
  const firstName = first !== undefined && typeof first.name === 'string' ? first.name : '';
  if (firstName !== '') {
    const errs = isDNS1035Label(firstName);
    if (errs.length > 0) causes.push(invalidField('spec.version', firstName, errs.join(',')));
  }

  const names = isObject(spec.names) ? spec.names : {};
  for (const k of ['plural', 'singular', 'kind', 'listKind']) if (stringField(names, k) === '') causes.push(requiredField(`spec.names.${k}`));
  causes.push(...validateNames(names, 'spec.names'));
  if (checkSchemas && sharedSchema) causes.push(...validateCrdSchema(versions[0]?.schema, 'spec.validation', versions.some(hasStatus)));
  if (sharedSubresources) causes.push(...validateSubresources(versions[0]?.subresources, 'spec.subresources'));
  if (sharedColumns) causes.push(...validatePrinterColumns(versions[0]?.additionalPrinterColumns, 'spec.additionalPrinterColumns'));
  if (sharedSelectable) {
    // Lifted to the spec, they are checked against the spec's schema: there is none unless shared too.
    const first = versions[0];
    const schema = sharedSchema && first !== undefined && isObject(first.schema) ? first.schema.openAPIV3Schema : undefined;
    causes.push(...validateSelectableFields(first?.selectableFields, schema, 'spec.selectableFields'));
  }
  causes.push(...validateConversion(spec.conversion));
  const status = isObject(obj.status) ? obj.status : {};
  causes.push(...validateNames(isObject(status.acceptedNames) ? status.acceptedNames : {}, 'status.acceptedNames'));
  causes.push(...validateStoredVersions(status.storedVersions, versions));
  return causes;
}

function hasStatus(version: Obj): boolean {
  return isObject(version.subresources) && isObject(version.subresources.status);
}

/** kube's ValidateCustomResourceDefinitionNames: DNS-1035 names, mixed-case kinds, distinct kind and listKind. */
function validateNames(names: Obj, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const k of ['plural', 'singular']) {
    const errs = isDNS1035Label(stringField(names, k));
    if (stringField(names, k) !== '' && errs.length > 0) causes.push(invalidField(`${path}.${k}`, stringField(names, k), errs.join(',')));
  }
  for (const k of ['kind', 'listKind']) {
    const errs = isDNS1035Label(stringField(names, k).toLowerCase());
    if (stringField(names, k) !== '' && errs.length > 0)
      causes.push(invalidField(`${path}.${k}`, stringField(names, k), `may have mixed case, but should otherwise match: ${errs.join(',')}`));
  }
  const shortNames = Array.isArray(names.shortNames) ? names.shortNames : [];
  shortNames.forEach((s, i) => {
    const value = typeof s === 'string' ? s : '';
    const errs = isDNS1035Label(value);
    if (errs.length > 0) causes.push(invalidField(`${path}.shortNames[${i}]`, value, errs.join(',')));
  });
  if (stringField(names, 'kind') !== '' && stringField(names, 'kind') === stringField(names, 'listKind'))
    causes.push(invalidField(`${path}.listKind`, stringField(names, 'listKind'), 'kind and listKind may not be the same'));
  const categories = Array.isArray(names.categories) ? names.categories : [];
  categories.forEach((c, i) => {
    const value = typeof c === 'string' ? c : '';
    const errs = isDNS1035Label(value);
    if (errs.length > 0) causes.push(invalidField(`${path}.categories[${i}]`, value, errs.join(',')));
  });
  return causes;
}

/** kube's ValidateCustomResourceDefinitionStoredVersions. */
function validateStoredVersions(value: unknown, versions: Obj[]): StatusCause[] {
  const stored = Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  if (stored.length === 0) return [invalidField('status.storedVersions', Array.isArray(value) ? goJson(value) : null, 'must have at least one stored version')];
  const causes: StatusCause[] = [];
  const remaining = new Map(stored.map((v, i) => [v, i]));
  for (const v of versions) {
    const name = typeof v.name === 'string' ? v.name : '';
    const present = remaining.has(name);
    if (v.storage === true && !present) causes.push(invalidField('status.storedVersions', goJson(stored), `must have the storage version ${name}`));
    remaining.delete(name);
  }
  for (const [v, i] of remaining) {
    causes.push(
      invalidField(
        `status.storedVersions[${i}]`,
        v,
        `missing from spec.versions; ${v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${v} and removes ${v} from status.storedVersions`,
      ),
    );
  }
  return causes;
}
