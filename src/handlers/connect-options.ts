/**
 * The connect options kube decodes from the query of a CONNECT on a pod's attach, exec or
 * portforward subresource (PodAttachOptions, PodExecOptions, PodPortForwardOptions) or on a proxy
 * subresource (PodProxyOptions, ServiceProxyOptions, NodeProxyOptions), in their v1 JSON form: admission sees them as the request's object. Booleans
 * follow kube's query conversion (absent, `0` or `false` is false; any other value true) and
 * omitted fields are left out as Go's omitempty does.
 */
import type { Obj } from '../api/object-util.js';

function queryBool(query: URLSearchParams, name: string): boolean {
  const v = query.getAll(name);
  if (v.length === 0) return false;
  return !(v[0] === '0' || v[0].toLowerCase() === 'false');
}

function streams(query: URLSearchParams, out: Obj): void {
  for (const name of ['stdin', 'stdout', 'stderr', 'tty']) if (queryBool(query, name)) out[name] = true;
  const container = query.get('container');
  if (container) out.container = container;
}

/** The options object of a CONNECT on `pods/SUBRESOURCE`, or undefined for other subresources. */
export function podConnectOptions(subresource: string, query: URLSearchParams): Obj | undefined {
  switch (subresource) {
    case 'attach': {
      const out: Obj = { kind: 'PodAttachOptions', apiVersion: 'v1' };
      streams(query, out);
      return out;
    }
    case 'exec': {
      const out: Obj = { kind: 'PodExecOptions', apiVersion: 'v1' };
      streams(query, out);
      out.command = query.getAll('command');
      return out;
    }
    case 'portforward': {
      const out: Obj = { kind: 'PodPortForwardOptions', apiVersion: 'v1' };
      const ports = query
        .getAll('ports')
        .flatMap((p) => p.split(','))
        .map(Number);
      if (ports.length > 0) out.ports = ports;
      return out;
    }
    default:
      return undefined;
  }
}

const PROXY_OPTION_KINDS: Record<string, string> = { pods: 'PodProxyOptions', services: 'ServiceProxyOptions', nodes: 'NodeProxyOptions' };

/**
 * The options of a CONNECT on `RESOURCE/NAME/proxy[/SUBPATH]`, as kube's connect handler decodes them:
 * `path` is the subpath with a leading slash (and the request's trailing slash), and replaces any
 * `path` the query carried, so that an empty subpath leaves no path at all.
 */
export function proxyConnectOptions(resource: string, subpath: readonly string[], trailingSlash: boolean): Obj {
  const out: Obj = { kind: PROXY_OPTION_KINDS[resource] ?? 'PodProxyOptions', apiVersion: 'v1' };
  let path = subpath.join('/');
  if (path !== '' && !path.startsWith('/')) path = `/${path}`;
  if (trailingSlash && !path.endsWith('/')) path += '/';
  if (path !== '') out.path = path;
  return out;
}
