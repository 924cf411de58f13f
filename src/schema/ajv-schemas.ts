import { goShape, shapeIsDefinitions } from './go-shape.js';
import { schemaForDefinition, type SchemaNode } from './openapi-schema.js';

/**
 * The JSON Schemas ajv compiles for the built-in kinds, generated from the OpenAPI facts of
 * `schema/openapi-v2.json` through the same shape classification the typed-decode walk follows
 * (src/schema/go-shape.ts), so a schema accepts a value exactly when the walk finds no type error and
 * no unknown field in it:
 *
 * - structs list their `properties` with `additionalProperties: false` (an unknown field is a refusal);
 * - `null` is accepted at every position (Go leaves a non-pointer field alone for `null`);
 * - integers are bounded as int32 or int64 (as far as a JavaScript number is exact);
 * - Quantity, IntOrString's number side, Time/MicroTime and base64 `[]byte` use the keywords
 *   registered in src/codec/kind-validators.ts, which run Capstan's Go-exact parsers;
 * - opaque types (RawExtension, FieldsV1, JSON, ...) and preserved unknown fields accept anything.
 *
 * Each struct definition is its own schema, referenced by `$ref`, so ajv compiles it once however
 * many kinds use it, and recursive types (JSONSchemaProps) compile without unrolling.
 */

/** A generated JSON Schema (plain data, ready for `ajv.addSchema`). */
export type JsonSchema = boolean | { [key: string]: unknown };

/**
 * Whose rules integers follow: Go's `encoding/json` (int32/int64 bounds) or kube's unstructured
 * converter (strategic merge patches), which takes any integral number into an integer field.
 */
export type SchemaWording = 'json' | 'unstructured';

/** Keyword validating a Quantity with Go's parser (and storing it in canonical form). */
export const QUANTITY_KEYWORD = 'goQuantity';
/** Keyword validating a Time or MicroTime with Go's RFC 3339 parser. */
export const TIME_KEYWORD = 'goTime';
/** Keyword validating a `[]byte` as Go's base64.StdEncoding. */
export const BYTES_KEYWORD = 'goBase64';

const INT32: readonly [number, number] = [-2147483648, 2147483647];
/** int64 as far as the walk trusts a JavaScript number to be the literal's value. */
const INT64: readonly [number, number] = [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];

/** The `$id` of a definition's schema in one wording; `$ref`s use the same text. */
export function schemaId(definition: string, wording: SchemaWording): string {
  return `capstan-${wording}:${definition}`;
}

/** A definition's schema and the definitions it refers to (to be added before it is compiled). */
export interface DefinitionSchema {
  schema: { [key: string]: unknown };
  refs: Set<string>;
}

class Generator {
  readonly refs = new Set<string>();

  constructor(private readonly wording: SchemaWording) {}

  /** The schema of one position; a struct with a definition of its own becomes a `$ref` to it. */
  position(node: SchemaNode, root = false): JsonSchema {
    const shape = goShape(node);
    switch (shape) {
      case 'any':
        return true;
      case 'quantity':
        return { [QUANTITY_KEYWORD]: true };
      case 'time':
        return { [TIME_KEYWORD]: true };
      case 'bytes':
        return { [BYTES_KEYWORD]: true };
      case 'int-or-string':
        return { type: ['string', 'integer', 'null'], minimum: INT32[0], maximum: INT32[1] };
      case 'string':
        return { type: ['string', 'null'] };
      case 'bool':
        return { type: ['boolean', 'null'] };
      case 'float':
        return { type: ['number', 'null'] };
      case 'integer': {
        if (this.wording === 'unstructured') return { type: ['integer', 'null'] };
        const [minimum, maximum] = node.format() === 'int32' ? INT32 : INT64;
        return { type: ['integer', 'null'], minimum, maximum };
      }
      case 'slice': {
        const items = node.items();
        return items === undefined ? { type: ['array', 'null'] } : { type: ['array', 'null'], items: this.position(items) };
      }
      case 'map': {
        const values = node.additionalProperties();
        return { type: ['object', 'null'], additionalProperties: values === undefined ? true : this.position(values) };
      }
      case 'struct': {
        if (!root && node.definition !== undefined && shapeIsDefinitions(node)) {
          this.refs.add(node.definition);
          return { $ref: schemaId(node.definition, this.wording) };
        }
        const properties: Record<string, JsonSchema> = {};
        for (const name of node.propertyNames()) {
          const child = node.property(name);
          // A property without a schema object is no field of the Go struct: the walk drops it as unknown.
          properties[name] = child === undefined ? false : this.position(child);
        }
        return { type: ['object', 'null'], properties, additionalProperties: false };
      }
    }
  }
}

/**
 * The schema of definition `name` in `wording`, with its `$id`, or undefined when the OpenAPI document
 * has no such definition. Deterministic: the same name always yields an equal schema.
 */
export function definitionSchema(name: string, wording: SchemaWording): DefinitionSchema | undefined {
  const node = schemaForDefinition(name);
  if (node === undefined) return undefined;
  const generator = new Generator(wording);
  const body = generator.position(node, true);
  const schema = typeof body === 'boolean' ? (body ? {} : { not: {} }) : body;
  return { schema: { $id: schemaId(name, wording), ...schema }, refs: generator.refs };
}
