import { readSchemaJson } from './schema-files.js';
import { isObject } from '../api/values.js';

/**
 * A read-only view of the OpenAPI v2 definitions in `schema/openapi-v2.json`: follow `$ref`s, walk from a
 * definition down a field path, and read the Kubernetes extensions that drive patching, pruning and
 * server-side apply (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`,
 * `x-kubernetes-list-type`, `x-kubernetes-list-map-keys`, ...).
 *
 * The definitions are read from `schema/openapi-v2-definitions.json` (the same definitions, without the
 * paths that make four fifths of the document), parsed once, on first use, and shared by every caller. Nodes are cheap wrappers created on
 * demand; the same lookup always yields an equivalent node.
 */

type JsonObject = Record<string, unknown>;

const REF_PREFIX = '#/definitions/';

let definitions: Map<string, JsonObject> | undefined;

function loadDefinitions(): Map<string, JsonObject> {
  if (definitions) return definitions;
  const doc = readSchemaJson('openapi-v2-definitions.json');
  const defs = isObject(doc) && isObject(doc.definitions) ? doc.definitions : {};
  const map = new Map<string, JsonObject>();
  for (const [name, def] of Object.entries(defs)) {
    if (isObject(def)) map.set(name, def);
  }
  definitions = map;
  return map;
}

/** The definition name a `$ref` (`#/definitions/<name>`) points to, if it is a local definition ref. */
function refName(schema: JsonObject): string | undefined {
  const ref = schema.$ref;
  if (typeof ref === 'string' && ref.startsWith(REF_PREFIX)) return ref.slice(REF_PREFIX.length);
  // Some generators wrap a lone ref in allOf to attach siblings (description, extensions) to it.
  const allOf = schema.allOf;
  if (Array.isArray(allOf) && allOf.length === 1 && isObject(allOf[0])) return refName(allOf[0]);
  return undefined;
}

/** One `x-kubernetes-group-version-kind` entry. */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/**
 * A schema at some position in a type: a definition, a property of one, a list's items or a map's values.
 *
 * Extensions are read from the referencing schema first (the property, where Kubernetes puts patch
 * metadata next to the `$ref`) and then from the resolved target; type information comes from the target.
 */
export class SchemaNode {
  /** The schema as written at this position (may be just a `$ref` plus extensions). */
  readonly own: Readonly<JsonObject>;
  /** The schema after following `$ref`s (the same object as `own` when there is no ref). */
  readonly resolved: Readonly<JsonObject>;
  /** Name of the definition this node resolves to, if it went through a `$ref`. */
  readonly definition: string | undefined;

  constructor(own: JsonObject) {
    this.own = own;
    let resolved = own;
    let definition: string | undefined;
    const seen = new Set<string>();
    for (let name = refName(resolved); name !== undefined && !seen.has(name); name = refName(resolved)) {
      seen.add(name);
      const target = loadDefinitions().get(name);
      if (!target) break;
      definition = name;
      resolved = target;
    }
    this.resolved = resolved;
    this.definition = definition;
  }

  private ext(key: string): unknown {
    return key in this.own ? this.own[key] : this.resolved[key];
  }

  /** The OpenAPI `type` ("object", "array", "string", "integer", "number", "boolean"), if declared. */
  type(): string | undefined {
    const t = this.resolved.type;
    return typeof t === 'string' ? t : undefined;
  }

  /** The OpenAPI `format` ("int32", "date-time", "int-or-string", ...), if declared. */
  format(): string | undefined {
    const f = this.resolved.format;
    return typeof f === 'string' ? f : undefined;
  }

  /** Declared property names of an object schema (empty for maps and scalars). */
  propertyNames(): string[] {
    const props = this.resolved.properties;
    return isObject(props) ? Object.keys(props) : [];
  }

  /** `required` property names. */
  required(): string[] {
    const r = this.resolved.required;
    return Array.isArray(r) ? r.filter((x): x is string => typeof x === 'string') : [];
  }

  /** The declared property `name`, without falling back to map values. */
  property(name: string): SchemaNode | undefined {
    const props = this.resolved.properties;
    if (!isObject(props) || !Object.prototype.hasOwnProperty.call(props, name)) return undefined;
    const p = props[name];
    return isObject(p) ? new SchemaNode(p) : undefined;
  }

  /**
   * The schema of the value stored under JSON key `name`: the declared property if there is one, else
   * the map value schema (`additionalProperties`) for map-typed objects, else undefined.
   */
  field(name: string): SchemaNode | undefined {
    return this.property(name) ?? this.additionalProperties();
  }

  /** Element schema of an array. */
  items(): SchemaNode | undefined {
    const items = this.resolved.items;
    return isObject(items) ? new SchemaNode(items) : undefined;
  }

  /** Value schema of a map (`additionalProperties` as a schema; `true` yields an empty schema). */
  additionalProperties(): SchemaNode | undefined {
    const ap = this.resolved.additionalProperties;
    if (isObject(ap)) return new SchemaNode(ap);
    if (ap === true) return new SchemaNode({});
    return undefined;
  }

