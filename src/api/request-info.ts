import { queryBool } from './request-options.js';

/**
 * Parses a request path and method into what the API layer acts on, following kube-apiserver's
 * RequestInfoFactory: `/api/v1/...` (core) and `/apis/GROUP/VERSION/...`, optional
 * `namespaces/NAMESPACE/`, then resource, name and subresource. The deprecated `/watch/` prefix is
 * accepted and turns the request into a watch.
 *
 * The path is the request's decoded path, split on `/` as kube splits it: percent-escapes are decoded
 * before splitting (`%2F` separates), empty segments are kept (so `//` never routes), and dot segments
 * are ordinary segments, never resolved: `/namespaces/a/configmaps/../../b/configmaps` is a path inside
 * namespace `a` that no route serves, not a path into namespace `b`.
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
  /** '' unless a subresource path. */
  subresource: string;
  /** Segments after the subresource: only proxy subresources take them (`pods/x/proxy/a/b`). */
  subpath: string[];
  verb: 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'unknown';
}

/** Namespace subresources kube treats as `namespaces/NAME/SUB` rather than a resource inside a namespace. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/**
 * Decodes a request target's path as Go's URL parser does: percent-escapes become their bytes (read as
 * UTF-8). Returns undefined for a malformed escape, which kube-apiserver's HTTP server answers with a
 * plain 400.
 */
export function decodePath(rawPath: string): string | undefined {
  if (!rawPath.includes('%')) return rawPath;
  if (/%(?![0-9A-Fa-f]{2})/.test(rawPath)) return undefined;
  const bytes: number[] = [];
  const raw = Buffer.from(rawPath, 'utf8');
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i];
    if (b === 0x25) {
      bytes.push(parseInt(raw.subarray(i + 1, i + 3).toString('latin1'), 16));
      i += 2;
    } else bytes.push(b);
  }
  return Buffer.from(bytes).toString('utf8');
}

/** kube's splitPath: the path without leading and trailing slashes, split on `/` (empty segments kept). */
export function splitPath(path: string): string[] {
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? [] : trimmed.split('/');
}

/** Returns undefined for paths that are not resource paths (discovery, health, unknown). `path` is decoded. */
export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo | undefined {
  const parts = splitPath(path);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1];
    version = parts[2];
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
    namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2])) {
      rest = rest.slice(2);
    } else {
      // `/namespaces/NAME[/status|/finalize]`: the namespace object itself.
      rest = ['namespaces', namespace, ...rest.slice(2)];
      namespace = '';
    }
  }
  if (rest.length === 0) return undefined;
  const resource = rest[0];
  const name = rest[1] ?? '';
  const subresource = rest[2] ?? '';
  const subpath = rest.slice(3);
  let verb: RequestInfo['verb'];
  switch (method) {
    case 'GET':
    case 'HEAD':
      // `watch` turns only collection reads into watches; a named object is watched through /watch/.
      verb = name !== '' ? (watchPath ? 'watch' : 'get') : watchPath || queryBool(query, 'watch') ? 'watch' : 'list';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name ? 'delete' : 'deletecollection';
      break;
    default:
      verb = 'unknown';
  }
  return { group, version, namespace, resource, name, subresource, subpath, verb };
}
