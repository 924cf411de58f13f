import { badRequest, methodNotAllowed } from '../api/errors.js';
import { writeObject } from '../codec/response-writer.js';
import { writeOptionsOf, type ResourceRequest, outputFor, scaleKind } from './context.js';
import { decodeObject } from './decode-object.js';
import { isObject, metadataOf, type Obj } from '../api/object-util.js';

/** The user every request runs as until authentication exists: an administrator, as with a local kube-apiserver's loopback client. */
export const DEFAULT_USER = { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] };

/**
 * Virtual types: create-only resources that answer a question rather than store an object (access
 * reviews, self subject review, token review). With the allow-all authorizer every access is allowed.
 */
export function isVirtualType(r: ResourceRequest): boolean {
  return r.info.verbs.length === 1 && r.info.verbs[0] === 'create' && r.info.resource !== 'bindings';
}

export async function handleVirtualCreate(r: ResourceRequest): Promise<void> {
  if (r.ri.verb !== 'create' || r.ri.name !== '') throw methodNotAllowed();
  const format = outputFor(r, 'object', ...scaleKind(r));
  writeOptionsOf(r);
  const obj: Obj = await decodeObject(r);
  obj.kind = r.info.kind;
  obj.apiVersion = r.apiVersion;
  const meta = metadataOf(obj);
  if (r.info.namespaced) meta.namespace = r.ri.namespace;
  meta.creationTimestamp = meta.creationTimestamp ?? null;
  switch (r.info.resource) {
    case 'selfsubjectaccessreviews':
    case 'subjectaccessreviews':
    case 'localsubjectaccessreviews':
      if (!isObject(obj.spec)) throw badRequest('spec: Required value');
      obj.status = { allowed: true, reason: 'allowed by the allow-all authorizer' };
      break;
    case 'selfsubjectrulesreviews':
      obj.status = {
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
        nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        incomplete: false,
      };
      break;
    case 'selfsubjectreviews':
      obj.status = { userInfo: DEFAULT_USER };
      break;
    case 'tokenreviews':
      obj.status = { authenticated: false, user: {}, error: 'token authentication is not enabled' };
      break;
    default:
      obj.status = {};
  }
  writeObject(r.res, 201, obj, format);
}
