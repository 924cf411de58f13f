import { requestUser } from '../auth/auth-filter.js';
import type { User } from '../auth/user.js';
import type { Request, Response } from 'express';
import { alreadyExists, notFound, storageUnavailable, staleConflict, gone, timeout, tooLarge, writeTimeout } from '../api/errors.js';
import type { RequestInfo } from '../api/request-info.js';
import { negotiateOutput, type OutputFormat } from '../codec/negotiation.js';
import { hasProtobufMessage } from '../codec/protobuf/protobuf-codec.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import { apiVersionOf, storageTypeOf, type ResourceInfo } from '../registry/resource-types.js';
import { StorageError, type Storage } from '../storage/storage.js';
import type { Admission } from '../admission/admission.js';
import type { FeatureGates } from '../server/feature-gates.js';
import type { Limits } from '../api/limits.js';
import { writeOptionsFrom, type WriteOptions } from '../api/request-options.js';
import type { ServiceNetwork } from '../services/service-allocation.js';

/** Server-wide collaborators every handler may use. */
export interface ApiServices {
  registry: ResourceRegistry;
  storage: Storage;
  admission: Admission;
  featureGates: FeatureGates;
  /** Bounds on request bodies, stored objects and patches. */
  limits: Limits;
  /** Change history window in ms (continue tokens and watch history). */
  historyMs: number;
  /** Minimum request timeout in seconds; watches without timeoutSeconds end after a random 1-2x of it. */
  minRequestTimeoutSeconds: number;
  /** Signal that fires when the server starts shutting down (ends watches). */
  shutdownSignal: AbortSignal;
  /** Clock in ms (continue-token issue and expiry); replaceable in tests. */
  now: () => number;
  /** Period of BOOKMARK events on otherwise quiet watches that allow them. */
  bookmarkIntervalMs: number;
  /** A watcher whose unsent backlog exceeds this many bytes is closed. */
  maxWatchBacklogBytes: number;
  /** Service cluster IP and node port ranges, and the allocators over them. */
  serviceNetwork: ServiceNetwork;
}

/** A served type and the request info naming one object or collection of it (no HTTP attached). */
export interface ResourceTarget {
  services: ApiServices;
  info: ResourceInfo;
  ri: RequestInfo;
  /** Storage type: group + resource. */
  type: string;
  /** `apiVersion` of objects served at this path. */
  apiVersion: string;
}

/** One request against a resource path, resolved to its served type. */
export interface ResourceRequest extends ResourceTarget {
  query: URLSearchParams;
  req: Request;
  res: Response;
  /** Who sent the request (established by the auth filter). */
  user: User;
}

/** A target for server-internal work (controllers, bootstrap) on `info`. */
export function makeTarget(services: ApiServices, info: ResourceInfo, namespace: string, name: string): ResourceTarget {
  return {
    services,
    info,
    type: storageTypeOf(info),
    apiVersion: apiVersionOf(info.group, info.version),
    ri: { group: info.group, version: info.version, namespace, resource: info.resource, name, subresource: '', subpath: [], verb: 'delete' },
  };
}

export function makeResourceRequest(
  services: ApiServices,
  info: ResourceInfo,
  ri: RequestInfo,
  req: Request,
  res: Response,
  query: URLSearchParams,
): ResourceRequest {
  return { services, info, ri, type: storageTypeOf(info), apiVersion: apiVersionOf(info.group, info.version), query, req, res, user: requestUser(res) };
}

/** Maps storage failures to Kubernetes errors about `name` of the request's resource: the one place this happens. */
export function storageErrorToApi(err: unknown, r: ResourceTarget, name: string): unknown {
  if (!(err instanceof StorageError)) return err;
  const qr = { group: r.info.group, resource: r.info.resource };
  switch (err.code) {
    case 'NotFound':
      return notFound(qr, name);
    case 'AlreadyExists':
      return alreadyExists(qr, name);
    case 'Conflict':
      return staleConflict(qr, name);
    case 'Gone':
      return gone(err.message);
    case 'TooLarge':
      return timeout('Too large resource version', 1);
    case 'ObjectTooLarge':
      return tooLarge(err.message);
    case 'Unavailable':
      return storageUnavailable(err);
    case 'Timeout':
      return writeTimeout();
  }
}

/** Runs a storage call, mapping its failures with `storageErrorToApi`. */
export async function withStorage<T>(r: ResourceTarget, name: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw storageErrorToApi(err, r, name);
  }
}

/** Whether objects of the request's type can be served as Protobuf (built-in types with a message). */
export function supportsProtobuf(r: ResourceTarget, kind = r.info.kind, apiVersion = r.apiVersion): boolean {
  return r.info.custom !== true && hasProtobufMessage(apiVersion, kind);
}

/** The response format of a request answering with an object or a list (Accept, `pretty`). */
export function outputFor(r: ResourceRequest, target: 'object' | 'list', kind = r.info.kind, apiVersion = r.apiVersion): OutputFormat {
  return negotiateOutput(r.req.headers.accept, target, r.query.get('pretty') === 'true', supportsProtobuf(r, kind, apiVersion));
}

/** The kind and apiVersion a request's body and answer have: Scale for the scale subresource. */
export function scaleKind(r: ResourceRequest): [string, string] {
  return r.ri.subresource === 'scale' ? ['Scale', 'autoscaling/v1'] : [r.info.kind, r.apiVersion];
}

const writeOptionsCache = new WeakMap<ResourceRequest, WriteOptions>();

/**
 * The request's create, update or patch options (`dryRun`, `fieldManager`, `fieldValidation`,
 * `force`), validated once per request as kube-apiserver validates them (422 on the options kind).
 */
export function writeOptionsOf(r: ResourceRequest): WriteOptions {
  let options = writeOptionsCache.get(r);
  if (options === undefined) {
    const kind = r.ri.verb === 'create' ? 'CreateOptions' : r.ri.verb === 'patch' ? 'PatchOptions' : 'UpdateOptions';
    const isApply = (r.req.headers['content-type'] ?? '').startsWith('application/apply-patch');
    options = writeOptionsFrom(r.query, kind, kind === 'PatchOptions' && isApply);
    writeOptionsCache.set(r, options);
  }
  return options;
}
