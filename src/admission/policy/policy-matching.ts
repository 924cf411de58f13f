import { isObject, type Obj } from '../../api/object-util.js';
import { stringElements } from '../../api/values.js';
import { servedObject, toStorageVersion } from '../../conversion/version-conversion.js';
import { convertByWebhook } from '../../conversion/webhook-conversion.js';
import type { CustomResourceFacts } from '../../catalog/custom-resource-facts.js';
import type { ResourceCatalog } from '../../catalog/resource-catalog.js';
import { apiVersionOf, storageTypeOf, type ResourceInfo } from '../../api/resource-info.js';
import type { Storage } from '../../storage/storage.js';
import { selectorMatches } from '../../validation/label-selector.js';
import type { AdmissionAttributes } from '../admission.js';

/** The resource and kind a policy matched a request as (another version under matchPolicy Equivalent). */
export interface MatchedAs {
  info: ResourceInfo;
}

/** The namespace a request's namespace selector is matched against: a Namespace's own name for Namespaces. */
export function selectorNamespaceOf(a: AdmissionAttributes): string {
  if (a.info.group === '' && a.info.resource === 'namespaces') return a.name;
  return a.namespace;
}

/** kube's rule matcher (operations, groups, versions, `resource/subresource` patterns, scope) for `info`. */
function ruleMatches(rule: Obj, a: AdmissionAttributes, info: ResourceInfo): boolean {
  const ops = stringElements(rule.operations);
  if (!ops.includes('*') && !ops.includes(a.operation)) return false;
  const groups = stringElements(rule.apiGroups);
  if (!groups.includes('*') && !groups.includes(info.group)) return false;
  const versions = stringElements(rule.apiVersions);
  if (!versions.includes('*') && !versions.includes(info.version)) return false;
  const resourceMatch = stringElements(rule.resources).some((pattern) => {
    const slash = pattern.indexOf('/');
    const res = slash < 0 ? pattern : pattern.slice(0, slash);
    const sub = slash < 0 ? '' : pattern.slice(slash + 1);
    return (res === '*' || res === info.resource) && (sub === '*' || sub === a.subresource);
  });
  if (!resourceMatch) return false;
  const isNamespace = info.group === '' && info.resource === 'namespaces';
  switch (rule.scope) {
    case 'Namespaced':
      return !isNamespace && a.namespace !== '';
    case 'Cluster':
      return isNamespace || a.namespace === '';
    default:
      return true;
  }
}

function namedRuleMatches(rule: Obj, a: AdmissionAttributes, info: ResourceInfo): boolean {
  if (!ruleMatches(rule, a, info)) return false;
  const names = stringElements(rule.resourceNames);
  return names.length === 0 || names.includes(a.name);
}

/**
 * The versions of the request's resource kube counts as equivalent: the same stored resource served
 * in another group version, with the same subresource.
 */
function equivalentsOf(catalog: ResourceCatalog, a: AdmissionAttributes): ResourceInfo[] {
  const type = storageTypeOf(a.info);
  return catalog
    .all()
    .filter(
      (info) =>
        storageTypeOf(info) === type &&
        !(info.group === a.info.group && info.version === a.info.version) &&
        (a.subresource === '' || info.subresources[a.subresource] !== undefined),
    );
}

/** The rules' match: the request's own resource first, then (Equivalent) another version of it. */
function rulesMatch(catalog: ResourceCatalog, rules: Obj[], matchPolicy: unknown, a: AdmissionAttributes): MatchedAs | undefined {
  for (const rule of rules) if (namedRuleMatches(rule, a, a.info)) return { info: a.info };
  if (matchPolicy === 'Exact') return undefined;
  const equivalents = equivalentsOf(catalog, a);
  for (const rule of rules) for (const info of equivalents) if (namedRuleMatches(rule, a, info)) return { info };
  return undefined;
}

/** Reads namespaces for selectors and for `namespaceObject`, once per request. */
export class NamespaceLookup {
  private readonly cache = new Map<string, Promise<Obj | undefined>>();
  constructor(private readonly storage: Storage) {}

