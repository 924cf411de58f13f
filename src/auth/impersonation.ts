import type { IncomingMessage } from 'node:http';
import { badRequest } from '../api/errors.js';
import type { AuthorizationAttributes, Authorizer, Decision } from './authorizer.js';
import { ANONYMOUS_USER_NAME, AUTHENTICATED_GROUP, serviceAccountOf, UNAUTHENTICATED_GROUP, type User } from './user.js';

const USER_HEADER = 'impersonate-user';
const GROUP_HEADER = 'impersonate-group';
const UID_HEADER = 'impersonate-uid';
const EXTRA_PREFIX = 'impersonate-extra-';

/** One thing a request asks to act as, kube's ObjectReference of an impersonation request. */
interface ImpersonationRequest {
  kind: 'ServiceAccount' | 'User' | 'Group' | 'UserExtra' | 'UID';
  namespace: string;
  name: string;
  apiVersion: string;
  fieldPath: string;
}

function headerValues(req: IncomingMessage, name: string): string[] {
  const raw = req.headersDistinct[name];
  return raw === undefined ? [] : raw;
}

/** Go's %v of an ObjectReference: its seven fields separated by spaces. */
function goReference(r: ImpersonationRequest): string {
  return `{${[r.kind, r.namespace, r.name, '', r.apiVersion, '', r.fieldPath].join(' ')}}`;
}

function requestsOf(req: IncomingMessage): ImpersonationRequest[] {
  const out: ImpersonationRequest[] = [];
  const base = { namespace: '', apiVersion: '', fieldPath: '' };
  const user = headerValues(req, USER_HEADER)[0] ?? '';
  if (user !== '') {
    const sa = serviceAccountOf(user);
    out.push(sa !== undefined ? { ...base, kind: 'ServiceAccount', namespace: sa.namespace, name: sa.name } : { ...base, kind: 'User', name: user });
  }
  const groups = headerValues(req, GROUP_HEADER);
  for (const g of groups) out.push({ ...base, kind: 'Group', name: g });
  let hasExtra = false;
  for (const header of Object.keys(req.headersDistinct)) {
    if (!header.startsWith(EXTRA_PREFIX)) continue;
    hasExtra = true;
    let key = header.slice(EXTRA_PREFIX.length);
    try {
      key = decodeURIComponent(key);
    } catch {
      // kept as sent, as kube records malformed keys
    }
    for (const value of headerValues(req, header))
      out.push({ ...base, kind: 'UserExtra', apiVersion: 'authentication.k8s.io/v1', name: value, fieldPath: key });
  }
  const uid = headerValues(req, UID_HEADER)[0] ?? '';
  if (uid !== '') out.push({ ...base, kind: 'UID', apiVersion: 'authentication.k8s.io/v1', name: uid });
  if ((groups.length > 0 || hasExtra || uid !== '') && user === '') {
    throw badRequest(`requested [${out.map(goReference).join(' ')}] without impersonating a user`);
  }
  return out;
}

/** A refused impersonation: the attributes that were refused and the authorizer's decision. */
export class ImpersonationDenied extends Error {
  constructor(
    readonly attributes: AuthorizationAttributes,
    readonly decision: Decision,
  ) {
    super('impersonation denied');
  }
}

/**
 * kube's impersonation filter: with `Impersonate-User` (and optionally `-Group`, `-Uid`,
 * `-Extra-KEY`) the request acts as that user once the requester is authorized for the
 * `impersonate` verb on each (users, groups, serviceaccounts, uids and userextras/KEY of
 * authentication.k8s.io). Returns `user` unchanged when nothing is asked; throws 400 for groups,
 * extras or a uid without a user, and {@link ImpersonationDenied} for the first refused item. The
 * impersonated user gets system:authenticated (system:unauthenticated for system:anonymous), and
 * a service account its two groups unless groups were given. The headers are removed.
 */
export async function impersonate(req: IncomingMessage, requester: User, authorizer: Authorizer): Promise<User> {
  const requests = requestsOf(req);
  if (requests.length === 0) return requester;
  const groupsSpecified = headerValues(req, GROUP_HEADER).length > 0;
  let name = '';
  let uid = '';
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  for (const r of requests) {
    const attrs: AuthorizationAttributes = {
      user: requester,
      verb: 'impersonate',
      resourceRequest: true,
      apiGroup: r.apiVersion === '' ? '' : 'authentication.k8s.io',
      apiVersion: r.apiVersion === '' ? '' : 'v1',
      namespace: r.namespace,
      resource: '',
      subresource: '',
      name: r.name,
      path: '',
    };
    switch (r.kind) {
      case 'ServiceAccount':
        attrs.resource = 'serviceaccounts';
        name = `system:serviceaccount:${r.namespace}:${r.name}`;
        if (!groupsSpecified) groups = ['system:serviceaccounts', `system:serviceaccounts:${r.namespace}`];
        break;
      case 'User':
        attrs.resource = 'users';
        name = r.name;
        break;
      case 'Group':
        attrs.resource = 'groups';
        groups.push(r.name);
        break;
      case 'UserExtra':
        attrs.resource = 'userextras';
        attrs.subresource = r.fieldPath;
        (extra[r.fieldPath] ??= []).push(r.name);
        break;
      case 'UID':
        attrs.resource = 'uids';
        uid = r.name;
        break;
    }
    const decision = await authorizer.authorize(attrs);
    if (!decision.allowed) throw new ImpersonationDenied(attrs, decision);
  }
  if (name !== ANONYMOUS_USER_NAME) {
    if (!groups.includes(AUTHENTICATED_GROUP) && !groups.includes(UNAUTHENTICATED_GROUP)) groups.push(AUTHENTICATED_GROUP);
  } else if (!groups.includes(UNAUTHENTICATED_GROUP)) {
    groups.push(UNAUTHENTICATED_GROUP);
  }
  delete req.headers[USER_HEADER];
  delete req.headers[GROUP_HEADER];
  delete req.headers[UID_HEADER];
  for (const header of Object.keys(req.headers)) if (header.startsWith(EXTRA_PREFIX)) delete req.headers[header];
  return { name, uid, groups, extra };
}
