import { methodNotAllowed, type ApiError } from '../api/errors.js';
import { hasUpgradeConnection, takeUpgradeConnection } from '../aggregator/upgrade-requests.js';
import { writeError } from '../codec/response-writer.js';
import { joinPreservingTrailingSlash } from '../proxy/go-paths.js';
import { forwardProxyRequest } from '../proxy/forward-request.js';
import { forwardProxyUpgrade } from '../proxy/forward-upgrade.js';
import { isUpgradeRequest } from '../proxy/proxy-headers.js';
import { admitConnect } from '../rest/action-stores.js';
import { nodeProxyLocation, podProxyLocation, serviceProxyLocation, type ProxyLocation } from '../rest/proxy-locations.js';
import { parsedRequestOf } from '../api/parsed-request.js';
import { asString } from '../api/values.js';
import { proxyConnectOptions } from './connect-options.js';
import type { ResourceRequest } from './context.js';

/** The methods kube's pod, service and node proxies connect (ProxyREST.ConnectMethods). */
const PROXY_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/** Whether `pods/proxy`, `services/proxy` or `nodes/proxy` of the core group is asked for (served by {@link handleProxy}). */
export function isServedProxy(r: ResourceRequest): boolean {
  return r.ri.subresource === 'proxy' && r.info.group === '' && (r.info.resource === 'pods' || r.info.resource === 'services' || r.info.resource === 'nodes');
}

/** Where a proxy request of `r`'s resource goes. */
function proxyLocation(r: ResourceRequest): Promise<ProxyLocation> {
  switch (r.info.resource) {
    case 'pods':
      return podProxyLocation(r, r.ri.name);
    case 'nodes':
      return nodeProxyLocation(r, r.server.kubelet, r.ri.name);
    default:
      return serviceProxyLocation(r, r.ri.name);
  }
}

/**
 * `pods/NAME/proxy[/PATH]`, `services/NAME/proxy[/PATH]` and `nodes/NAME/proxy[/PATH]` as kube's connect handler serves them:
 * a dry run is refused (400), the proxy options (`path`) are admitted as a CONNECT, the pod or
 * service or node is resolved to a backend address (kube's ResourceLocation, with its 400, 404 and 503
 * answers), and the request is forwarded there and its answer streamed back; an upgrade request's
 * connection is spliced to the backend's once it switches protocols.
 */
export async function handleProxy(r: ResourceRequest): Promise<void> {
  if (!PROXY_METHODS.has(r.req.method)) throw methodNotAllowed();
  const parsed = parsedRequestOf(r.req);
  const requestPath = parsed.path ?? parsed.rawPath;
  const options = proxyConnectOptions(r.info.resource, r.ri.subpath, requestPath.endsWith('/'));
  await admitConnect(r, 'proxy', options);
  const location = await proxyLocation(r);
  const target = {
    scheme: location.scheme,
    host: location.host,
    path: joinPreservingTrailingSlash('', asString(options.path)),
    httpsAgent: location.kubelet?.agent,
  };
  const onError = (err: ApiError): void => writeError(r.res, err);
  // An upgrade (WebSocket, SPDY) whose connection left the HTTP server is spliced to the backend.
  if (isUpgradeRequest(r.req) && hasUpgradeConnection(r.req)) {
    forwardProxyUpgrade(r.req, r.res, target, () => takeUpgradeConnection(r.req, r.res), onError, { tls: location.kubelet?.tls });
    return;
  }
  const q = r.req.originalUrl.indexOf('?');
  forwardProxyRequest(r.req, r.res, { path: requestPath, rawQuery: q < 0 ? '' : r.req.originalUrl.slice(q + 1) }, target, onError);
}
