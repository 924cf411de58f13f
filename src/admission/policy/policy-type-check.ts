import { isObject, type Obj } from '../../api/object-util.js';
import { typeFromSchema, type CelType, type SchemaLike } from '../../cel/types.js';
import type { ResourceCatalog } from '../../catalog/resource-catalog.js';
import type { ResourceInfo } from '../../api/resource-info.js';
import { schemaForDefinition, type SchemaNode } from '../../schema/openapi-schema.js';
import type { Storage } from '../../storage/storage.js';
import { compilePolicyExpression, policyDeclarations } from './policy-cel.js';
import { stringElements } from '../../api/values.js';

/** One `status.typeChecking.expressionWarnings` entry. */
export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

/** kube checks at most this many kinds per policy. */
const MAX_TYPES_TO_CHECK = 10;
const CRDS = 'customresourcedefinitions.apiextensions.k8s.io';
const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const SCHEMA_KEYS = ['type', 'format', 'maxLength', 'maxItems', 'maxProperties', 'enum'];

/** A built-in definition as one nested schema; a definition already being expanded becomes schemaless. */
function expand(node: SchemaNode, stack: Set<string>): SchemaLike {
  const def = node.definition;
  if (def === 'io.k8s.apimachinery.pkg.util.intstr.IntOrString' || def === 'io.k8s.apimachinery.pkg.api.resource.Quantity') {
    return { 'x-kubernetes-int-or-string': true };
  }
  if (def !== undefined && stack.has(def)) return { 'x-kubernetes-preserve-unknown-fields': true };
  if (def !== undefined) stack.add(def);
  const r = node.resolved;
  const out: SchemaLike = {};
  for (const k of SCHEMA_KEYS) if (r[k] !== undefined) out[k] = r[k];
  for (const k of ['x-kubernetes-list-type', 'x-kubernetes-list-map-keys']) {
    const v = k in node.own ? node.own[k] : r[k];
    if (v !== undefined) out[k] = v;
  }
  const names = node.propertyNames();
  if (names.length > 0) {
    out.properties = {};
    for (const name of names) {
      const p = node.property(name);
      if (p !== undefined) out.properties[name] = expand(p, stack);
    }
  }
  const items = node.items();
  if (items !== undefined) out.items = expand(items, stack);
  if (isObject(r.additionalProperties)) {
    const values = node.additionalProperties();
    if (values !== undefined) out.additionalProperties = expand(values, stack);
  } else if (r.type === 'object' && names.length === 0) {
    out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  if (def !== undefined) stack.delete(def);
  return out;
}

/** The schema of a custom kind's version, with the object metadata kube's resolver adds. */
async function customSchema(storage: Storage, info: ResourceInfo): Promise<SchemaLike | undefined> {
  const stored = await storage.get(CRDS, `${info.resource}.${info.group}`);
  if (stored === undefined) return undefined;
  const crd = JSON.parse(stored.json) as Obj;
  const spec = isObject(crd.spec) ? crd.spec : {};
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isObject) : [];
  const version = versions.find((v) => v.name === info.version);
  const validation = isObject(version?.schema) ? version.schema : undefined;
  const schema = isObject(validation?.openAPIV3Schema) ? (structuredClone(validation.openAPIV3Schema) as SchemaLike) : undefined;
  if (schema === undefined) return undefined;
  const meta = schemaForDefinition(OBJECT_META);
  schema.properties = { ...(schema.properties ?? {}) };
  schema.properties.apiVersion ??= { type: 'string' };
  schema.properties.kind ??= { type: 'string' };
  if (meta !== undefined) schema.properties.metadata = expand(meta, new Set());
  return schema;
}

/** The CEL type of objects of `info`, from its OpenAPI definition or its CRD's schema. */
async function objectType(storage: Storage, info: ResourceInfo): Promise<CelType | undefined> {
  if (info.custom === true) {
    const schema = await customSchema(storage, info);
    return schema === undefined ? undefined : typeFromSchema(schema, 'object');
  }
  const node = info.definition !== '' ? schemaForDefinition(info.definition) : undefined;
  return node === undefined ? undefined : typeFromSchema(expand(node, new Set()), 'object');
}