  /** True for `type: array`. */
  isList(): boolean {
    return this.type() === 'array';
  }

  /** True for an object whose keys are free-form (`additionalProperties`) and that declares no properties. */
  isMap(): boolean {
    return this.resolved.additionalProperties !== undefined && this.propertyNames().length === 0;
  }

  /**
   * `x-kubernetes-patch-strategy` split on commas, e.g. `["merge", "retainKeys"]`; empty when absent.
   */
  patchStrategies(): string[] {
    const s = this.ext('x-kubernetes-patch-strategy');
    return typeof s === 'string' && s !== '' ? s.split(',') : [];
  }

  /** `x-kubernetes-patch-merge-key`, if declared. */
  patchMergeKey(): string | undefined {
    const k = this.ext('x-kubernetes-patch-merge-key');
    return typeof k === 'string' && k !== '' ? k : undefined;
  }

  /** `x-kubernetes-list-type` ("atomic", "set" or "map"), if declared. */
  listType(): string | undefined {
    const t = this.ext('x-kubernetes-list-type');
    return typeof t === 'string' ? t : undefined;
  }

  /** `x-kubernetes-list-map-keys` (empty when absent). */
  listMapKeys(): string[] {
    const k = this.ext('x-kubernetes-list-map-keys');
    return Array.isArray(k) ? k.filter((x): x is string => typeof x === 'string') : [];
  }

  /** `x-kubernetes-map-type` ("atomic" or "granular"), if declared. */
  mapType(): string | undefined {
    const t = this.ext('x-kubernetes-map-type');
    return typeof t === 'string' ? t : undefined;
  }

  /** `x-kubernetes-int-or-string` or `format: int-or-string`. */
  isIntOrString(): boolean {
    return this.ext('x-kubernetes-int-or-string') === true || this.format() === 'int-or-string';
  }

  /** `x-kubernetes-preserve-unknown-fields: true`. */
  preservesUnknownFields(): boolean {
    return this.ext('x-kubernetes-preserve-unknown-fields') === true;
  }

  /** `x-kubernetes-embedded-resource: true`. */
  isEmbeddedResource(): boolean {
    return this.ext('x-kubernetes-embedded-resource') === true;
  }

  /** `x-kubernetes-group-version-kind` entries of a top-level kind (empty for other schemas). */
  groupVersionKinds(): GroupVersionKind[] {
    const list = this.resolved['x-kubernetes-group-version-kind'];
    if (!Array.isArray(list)) return [];
    const out: GroupVersionKind[] = [];
    for (const e of list) {
      if (isObject(e) && typeof e.group === 'string' && typeof e.version === 'string' && typeof e.kind === 'string') {
        out.push({ group: e.group, version: e.version, kind: e.kind });
      }
    }
    return out;
  }

  /**
   * Walks a field path: string segments select a field (property or map value), numeric segments (or
   * the segment "*" / "[]") select list items. Returns undefined as soon as a segment has no schema.
   */
  walk(path: readonly (string | number)[]): SchemaNode | undefined {
    return path.reduce<SchemaNode | undefined>((node, seg) => {
      if (!node) return undefined;
      return typeof seg === 'number' || ((seg === '*' || seg === '[]') && node.isList()) ? node.items() : node.field(seg);
    }, this);
  }
}

/** The node of each definition asked for so far (nodes are immutable; one per definition name). */
const definitionNodes = new Map<string, SchemaNode>();

/** The schema of a named definition (e.g. `io.k8s.api.apps.v1.Deployment`), or undefined if unknown. */
export function schemaForDefinition(name: string): SchemaNode | undefined {
  const known = definitionNodes.get(name);
  if (known !== undefined) return known;
  const def = loadDefinitions().get(name);
  if (!def) return undefined;
  const node = new SchemaNode({ $ref: `${REF_PREFIX}${name}` });
  definitionNodes.set(name, node);
  return node;
}

let gvkIndex: Map<string, string> | undefined;

/**
 * The definition of a top-level kind by group ("" for core), version and kind, via
 * `x-kubernetes-group-version-kind`; undefined when the OpenAPI document does not describe it.
 */
export function schemaForKind(group: string, version: string, kind: string): SchemaNode | undefined {
  if (!gvkIndex) {
    const index = new Map<string, string>();
    for (const [name, def] of loadDefinitions()) {
      const node = new SchemaNode(def);
      for (const gvk of node.groupVersionKinds()) {
        const key = `${gvk.group}/${gvk.version}/${gvk.kind}`;
        // Prefer the canonical definition when several claim one GVK (e.g. meta types shared by groups).
        if (!index.has(key)) index.set(key, name);
      }
    }
    gvkIndex = index;
  }
  const name = gvkIndex.get(`${group}/${version}/${kind}`);
  return name === undefined ? undefined : schemaForDefinition(name);
}

/** Names of all definitions in the document. */
export function definitionNames(): string[] {
  return [...loadDefinitions().keys()];
}
