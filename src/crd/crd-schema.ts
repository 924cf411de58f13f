import type { StatusCause } from '../api/errors.js';
import { isObject, type Obj } from '../api/object-util.js';
import { schemaProps } from './crd-go-dump.js';
import { validateSchemaDefaults } from './crd-schema-defaults.js';
import { validateSchemaRules } from './crd-schema-rules.js';
import { unconvertibleReason, validateStructural } from './crd-structural.js';
import { forbiddenField, goJson, invalidField } from '../validation/field-errors.js';

/**
 * kube's validation of one CRD schema (validateCustomResourceDefinitionValidation with the v1
 * create options): with a status subresource only some keywords at the root, no nullable root,
 * a structural schema (crd-structural.ts) whose defaults are pruned and valid
 * (crd-schema-defaults.ts), and the schema field rules (crd-schema-rules.ts), in kube's order.
 */

/** The internal JSONSchemaProps fields (Go names, declaration order) and which may be set at a status-enabled root. */
const ALLOWED_AT_STATUS_ROOT = [
  'Description',
  'Type',
  'Format',
  'Title',
  'Maximum',
  'ExclusiveMaximum',
  'Minimum',
  'ExclusiveMinimum',
  'MaxLength',
  'MinLength',
  'Pattern',
  'MaxItems',
  'MinItems',
  'UniqueItems',
  'MultipleOf',
  'Required',
  'Items',
  'Properties',
  'ExternalDocs',
  'Example',
  'XPreserveUnknownFields',
  'XValidations',
];

function isZero(v: unknown): boolean {
  return v === null || v === undefined || v === false || v === '';
}

/** kube's walk of the root's set fields when the status subresource is enabled: the first offending one is reported. */
function statusRootCauses(schema: Obj, path: string): StatusCause[] {
  const dump = schemaProps(schema);
  for (const [name, value] of Object.entries(dump)) {
    if (isZero(value)) continue;
    if (name === 'Type') {
      if (value !== 'object')
        return [
          invalidField(
            `${path}.openAPIV3Schema.type`,
            String(value),
            'only "object" is allowed as the type at the root of the schema if the status subresource is enabled',
          ),
        ];
      continue;
    }
    if (!ALLOWED_AT_STATUS_ROOT.includes(name))
      return [
        invalidField(
          `${path}.openAPIV3Schema`,
          goJson(dump),
          `only [${ALLOWED_AT_STATUS_ROOT.join(' ')}] fields are allowed at the root of the schema if the status subresource is enabled`,
        ),
      ];
  }
  return [];
}

/**
 * The findings for VALIDATION (`{openAPIV3Schema}` of a version, or of the spec when every version
 * has the same schema) at PATH (`spec.versions[0].schema` or `spec.validation`).
 */
export function validateCrdSchema(validation: unknown, path: string, statusEnabled: boolean): StatusCause[] {
  const schema = isObject(validation) && isObject(validation.openAPIV3Schema) ? validation.openAPIV3Schema : undefined;
  if (schema === undefined) return [];
  const at = `${path}.openAPIV3Schema`;
  const causes: StatusCause[] = statusEnabled ? statusRootCauses(schema, path) : [];
  if (schema.nullable === true) causes.push(forbiddenField(`${at}.nullable`, 'nullable cannot be true at the root'));
  const unconvertible = unconvertibleReason(schema);
  if (unconvertible === undefined) {
    const structural = validateStructural(schema, at);
    causes.push(...(structural.length > 0 ? structural : validateSchemaDefaults(schema, at)));
  }
  causes.push(...validateSchemaRules(schema, at));
  // kube shows why no structural schema could be built only when nothing else was found.
  if (causes.length === 0 && unconvertible !== undefined) causes.push(invalidField(at, '', unconvertible));
  return causes;
}
