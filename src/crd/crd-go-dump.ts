import { isObject, type Obj } from '../api/object-util.js';

/**
 * kube prints `spec.versions` in a CRD's Invalid causes as Go's json.Marshal of its internal
 * (untagged) structs: every field, capitalised, in declaration order, nulls included. This renders
 * the same text from the request's JSON, so Capstan's messages read as kube's.
 */

type Json = unknown;

function str(v: Json): string {
  return typeof v === 'string' ? v : '';
}

function ptr(v: Json): Json {
  return v === undefined ? null : v;
}

function bool(v: Json): boolean {
  return v === true;
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
    ID: str(s.id),
    Schema: str(s.$schema),
    Ref: ptr(s.$ref),
    Description: str(s.description),
    Type: str(s.type),
    Nullable: bool(s.nullable),
    Format: str(s.format),
    Title: str(s.title),
    Default: ptr(s.default),
    Maximum: ptr(s.maximum),
    ExclusiveMaximum: bool(s.exclusiveMaximum),
    Minimum: ptr(s.minimum),
    ExclusiveMinimum: bool(s.exclusiveMinimum),
    MaxLength: ptr(s.maxLength),
    MinLength: ptr(s.minLength),
    Pattern: str(s.pattern),
    MaxItems: ptr(s.maxItems),
    MinItems: ptr(s.minItems),
    UniqueItems: bool(s.uniqueItems),
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
    ExternalDocs: isObject(s.externalDocs) ? { Description: str(s.externalDocs.description), URL: str(s.externalDocs.url) } : null,
    Example: ptr(s.example),
    XPreserveUnknownFields: ptr(s['x-kubernetes-preserve-unknown-fields']),
    XEmbeddedResource: bool(s['x-kubernetes-embedded-resource']),
    XIntOrString: bool(s['x-kubernetes-int-or-string']),
    XListMapKeys: Array.isArray(s['x-kubernetes-list-map-keys']) ? s['x-kubernetes-list-map-keys'] : null,
    XListType: ptr(s['x-kubernetes-list-type']),
    XMapType: ptr(s['x-kubernetes-map-type']),
    XValidations: Array.isArray(s['x-kubernetes-validations'])
      ? s['x-kubernetes-validations'].filter(isObject).map((r) => ({
          Rule: str(r.rule),
          Message: str(r.message),
          MessageExpression: str(r.messageExpression),
          Reason: ptr(r.reason),
          FieldPath: str(r.fieldPath),
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
        : { SpecReplicasPath: str(scale.specReplicasPath), StatusReplicasPath: str(scale.statusReplicasPath), LabelSelectorPath: ptr(scale.labelSelectorPath) },
  };
}

function version(v: Obj): Obj {
  const schema = isObject(v.schema) ? v.schema : undefined;
  return {
    Name: str(v.name),
    Served: bool(v.served),
    Storage: bool(v.storage),
    Deprecated: bool(v.deprecated),
    DeprecationWarning: ptr(v.deprecationWarning),
    Schema: schema === undefined ? null : { OpenAPIV3Schema: schemaOrNull(schema.openAPIV3Schema) },
    Subresources: subresources(v.subresources),
    AdditionalPrinterColumns: Array.isArray(v.additionalPrinterColumns)
      ? v.additionalPrinterColumns.filter(isObject).map((c) => ({
          Name: str(c.name),
          Type: str(c.type),
          Format: str(c.format),
          Description: str(c.description),
          Priority: typeof c.priority === 'number' ? c.priority : 0,
          JSONPath: str(c.jsonPath),
        }))
      : null,
    SelectableFields: Array.isArray(v.selectableFields) ? v.selectableFields.filter(isObject).map((f) => ({ JSONPath: str(f.jsonPath) })) : null,
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
