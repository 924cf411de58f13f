import { randomUUID } from 'node:crypto';
import { ApiError } from '../../api/errors.js';
import { isObject, objectKey, type Obj } from '../../api/object-util.js';
import { servedObjectAsync } from '../../conversion/converting-io.js';
import type { ResourceCatalog } from '../../catalog/resource-catalog.js';
import type { CustomResourceFacts } from '../../catalog/custom-resource-facts.js';
import { storageTypeOf } from '../../api/resource-info.js';
import type { Storage } from '../../storage/storage.js';
import { selectorMatches } from '../../validation/label-selector.js';
import type { AdmissionAttributes } from '../admission.js';
import { inMatchedVersion, type MatchedAs } from './policy-matching.js';

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Params for one binding: the objects to evaluate with (`[null]` when the policy takes none), or a configuration error. */
export type ParamsOutcome = { ok: true; params: (Obj | null)[] } | { ok: false; error: string };

/**
 * kube's CollectParams: no paramKind or no paramRef evaluates once with null params; otherwise the
 * named object or the selected ones (in the paramKind's version: custom resources whose CRD converts by
 * webhook go through it, and a failed conversion is a configuration error), from the paramRef's namespace or the
 * request's. None found with `parameterNotFoundAction: Deny` is an error; with Allow nothing is evaluated.
 */
export async function collectParams(
  catalog: ResourceCatalog,
  storage: Storage,
  paramKind: unknown,
  paramRef: unknown,
  requestNamespace: string,
): Promise<ParamsOutcome> {
  if (!isObject(paramKind) || !isObject(paramRef)) return { ok: true, params: [null] };
  const apiVersion = typeof paramKind.apiVersion === 'string' ? paramKind.apiVersion : '';
  const kind = typeof paramKind.kind === 'string' ? paramKind.kind : '';
  const { group, version } = splitApiVersion(apiVersion);
  const info = catalog.byKind(group, version, kind);
  if (info === undefined) return { ok: false, error: `paramKind kind \`&ParamKind{APIVersion:${apiVersion},Kind:${kind},}\` not known` };
  const refNamespace = typeof paramRef.namespace === 'string' ? paramRef.namespace : '';
  let namespace = '';
  if (info.namespaced) {
    namespace = refNamespace !== '' ? refNamespace : requestNamespace;
    if (namespace === '') return { ok: false, error: 'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources' };
  } else if (refNamespace !== '') {
    return { ok: false, error: 'paramRef.namespace must not be provided for a cluster-scoped `paramKind`' };
  }
  const type = storageTypeOf(info);
  const name = typeof paramRef.name === 'string' ? paramRef.name : '';
  let stored: Obj[];
  if (name !== '') {
    if (paramRef.selector !== undefined && paramRef.selector !== null)
      return { ok: false, error: 'paramRef.name and paramRef.selector are mutually exclusive' };
    const found = await storage.get(type, objectKey(namespace, name));
    stored = found === undefined ? [] : [JSON.parse(found.json) as Obj];
  } else if (isObject(paramRef.selector)) {
    const selector = paramRef.selector;
    const listed = await storage.list(type);
    stored = listed.items
      .map((item) => JSON.parse(item.json) as Obj)
      .filter((o) => {
        const meta = isObject(o.metadata) ? o.metadata : {};
        return (!info.namespaced || meta.namespace === namespace) && selectorMatches(selector, meta.labels ?? {});
      });
  } else {
    return { ok: false, error: 'one of name or selector must be provided' };
  }
  const params: Obj[] = [];
  try {
    for (const o of stored) params.push(await servedObjectAsync(catalog.customResources, o, apiVersion));
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, error: err.message };
    throw err;
  }
  if (params.length === 0 && paramRef.parameterNotFoundAction === 'Deny') {
    return { ok: false, error: 'no params found for policy binding with `Deny` parameterNotFoundAction' };
  }
  return { ok: true, params };
}

/** The CEL `request` variable: the AdmissionRequest kube would send, for the version the policy matched. */
export function admissionRequestOf(a: AdmissionAttributes, as: MatchedAs): Obj {
  const user = a.request?.user;
  const request: Obj = {
    uid: randomUUID(),
    kind: { group: as.info.group, version: as.info.version, kind: as.info.kind },
    resource: { group: as.info.group, version: as.info.version, resource: as.info.resource },
    requestKind: { group: a.info.group, version: a.info.version, kind: a.info.kind },
    requestResource: { group: a.info.group, version: a.info.version, resource: a.info.resource },
    name: a.name,
    namespace: a.namespace,
    operation: a.operation,
    userInfo: user === undefined ? {} : { username: user.name, uid: user.uid, groups: user.groups, extra: user.extra },
    dryRun: a.dryRun,
  };
  if (a.subresource !== '') {
    request.subResource = a.subresource;
    request.requestSubResource = a.subresource;
  }
  return request;
}

/**
 * The CEL `namespaceObject`: the request's Namespace with the fields kube exposes (metadata without
 * managedFields, spec, status), or null for cluster-scoped requests and Namespaces themselves.
 */
export function namespaceObjectOf(ns: Obj | undefined): Obj | null {
  if (ns === undefined) return null;
  const meta = isObject(ns.metadata) ? { ...ns.metadata } : {};
  delete meta.managedFields;
  return { metadata: meta, spec: ns.spec ?? {}, status: ns.status ?? {} };
}

/**
 * The request's object and old object in the matched version, null where absent, as CEL sees them
 * (old object first, as kube's NewVersionedAttributes). Rejects as inMatchedVersion does.
 */
export async function objectsOf(facts: CustomResourceFacts, a: AdmissionAttributes, as: MatchedAs): Promise<{ object: Obj | null; oldObject: Obj | null }> {
  const oldObject = (await inMatchedVersion(facts, a.oldObject, a.info, as)) ?? null;
  return { object: (await inMatchedVersion(facts, a.object, a.info, as)) ?? null, oldObject };
}
