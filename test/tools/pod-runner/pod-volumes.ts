/**
 * Materialises a pod's volumes into a directory per volume under the pod's work directory, as the
 * kubelet's volume plugins would: Secret and ConfigMap keys (or their `items`) become files,
 * projected volumes combine Secret, ConfigMap, service account token and downward API sources,
 * emptyDir is an empty directory and hostPath stays the host's path. A missing Secret or ConfigMap
 * that is not optional makes the pod wait (as the kubelet does); other volume types are unsupported.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ApiClient } from './api-client.js';
import type { MountMapping } from './container-command.js';

 

/** Why the volumes are not ready yet (retry later) or cannot be provided at all. */
export class VolumeError extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
  ) {
    super(message);
  }
}

interface KeyToPath {
  key: string;
  path: string;
}

function writeKeys(dir: string, data: Record<string, Buffer>, items: KeyToPath[] | undefined, what: string): void {
  const entries: [string, Buffer][] = items
    ? items.map((it) => {
        const value = data[it.key];
        if (value === undefined) throw new VolumeError(`${what}: key ${it.key} not found`, true);
        return [it.path, value];
      })
    : Object.entries(data);
  for (const [path, value] of entries) {
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, value);
  }
}

async function secretData(api: ApiClient, ns: string, name: string, optional: boolean): Promise<Record<string, Buffer> | undefined> {
  const res = await api.get(`/api/v1/namespaces/${ns}/secrets/${name}`);
  if (res.status === 404 && optional) return undefined;
  if (res.status !== 200) throw new VolumeError(`secret ${ns}/${name}: HTTP ${res.status}`, true);
  const out: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries((res.body.data ?? {}) as Record<string, string>)) out[k] = Buffer.from(v, 'base64');
  return out;
}

async function configMapData(api: ApiClient, ns: string, name: string, optional: boolean): Promise<Record<string, Buffer> | undefined> {
  const res = await api.get(`/api/v1/namespaces/${ns}/configmaps/${name}`);
  if (res.status === 404 && optional) return undefined;
  if (res.status !== 200) throw new VolumeError(`configmap ${ns}/${name}: HTTP ${res.status}`, true);
  const out: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries((res.body.data ?? {}) as Record<string, string>)) out[k] = Buffer.from(v);
  for (const [k, v] of Object.entries((res.body.binaryData ?? {}) as Record<string, string>)) out[k] = Buffer.from(v, 'base64');
  return out;
}

function fieldValue(pod: any, fieldPath: string): string {
  const meta = pod.metadata ?? {};
  switch (fieldPath) {
    case 'metadata.name':
      return meta.name ?? '';
    case 'metadata.namespace':
      return meta.namespace ?? '';
    case 'metadata.uid':
      return meta.uid ?? '';
    case 'metadata.labels':
      return Object.entries(meta.labels ?? {})
        .map(([k, v]) => `${k}="${String(v)}"`)
        .join('\n');
    case 'metadata.annotations':
      return Object.entries(meta.annotations ?? {})
        .map(([k, v]) => `${k}="${String(v)}"`)
        .join('\n');
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    default:
      throw new VolumeError(`downward API field ${fieldPath} is not supported by the pod runner`, false);
  }
}

function downwardApiData(pod: any, items: any[]): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const it of items) {
    if (!it.fieldRef) throw new VolumeError(`downward API item ${it.path}: only fieldRef is supported by the pod runner`, false);
    out[it.path] = Buffer.from(fieldValue(pod, it.fieldRef.fieldPath));
  }
  return out;
}

async function serviceAccountToken(api: ApiClient, pod: any, source: any): Promise<Buffer> {
  const ns = pod.metadata.namespace;
  const sa = pod.spec.serviceAccountName ?? 'default';
  const res = await api.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: {
      audiences: source.audience ? [source.audience] : null,
      expirationSeconds: source.expirationSeconds ?? 3607,
      boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid },
    },
  });
  if (res.status !== 201 && res.status !== 200) throw new VolumeError(`token for ${ns}/${sa}: HTTP ${res.status}`, true);
  return Buffer.from(res.body.status.token as string);
}

async function materialise(api: ApiClient, pod: any, volume: any, dir: string): Promise<string> {
  const ns = pod.metadata.namespace;
  if (volume.hostPath) return volume.hostPath.path;
  mkdirSync(dir, { recursive: true });
  if (volume.emptyDir) return dir;
  if (volume.secret) {
    const data = await secretData(api, ns, volume.secret.secretName, volume.secret.optional === true);
    if (data) writeKeys(dir, data, volume.secret.items, `secret ${volume.secret.secretName}`);
    return dir;
  }
  if (volume.configMap) {
    const data = await configMapData(api, ns, volume.configMap.name, volume.configMap.optional === true);
    if (data) writeKeys(dir, data, volume.configMap.items, `configmap ${volume.configMap.name}`);
    return dir;
  }
  if (volume.downwardAPI) {
    writeKeys(dir, downwardApiData(pod, volume.downwardAPI.items ?? []), undefined, 'downward API');
    return dir;
  }
  if (volume.projected) {
    for (const source of volume.projected.sources ?? []) {
      if (source.secret) {
        const data = await secretData(api, ns, source.secret.name, source.secret.optional === true);
        if (data) writeKeys(dir, data, source.secret.items, `secret ${source.secret.name}`);
      } else if (source.configMap) {
        const data = await configMapData(api, ns, source.configMap.name, source.configMap.optional === true);
        if (data) writeKeys(dir, data, source.configMap.items, `configmap ${source.configMap.name}`);
      } else if (source.downwardAPI) {
        writeKeys(dir, downwardApiData(pod, source.downwardAPI.items ?? []), undefined, 'downward API');
      } else if (source.serviceAccountToken) {
        writeKeys(dir, { [source.serviceAccountToken.path]: await serviceAccountToken(api, pod, source.serviceAccountToken) }, undefined, 'token');
      } else {
        throw new VolumeError(`volume ${volume.name}: projected source ${Object.keys(source).join(',')} is not supported by the pod runner`, false);
      }
    }
    return dir;
  }
  const kind = Object.keys(volume).filter((k) => k !== 'name');
  throw new VolumeError(`volume ${volume.name}: ${kind.join(',')} volumes are not supported by the pod runner`, false);
}

/**
 * Writes every volume of the pod under `podDir/volumes/NAME` and returns, per container name, the
 * mount mappings (mountPath to host path, subPath applied).
 */
export async function materialiseVolumes(api: ApiClient, pod: any, podDir: string): Promise<Map<string, MountMapping[]>> {
  const hostPaths = new Map<string, string>();
  for (const volume of pod.spec.volumes ?? []) hostPaths.set(volume.name, await materialise(api, pod, volume, join(podDir, 'volumes', volume.name)));
  const out = new Map<string, MountMapping[]>();
  for (const c of pod.spec.containers ?? []) {
    const mounts: MountMapping[] = [];
    for (const m of c.volumeMounts ?? []) {
      const base = hostPaths.get(m.name);
      if (base === undefined) throw new VolumeError(`container ${c.name}: volume ${m.name} not found`, false);
      mounts.push({ mountPath: m.mountPath, hostPath: m.subPath ? join(base, m.subPath) : base });
    }
    out.set(c.name, mounts);
  }
  return out;
}
