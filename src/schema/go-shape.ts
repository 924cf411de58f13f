import type { SchemaNode } from './openapi-schema.js';

/**
 * What Go type a position of a built-in kind's schema decodes into, as far as decoding a JSON value
 * can tell: the one classification both the typed-decode walk and the generated ajv schemas follow, so
 * that the two accept exactly the same values.
 */

/** `resource.Quantity`, with its own JSON decoder. */
export const QUANTITY_DEFINITION = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
/** `intstr.IntOrString`, with its own JSON decoder. */
export const INT_OR_STRING_DEFINITION = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
const TIME = 'io.k8s.apimachinery.pkg.apis.meta.v1.Time';
const MICRO_TIME = 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime';

/** Types that keep whatever JSON they are given. */
const OPAQUE = new Set([
  'io.k8s.apimachinery.pkg.runtime.RawExtension',
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1',
  'io.k8s.apimachinery.pkg.apis.meta.v1.Patch',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray',
]);

/**
 * The decoding shape of a schema position. `any` takes every value (opaque types, preserved unknown
 * fields, types the schema does not name); `struct`, `map` and `slice` need an object or array;
 * the scalar shapes need their JSON type; `quantity`, `int-or-string`, `time` and `bytes` have their
 * own decoders.
 */
export type GoShape = 'any' | 'quantity' | 'int-or-string' | 'time' | 'struct' | 'map' | 'slice' | 'bytes' | 'string' | 'bool' | 'integer' | 'float';

/** The shape `schema` decodes as. Pure: the same node always yields the same shape. */
export function goShape(schema: SchemaNode): GoShape {
  const def = schema.definition;
  if (def !== undefined && OPAQUE.has(def)) return 'any';
  if (schema.preservesUnknownFields() && schema.propertyNames().length === 0) return 'any';
  if (def === QUANTITY_DEFINITION) return 'quantity';
  if (def === INT_OR_STRING_DEFINITION || schema.isIntOrString()) return 'int-or-string';
  if (def === TIME || def === MICRO_TIME) return 'time';
  switch (schema.type()) {
    case 'object':
    case undefined:
      return schema.propertyNames().length === 0 && schema.additionalProperties() !== undefined ? 'map' : 'struct';
    case 'array':
      return 'slice';
    case 'string':
      return schema.format() === 'byte' ? 'bytes' : 'string';
    case 'boolean':
      return 'bool';
    case 'integer':
      return 'integer';
    case 'number':
      return 'float';
    default:
      return 'any';
  }
}

/** Keys of a referencing schema that change its shape from the shape of the definition it refers to. */
const SHAPE_EXTENSIONS = ['x-kubernetes-preserve-unknown-fields', 'x-kubernetes-int-or-string'];

/**
 * True when `schema` decodes exactly as its definition does (no extension beside the `$ref` changes
 * the shape), so a validator of the definition can stand for it.
 */
export function shapeIsDefinitions(schema: SchemaNode): boolean {
  return schema.definition !== undefined && SHAPE_EXTENSIONS.every((k) => !(k in schema.own));
}
