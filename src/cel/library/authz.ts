/**
 * kube's authorizer library (with the selectors of AuthorizeWithSelectors): `authorizer.group(g)
 * .resource(r).subresource(s).namespace(n).name(x).fieldSelector(f).labelSelector(l).check(verb)`,
 * `authorizer.path(p).check(verb)`, `authorizer.serviceAccount(ns, name)` (an authorizer acting as
 * that service account), and the decision's `allowed`, `reason`, `errored`, `error`. The checks run
 * synchronously against an AuthorizerBackend the caller supplies (`authorizerValue`).
 */
import { asOpaque, opaqueValue } from '../values.js';
import { defineMethod } from './registry.js';
import { stringOrUndefined } from '../../api/values.js';

/** What one check asks, in kube's authorizer.Attributes terms. */
export interface AuthzAttributes {
  /** The user the check is for: the request's user, or `system:serviceaccount:<ns>:<name>`. */
  serviceAccount?: { namespace: string; name: string };
  verb: string;
  /** Set for resource checks. */
  resource?: { group: string; resource: string; subresource: string; namespace: string; name: string; fieldSelector?: string; labelSelector?: string };
  /** Set for non-resource (path) checks. */
  path?: string;
}

export interface AuthzDecision {
  decision: 'allow' | 'deny' | 'no_opinion';
  reason: string;
  /** An evaluation error of the authorizer, when there was one. */
  error?: string;
}

/** The authorization the library asks: synchronous (the caller resolves what it needs beforehand). */
export type AuthorizerBackend = (attrs: AuthzAttributes) => AuthzDecision;

const AUTHORIZER = 'kubernetes.authorization.Authorizer';
const GROUP = 'kubernetes.authorization.GroupCheck';
const RESOURCE = 'kubernetes.authorization.ResourceCheck';
const PATH = 'kubernetes.authorization.PathCheck';
const DECISION = 'kubernetes.authorization.Decision';

interface AuthorizerState {
  backend: AuthorizerBackend;
  serviceAccount?: { namespace: string; name: string };
}
interface ResourceState extends AuthorizerState {
  resource: NonNullable<AuthzAttributes['resource']>;
}
interface PathState extends AuthorizerState {
  path: string;
}

let ids = 0;
const value = (type: string, state: unknown): ReturnType<typeof opaqueValue> => opaqueValue(type, String(++ids), state);

/** The value of the `authorizer` variable, checking with BACKEND. */
export function authorizerValue(backend: AuthorizerBackend): ReturnType<typeof opaqueValue> {
  return value(AUTHORIZER, { backend } satisfies AuthorizerState);
}

/** The value of `authorizer.requestResource`: a resource check for the request's own resource. */
export function requestResourceValue(backend: AuthorizerBackend, resource: ResourceState['resource']): ReturnType<typeof opaqueValue> {
  return value(RESOURCE, { backend, resource } satisfies ResourceState);
}

defineMethod('group', 1, (r, g) => {
  const a = asOpaque<AuthorizerState>(r, AUTHORIZER);
  return a === undefined || stringOrUndefined(g) === undefined ? undefined : value(GROUP, { ...a, group: g });
});
defineMethod('serviceAccount', 2, (r, ns, name) => {
  const a = asOpaque<AuthorizerState>(r, AUTHORIZER);
  if (a === undefined || stringOrUndefined(ns) === undefined || stringOrUndefined(name) === undefined) return undefined;
  return value(AUTHORIZER, { backend: a.backend, serviceAccount: { namespace: ns as string, name: name as string } });
});
defineMethod('path', 1, (r, p) => {
  const a = asOpaque<AuthorizerState>(r, AUTHORIZER);
  return a === undefined || stringOrUndefined(p) === undefined ? undefined : value(PATH, { ...a, path: p });
});
defineMethod('resource', 1, (r, res) => {
  const g = asOpaque<AuthorizerState & { group: string }>(r, GROUP);
  if (g === undefined || stringOrUndefined(res) === undefined) return undefined;
  return value(RESOURCE, {
    backend: g.backend,
    serviceAccount: g.serviceAccount,
    resource: { group: g.group, resource: res as string, subresource: '', namespace: '', name: '' },
  });
});
for (const field of ['subresource', 'namespace', 'name', 'fieldSelector', 'labelSelector'] as const) {
  defineMethod(field, 1, (r, v) => {
    const s = asOpaque<ResourceState>(r, RESOURCE);
    if (s === undefined || stringOrUndefined(v) === undefined) return undefined;
    return value(RESOURCE, { ...s, resource: { ...s.resource, [field]: v } });
  });
}
defineMethod('check', 1, (r, verb) => {
  if (typeof verb !== 'string') return undefined;
  const res = asOpaque<ResourceState>(r, RESOURCE);
  if (res !== undefined) return value(DECISION, res.backend({ serviceAccount: res.serviceAccount, verb, resource: res.resource }));
  const p = asOpaque<PathState>(r, PATH);
  if (p !== undefined) return value(DECISION, p.backend({ serviceAccount: p.serviceAccount, verb, path: p.path }));
  return undefined;
});
const decision = (v: unknown): AuthzDecision | undefined => asOpaque<AuthzDecision>(v, DECISION);
defineMethod('allowed', 0, (r) => (decision(r) === undefined ? undefined : decision(r)!.decision === 'allow'));
defineMethod('reason', 0, (r) => decision(r)?.reason);
defineMethod('errored', 0, (r) => (decision(r) === undefined ? undefined : decision(r)!.error !== undefined));
defineMethod('error', 0, (r) => (decision(r) === undefined ? undefined : (decision(r)!.error ?? '')));
