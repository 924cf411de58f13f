/**
 * A Deployment's pod template turned into what a kubelet would run, as `podman run` arguments: the
 * image, command and args ($(VAR) references expanded), env (values, Secret and ConfigMap keys,
 * the pod's own name and namespace), Secret, ConfigMap and emptyDir volumes, the security contexts
 * (user, group, supplemental fsGroup, read-only root, capabilities, no privilege escalation), memory
 * and CPU, and the grace period. A field the chart might use but this runner does not implement is
 * refused with an error naming it, so that a chart change cannot pass by being ignored.
 */
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Probe {
  httpGet?: { path?: string; port: number | string; scheme?: string; httpHeaders?: { name: string; value: string }[] };
  tcpSocket?: unknown;
  exec?: unknown;
  grpc?: unknown;
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
  successThreshold?: number;
}

interface KeyRef {
  name: string;
  key: string;
  optional?: boolean;
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: KeyRef; configMapKeyRef?: KeyRef; fieldRef?: { fieldPath: string } };
}

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[] | null;
  envFrom?: unknown[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; subPath?: string }[];
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    runAsUser?: number;
    runAsGroup?: number;
    runAsNonRoot?: boolean;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    privileged?: boolean;
    capabilities?: { add?: string[]; drop?: string[] };
    seccompProfile?: { type: string };
  };
}

interface Volume {
  name: string;
  emptyDir?: Record<string, unknown>;
  secret?: { secretName: string; defaultMode?: number; items?: { key: string; path: string; mode?: number }[] };
  configMap?: { name: string; defaultMode?: number; items?: { key: string; path: string; mode?: number }[] };
}

/** The parts of a pod spec the runner reads. */
export interface PodSpec {
  containers: Container[];
  initContainers?: unknown[];
  volumes?: Volume[];
  securityContext?: { runAsUser?: number; runAsGroup?: number; runAsNonRoot?: boolean; fsGroup?: number; seccompProfile?: { type: string } };
  terminationGracePeriodSeconds?: number;
  hostNetwork?: boolean;
}

/** Objects the pod refers to, by name: each a map of key to decoded value. */
export interface Sources {
  secrets: Map<string, Record<string, Buffer>>;
  configMaps: Map<string, Record<string, string>>;
}

/** One pod ready to start: `podman run` arguments (after `run -d`) and what the probes need. */
export interface PodPlan {
  name: string;
  runArgs: string[];
  container: Container;
  gracePeriodSeconds: number;
}

function unsupported(what: string): never {
  throw new Error(`the pod template uses ${what}, which test/podman/pod-template.ts does not run: extend it`);
}

/** Kubernetes memory quantity to bytes (the suffixes a chart uses). */
export function memoryBytes(quantity: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity);
  if (!m) return unsupported(`memory quantity ${quantity}`);
  const factor: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };
  return Math.round(Number(m[1]) * (factor[m[2] ?? ''] ?? 1));
}

/** Kubernetes CPU quantity to cores. */
export function cpuCores(quantity: string): number {
  const m = /^(\d+(?:\.\d+)?)(m)?$/.exec(quantity);
  if (!m) return unsupported(`cpu quantity ${quantity}`);
  return m[2] === 'm' ? Number(m[1]) / 1000 : Number(m[1]);
}

/** `$(VAR)` references expanded from `env` as kubelet does (`$$` escapes; unknown names stay). */
export function expandReferences(text: string, env: Map<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (all, name: string | undefined) => (name === undefined ? '$' : (env.get(name) ?? all)));
}

function keyOf<T>(objects: Map<string, Record<string, T>>, ref: KeyRef, kind: string): T | undefined {
  const object = objects.get(ref.name);
  const value = object?.[ref.key];
  if (value === undefined && ref.optional !== true) throw new Error(`${kind} ${ref.name} has no key ${ref.key} (the pod would not start)`);
  return value;
}

/**
 * Plans pod `podName` of namespace `namespace` from `spec`. Volume files are written under
 * `volumeDir` (owned by root and the pod's fsGroup, as kubelet leaves them).
 */
