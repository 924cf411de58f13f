import { badRequest, methodNotAllowed, type ApiError } from '../api/errors.js';
import { hasUpgradeConnection, takeUpgradeConnection } from '../aggregator/upgrade-requests.js';
import { writeError } from '../codec/response-writer.js';
import { podStreamLocation } from '../rest/pod-locations.js';
import { forwardProxyUpgrade } from '../proxy/forward-upgrade.js';
import { isUpgradeRequest } from '../proxy/proxy-headers.js';
import { admitConnect } from '../rest/action-stores.js';
import { podConnectOptions } from './connect-options.js';
import type { ResourceRequest } from './context.js';

type StreamSubresource = 'exec' | 'attach' | 'portforward';

/** Whether a pod's exec, attach or portforward is asked for (served by {@link handlePodConnect}). */
export function isPodConnect(r: ResourceRequest): boolean {
  const sub = r.ri.subresource;
  return r.info.group === '' && r.info.resource === 'pods' && (sub === 'exec' || sub === 'attach' || sub === 'portforward');
}

/**
 * A pod's exec, attach or portforward as kube's connect handler serves them (GET and POST): the
 * options from the query are admitted as a CONNECT, the kubelet location is found (the container
 * checked, 400 for a pod on no node), a request that is not an upgrade is a 400 `Upgrade request
 * required`, and an upgrade (SPDY or WebSocket) goes to the kubelet's `/exec`, `/attach` or
 * `/portForward` path with kube's query, its connection spliced to the client's once the kubelet
 * switches protocols. The kubelet's refusal is passed on as it came.
 */
export async function handlePodConnect(r: ResourceRequest): Promise<void> {
  if (r.req.method !== 'GET' && r.req.method !== 'POST') throw methodNotAllowed();
  const sub = r.ri.subresource as StreamSubresource;
  const options = podConnectOptions(sub, r.query) ?? {};
  await admitConnect(r, sub, options);
  const location = await podStreamLocation(r, r.server.kubelet, sub, options);
  if (!isUpgradeRequest(r.req) || !hasUpgradeConnection(r.req)) throw badRequest('Upgrade request required');
  const { connection } = location;
  const target = { scheme: connection.scheme, host: connection.address, path: location.path };
  const onError = (err: ApiError): void => writeError(r.res, err);
  forwardProxyUpgrade(r.req, r.res, target, () => takeUpgradeConnection(r.req, r.res), onError, { query: location.query, tls: connection.tls });
}
