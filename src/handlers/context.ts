import type { ServerContext, ResourceTarget } from '../rest/server-context.js';
import type { User } from '../api/user.js';
import type { Request, Response } from 'express';
import type { RequestInfo } from '../api/request-info.js';
import { negotiateOutput, type OutputFormat } from '../codec/negotiation.js';
import { hasProtobufMessage } from '../codec/protobuf/protobuf-codec.js';
import { apiVersionOf, storageTypeOf, type ResourceInfo } from '../api/resource-info.js';
import { writeOptionsFrom, type WriteOptions } from '../api/request-options.js';
import { isReviewType } from '../rest/review-store.js';
import { httpScope, requestUser } from './http-scope.js';
import { printerOf } from '../strategy/strategies.js';
import { scalePrinter } from '../strategy/printers/autoscaling.js';

/** One request against a resource path, resolved to its served type. */
export interface ResourceRequest extends ResourceTarget {
  query: URLSearchParams;
  req: Request;
  res: Response;
  /** Who sent the request (established by the auth filter). */
  user: User;
}

export function makeResourceRequest(
  server: ServerContext,
  info: ResourceInfo,
  ri: RequestInfo,
  req: Request,
  res: Response,
  query: URLSearchParams,
): ResourceRequest {
  const user = requestUser(res);
  return {
    server,
    info,
    ri,
    type: storageTypeOf(info),
    apiVersion: apiVersionOf(info.group, info.version),
    query,
    req,
    res,
    user,
    scope: httpScope(user, query, res),
    admission: server.admission,
  };
}

/** Whether objects of the request's type can be served as Protobuf (built-in types with a message). */
export function supportsProtobuf(r: ResourceTarget, kind = r.info.kind, apiVersion = r.apiVersion): boolean {
  return r.info.custom !== true && hasProtobufMessage(apiVersion, kind);
}

/** Subresources whose kube storage has no Table conversion (their answers are not stored objects). */
const NO_TABLE_SUBRESOURCES = new Set(['binding', 'eviction', 'token']);

/**
 * Whether kube-apiserver serves the request's answers as Tables: every stored resource and its
 * status and scale, but not the reviews (access, token, self subject), `bindings`, nor the pod
 * binding, pod eviction and service account token subresources, whose storage has no TableConvertor.
 */
export function servesTables(r: ResourceTarget): boolean {
  if (r.ri.subresource !== '') return !NO_TABLE_SUBRESOURCES.has(r.ri.subresource.split('/')[0] ?? '');
  return !isReviewType(r) && r.info.resource !== 'bindings';
}

/** The response format of a request answering with an object or a list (Accept, `pretty`). */
export function outputFor(r: ResourceRequest, target: 'object' | 'list', kind = r.info.kind, apiVersion = r.apiVersion): OutputFormat {
  const format = negotiateOutput(r.req.headers.accept, target, {
    pretty: r.query.get('pretty') === 'true',
    protobuf: () => supportsProtobuf(r, kind, apiVersion),
    cbor: r.server.featureGates.CBORServingAndStorage === true,
    restfulRoute: r.info.custom !== true,
    table: servesTables(r),
  });
  if (format.representation !== 'Table') return format;
  // The answer's kind prints with its strategy's columns; a Scale with the Scale columns.
  const printer = kind === r.info.kind ? printerOf(r.info) : kind === 'Scale' ? scalePrinter : undefined;
  return { ...format, printer };
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