/** The kinds kube type checks a policy against: its rules' explicit groups, versions and resources (sorted). */
function kindsToCheck(catalog: ResourceCatalog, policy: Obj): ResourceInfo[] {
  const spec = isObject(policy.spec) ? policy.spec : {};
  const constraints = isObject(spec.matchConstraints) ? spec.matchConstraints : {};
  const rules = Array.isArray(constraints.resourceRules) ? constraints.resourceRules.filter(isObject) : [];
  const found = new Map<string, ResourceInfo>();
  for (const rule of rules) {
    const groups = stringElements(rule.apiGroups)
      .filter((g) => g !== '*')
      .sort();
    const versions = stringElements(rule.apiVersions)
      .filter((v) => v !== '*')
      .sort();
    const resources = stringElements(rule.resources)
      .filter((r) => !r.includes('*') && !r.includes('/'))
      .sort();
    let count = 0;
    for (const group of groups)
      for (const version of versions)
        for (const resource of resources) {
          const info = catalog.get(group, version, resource);
          if (info === undefined) continue;
          found.set(`${group}/${version}/${info.kind}`, info);
          if (++count === MAX_TYPES_TO_CHECK) break;
        }
  }
  return [...found.values()].sort((a, b) => a.group.localeCompare(b.group) || a.version.localeCompare(b.version) || a.kind.localeCompare(b.kind));
}

/**
 * kube's policy type checker: each `spec.validations[i].expression` and `.messageExpression` is
 * compiled against the schema of every kind the policy's rules name (at most ten), `object` and
 * `oldObject` typed by it and `params` by the paramKind's schema; each kind's issues are reported as
 * `<group>/<version>, Kind=<kind>: <cel-go issues>`.
 */
export async function typeCheckPolicy(storage: Storage, catalog: ResourceCatalog, policy: Obj): Promise<ExpressionWarning[]> {
  const spec = isObject(policy.spec) ? policy.spec : {};
  const kinds: { label: string; type: CelType }[] = [];
  for (const info of kindsToCheck(catalog, policy)) {
    const type = await objectType(storage, info);
    if (type !== undefined) kinds.push({ label: `${info.group}/${info.version}, Kind=${info.kind}`, type });
  }
  if (kinds.length === 0) return [];
  let params: CelType | undefined;
  if (isObject(spec.paramKind) && typeof spec.paramKind.apiVersion === 'string' && typeof spec.paramKind.kind === 'string') {
    const [group, version] = spec.paramKind.apiVersion.includes('/') ? spec.paramKind.apiVersion.split('/') : ['', spec.paramKind.apiVersion];
    const info = catalog.byKind(group ?? '', version ?? '', spec.paramKind.kind);
    if (info !== undefined) params = await objectType(storage, info);
  }
  const check = (expression: string): string => {
    const issues: string[] = [];
    for (const kind of kinds) {
      const compiled = compilePolicyExpression(expression, policyDeclarations({ object: kind.type, oldObject: kind.type, params }));
      if (!compiled.ok) issues.push(`${kind.label}: ${compiled.error.replace(/^compilation failed: /, '')}\n`);
    }
    return issues.join('\n');
  };
  const warnings: ExpressionWarning[] = [];
  const validations = Array.isArray(spec.validations) ? spec.validations.filter(isObject) : [];
  validations.forEach((v, i) => {
    if (typeof v.expression === 'string') {
      const warning = check(v.expression);
      if (warning !== '') warnings.push({ fieldRef: `spec.validations[${i}].expression`, warning });
    }
    if (typeof v.messageExpression === 'string' && v.messageExpression !== '') {
      const warning = check(v.messageExpression);
      if (warning !== '') warnings.push({ fieldRef: `spec.validations[${i}].messageExpression`, warning });
    }
  });
  return warnings;
}
