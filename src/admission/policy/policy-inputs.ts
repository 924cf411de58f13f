import { randomUUID } from 'node:crypto';
import { isObject, objectKey, type Obj } from '../../api/object-util.js';
import { servedObject } from '../../conversion/version-conversion.js';
import type { ResourceRegistry } from '../../registry/resource-registry.js';
import { storageTypeOf } from '../../registry/resource-types.js';
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
 * named object or the selected ones (in the paramKind's version), from the paramRef's namespace or the
 * request's. None found with `parameterNotFoundAction: Deny` is an error; with Allow nothing is evaluated.
 */
export async function collectParams(
  registry: ResourceRegistry,
  storage: Storage,
  paramKind: unknown,
  paramRef: unknown,
  requestNamespace: string,
): Promise<ParamsOutcome> {
  if (!isObject(paramKind) || !isObject(paramRef)) return { ok: true, params: [null] };
  const apiVersion = typeof paramKind.apiVersion === 'string' ? paramKind.apiVersion : '';
  const kind = typeof paramKind.kind === 'string' ? paramKind.kind : '';
  const { group, version } = splitApiVersion(apiVersion);
  const info = registry.byKind(group, version, kind);
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
  let params: Obj[];
  if (name !== '') {
    if (paramRef.selector !== undefined && paramRef.selector !== null)
      return { ok: false, error: 'paramRef.name and paramRef.selector are mutually exclusive' };
    const stored = await storage.get(type, objectKey(namespace, name));
    params = stored === undefined ? [] : [servedObject(JSON.parse(stored.json) as Obj, apiVersion)];
  } else if (isObject(paramRef.selector)) {
    const selector = paramRef.selector;
    const listed = await storage.list(type);
    params = listed.items
      .map((item) => JSON.parse(item.json) as Obj)
      .filter((o) => {
        const meta = isObject(o.metadata) ? o.metadata : {};
        return (!info.namespaced || meta.namespace === namespace) && selectorMatches(selector, meta.labels ?? {});
      })
      .map((o) => servedObject(o, apiVersion));
  } else {
    return { ok: false, error: 'one of name or selector must be provided' };
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

/** The request's object and old object in the matched version, null where absent, as CEL sees them. */
export function objectsOf(a: AdmissionAttributes, as: MatchedAs): { object: Obj | null; oldObject: Obj | null } {
  return { object: inMatchedVersion(a.object, a.info, as) ?? null, oldObject: inMatchedVersion(a.oldObject, a.info, as) ?? null };
}
