import type { RequestInfo } from '../api/request-info.js';
import type { ParsedRequest } from '../api/parsed-request.js';

/**
 * How kube-apiserver labels a request in its metrics (endpoints/metrics CleanVerb/CleanScope):
 * - verb: the HTTP method upper-cased, GET on a collection is `LIST`, a watch is `WATCH`, a PATCH with
 *   the apply content type is `APPLY`, any request of a pod's log, exec, attach, portforward or a
 *   proxy is `CONNECT`; unknown methods are `other`;
 * - scope: `resource` for a named object or a create, `namespace` inside a namespace, `cluster` for
 *   other resource requests, '' for non-resource paths;
 * - non-resource paths (health, discovery, OpenAPI, /metrics) have empty group/version/resource and
 *   the path as `subresource`.
 */
export interface RequestLabels {
  verb: string;
  dry_run: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  component: 'apiserver';
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT']);

function scopeOf(info: RequestInfo): string {
  if (info.name !== '' || info.verb === 'create') return 'resource';
  if (info.namespace !== '') return 'namespace';
  return 'cluster';
}

/** Subresources kube reports with the verb CONNECT (its validConnectRequests). */
const CONNECT_SUBRESOURCES = new Set(['log', 'exec', 'portforward', 'attach', 'proxy']);

function verbOf(method: string, info: RequestInfo | undefined, contentType: string): string {
  const upper = method.toUpperCase();
  if (!KNOWN_METHODS.has(upper)) return 'other';
  if (info === undefined) return upper;
  if (CONNECT_SUBRESOURCES.has(info.subresource)) return 'CONNECT';
  if (info.verb === 'watch') return 'WATCH';
  if (info.verb === 'list') return 'LIST';
  if (upper === 'PATCH' && contentType.toLowerCase().startsWith('application/apply-patch')) return 'APPLY';
  return upper;
}

/** The parsed request info and the metric labels of one request. */
export interface LabelledRequest {
  info: RequestInfo | undefined;
  labels: RequestLabels;
}

/**
 * Labels a parsed request. `isServed(group, version, resource)` (optional) keeps label cardinality bounded:
 * resource requests for types that are not served are labelled like a non-resource 404.
 */
export function labelRequest(
  method: string,
  request: ParsedRequest,
  contentType: string,
  isServed?: (group: string, version: string, resource: string) => boolean,
): LabelledRequest {
  const { rawPath: path, query } = request;
  let info = request.info;
  if (info !== undefined && isServed !== undefined && !isServed(info.group, info.version, info.resource)) info = undefined;
  const dryRun = query.getAll('dryRun').includes('All') ? 'All' : '';
  if (info === undefined) {
    return {
      info,
      labels: {
        verb: verbOf(method, undefined, contentType),
        dry_run: dryRun,
        group: '',
        version: '',
        resource: '',
        subresource: path,
        scope: '',
        component: 'apiserver',
      },
    };
  }
  return {
    info,
    labels: {
      verb: verbOf(method, info, contentType),
      dry_run: dryRun,
      group: info.group,
      version: info.version,
      resource: info.resource,
      subresource: info.subresource,
      scope: scopeOf(info),
      component: 'apiserver',
    },
  };
}

/**
 * True for requests that stay open, which kube tracks in the long-running gauge: watches, and the
 * streams of a pod's log and of the connect subresources (exec, attach, port forwarding, proxies).
 */
export function isLongRunning(info: RequestInfo | undefined): boolean {
  return info !== undefined && (info.verb === 'watch' || CONNECT_SUBRESOURCES.has(info.subresource));
}
