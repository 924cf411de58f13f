/**
 * The CEL types Capstan's checker and cost estimator reason about, and the mapping from an OpenAPI
 * v3 schema (a CRD's `openAPIV3Schema` node, or a built-in kind's definition) to a CEL type, as
 * kube-apiserver's `SchemaDeclType` maps it. Every type may carry the largest size its values can
 * have (`maxLength`, `maxItems`, `maxProperties`); the cost estimator takes sizes from the schema
 * itself (schema-sizes.ts).
 */

export type CelKind =
  | 'dyn'
  | 'int'
  | 'uint'
  | 'double'
  | 'string'
  | 'bool'
  | 'bytes'
  | 'null_type'
  | 'timestamp'
  | 'duration'
  | 'type'
  | 'list'
  | 'map'
  | 'object'
  | 'optional_type'
  | 'opaque';

export interface CelType {
  kind: CelKind;
  /** Element type of a list; value type of a map or object without fields; value of an optional. */
  elem?: CelType;
  /** Key type of a map. */
  key?: CelType;
  /** Declared fields of an object type (a schema with `properties`). */
  fields?: Map<string, CelType>;
  /** Name of an object or opaque type (`kubernetes.Quantity`, `net.IP`, ...). */
  name?: string;
  /** Largest size a value can have (characters, bytes, items or properties), when declared. */
  maxSize?: number;
  /** How the list compares: `set` and `map` lists ignore order. */
  listType?: 'atomic' | 'set' | 'map';
  /** The key fields of a `map` list. */
  listMapKeys?: string[];
}

const scalar = (kind: CelKind): CelType => ({ kind });
export const DYN = scalar('dyn');
export const INT = scalar('int');
export const UINT = scalar('uint');
export const DOUBLE = scalar('double');
export const STRING = scalar('string');
export const BOOL = scalar('bool');
export const BYTES = scalar('bytes');
export const NULL = scalar('null_type');
export const TIMESTAMP = scalar('timestamp');
export const DURATION = scalar('duration');
export const TYPE = scalar('type');
export const listOf = (elem: CelType, maxSize?: number): CelType => ({ kind: 'list', elem, maxSize });
export const mapOf = (key: CelType, elem: CelType, maxSize?: number): CelType => ({ kind: 'map', key, elem, maxSize });
export const optionalOf = (elem: CelType): CelType => ({ kind: 'optional_type', elem });
export const opaque = (name: string): CelType => ({ kind: 'opaque', name });
export const objectOf = (name: string, fields: Map<string, CelType>, maxSize?: number): CelType => ({ kind: 'object', name, fields, maxSize });

/** The name cel-go gives the type in messages (`int`, `list(string)`, `map(string, int)`, `optional_type(int)`). */
export function typeName(t: CelType): string {
  switch (t.kind) {
    case 'list':
      return `list(${typeName(t.elem ?? DYN)})`;
    case 'map':
      return `map(${typeName(t.key ?? DYN)}, ${typeName(t.elem ?? DYN)})`;
    case 'optional_type':
      return `optional_type(${typeName(t.elem ?? DYN)})`;
    case 'object':
    case 'opaque':
      return t.name ?? 'object';
    case 'timestamp':
      return 'google.protobuf.Timestamp';
    case 'duration':
      return 'google.protobuf.Duration';
    default:
      return t.kind;
  }
}

/** Whether a value of type A may be used where B is expected (dyn matches everything). */
export function assignable(a: CelType, b: CelType): boolean {
  if (a.kind === 'dyn' || b.kind === 'dyn') return true;
  if (a.kind === 'object' && b.kind === 'map') return true;
  if (b.kind === 'object' && a.kind === 'map') return true;
  if (a.kind !== b.kind) return false;
  if (a.kind === 'list' || a.kind === 'optional_type') return assignable(a.elem ?? DYN, b.elem ?? DYN);
  if (a.kind === 'map') return assignable(a.key ?? DYN, b.key ?? DYN) && assignable(a.elem ?? DYN, b.elem ?? DYN);
  if (a.kind === 'opaque') return a.name === b.name;
  return true;
}