export function planPod(podName: string, namespace: string, spec: PodSpec, sources: Sources, volumeDir: string): PodPlan {
  if (spec.containers.length !== 1) unsupported(`${spec.containers.length} containers`);
  if ((spec.initContainers ?? []).length > 0) unsupported('init containers');
  if (spec.hostNetwork === true) unsupported('hostNetwork');
  const container = spec.containers[0];
  if ((container.envFrom ?? []).length > 0) unsupported('envFrom');
  const pod = spec.securityContext ?? {};
  const sc = container.securityContext ?? {};
  const user = sc.runAsUser ?? pod.runAsUser;
  const group = sc.runAsGroup ?? pod.runAsGroup;
  if ((sc.runAsNonRoot ?? pod.runAsNonRoot) === true && (user === undefined || user === 0)) {
    throw new Error('runAsNonRoot is set but no non-root runAsUser: kubelet would refuse to start the container');
  }
  const args = ['--name', podName, '--hostname', podName, '--pull', 'never', '--no-healthcheck'];
  if (user !== undefined) args.push('--user', group === undefined ? String(user) : `${user}:${group}`);
  if (pod.fsGroup !== undefined) args.push('--group-add', String(pod.fsGroup));
  if (sc.readOnlyRootFilesystem === true) args.push('--read-only', '--read-only-tmpfs=false');
  if (sc.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges');
  if (sc.privileged === true) unsupported('a privileged container');
  for (const cap of sc.capabilities?.drop ?? []) args.push('--cap-drop', cap);
  for (const cap of sc.capabilities?.add ?? []) args.push('--cap-add', cap);
  const seccomp = sc.seccompProfile?.type ?? pod.seccompProfile?.type;
  if (seccomp !== undefined && seccomp !== 'RuntimeDefault') unsupported(`seccompProfile ${seccomp}`);
  const limits = container.resources?.limits ?? {};
  const requests = container.resources?.requests ?? {};
  if (limits.memory !== undefined) args.push('--memory', String(memoryBytes(limits.memory)));
  if (limits.cpu !== undefined) args.push('--cpus', String(cpuCores(limits.cpu)));
  if (requests.cpu !== undefined) args.push('--cpu-shares', String(Math.max(2, Math.round(cpuCores(requests.cpu) * 1024))));

  const env = new Map<string, string>();
  for (const e of container.env ?? []) {
    let value: string | undefined = e.value === undefined ? undefined : expandReferences(e.value, env);
    const from = e.valueFrom;
    if (from?.secretKeyRef !== undefined) value = keyOf(sources.secrets, from.secretKeyRef, 'Secret')?.toString('utf8');
    else if (from?.configMapKeyRef !== undefined) value = keyOf(sources.configMaps, from.configMapKeyRef, 'ConfigMap');
    else if (from?.fieldRef !== undefined) {
      const field = from.fieldRef.fieldPath;
      if (field === 'metadata.name') value = podName;
      else if (field === 'metadata.namespace') value = namespace;
      else unsupported(`env from field ${field}`);
    } else if (from !== undefined) unsupported(`env ${e.name} from ${Object.keys(from).join(', ')}`);
    if (value !== undefined) env.set(e.name, value);
  }
  for (const [k, v] of env) args.push('--env', `${k}=${v}`);

  const volumes = new Map((spec.volumes ?? []).map((v) => [v.name, v]));
  for (const mount of container.volumeMounts ?? []) {
    if (mount.subPath !== undefined) unsupported('subPath mounts');
    const volume = volumes.get(mount.name);
    if (volume === undefined) throw new Error(`volume mount ${mount.name} names no volume`);
    if (volume.emptyDir !== undefined) {
      args.push('--mount', `type=tmpfs,destination=${mount.mountPath},tmpfs-mode=1777`);
      continue;
    }
    const files: Record<string, Buffer> = {};
    let defaultMode = 0o644;
    let items: { key: string; path: string; mode?: number }[] | undefined;
    if (volume.secret !== undefined) {
      const data = sources.secrets.get(volume.secret.secretName);
      if (data === undefined) throw new Error(`Secret ${volume.secret.secretName} of volume ${volume.name} does not exist (the pod would not start)`);
      Object.assign(files, data);
      defaultMode = volume.secret.defaultMode ?? defaultMode;
      items = volume.secret.items;
    } else if (volume.configMap !== undefined) {
      const data = sources.configMaps.get(volume.configMap.name);
      if (data === undefined) throw new Error(`ConfigMap ${volume.configMap.name} of volume ${volume.name} does not exist (the pod would not start)`);
      for (const [k, v] of Object.entries(data)) files[k] = Buffer.from(v, 'utf8');
      defaultMode = volume.configMap.defaultMode ?? defaultMode;
      items = volume.configMap.items;
    } else {
      unsupported(
        `volume ${volume.name} of kind ${Object.keys(volume)
          .filter((k) => k !== 'name')
          .join(', ')}`,
      );
    }
    const dir = join(volumeDir, podName, volume.name);
    mkdirSync(dir, { recursive: true });
    const chosen = items ?? Object.keys(files).map((key) => ({ key, path: key, mode: undefined }));
    for (const item of chosen) {
      const content = files[item.key];
      if (content === undefined) throw new Error(`volume ${volume.name} has no key ${item.key}`);
      const path = join(dir, item.path);
      writeFileSync(path, content);
      chmodSync(path, item.mode ?? defaultMode);
      if (pod.fsGroup !== undefined) chownSync(path, 0, pod.fsGroup);
    }
    chmodSync(dir, 0o755);
    args.push('--mount', `type=bind,source=${dir},destination=${mount.mountPath}${mount.readOnly === true ? ',readonly' : ''}`);
  }

  if (container.command !== undefined && container.command.length > 0) {
    args.push('--entrypoint', JSON.stringify(container.command.map((c) => expandReferences(c, env))));
  }
  args.push(container.image, ...(container.args ?? []).map((a) => expandReferences(a, env)));
  return { name: podName, runArgs: args, container, gracePeriodSeconds: spec.terminationGracePeriodSeconds ?? 30 };
}

/** The URL an httpGet probe asks, on `podIp` (named ports resolved from the container's ports). */
export function probeUrl(probe: Probe, container: Container, podIp: string): string {
  const get = probe.httpGet;
  if (get === undefined) return unsupported(`a probe other than httpGet (${Object.keys(probe).join(', ')})`);
  const port = typeof get.port === 'number' ? get.port : container.ports?.find((p) => p.name === get.port)?.containerPort;
  if (port === undefined) throw new Error(`probe port ${String(get.port)} is not a port of the container`);
  return `${(get.scheme ?? 'HTTP').toLowerCase()}://${podIp}:${port}${get.path ?? '/'}`;
}
