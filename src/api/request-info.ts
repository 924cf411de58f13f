/**
 * Parses a request path and method into what the API layer acts on, following kube-apiserver's
 * RequestInfoFactory: `/api/v1/...` (core) and `/apis/GROUP/VERSION/...`, optional
 * `namespaces/NAMESPACE/`, then resource, name and subresource. The deprecated `/watch/` prefix is
 * accepted and turns the request into a watch.
 */
export interface RequestInfo {
  /** '' for the core group. */
  group: string;
  version: string;
  /** '' for cluster-scoped requests and for all-namespace collection requests. */
  namespace: string;
  resource: string;
  /** '' for collection requests. */
  name: string;
  /** '' unless a subresource path; may contain '/' for proxy paths. */
  subresource: string;
  verb: 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'unknown';
}

/** Namespace subresources kube treats as `namespaces/NAME/SUB` rather than a resource inside a namespace. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** Returns undefined for paths that are not resource paths (discovery, health, unknown). */
export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo | undefined {
  const parts = path.split('/').filter((p) => p !== '').map((p) => safeDecode(p));
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1] as string;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1] as string;
    version = parts[2] as string;
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1] as string;
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2] as string)) {
      rest = rest.slice(2);
    } else {
      // `/namespaces/NAME[/status|/finalize]`: the namespace object itself.
      rest = ['namespaces', namespace, ...rest.slice(2)];
      namespace = '';
    }
  }
  if (rest.length === 0) return undefined;
  const resource = rest[0] as string;
  const name = rest[1] ?? '';
  const subresource = rest.slice(2).join('/');
  const isWatch = watchPath || isTrue(query.get('watch'));
  let verb: RequestInfo['verb'];
  switch (method) {
    case 'GET':
    case 'HEAD':
      verb = isWatch ? 'watch' : name ? 'get' : 'list';
      break;
    case 'POST': verb = 'create'; break;
    case 'PUT': verb = 'update'; break;
    case 'PATCH': verb = 'patch'; break;
    case 'DELETE': verb = name ? 'delete' : 'deletecollection'; break;
    default: verb = 'unknown';
  }
  return { group, version, namespace, resource, name, subresource, verb };
}

/** kube's boolean query parsing: `1`, `t`, `true` (any case) are true. */
export function isTrue(value: string | null | undefined): boolean {
  if (value === null || value === undefined) return false;
  return /^(1|t|true)$/i.test(value);
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