  get(name: string): Promise<Obj | undefined> {
    let found = this.cache.get(name);
    if (found === undefined) {
      found = this.storage.get('namespaces', name).then((s) => (s === undefined ? undefined : (JSON.parse(s.json) as Obj)));
      this.cache.set(name, found);
    }
    return found;
  }
}

/** A match, or the error kube reports when a policy's or binding's match cannot be decided. */
export type MatchOutcome = { matches: false } | { matches: true; as: MatchedAs } | { matches: false; error: string };

/**
 * kube's MatchResources check for one request: namespace selector (the namespace's labels, or a
 * Namespace's own), object selector (object or old object), excluded rules, then the rules (all
 * resources when there are none), with Equivalent matching unless matchPolicy is Exact.
 */
export async function matchResources(catalog: ResourceCatalog, namespaces: NamespaceLookup, m: Obj, a: AdmissionAttributes): Promise<MatchOutcome> {
  const nsSelector = isObject(m.namespaceSelector) ? m.namespaceSelector : {};
  const nsName = selectorNamespaceOf(a);
  const isNamespace = a.info.group === '' && a.info.resource === 'namespaces';
  if (nsName !== '' || isNamespace) {
    const matchLabels = isObject(nsSelector.matchLabels) ? nsSelector.matchLabels : {};
    const expressions = Array.isArray(nsSelector.matchExpressions) ? nsSelector.matchExpressions : [];
    if (Object.keys(matchLabels).length > 0 || expressions.length > 0) {
      let labels: unknown;
      if (isNamespace && a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE')) {
        labels = (a.object?.metadata as Obj | undefined)?.labels;
      } else {
        const ns = await namespaces.get(nsName);
        if (ns === undefined) return { matches: false, error: `namespaces "${nsName}" not found` };
        labels = (ns.metadata as Obj | undefined)?.labels;
      }
      if (!selectorMatches(nsSelector, labels ?? {})) return { matches: false };
    }
  }
  const objSelector = isObject(m.objectSelector) ? m.objectSelector : {};
  const labelsOf = (o: Obj | undefined): unknown => (o?.metadata as Obj | undefined)?.labels ?? {};
  if (
    !(a.object !== undefined && selectorMatches(objSelector, labelsOf(a.object))) &&
    !(a.oldObject !== undefined && selectorMatches(objSelector, labelsOf(a.oldObject)))
  ) {
    return { matches: false };
  }
  const excluded = Array.isArray(m.excludeResourceRules) ? m.excludeResourceRules.filter(isObject) : [];
  if (rulesMatch(catalog, excluded, m.matchPolicy, a) !== undefined) return { matches: false };
  const rules = Array.isArray(m.resourceRules) ? m.resourceRules.filter(isObject) : [];
  if (rules.length === 0) return { matches: true, as: { info: a.info } };
  const as = rulesMatch(catalog, rules, m.matchPolicy, a);
  return as === undefined ? { matches: false } : { matches: true, as };
}

/**
 * `obj` (in the request's version `from`) in the version a policy matched it as: custom resources
 * whose CRD converts by webhook go through the webhook (rejecting with its 500 ApiError, kube's
 * `conversion webhook for ... failed` message), other kinds through the storage version.
 */
export async function inMatchedVersion(facts: CustomResourceFacts, obj: Obj | undefined, from: ResourceInfo, as: MatchedAs): Promise<Obj | undefined> {
  return obj === undefined ? undefined : convertBetween(facts, obj, from, as.info);
}

/**
 * `obj`, an object of `from`, as an object of `to` (the same object when the versions agree), with
 * the conversion webhook `facts` name for a custom resource; see inMatchedVersion.
 */
export async function convertBetween(facts: CustomResourceFacts, obj: Obj, from: ResourceInfo, to: ResourceInfo): Promise<Obj> {
  if (to.group === from.group && to.version === from.version) return obj;
  const target = apiVersionOf(to.group, to.version);
  const conversion = from.custom === true ? facts.conversionOf(target, to.kind) : undefined;
  if (conversion === undefined) return servedObject(toStorageVersion(structuredClone(obj), from), target);
  const [converted] = await convertByWebhook(conversion, [structuredClone(obj)], target);
  return converted;
}
