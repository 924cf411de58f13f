/**
 * Where kube-apiserver sends a pod's log, exec, attach and port-forward requests on the pod's
 * kubelet (kube's LogLocation, ExecLocation, AttachLocation and PortForwardLocation): the container
 * checked against the pod, the node found, and the kubelet's path and query built from the options.
 */
import { badRequest, notFound } from '../api/errors.js';
import { objectKey } from '../api/object-util.js';
import { arrayField, objectElements, objectField, stringField, type Obj } from '../api/values.js';
import { storageTypeOf } from '../api/resource-info.js';
import type { ResourceTarget } from './server-context.js';
import { withStorage } from './storage-errors.js';
import { nodeNotFound, type KubeletConnection, type KubeletClient } from '../kubelet/kubelet-client.js';

/** A request on a kubelet: where, and the path and query (already encoded) it asks for. */
export interface KubeletLocation {
  connection: KubeletConnection;
  path: string;
  query: string;
}

/** Go's url.QueryEscape of one key or value. */
function queryEscape(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Go's url.Values.Encode: pairs sorted by key (a key's values in their order), escaped. */
export function goQueryEncode(pairs: Array<[string, string]>): string {
  const sorted = pairs.map((p, i) => ({ p, i })).sort((a, b) => (a.p[0] < b.p[0] ? -1 : a.p[0] > b.p[0] ? 1 : a.i - b.i));
  return sorted.map(({ p: [k, v] }) => `${queryEscape(k)}=${queryEscape(v)}`).join('&');
}

/** The pod `r` names, parsed; kube's 404 when it does not exist. */
export async function readPod(r: ResourceTarget): Promise<Obj> {
  const stored = await withStorage(r, r.ri.name, () => r.server.storage.get(r.type, objectKey(r.ri.namespace, r.ri.name)));
  if (stored === undefined) throw notFound({ group: '', resource: 'pods' }, r.ri.name);
  return JSON.parse(stored.json) as Obj;
}

/** The names of a pod's containers in kube's visiting order: init containers, containers, ephemeral containers. */
function containerNames(spec: Obj): string[] {
  return ['initContainers', 'containers', 'ephemeralContainers'].flatMap((f) => objectElements(arrayField(spec, f)).map((c) => stringField(c, 'name')));
}

/**
 * kube's validateContainer: a named container must be one of the pod's (any kind); without a name,
 * a pod with one container means it, and any other pod is a 400 listing its containers.
 */
export function podContainer(pod: Obj, requested: string): string {
  const spec = objectField(pod, 'spec');
  const podName = stringField(objectField(pod, 'metadata'), 'name');
  if (requested !== '') {
    if (!containerNames(spec).includes(requested)) throw badRequest(`container ${requested} is not valid for pod ${podName}`);
    return requested;
  }
  const containers = objectElements(arrayField(spec, 'containers'));
  if (containers.length === 1) return stringField(containers[0], 'name');
  if (containers.length === 0) throw badRequest(`a container name must be specified for pod ${podName}`);
  throw badRequest(`a container name must be specified for pod ${podName}, choose one of: [${containerNames(spec).join(' ')}]`);
}

/** The kubelet of the node `nodeName` (kube's 404 naming the node as a pod when it does not exist). */
export async function kubeletOf(r: ResourceTarget, kubelet: KubeletClient, nodeName: string): Promise<KubeletConnection> {
  const info = r.server.catalog.get('', 'v1', 'nodes');
  if (info === undefined) throw nodeNotFound(nodeName);
  const stored = await withStorage(r, nodeName, () => r.server.storage.get(storageTypeOf(info), objectKey('', nodeName)));
  if (stored === undefined) throw nodeNotFound(nodeName);
  return kubelet.connectionOf(JSON.parse(stored.json) as Obj);
}

/** The node a pod is bound to ('' for none). */
export function podNodeName(pod: Obj): string {
  return stringField(objectField(pod, 'spec'), 'nodeName');
}

/** The kubelet's query parameters of a pod's exec, attach or port-forward options (kube's streamParams). */
export function streamParams(subresource: 'exec' | 'attach' | 'portforward', options: Obj): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (subresource === 'portforward') {
    const ports = Array.isArray(options.ports) ? (options.ports as number[]) : [];
    if (ports.length > 0) out.push(['port', ports.join(',')]);
    return out;
  }
  if (options.stdin === true) out.push(['input', '1']);
  if (options.stdout === true) out.push(['output', '1']);
  if (options.stderr === true) out.push(['error', '1']);
  if (options.tty === true) out.push(['tty', '1']);
  if (subresource === 'exec') for (const c of Array.isArray(options.command) ? (options.command as string[]) : []) out.push(['command', c]);
  return out;
}

/**
 * The kubelet location of a pod's exec, attach or port-forward: the container checked (exec and
 * attach), and a pod on no node a 400 `pod NAME does not have a host assigned`.
 */
export async function podStreamLocation(
  r: ResourceTarget,
  kubelet: KubeletClient,
  subresource: 'exec' | 'attach' | 'portforward',
  options: Obj,
): Promise<KubeletLocation> {
  const pod = await readPod(r);
  const container = subresource === 'portforward' ? '' : podContainer(pod, typeof options.container === 'string' ? options.container : '');
  const nodeName = podNodeName(pod);
  if (nodeName === '') throw badRequest(`pod ${r.ri.name} does not have a host assigned`);
  const connection = await kubeletOf(r, kubelet, nodeName);
  // Namespace, pod and container names are DNS names: nothing in them needs escaping.
  const { namespace, name } = r.ri;
  const path = subresource === 'portforward' ? `/portForward/${namespace}/${name}` : `/${subresource}/${namespace}/${name}/${container}`;
  return { connection, path, query: goQueryEncode(streamParams(subresource, options)) };
}
