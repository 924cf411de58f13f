/**
 * The sizes kube-apiserver's CEL cost estimator knows about the values of a schema (its
 * `SchemaDeclType`): for every node the largest number of elements (characters, bytes, items or
 * properties) a value can have, declared (`maxLength` counts 4 bytes a character, `maxItems`,
 * `maxProperties`, the longest `enum` value) or else what fits in a request, and the smallest
 * JSON rendering of a value, from which unbounded lists and maps get their size and rules under
 * them their cardinality. Objects with properties have no size of their own (0).
 */
import { escapeFieldName, type SchemaLike } from './types.js';
import { type Range } from './cost-units.js';

/** kube-apiserver's largest request body (celconfig.MaxRequestSizeBytes). */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

/** What kube knows about one schema node (a DeclType). */
interface Decl {
  maxElements: number;
  minSerializedSize: number;
  fields?: Map<string, Decl>;
  elem?: Decl;
  key?: Decl;
}

const MAX_DURATION_SIZE_JSON = 32;
const MAX_DATETIME_SIZE_JSON = 32;
const JSON_DATE_SIZE = 12;
const STRING_KEY: Decl = { maxElements: 0, minSerializedSize: 2 };

const isSchema = (v: unknown): v is SchemaLike => typeof v === 'object' && v !== null && !Array.isArray(v);
const count = (v: unknown): number | undefined => (typeof v === 'number' ? Math.max(0, v) : undefined);

/** kube's WithTypeAndObjectMeta: a resource's root declares kind, apiVersion and metadata.name/generateName. */
function withTypeAndObjectMeta(s: SchemaLike): SchemaLike {
  const p = s.properties ?? {};
  const meta = p.metadata;
  if (
    p.kind?.type === 'string' &&
    p.apiVersion?.type === 'string' &&
    meta?.type === 'object' &&
    meta.properties?.name?.type === 'string' &&
    meta.properties?.generateName?.type === 'string'
  )
    return s;
  const str: SchemaLike = { type: 'string' };
  return {
    ...s,
    properties: { ...p, kind: str, apiVersion: str, metadata: { type: 'object', properties: { name: str, generateName: str } } },
  };
}

function declOf(s: SchemaLike, isResourceRoot: boolean): Decl | undefined {
  const requestMax = MAX_REQUEST_SIZE_BYTES - 2;
  if (s['x-kubernetes-int-or-string'] === true) {
    const maxLength = count(s.maxLength);
    return { maxElements: maxLength !== undefined ? maxLength * 4 : requestMax, minSerializedSize: 1 };
  }
  if (isResourceRoot) s = withTypeAndObjectMeta(s);
  const embedded = (sub: SchemaLike): boolean => sub['x-kubernetes-embedded-resource'] === true;
  switch (s.type) {
    case 'array': {
      if (!isSchema(s.items)) return undefined;
      const elem = declOf(s.items, embedded(s.items));
      if (elem === undefined) return undefined;
      return { maxElements: count(s.maxItems) ?? Math.floor(requestMax / (elem.minSerializedSize + 1)), minSerializedSize: 2, elem };
    }
    case 'object': {
      if (isSchema(s.additionalProperties)) {
        const elem = declOf(s.additionalProperties, embedded(s.additionalProperties));
        if (elem === undefined) return undefined;
        const maxElements = count(s.maxProperties) ?? Math.floor(requestMax / (elem.minSerializedSize + 6));
        return { maxElements, minSerializedSize: 2, key: STRING_KEY, elem };
      }
      const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
      const fields = new Map<string, Decl>();
      let minSerializedSize = 2;
      for (const [name, prop] of Object.entries(s.properties ?? {})) {
        if (!isSchema(prop)) continue;
        const t = declOf(prop, embedded(prop));
        if (t === undefined) continue;
        const escaped = escapeFieldName(name);
        if (escaped !== undefined) fields.set(escaped, t);
        if (required.has(name) && prop.default === undefined) minSerializedSize += name.length + t.minSerializedSize + 4;
      }
      return { maxElements: 0, minSerializedSize, fields };
    }
    case 'string': {
      const maxLength = count(s.maxLength);
      switch (s.format ?? '') {
        case 'byte':
          return { maxElements: maxLength ?? requestMax, minSerializedSize: 2 };
        case 'duration':
          return { maxElements: MAX_DURATION_SIZE_JSON, minSerializedSize: 3 };
        case 'date':
          return { maxElements: JSON_DATE_SIZE, minSerializedSize: JSON_DATE_SIZE };
        case 'date-time':
          return { maxElements: MAX_DATETIME_SIZE_JSON, minSerializedSize: 21 };
      }
      if (maxLength !== undefined) return { maxElements: maxLength * 4, minSerializedSize: 2 };
      const values = (Array.isArray(s.enum) ? s.enum : []).filter((v): v is string => typeof v === 'string');
      if (values.length > 0) return { maxElements: Math.max(0, ...values.map((v) => Buffer.byteLength(v))), minSerializedSize: 2 };
      return { maxElements: requestMax, minSerializedSize: 2 };
    }
    case 'boolean':
      return { maxElements: 0, minSerializedSize: 4 };
    case 'number':
    case 'integer':
      return { maxElements: 0, minSerializedSize: 1 };
    default:
      return undefined;
  }
}

/** Answers the estimator's size questions about expressions rooted at a rule's variables. */
export type SizeOracle = (path: readonly string[]) => Range | undefined;

/**
 * The sizes of SCHEMA's values by path, as kube's CRD rule compilation answers them: the first
 * step (the variable, `self` or `oldSelf`) is skipped; `@items`/`@values` step into elements,
 * `@keys` into map keys, other steps into properties.
 */
export function schemaSizes(schema: SchemaLike, isResourceRoot: boolean): SizeOracle {
  const root = declOf(schema, isResourceRoot);
  return (path) => {
    if (path.length === 0 || root === undefined) return undefined;
    let node: Decl | undefined = root;
    for (const step of path.slice(1)) {
      if (step === '@items' || step === '@values') node = node.elem;
      else if (step === '@keys') node = node.key;
      else node = node.fields?.get(step);
      if (node === undefined) return undefined;
    }
    return { min: 0n, max: BigInt(node.maxElements) };
  };
}

/**
 * How many times a rule on SCHEMA can run when a list or map above it has no declared bound:
 * how many of its smallest values, comma separated, fit in a request (kube's maxCardinality).
 */
export function unboundedCardinality(schema: SchemaLike, isResourceRoot: boolean): number {
  const minSize = declOf(schema, isResourceRoot)?.minSerializedSize ?? 0;
  return Math.floor(MAX_REQUEST_SIZE_BYTES / (minSize + 1));
}
