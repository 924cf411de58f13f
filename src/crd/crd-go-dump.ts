import { isObject, type Obj } from '../api/object-util.js';
import { asBoolean, asString } from '../api/values.js';

/**
 * kube prints `spec.versions` in a CRD's Invalid causes as Go's json.Marshal of its internal
 * (untagged) structs: every field, capitalised, in declaration order, nulls included. This renders
 * the same text from the request's JSON, so Capstan's messages read as kube's.
 */

type Json = unknown;

function ptr(v: Json): Json {
  return v === undefined ? null : v;
}

function schemaOrNull(v: Json): Json {
  return isObject(v) ? schemaProps(v) : null;
}

function schemaMap(v: Json): Json {
  if (!isObject(v)) return null;
  const out: Obj = {};
  for (const k of Object.keys(v).sort()) out[k] = schemaProps(isObject(v[k]) ? v[k] : {});
  return out;
}

function schemaList(v: Json): Json {
  return Array.isArray(v) ? v.map((s) => schemaProps(isObject(s) ? s : {})) : null;
}

/** The internal JSONSchemaProps of a v1 schema object. */
export function schemaProps(s: Obj): Obj {
  const items = s.items;
  const additional = s.additionalProperties;
  return {
    ID: asString(s.id),
    Schema: asString(s.$schema),
    Ref: ptr(s.$ref),
    Description: asString(s.description),
    Type: asString(s.type),
    Nullable: asBoolean(s.nullable),
    Format: asString(s.format),
    Title: asString(s.title),
    Default: ptr(s.default),
    Maximum: ptr(s.maximum),
    ExclusiveMaximum: asBoolean(s.exclusiveMaximum),
    Minimum: ptr(s.minimum),
    ExclusiveMinimum: asBoolean(s.exclusiveMinimum),
    MaxLength: ptr(s.maxLength),
    MinLength: ptr(s.minLength),
    Pattern: asString(s.pattern),
    MaxItems: ptr(s.maxItems),
    MinItems: ptr(s.minItems),
    UniqueItems: asBoolean(s.uniqueItems),
    MultipleOf: ptr(s.multipleOf),
    Enum: Array.isArray(s.enum) ? s.enum : null,
    MaxProperties: ptr(s.maxProperties),
    MinProperties: ptr(s.minProperties),
    Required: Array.isArray(s.required) ? s.required : null,
    Items: Array.isArray(items) ? { Schema: null, JSONSchemas: schemaList(items) } : isObject(items) ? { Schema: schemaProps(items), JSONSchemas: null } : null,
    AllOf: schemaList(s.allOf),
    OneOf: schemaList(s.oneOf),
    AnyOf: schemaList(s.anyOf),
    Not: schemaOrNull(s.not),
    Properties: schemaMap(s.properties),
    AdditionalProperties:
      typeof additional === 'boolean' ? { Allows: additional, Schema: null } : isObject(additional) ? { Allows: true, Schema: schemaProps(additional) } : null,
    PatternProperties: schemaMap(s.patternProperties),
    Dependencies: null,
    AdditionalItems: null,
    Definitions: schemaMap(s.definitions),
    ExternalDocs: isObject(s.externalDocs) ? { Description: asString(s.externalDocs.description), URL: asString(s.externalDocs.url) } : null,
    Example: ptr(s.example),
    XPreserveUnknownFields: ptr(s['x-kubernetes-preserve-unknown-fields']),
    XEmbeddedResource: asBoolean(s['x-kubernetes-embedded-resource']),
    XIntOrString: asBoolean(s['x-kubernetes-int-or-string']),
    XListMapKeys: Array.isArray(s['x-kubernetes-list-map-keys']) ? s['x-kubernetes-list-map-keys'] : null,
    XListType: ptr(s['x-kubernetes-list-type']),
    XMapType: ptr(s['x-kubernetes-map-type']),
    XValidations: Array.isArray(s['x-kubernetes-validations'])
      ? s['x-kubernetes-validations'].filter(isObject).map((r) => ({
          Rule: asString(r.rule),
          Message: asString(r.message),
          MessageExpression: asString(r.messageExpression),
          Reason: ptr(r.reason),
          FieldPath: asString(r.fieldPath),
          OptionalOldSelf: ptr(r.optionalOldSelf),
        }))
      : null,
  };
}

function subresources(v: Json): Json {
  if (!isObject(v)) return null;
  const scale = isObject(v.scale) ? v.scale : undefined;
  return {
    Status: isObject(v.status) ? {} : null,
    Scale:
      scale === undefined
        ? null
        : {
            SpecReplicasPath: asString(scale.specReplicasPath),
            StatusReplicasPath: asString(scale.statusReplicasPath),
            LabelSelectorPath: ptr(scale.labelSelectorPath),
          },
  };
}

function version(v: Obj): Obj {
  const schema = isObject(v.schema) ? v.schema : undefined;
  return {
    Name: asString(v.name),
    Served: asBoolean(v.served),
    Storage: asBoolean(v.storage),
    Deprecated: asBoolean(v.deprecated),
    DeprecationWarning: ptr(v.deprecationWarning),
    Schema: schema === undefined ? null : { OpenAPIV3Schema: schemaOrNull(schema.openAPIV3Schema) },
    Subresources: subresources(v.subresources),
    AdditionalPrinterColumns: Array.isArray(v.additionalPrinterColumns)
      ? v.additionalPrinterColumns.filter(isObject).map((c) => ({
          Name: asString(c.name),
          Type: asString(c.type),
          Format: asString(c.format),
          Description: asString(c.description),
          Priority: typeof c.priority === 'number' ? c.priority : 0,
          JSONPath: asString(c.jsonPath),
        }))
      : null,
    SelectableFields: Array.isArray(v.selectableFields) ? v.selectableFields.filter(isObject).map((f) => ({ JSONPath: asString(f.jsonPath) })) : null,
  };
}

/** Whether every version has the same, set value of FIELD (kube's conversion then lifts it to the spec). */
export function identical(versions: readonly Obj[], field: string): boolean {
  const first = versions[0]?.[field];
  if (first === undefined || first === null) return false;
  const text = JSON.stringify(first);
  return versions.every((v) => JSON.stringify(v[field]) === text);
}

/**
 * Go's json.Marshal of the internal `[]CustomResourceDefinitionVersion` for `versions` (a v1 request's
 * list). As kube's v1 conversion does, a schema, subresources or columns identical in every version
 * move to the spec's top level, so the versions show them as null.
 */
export function goVersionsDump(versions: unknown): unknown {
  if (!Array.isArray(versions)) return null;
  const list = versions.filter(isObject);
  const lifted = ['schema', 'subresources', 'additionalPrinterColumns'].filter((f) => identical(list, f));
  return list.map((v) => {
    const out = version(v);
    if (lifted.includes('schema')) out.Schema = null;
    if (lifted.includes('subresources')) out.Subresources = null;
    if (lifted.includes('additionalPrinterColumns')) out.AdditionalPrinterColumns = null;
    return out;
  });
}