/** A schema node as the mapping reads it (OpenAPI v3 / JSONSchemaProps). */
export interface SchemaLike {
  type?: string;
  format?: string;
  properties?: Record<string, SchemaLike>;
  additionalProperties?: SchemaLike | boolean;
  items?: SchemaLike;
  maxLength?: number;
  maxItems?: number;
  maxProperties?: number;
  enum?: unknown[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  [key: string]: unknown;
}

const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/**
 * The name a property has in CEL (kube's escaping): reserved words become `__name__`; `__`, `.`,
 * `-` and `/` become `__underscores__`, `__dot__`, `__dash__` and `__slash__`. Undefined when the
 * property cannot be accessed from CEL.
 */
export function escapeFieldName(name: string): string | undefined {
  let escaped = escapedNames.get(name);
  if (escaped === undefined && !escapedNames.has(name)) {
    escaped = escape(name);
    if (escapedNames.size > 10_000) escapedNames.clear();
    escapedNames.set(name, escaped);
  }
  return escaped;
}

const escapedNames = new Map<string, string | undefined>();

function escape(name: string): string | undefined {
  if (RESERVED.has(name)) return `__${name}__`;
  if (/^[a-zA-Z][a-zA-Z0-9]*$/.test(name)) return name;
  if (!/^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/.test(name)) return undefined;
  return name.replace(/__/g, '__underscores__').replace(/\./g, '__dot__').replace(/-/g, '__dash__').replace(/\//g, '__slash__');
}

/** The fields kube declares for `metadata` of a custom resource's root and of embedded resources. */
function metadataType(): CelType {
  return objectOf(
    'metadata',
    new Map([
      ['name', STRING],
      ['generateName', STRING],
    ]),
  );
}

/**
 * kube's size bound of a string field: maxLength times 4 (a code point may take 4 bytes), else the
 * longest enum value, else none (what fits in a request).
 */
function stringMaxSize(schema: SchemaLike): number | undefined {
  if (typeof schema.maxLength === 'number') return Math.max(0, schema.maxLength) * 4;
  const values = (Array.isArray(schema.enum) ? schema.enum : []).filter((v): v is string => typeof v === 'string');
  return values.length > 0 ? Math.max(...values.map((v) => Buffer.byteLength(v))) : undefined;
}

const DECL_TYPES = new Set(['array', 'object', 'string', 'boolean', 'number', 'integer']);

/** Whether kube's SchemaDeclType gives SCHEMA a type: an int-or-string or a node of a known type. */
function hasDeclType(schema: SchemaLike): boolean {
  return schema['x-kubernetes-int-or-string'] === true || (typeof schema.type === 'string' && DECL_TYPES.has(schema.type));
}

/**
 * The CEL type of values of SCHEMA (kube's SchemaDeclType): int-or-string and schemaless
 * preserve-unknown-fields nodes are dyn; `date-time`/`date` strings are timestamps, `duration`
 * strings durations, `byte` strings bytes; objects with `additionalProperties` are maps; embedded
 * resources gain `apiVersion`, `kind` and `metadata` (name, generateName). PATH names object types.
 * With OMIT_SCHEMALESS (a CRD's schema), properties without a type are not fields, as in kube;
 * otherwise they are dyn.
 */
export function typeFromSchema(schema: SchemaLike | undefined, path = 'self', isRoot = false, omitSchemaless = false): CelType {
  if (schema === undefined) return DYN;
  if (schema['x-kubernetes-int-or-string'] === true) return DYN;
  const embedded = schema['x-kubernetes-embedded-resource'] === true;
  const hasProps = schema.properties !== undefined && Object.keys(schema.properties).length > 0;
  if (schema['x-kubernetes-preserve-unknown-fields'] === true && !hasProps && !embedded && schema.type === undefined) return DYN;
  switch (schema.type) {
    case 'integer':
      return INT;
    case 'number':
      return DOUBLE;
    case 'boolean':
      return BOOL;
    case 'string':
      switch (schema.format) {
        case 'byte':
          return { kind: 'bytes', maxSize: schema.maxLength };
        case 'duration':
          return DURATION;
        case 'date':
        case 'date-time':
          return TIMESTAMP;
        default:
          return { kind: 'string', maxSize: stringMaxSize(schema) };
      }
    case 'array': {
      const t = listOf(typeFromSchema(schema.items, `${path}.@idx`, false, omitSchemaless), schema.maxItems);
      const lt = schema['x-kubernetes-list-type'];
      if (lt === 'set' || lt === 'map') t.listType = lt;
      if (lt === 'map') t.listMapKeys = schema['x-kubernetes-list-map-keys'] ?? [];
      return t;
    }
    case 'object':
    case undefined: {
      if (!hasProps && typeof schema.additionalProperties === 'object' && !embedded) {
        return mapOf(STRING, typeFromSchema(schema.additionalProperties, `${path}.@elem`, false, omitSchemaless), schema.maxProperties);
      }
      if (!hasProps && schema.additionalProperties === true && !embedded) return mapOf(STRING, DYN, schema.maxProperties);
      const fields = new Map<string, CelType>();
      for (const [name, sub] of Object.entries(schema.properties ?? {})) {
        // kube declares no field for a property without a CEL type (a schemaless node).
        if (omitSchemaless && !hasDeclType(sub)) continue;
        const escaped = escapeFieldName(name);
        if (escaped !== undefined) fields.set(escaped, typeFromSchema(sub, `${path}.${name}`, false, omitSchemaless));
      }
      if (embedded || isRoot) {
        if (!fields.has('apiVersion')) fields.set('apiVersion', STRING);
        if (!fields.has('kind')) fields.set('kind', STRING);
        fields.set('metadata', metadataType());
      }
      if (schema['x-kubernetes-preserve-unknown-fields'] === true && !hasProps && embedded) return objectOf(path, fields, schema.maxProperties);
      return objectOf(path, fields, schema.maxProperties);
    }
    default:
      return DYN;
  }
}
