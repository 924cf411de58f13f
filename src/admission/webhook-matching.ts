import { servedObject, toStorageVersion } from '../conversion/version-conversion.js';
import { convertByWebhook } from '../conversion/webhook-conversion.js';
import type { CustomResourceFacts } from '../catalog/custom-resource-facts.js';
import { ApiError, internalError } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import { fromScale, toScale } from '../strategy/scale.js';
import type { ResourceCatalog } from '../catalog/resource-catalog.js';
import { apiVersionOf, storageTypeOf, type ResourceInfo } from '../api/resource-info.js';
import type { AdmissionAttributes } from './admission.js';
import type { WebhookRule } from './webhook-configurations.js';

/**
 * Which webhooks a write reaches, after kube's rule matcher (admission/plugin/webhook/predicates/rules)
 * and its Equivalent match policy: a rule matches the operation, the API group and version, the
 * resource (`pods`, `pods/status`, `*`, `*\/status`, `pods/*`) and the scope. With matchPolicy
 * Equivalent, a write the rules miss is matched again as each other version (and group) serving the
 * same stored objects, and the webhook then sees the object converted to that version, as kube
 * converts it.
 */

/** The namespace kube's admission attributes carry: a Namespace object's own name for namespace paths. */
export function admissionNamespace(a: AdmissionAttributes): string {
  return isNamespaceResource(a.info) && a.name !== '' && a.operation !== 'CREATE' ? a.name : a.namespace;
}

/** Whether `info` is core/v1 `namespaces`. */
export function isNamespaceResource(info: { group: string; resource: string }): boolean {
  return info.group === '' && info.resource === 'namespaces';
}

function exactOrWildcard(items: string[], requested: string): boolean {
  return items.some((i) => i === '*' || i === requested);
}

/** kube's rules.Matcher: whether `rule` matches a write of `resource` (group, version, name) in `attrs`. */
export function ruleMatches(rule: WebhookRule, attrs: AdmissionAttributes, resource: { group: string; version: string; resource: string }): boolean {
  const namespace = admissionNamespace(attrs);
  const isNamespace = resource.group === '' && resource.version === 'v1' && resource.resource === 'namespaces';
  switch (rule.scope) {
    case '*':
      break;
    case 'Namespaced':
      if (isNamespace || namespace === '') return false;
      break;
    case 'Cluster':
      if (!isNamespace && namespace !== '') return false;
      break;
    default:
      return false;
  }
  if (!rule.operations.some((op) => op === '*' || op === attrs.operation)) return false;
  if (!exactOrWildcard(rule.apiGroups, resource.group)) return false;
  if (!exactOrWildcard(rule.apiVersions, resource.version)) return false;
  return rule.resources.some((entry) => {
    const slash = entry.indexOf('/');
    const res = slash < 0 ? entry : entry.slice(0, slash);
    const sub = slash < 0 ? '' : entry.slice(slash + 1);
    return (res === '*' || res === resource.resource) && (sub === '*' || sub === attrs.subresource);
  });
}

/**
 * The resource a webhook is called for: the request's own when a rule matches it, else (Equivalent)
 * the first other version serving the same objects that a rule matches, else undefined.
 */
export function matchedResource(rules: WebhookRule[], matchPolicy: string, attrs: AdmissionAttributes, catalog: ResourceCatalog): ResourceInfo | undefined {
  if (rules.some((r) => ruleMatches(r, attrs, attrs.info))) return attrs.info;
  if (matchPolicy !== 'Equivalent') return undefined;
  const equivalents = equivalentResources(attrs.info, attrs.subresource, catalog);
  for (const rule of rules) for (const e of equivalents) if (ruleMatches(rule, attrs, e)) return e;
  return undefined;
}

/** Every other served version (and group) of `info`'s stored objects that has `subresource`. */
function equivalentResources(info: ResourceInfo, subresource: string, catalog: ResourceCatalog): ResourceInfo[] {
  const type = storageTypeOf(info);
  return catalog
    .all()
    .filter(
      (other) =>
        storageTypeOf(other) === type &&
        !(other.group === info.group && other.version === info.version && other.resource === info.resource) &&
        (subresource === '' || other.subresources[subresource] !== undefined),
    );
}

/** Whether a write is to the scale subresource, whose webhooks see autoscaling/v1 Scale objects. */
export function isScaleWrite(attrs: AdmissionAttributes): boolean {
  return attrs.subresource === 'scale' && attrs.info.subresources.scale !== undefined;
}

/**
 * What a webhook sees of `obj` (an object of the request's resource) when called for `to`: a Scale
 * for scale writes, otherwise the object converted to `to`'s version (by the conversion webhook
 * `facts` name for a custom resource).
 */
export async function webhookView(facts: CustomResourceFacts, obj: Obj, attrs: AdmissionAttributes, to: ResourceInfo): Promise<Obj> {
  return isScaleWrite(attrs) ? toScale(attrs.info, obj) : convertForWebhook(facts, obj, attrs.info, to);
}

/** The object a webhook's patched view stands for, in the request's version (`facts` as for webhookView). */
export async function fromWebhookView(facts: CustomResourceFacts, view: Obj, attrs: AdmissionAttributes, from: ResourceInfo, current: Obj): Promise<Obj> {
  return isScaleWrite(attrs) ? fromScale(attrs.info, view, current) : convertForWebhook(facts, view, from, attrs.info);
}

/**
 * `convertObject`, except for custom resources whose CRD converts by webhook: those go through the
 * CRD's conversion webhook, whose failure is a 500 InternalError as kube's webhook dispatchers answer it.
 */
async function convertForWebhook(facts: CustomResourceFacts, obj: Obj, from: ResourceInfo, to: ResourceInfo): Promise<Obj> {
  const target = apiVersionOf(to.group, to.version);
  const conversion = from.custom === true && obj.apiVersion !== target ? facts.conversionOf(target, to.kind) : undefined;
  if (conversion === undefined) return convertObject(obj, from, to);
  try {
    const [converted] = await convertByWebhook(conversion, [structuredClone(obj)], target);
    return converted;
  } catch (err) {
    throw err instanceof ApiError ? internalError(new Error(err.message)) : err;
  }
}

/**
 * `obj` (an object of `from`) as an object of `to`: through the storage version for kinds whose
 * versions differ, relabelled for the others (and for custom resources, whose conversion is None).
 */
export function convertObject(obj: Obj, from: ResourceInfo, to: ResourceInfo): Obj {
  const target = apiVersionOf(to.group, to.version);
  if (obj.apiVersion === target) return obj;
  const stored = toStorageVersion(structuredClone(obj), from);
  const converted = servedObject(stored, target);
  return converted === stored ? { ...stored, apiVersion: target } : converted;
}
