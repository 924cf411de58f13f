/**
 * A container's environment and the `$(VAR)` expansion of its command, as the kubelet makes them:
 * the image's variables (PATH), HOSTNAME, then envFrom (ConfigMaps and Secrets, with their prefix),
 * then env in order (value with `$(VAR)` expanded against what is defined so far and the service
 * variables; valueFrom fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef), then the
 * variables of the Services (the `kubernetes` Service of namespace default always, the pod's
 * namespace's when enableServiceLinks is not false) for the names still free. A reference to a
 * missing ConfigMap, Secret or key that is not optional is an EnvError (the kubelet's
 * CreateContainerConfigError: the container waits), as is a volumeMount's subPathExpr that names a
 * variable without a value or expands to an absolute path or one with `..`.
 */
import type { ApiClient } from './api-client.js';

/** Why a container's environment cannot be built yet. */
export class EnvError extends Error {}

/** kube's expansion.Expand: `$(NAME)` becomes the value of NAME when known, `$$` is `$`; the rest stays. */
export function expand(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const rest = input.slice(cursor + 1);
    let advance = 1;
    if (rest[0] === '$') out += '$';
    else if (rest[0] === '(') {
      const close = rest.indexOf(')');
      if (close < 0) out += '$(';
      else {
        const name = rest.slice(1, close);
        out += lookup(name) ?? `$(${name})`;
        advance = close + 1;
      }
    } else out += `$${rest[0]}`;
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

const SUFFIXES: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A resource.Quantity's value as a number (`250m` is 0.25, `64Mi` 67108864, `1e3` 1000). */
export function quantityValue(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = /^([+-]?[0-9.]+)(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/.exec(q.trim());
  if (!m) throw new EnvError(`quantity ${q} not understood`);
  return Number(m[1]) * (m[2] !== undefined ? 10 ** Number(m[2]) : SUFFIXES[m[3] ?? '']);
}

/** The node's allocatable resources, which stand in for a container's unset limits. */
export type Allocatable = Record<string, string>;

/** A resourceFieldRef's value as the kubelet writes it: the container's limit (node allocatable when unset) or request, divided by the divisor and rounded up. */
export function resourceFieldValue(container: any, ref: { resource: string; divisor?: string }, allocatable: Allocatable): string {
  const [kind, name] = ref.resource.split('.', 2) as ['limits' | 'requests', string];
  let q: string | undefined = container?.resources?.[kind]?.[name];
  if (q === undefined && kind === 'limits') q = allocatable[name];
  const value = q === undefined ? 0 : quantityValue(q);
  // The API defaults an unset divisor to 0, which the kubelet reads as 1.
  const divisor = quantityValue(ref.divisor ?? '1') || 1;
  if (name === 'cpu') return String(Math.ceil(Math.round(value * 1000) / Math.round(divisor * 1000)));
  return String(Math.ceil(value / divisor));
}

/** What a pod's downward API fieldRef names, as the kubelet formats it. */
export function podFieldValue(pod: any, fieldPath: string, ips: { podIP?: string; hostIP: string }): string {
  const meta = pod.metadata ?? {};
  const mapKey = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(fieldPath);
  if (mapKey) return String(meta[mapKey[1]]?.[mapKey[2]] ?? '');
  const formatMap = (m: Record<string, string> | undefined): string =>
    Object.keys(m ?? {})
      .sort()
      .map((k) => `${k}=${JSON.stringify(String(m![k]))}`)
      .join('\n');
  switch (fieldPath) {
    case 'metadata.name':
      return meta.name ?? '';
    case 'metadata.namespace':
      return meta.namespace ?? '';
    case 'metadata.uid':
      return meta.uid ?? '';
    case 'metadata.labels':
      return formatMap(meta.labels);
    case 'metadata.annotations':
      return formatMap(meta.annotations);
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.podIP':
    case 'status.podIPs':
      return ips.podIP ?? '';
    case 'status.hostIP':
    case 'status.hostIPs':
      return ips.hostIP;
    default:
      throw new EnvError(`downward API field ${fieldPath} is not supported by the pod runner`);
  }
}

const envName = (s: string): string => s.toUpperCase().replace(/-/g, '_');

/** The docker-link variables of Services, as kubelet's envvars.FromServices names them. */
export function serviceEnv(services: any[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const svc of services) {
    const ip = svc.spec?.clusterIP;
    const ports: any[] = svc.spec?.ports ?? [];
    if (!ip || ip === 'None' || ports.length === 0) continue;
    const prefix = envName(svc.metadata.name);
    out[`${prefix}_SERVICE_HOST`] = ip;
    out[`${prefix}_SERVICE_PORT`] = String(ports[0].port);
    for (const p of ports) if (p.name) out[`${prefix}_SERVICE_PORT_${envName(p.name)}`] = String(p.port);
    const host = ip.includes(':') ? `[${ip}]` : ip;
    ports.forEach((p, i) => {
      const proto = (p.protocol ?? 'TCP') as string;
      const url = `${proto.toLowerCase()}://${host}:${p.port}`;
      if (i === 0) out[`${prefix}_PORT`] = url;
      const pp = `${prefix}_PORT_${p.port}_${proto.toUpperCase()}`;
      out[pp] = url;
      out[`${pp}_PROTO`] = proto.toLowerCase();
      out[`${pp}_PORT`] = String(p.port);
      out[`${pp}_ADDR`] = ip;
    });
  }
  return out;
}

/** Where the environment's values come from. */
export interface EnvSources {
  api: ApiClient;
  pod: any;
  podIP?: string;
  hostIP: string;
  hostname: string;
  imageEnv: Record<string, string>;
  allocatable: Allocatable;
}

async function objectData(api: ApiClient, kind: 'configmaps' | 'secrets', ns: string, name: string, optional: boolean): Promise<Record<string, string> | undefined> {
  const res = await api.get(`/api/v1/namespaces/${ns}/${kind}/${name}`);
  if (res.status === 404 && optional) return undefined;
  if (res.status !== 200) throw new EnvError(`${kind === 'secrets' ? 'secret' : 'configmap'} "${name}" not found`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((res.body.data ?? {}) as Record<string, string>)) out[k] = kind === 'secrets' ? Buffer.from(v, 'base64').toString() : v;
  return out;
}

/** The Services whose variables a pod's containers get. */
export async function podServices(api: ApiClient, pod: any): Promise<any[]> {
  const out: any[] = [];
  const master = await api.get('/api/v1/namespaces/default/services/kubernetes');
  if (master.status === 200) out.push(master.body);
  if (pod.spec.enableServiceLinks !== false) {
    const res = await api.get(`/api/v1/namespaces/${pod.metadata.namespace}/services`);
    if (res.status === 200) for (const s of res.body.items as any[]) if (!(s.metadata.namespace === 'default' && s.metadata.name === 'kubernetes')) out.push(s);
  }
  return out;
}

/** A container's environment (see the file's comment); `services` from podServices. */
export async function containerEnv(container: any, services: any[], src: EnvSources): Promise<Record<string, string>> {
  const { api, pod } = src;
  const ns = pod.metadata.namespace;
  const svcEnv = serviceEnv(services);
  const env: Record<string, string> = { ...src.imageEnv, HOSTNAME: src.hostname };
  const defined: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const data = await objectData(api, from.configMapRef ? 'configmaps' : 'secrets', ns, ref.name, ref.optional === true);
    for (const [k, v] of Object.entries(data ?? {})) defined[`${from.prefix ?? ''}${k}`] = v;
  }
  for (const e of container.env ?? []) {
    let value: string | undefined;
    const vf = e.valueFrom;
    if (vf === undefined) value = expand(e.value ?? '', (n) => defined[n] ?? svcEnv[n]);
    else if (vf.fieldRef) value = podFieldValue(pod, vf.fieldRef.fieldPath, { podIP: src.podIP, hostIP: src.hostIP });
    else if (vf.resourceFieldRef) {
      const target = vf.resourceFieldRef.containerName ? [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].find((c: any) => c.name === vf.resourceFieldRef.containerName) : container;
      value = resourceFieldValue(target, vf.resourceFieldRef, src.allocatable);
    } else {
      const ref = vf.configMapKeyRef ?? vf.secretKeyRef;
      const data = await objectData(api, vf.configMapKeyRef ? 'configmaps' : 'secrets', ns, ref.name, ref.optional === true);
      value = data?.[ref.key];
      if (value === undefined && ref.optional !== true) throw new EnvError(`couldn't find key ${ref.key} in ${vf.configMapKeyRef ? 'ConfigMap' : 'Secret'} ${ns}/${ref.name}`);
    }
    if (value !== undefined) defined[e.name] = value;
  }
  for (const [k, v] of Object.entries(svcEnv)) if (!(k in defined)) defined[k] = v;
  return { ...env, ...defined };
}

/** A volumeMount's subPathExpr expanded as the kubelet does (ExpandContainerVolumeMounts and makeMounts' checks). */
export function expandSubPathExpr(expr: string, env: Record<string, string>): string {
  const missing = new Set<string>();
  const out = expand(expr, (name) => {
    const value = env[name];
    if (!value) missing.add(name);
    return value ?? '';
  });
  if (missing.size > 0) throw new EnvError(`missing value for ${[...missing].sort().join(', ')}`);
  if (out.startsWith('/')) throw new EnvError(`error SubPath \`${out}\` must not be an absolute path`);
  if (out.split('/').includes('..')) throw new EnvError(`error SubPath \`${out}\` must not contain backsteps`);
  return out;
}
