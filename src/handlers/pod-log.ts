import { request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { ApiError, badRequest, internalError, methodNotAllowed } from '../api/errors.js';
import { genericResponse } from '../api/generic-response.js';
import { writeError } from '../codec/response-writer.js';
import { isWebSocketRequest, streamToWebSocket } from '../codec/websocket-reader.js';
import { hasUpgradeConnection, takeUpgradeConnection } from '../aggregator/upgrade-requests.js';
import { goQueryEncode, kubeletOf, podContainer, podNodeName, readPod } from '../rest/pod-locations.js';
import { kubeletLogParams, podLogOptions } from '../kubelet/pod-log-options.js';
import { goNetError } from '../webhook/webhook-client.js';
import type { ResourceRequest } from './context.js';

/** Most of a kubelet's error answer that is read into the Status (kube's maxReadLength). */
const MAX_ERROR_BYTES = 50_000;

/** Whether `pods/NAME/log` of the core group is asked for (served by {@link handlePodLog}). */
export function isPodLog(r: ResourceRequest): boolean {
  return r.ri.subresource === 'log' && r.info.group === '' && r.info.resource === 'pods';
}

/**
 * kube's answer to a kubelet's error (GenericHttpResponseChecker): a 500 is an internal error and a
 * 400 a bad request, each with the kubelet's text as the message; any other code keeps its status
 * with kube's generic message for it, naming `pods/log` and the pod.
 */
export function kubeletErrorAnswer(code: number, text: string, podName: string): ApiError {
  if (code === 500) return internalError(new Error(text));
  if (code === 400) return badRequest(text);
  const [reason, message] = genericResponse(code, text, '');
  return new ApiError(code, reason, `${message} ( pods/log ${podName})`, { name: podName, kind: 'pods/log' });
}

/**
 * `GET pods/NAME/log` as kube's LogREST serves it: the options are validated (422 naming the pod),
 * the container checked, and the kubelet of the pod's node asked for `/containerLogs/NS/POD/CONTAINER`;
 * its answer is streamed as `text/plain` (flushed as it comes; with `follow` until either side
 * ends), or as WebSocket messages to a WebSocket request ({@link streamToWebSocket}). A pod on no node answers 204 with nothing; a kubelet that cannot be reached is kube's 500
 * `Get "URL": ...`, and one that answers an error becomes the Status of {@link kubeletErrorAnswer}.
 */
export async function handlePodLog(r: ResourceRequest): Promise<void> {
  // kube registers the log for GET alone: HEAD is a 405 too.
  if (r.req.method !== 'GET') throw methodNotAllowed();
  const options = podLogOptions(r.query, r.ri.name);
  const pod = await readPod(r);
  const container = podContainer(pod, options.container);
  const nodeName = podNodeName(pod);
  if (nodeName === '') {
    r.res.status(204).end();
    return;
  }
  const connection = await kubeletOf(r, r.server.kubelet, nodeName);
  const query = goQueryEncode(kubeletLogParams(options));
  // Namespace, pod and container names are DNS names: nothing in them needs escaping.
  const path = `/containerLogs/${r.ri.namespace}/${r.ri.name}/${container}${query === '' ? '' : `?${query}`}`;
  const url = `${connection.scheme}://${connection.address}${path}`;
  const res = r.res;
  const upstream = httpsRequest({
    host: connection.hostname,
    port: connection.port,
    path,
    method: 'GET',
    agent: options.insecureSkipTLSVerifyBackend ? connection.insecureAgent : connection.agent,
  });
  res.once('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  let upgraded = false;
  upstream.on('error', (err: Error) => {
    if (upgraded) return;
    if (res.headersSent) res.destroy();
    else if (!res.destroyed) writeError(res, new ApiError(500, '', `Get ${JSON.stringify(url)}: ${goNetError(err)}`));
  });
  upstream.on('response', (answer: IncomingMessage) => {
    const code = answer.statusCode ?? 500;
    if (code < 200 || code > 206) {
      const chunks: Buffer[] = [];
      let size = 0;
      answer.on('data', (chunk: Buffer) => {
        if (size < MAX_ERROR_BYTES) chunks.push(chunk.subarray(0, MAX_ERROR_BYTES - size));
        size += chunk.length;
      });
      answer.on('end', () => writeError(res, kubeletErrorAnswer(code, Buffer.concat(chunks).toString('utf8'), r.ri.name)));
      answer.on('error', () => res.destroy());
      return;
    }
    if (isWebSocketRequest(r.req) && hasUpgradeConnection(r.req)) {
      // kube's StreamObject: the log as WebSocket messages once the kubelet answered.
      upgraded = true;
      streamToWebSocket(r.req, takeUpgradeConnection(r.req, res)!, answer);
      return;
    }
    res.status(200);
    res.setHeader('Content-Type', 'text/plain');
    // The headers go now: a follower sees the stream open before the first line.
    res.flushHeaders();
    answer.on('error', () => res.destroy());
    answer.on('close', () => {
      if (!answer.complete) res.destroy();
    });
    answer.pipe(res);
  });
  upstream.end();
}
