/**
 * A kubelet (and scheduler) for one node, for tests only: binds unscheduled pods of the default
 * scheduler to the node (unless `bind` is false: then kube-scheduler binds them), runs bound pods
 * whose images it knows (container-image.ts: busybox, agnhost, pause, sample-apiserver, etcd) as
 * native processes, each container chrooted into a root file system of its own with its volumes
 * bind-mounted at their paths (container-root.ts), one network and UTS namespace per pod.
 * As the kubelet does, it runs init containers one by one before the others (a sidecar, an init
 * container with restartPolicy Always, keeps running once started and its startup probe passed);
 * restarts containers by the pod's restartPolicy (1 s back-off); reports termination messages
 * (terminationMessagePath, or the log's tail with FallbackToLogsOnError); runs readiness, liveness
 * and startup probes (httpGet, tcpSocket, exec, gRPC; a failed liveness probe restarts the
 * container) and postStart and preStop hooks (exec, httpGet, sleep); refreshes Secret, ConfigMap
 * and downward API volumes every 3 s; fails a pod past its activeDeadlineSeconds (DeadlineExceeded);
 * reports status; serves exec (execInPod, for kubelet-exec.ts); and on deletion runs preStop hooks,
 * kills the processes (containers before sidecars), writes the pod's terminal phase, removes the
 * namespace and deletes the pod with gracePeriodSeconds=0. Pods it cannot run stay Pending with a
 * waiting reason `PodRunnerUnsupported` saying why; a container whose environment names a missing
 * ConfigMap or Secret waits with CreateContainerConfigError. Poll-based: lists pods every 300 ms.
 * Container output goes to WORKDIR/logs/NAMESPACE_POD_CONTAINER.log in the CRI log format (the
 * kubelet API of kubelet-api.ts serves it to pods/log). The API server is reachable from pods at the
 * `kubernetes` Service's address when main.ts forwards it (--apiserver).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ApiClient, ApiResponse } from './api-client.js';
import { containerEnv, EnvError, expand, expandSubPathExpr, podServices, type Allocatable } from './container-env.js';
import { containerArgv, imageOf, ImageLayers, type Image, type ImageKind, type Programs } from './container-image.js';
import { captureOutput } from './container-log.js';
import { containerCapabilities, DEV_SYMLINKS, execInContainer, launchCommand, spawnInContainer, systemMounts, type LaunchPlan, type Mount } from './container-root.js';
import type { PodNetwork, PodNetworks } from './pod-network.js';
import { buildPodStatus, type ContainerState, type PodState, type Terminated } from './pod-status.js';
import { materialiseVolumes, mountSource, refreshVolumes, releaseVolumes, VolumeError, type PodVolumes } from './pod-volumes.js';
import { probeSupported, runProbe } from './container-probe.js';

/** Settings of a runner. */
export interface PodRunnerOptions {
  node: string;
  /** Whether the runner binds unscheduled pods itself (false when a real scheduler runs). */
  bind: boolean;
  hostIP: string;
  programs: Programs;
  /** The imageID reported for each kind of image (a digest of the binary standing in for it). */
  imageIDs: Record<ImageKind, string>;
  workDir: string;
  /** The node's allocatable resources: a container's limits when it sets none (downward API). */
  allocatable: Allocatable;
  log: (msg: string) => void;
}

interface RunningContainer {
  spec: any;
  image: Image;
  init: boolean;
  /** An init container with restartPolicy Always: it keeps running beside the others. */
  sidecar: boolean;
  /** A sidecar that started (and passed its startup probe): the init containers after it may run. */
  sidecarStarted?: boolean;
  state: ContainerState;
  process?: ChildProcess;
  /** The plan the running process was started from (exec probes run with its user and environment). */
  plan?: LaunchPlan;
  /** Stop the probes of the current process. */
  probeTimers: Array<() => void>;
  restartTimer?: NodeJS.Timeout;
}

interface RunningPod {
  pod: any;
  net: PodNetwork;
  dir: string;
  volumes: PodVolumes;
  services: any[];
  startTime: string;
  initContainers: RunningContainer[];
  containers: RunningContainer[];
  stopping: boolean;
  /** Why the runner ended the pod itself (activeDeadlineSeconds passed): its status.reason and message. */
  failure?: { reason: string; message: string };
  lastStatus?: string;
  flushTimer?: NodeJS.Timeout;
  /** The status write in flight: a pod's status writes go one at a time, as the kubelet's status manager sends them. */
  statusWrite?: Promise<void>;
  /** The state changed while a write was in flight: write again once it is done. */
  flushAgain?: boolean;
  refreshing?: boolean;
}

const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

function podPath(pod: any, sub = ''): string {
  return `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}${sub}`;
}

/** The pod's hostname as the kubelet sets it: spec.hostname, else the name cut to 63 characters. */
function podHostname(pod: any): string {
  const name = (pod.spec.hostname as string | undefined) ?? (pod.metadata.name as string);
  return name.slice(0, 63).replace(/[-.]+$/, '');
}

/** The kubelet-managed /etc/hosts of a pod (managedHostsFileContent in kubelet_pods.go). */
export function hostsFile(pod: any, podIP: string): string {
  const hostname = podHostname(pod);
  const domain = pod.spec.subdomain ? `${pod.spec.subdomain}.${pod.metadata.namespace}.svc.cluster.local` : '';
  let out =
    '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n';
  out += domain ? `${podIP}\t${hostname}.${domain}\t${hostname}\n` : `${podIP}\t${hostname}\n`;
  const aliases: any[] = pod.spec.hostAliases ?? [];
  if (aliases.length > 0) out += '\n# Entries added by HostAliases.\n' + aliases.map((a) => `${a.ip}\t${(a.hostnames ?? []).join('\t')}\n`).join('');
  return out;
}

/**
 * A pod's /etc/resolv.conf as the kubelet writes it without cluster DNS: the host's servers, search
 * domains and options (none with dnsPolicy None), then spec.dnsConfig's added (options by name).
 */
export function resolvConf(pod: any, host: string): string {
  const lines = pod.spec.dnsPolicy === 'None' ? [] : host.split('\n').map((l) => l.trim().split(/\s+/));
  const nameservers = lines.filter((l) => l[0] === 'nameserver').map((l) => l[1]);
  const searches = lines.filter((l) => l[0] === 'search').flatMap((l) => l.slice(1));
  const options = new Map<string, string | undefined>();
  for (const l of lines.filter((x) => x[0] === 'options')) for (const o of l.slice(1)) options.set(o.split(':')[0], o.includes(':') ? o.slice(o.indexOf(':') + 1) : undefined);
  const cfg = pod.spec.dnsConfig ?? {};
  for (const n of cfg.nameservers ?? []) if (!nameservers.includes(n)) nameservers.push(n);
  for (const d of cfg.searches ?? []) if (!searches.includes(d)) searches.push(d);
  for (const o of cfg.options ?? []) options.set(o.name, o.value);
  let out = '';
  if (searches.length > 0) out += `search ${searches.join(' ')}\n`;
  for (const n of nameservers) out += `nameserver ${n}\n`;
  if (options.size > 0) out += `options ${[...options].map(([k, v]) => (v === undefined ? k : `${k}:${v}`)).join(' ')}\n`;
  return out;
}

/** The user a container runs as: uid, gid and supplementary groups, as the kubelet and runc pick them. */
export function containerUser(pod: any, container: any, imageEtc: { passwd: string; group: string }): { uid: number; gid: number; groups: number[] } {
  const psc = pod.spec.securityContext ?? {};
  const csc = container.securityContext ?? {};
  const uid: number = csc.runAsUser ?? psc.runAsUser ?? 0;
  const entry = imageEtc.passwd
    .split('\n')
    .map((l) => l.split(':'))
    .find((f) => f.length > 3 && Number(f[2]) === uid);
  const gid: number = csc.runAsGroup ?? psc.runAsGroup ?? (entry ? Number(entry[3]) : 0);
  const groups = new Set<number>();
  if (entry)
    for (const line of imageEtc.group.split('\n')) {
      const f = line.split(':');
      if (f.length > 3 && f[3].split(',').includes(entry[0])) groups.add(Number(f[2]));
    }
  if (typeof psc.fsGroup === 'number') groups.add(psc.fsGroup);
  for (const g of psc.supplementalGroups ?? []) groups.add(g);
  groups.delete(gid);
  return { uid, gid, groups: [...groups] };
}

/** Up to `max` bytes of the start of a file ('' when it is missing). */
function readFileHead(file: string, max: number): string {
  try {
    return readFileSync(file).subarray(0, max).toString('utf8');
  } catch {
    return '';
  }
}

/**
 * A terminated container's message, as the kubelet makes it: what it wrote to its
 * terminationMessagePath; when that is empty, the policy FallbackToLogsOnError and the exit code
 * not 0, the last 80 lines (at most 2048 bytes) of its output, from its CRI-format log `log`.
 */
export function terminationMessage(file: string, policy: string | undefined, exitCode: number, log: string): string {
  if (file !== '' || policy !== 'FallbackToLogsOnError' || exitCode === 0) return file;
  let text = '';
  for (const record of log.split('\n')) {
    const m = /^\S+ (?:stdout|stderr) ([PF]) (.*)$/.exec(record);
    if (m) text += m[2] + (m[1] === 'F' ? '\n' : '');
  }
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const tail = lines.slice(-80).join('\n') + (text.endsWith('\n') ? '\n' : '');
  const bytes = Buffer.from(tail);
  return bytes.length > 2048 ? bytes.subarray(bytes.length - 2048).toString('utf8') : tail;
}

/** The runner: call tick() periodically (start() does) and shutDown() at the end. */
export class PodRunner {
  private readonly running = new Map<string, RunningPod>();
  private readonly bound = new Set<string>();
  private readonly deleting = new Set<string>();
  private readonly unsupported = new Map<string, string>();
  private readonly layers: ImageLayers;
  private ticking = false;
  private timer?: NodeJS.Timeout;
  private refreshTimer?: NodeJS.Timeout;

  constructor(
    private readonly api: ApiClient,
    private readonly networks: PodNetworks,
    private readonly opts: PodRunnerOptions,
  ) {
    this.layers = new ImageLayers(join(opts.workDir, 'images'), opts.programs);
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), 300);
    this.refreshTimer = setInterval(() => void this.refreshAll(), 3000);
  }

  /** One pass over all pods: bind, start, delete, forget. */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const res = await this.api.get('/api/v1/pods');
      if (res.status !== 200) return;
      const seen = new Set<string>();
      for (const pod of res.body.items as any[]) {
        const uid = pod.metadata.uid as string;
        seen.add(uid);
        await this.reconcile(pod).catch((err: unknown) => this.opts.log(`${pod.metadata.namespace}/${pod.metadata.name}: ${String(err)}`));
      }
      for (const [uid, rp] of this.running) if (!seen.has(uid)) await this.stop(rp);
      for (const set of [this.bound, this.deleting]) for (const uid of set) if (!seen.has(uid)) set.delete(uid);
      for (const uid of this.unsupported.keys()) if (!seen.has(uid)) this.unsupported.delete(uid);
    } catch (err) {
      this.opts.log(`listing pods: ${String(err)}`);
    } finally {
      this.ticking = false;
    }
  }

  private async reconcile(pod: any): Promise<void> {
    const uid = pod.metadata.uid as string;
    const nodeName = pod.spec.nodeName as string | undefined;
    if (!nodeName) {
      if (!this.opts.bind || pod.metadata.deletionTimestamp || this.bound.has(uid)) return;
      if ((pod.spec.schedulerName ?? 'default-scheduler') !== 'default-scheduler') return;
      this.bound.add(uid);
      const res = await this.api.request('POST', podPath(pod, '/binding'), {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, uid },
        target: { apiVersion: 'v1', kind: 'Node', name: this.opts.node },
      });
      if (res.status >= 300) {
        this.bound.delete(uid);
        this.opts.log(`binding ${pod.metadata.namespace}/${pod.metadata.name}: HTTP ${res.status} ${res.body?.message ?? ''}`);
      } else this.opts.log(`bound ${pod.metadata.namespace}/${pod.metadata.name} to ${this.opts.node}`);
      return;
    }
    if (nodeName !== this.opts.node) return;
    const rp = this.running.get(uid);
    if (rp) {
      // A spec change (a new generation) is reported as observed, as the kubelet does.
      const observed = rp.pod.metadata.generation !== pod.metadata.generation;
      rp.pod = pod;
      if (observed) this.markDirty(rp);
      this.checkDeadline(rp);
    }
    if (pod.metadata.deletionTimestamp) {
      if (this.deleting.has(uid)) return;
      this.deleting.add(uid);
      // Not awaited: preStop hooks may take the grace period, and other pods go on meanwhile.
      void (async () => {
        if (rp) {
          await this.stop(rp, Math.min(30, pod.metadata.deletionGracePeriodSeconds ?? 30));
          await this.writeFinalStatus(rp);
        }
        const res = await this.api.request('DELETE', podPath(pod), {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          gracePeriodSeconds: 0,
          preconditions: { uid },
        });
        this.opts.log(`deleted ${pod.metadata.namespace}/${pod.metadata.name}: HTTP ${res.status}`);
      })().catch((err: unknown) => this.opts.log(`deleting ${pod.metadata.namespace}/${pod.metadata.name}: ${String(err)}`));
      return;
    }
    if (rp || this.unsupported.has(uid)) return;
    if (['Succeeded', 'Failed'].includes(pod.status?.phase)) return;
    await this.startPod(pod);
  }

  /** Why the runner cannot run this pod, or undefined. */
  private cannotRun(pod: any): string | undefined {
    for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
      const image = imageOf(c.image, this.opts.programs);
      if ('unsupported' in image) return `container ${c.name}: ${image.unsupported}`;
      for (const probe of [c.readinessProbe, c.livenessProbe]) if (probe && !probeSupported(probe)) return `container ${c.name}: a probe the pod runner cannot run`;
    }
    return undefined;
  }

  private async markUnsupported(pod: any, message: string): Promise<void> {
    this.unsupported.set(pod.metadata.uid, message);
    this.opts.log(`${pod.metadata.namespace}/${pod.metadata.name} stays Pending: ${message}`);
    const waiting = (c: any): ContainerState => ({
      name: c.name,
      image: c.image,
      imageID: '',
      containerID: '',
      restartCount: 0,
      ready: false,
      waiting: { reason: 'PodRunnerUnsupported', message },
    });
    const status = buildPodStatus(
      pod,
      { hostIP: this.opts.hostIP, startTime: now(), initContainers: (pod.spec.initContainers ?? []).map(waiting), containers: pod.spec.containers.map(waiting) },
      now(),
    );
    status.phase = 'Pending';
    await this.api.mergePatch(podPath(pod, '/status'), { status });
  }

  private newContainer(spec: any, init: boolean, waitingReason: string | undefined): RunningContainer {
    const image = imageOf(spec.image, this.opts.programs) as Image;
    return {
      spec,
      image,
      init,
      sidecar: init && spec.restartPolicy === 'Always',
      probeTimers: [],
      state: {
        name: spec.name,
        image: spec.image,
        imageID: this.opts.imageIDs[image.kind],
        containerID: '',
        restartCount: 0,
        ready: false,
        ...(init && spec.restartPolicy === 'Always' ? { sidecar: true } : {}),
        waiting: waitingReason ? { reason: waitingReason } : undefined,
      },
    };
  }

  private async startPod(pod: any): Promise<void> {
    const reason = this.cannotRun(pod);
    if (reason) return this.markUnsupported(pod, reason);
    const uid = pod.metadata.uid as string;
    const dir = join(this.opts.workDir, uid);
    let volumes: PodVolumes;
    try {
      // The images' layers are built (once) before anything else of the pod.
      for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) this.layers.layers((imageOf(c.image, this.opts.programs) as Image).kind);
      volumes = await materialiseVolumes(this.api, pod, dir, { hostIP: this.opts.hostIP, allocatable: this.opts.allocatable });
    } catch (err) {
      if (err instanceof VolumeError && !err.retry) return this.markUnsupported(pod, err.message);
      this.opts.log(`${pod.metadata.namespace}/${pod.metadata.name}: volumes not ready: ${String(err)}`);
      return;
    }
    const services = await podServices(this.api, pod);
    const net = this.networks.create();
    const inits: any[] = pod.spec.initContainers ?? [];
    const rp: RunningPod = {
      pod,
      net,
      dir,
      volumes,
      services,
      startTime: now(),
      initContainers: inits.map((spec) => this.newContainer(spec, true, 'PodInitializing')),
      containers: pod.spec.containers.map((spec: any) => this.newContainer(spec, false, inits.length > 0 ? 'PodInitializing' : undefined)),
      stopping: false,
    };
    this.writeEtcFiles(rp);
    this.running.set(uid, rp);
    this.opts.log(`starting ${pod.metadata.namespace}/${pod.metadata.name} at ${net.ip} (${net.namespace})`);
    this.startNext(rp);
    this.markDirty(rp);
  }

  /**
   * Ends a pod whose spec.activeDeadlineSeconds passed since it started (as the kubelet does): its
   * containers are killed and not restarted, and it fails with reason DeadlineExceeded.
   */
  private checkDeadline(rp: RunningPod): void {
    const deadline = rp.pod.spec.activeDeadlineSeconds as number | undefined;
    if (deadline === undefined || rp.failure || rp.stopping) return;
    if (Date.now() - Date.parse(rp.startTime) < deadline * 1000) return;
    rp.failure = { reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' };
    this.opts.log(`${rp.pod.metadata.namespace}/${rp.pod.metadata.name}: active deadline of ${deadline}s passed; killing its containers`);
    for (const c of [...rp.initContainers, ...rp.containers]) {
      clearTimeout(c.restartTimer);
      const pid = c.process?.pid;
      if (pid === undefined) continue;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    this.markDirty(rp);
  }

  /** A sidecar (an init container with restartPolicy Always) has started: the pod's start goes on. */
  private sidecarStarted(rp: RunningPod, c: RunningContainer): void {
    if (c.sidecarStarted) return;
    c.sidecarStarted = true;
    this.startNext(rp);
  }

  /**
   * Starts the first init container not yet completed (a sidecar: not yet started), or (all
   * completed) every container.
   */
  private startNext(rp: RunningPod): void {
    for (const c of rp.initContainers) {
      if (c.sidecar) {
        if (c.sidecarStarted) continue;
        if (c.process === undefined) void this.spawnContainer(rp, c);
        return;
      }
      if (c.state.terminated?.exitCode === 0) continue;
      void this.spawnContainer(rp, c);
      return;
    }
    for (const c of rp.containers) {
      c.state.waiting = undefined;
      void this.spawnContainer(rp, c);
    }
  }

  /** The pod's /etc/hosts, /etc/hostname and /etc/resolv.conf (resolvConf), which every container mounts. */
  private writeEtcFiles(rp: RunningPod): void {
    const etc = join(rp.dir, 'etc');
    mkdirSync(etc, { recursive: true });
    writeFileSync(join(etc, 'hosts'), hostsFile(rp.pod, rp.net.ip));
    writeFileSync(join(etc, 'hostname'), `${podHostname(rp.pod)}\n`);
    let resolv = '';
    try {
      resolv = readFileSync('/etc/resolv.conf', 'utf8');
    } catch {
      // none on the host
    }
    writeFileSync(join(etc, 'resolv.conf'), resolvConf(rp.pod, resolv));
  }

  /** The image's /etc/passwd and /etc/group (from its topmost layer that has them). */
  private imageEtc(image: Image): { passwd: string; group: string } {
    const read = (name: string): string => {
      for (const layer of this.layers.layers(image.kind)) {
        try {
          return readFileSync(join(layer, 'etc', name), 'utf8');
        } catch {
          // not in this layer
        }
      }
      return '';
    };
    return { passwd: read('passwd'), group: read('group') };
  }

  /** The start plan of a container (see container-root.ts), or why it cannot start yet. */
  private async launchPlan(rp: RunningPod, c: RunningContainer, cdir: string, terminationLog: string): Promise<LaunchPlan> {
    const spec = c.spec;
    const env = await containerEnv(spec, rp.services, {
      api: this.api,
      pod: rp.pod,
      podIP: rp.net.ip,
      hostIP: this.opts.hostIP,
      hostname: podHostname(rp.pod),
      imageEnv: c.image.env,
      allocatable: this.opts.allocatable,
    });
    const lookup = (n: string): string | undefined => env[n];
    const argv = containerArgv({ command: spec.command?.map((a: string) => expand(a, lookup)), args: spec.args?.map((a: string) => expand(a, lookup)) }, c.image);
    const user = containerUser(rp.pod, spec, this.imageEtc(c.image));
    const runAsNonRoot = spec.securityContext?.runAsNonRoot ?? rp.pod.spec.securityContext?.runAsNonRoot;
    if (runAsNonRoot === true && user.uid === 0) {
      throw new EnvError(
        spec.securityContext?.runAsUser === 0 || rp.pod.spec.securityContext?.runAsUser === 0
          ? 'container\'s runAsUser breaks non-root policy (pod: "' + `${rp.pod.metadata.name}_${rp.pod.metadata.namespace}(${rp.pod.metadata.uid})", container: ${spec.name})`
          : 'container has runAsNonRoot and image will run as root (pod: "' + `${rp.pod.metadata.name}_${rp.pod.metadata.namespace}(${rp.pod.metadata.uid})", container: ${spec.name})`,
      );
    }
    const mounts: Mount[] = systemMounts({ hosts: join(rp.dir, 'etc/hosts'), hostname: join(rp.dir, 'etc/hostname'), resolvConf: join(rp.dir, 'etc/resolv.conf') });
    for (const m of spec.volumeMounts ?? []) {
      const subPath = m.subPathExpr !== undefined ? expandSubPathExpr(m.subPathExpr, env) : m.subPath;
      const { source, file } = mountSource(rp.volumes, { name: m.name, subPath }, spec.name);
      mounts.push({ target: m.mountPath, source, file, readOnly: m.readOnly === true });
    }
    mounts.push({ target: spec.terminationMessagePath ?? '/dev/termination-log', source: terminationLog, file: true });
    return {
      hostname: podHostname(rp.pod),
      root: join(cdir, 'root'),
      lower: this.layers.layers(c.image.kind),
      upper: join(cdir, 'upper'),
      work: join(cdir, 'work'),
      readOnlyRoot: spec.securityContext?.readOnlyRootFilesystem === true,
      mounts,
      symlinks: DEV_SYMLINKS,
      ...user,
      workingDir: spec.workingDir || '/',
      capabilities: containerCapabilities(spec.securityContext),
      noNewPrivileges: spec.securityContext?.allowPrivilegeEscalation === false,
      env,
      argv,
    };
  }

  private async spawnContainer(rp: RunningPod, c: RunningContainer): Promise<void> {
    if (rp.stopping || rp.failure) return;
    const { namespace, name } = rp.pod.metadata;
    const cdir = join(rp.dir, 'containers', `${c.spec.name}-${c.state.restartCount}`);
    const terminationLog = join(cdir, 'termination-log');
    let plan: LaunchPlan;
    try {
      for (const d of ['root', 'upper', 'work']) mkdirSync(join(cdir, d), { recursive: true });
      writeFileSync(terminationLog, '');
      chmodSync(terminationLog, 0o666);
      plan = await this.launchPlan(rp, c, cdir, terminationLog);
    } catch (err) {
      if (rp.stopping) return;
      // The kubelet's CreateContainerConfigError: the container waits, and is tried again.
      const message = err instanceof Error ? err.message : String(err);
      if (c.state.waiting?.message !== message) this.opts.log(`${namespace}/${name} container ${c.spec.name}: ${message}`);
      c.state.waiting = { reason: 'CreateContainerConfigError', message };
      this.markDirty(rp);
      c.restartTimer = setTimeout(() => void this.spawnContainer(rp, c), 2000);
      return;
    }
    if (rp.stopping) return;
    // Until the program runs, the kubelet's waiting reason: PodInitializing for an init container.
    c.state.waiting = { reason: c.init ? 'PodInitializing' : 'ContainerCreating' };
    const logFile = this.logFile(namespace, name, c.spec.name, false);
    mkdirSync(dirname(logFile), { recursive: true });
    // A restarted container's earlier log is what `previous=true` reads.
    if (c.state.restartCount > 0 && existsSync(logFile)) renameSync(logFile, this.logFile(namespace, name, c.spec.name, true));
    const launch = launchCommand(rp.net.namespace, plan);
    const child = spawn(launch.command, launch.args, { cwd: cdir, env: launch.env, detached: true, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    captureOutput(logFile, [
      [child.stdout, 'stdout'],
      [child.stderr, 'stderr'],
    ]);
    c.process = child;
    c.plan = plan;
    c.state.containerID = `capstan://${rp.pod.metadata.uid}-${c.spec.name}-${c.state.restartCount}`;
    c.state.terminated = undefined;
    // Running from the moment the helper executed the program (it closes its fd 3 then), as the
    // kubelet reports it once the runtime started the process: not while mounts are still being made.
    const started = (): void => {
      if (c.process !== child || c.state.startedAt !== undefined) return;
      c.state.startedAt = now();
      c.state.waiting = undefined;
      c.state.ready = !c.spec.readinessProbe && (!c.init || c.sidecar);
      this.markDirty(rp);
      // A sidecar lets the next init container start once it started (its startup probe passed).
      if (c.sidecar && !c.spec.startupProbe) this.sidecarStarted(rp, c);
    };
    const startSignal = child.stdio[3] as NodeJS.ReadableStream | null;
    if (startSignal) {
      startSignal.on('close', started);
      startSignal.resume();
    } else started();
    // A failed spawn emits 'error' without 'exit': the container then ends with code 128 instead of
    // taking the runner down. The end is handled once, when the output is all written ('close'),
    // or a second after the exit when a process the container left behind keeps the output open.
    let ended = false;
    let code = 128;
    const end = (): void => {
      if (ended) return;
      ended = true;
      this.containerExited(rp, c, code, logFile, terminationLog);
    };
    child.on('exit', (exitCode, signal) => {
      code = exitCode ?? (signal ? 128 + (signal === 'SIGKILL' ? 9 : 15) : 1);
      setTimeout(end, 1000);
    });
    child.on('close', end);
    child.on('error', (err) => {
      this.opts.log(`${namespace}/${name} container ${c.spec.name}: ${err.message}`);
      end();
    });
    for (const stopProbe of c.probeTimers.splice(0)) stopProbe();
    const probed = !c.init || c.sidecar;
    if (c.spec.readinessProbe && probed) this.startProbe(rp, c, 'readiness');
    if (c.spec.livenessProbe && probed) this.startProbe(rp, c, 'liveness');
    if (c.spec.startupProbe && probed) this.startProbe(rp, c, 'startup');
    const postStart = c.spec.lifecycle?.postStart;
    if (postStart && !c.init) {
      // As the kubelet does, a failed postStart hook kills the container (which restarts by its policy).
      void this.runHook(rp, c, postStart, 30_000).then((ok) => {
        this.opts.log(`${namespace}/${name} container ${c.spec.name}: postStart hook ${ok ? 'ran' : 'failed'}`);
        if (!ok && c.process === child && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      });
    }
    this.markDirty(rp);
  }

  /** Runs a lifecycle hook (exec in the container, or httpGet to the pod IP by default, as the kubelet does); resolves whether it succeeded. */
  private runHook(rp: RunningPod, c: RunningContainer, handler: any, timeoutMs: number): Promise<boolean> {
    if (handler.sleep) return new Promise((resolve) => setTimeout(() => resolve(true), Math.min(timeoutMs, (handler.sleep.seconds ?? 0) * 1000)));
    const probe = { ...handler, timeoutSeconds: Math.max(1, Math.floor(timeoutMs / 1000)) };
    const pid = c.process?.pid;
    const plan = c.plan;
    return runProbe(probe, c.spec, rp.net.ip, (argv, ms) => (pid === undefined || plan === undefined ? Promise.resolve(undefined) : execInContainer(pid, plan, argv, ms)));
  }

  /**
   * Runs a container's readiness or liveness probe every periodSeconds after initialDelaySeconds:
   * readiness sets `ready` after successThreshold successes and clears it after failureThreshold
   * failures; liveness failing failureThreshold times in a row kills the container (SIGTERM, SIGKILL
   * after 2 s), which then restarts by the pod's restartPolicy, as the kubelet does.
   */
  private startProbe(rp: RunningPod, c: RunningContainer, kind: 'readiness' | 'liveness' | 'startup'): void {
    const probe = kind === 'readiness' ? c.spec.readinessProbe : kind === 'liveness' ? c.spec.livenessProbe : c.spec.startupProbe;
    let done = false;
    const period = Math.max(1, probe.periodSeconds ?? 10) * 1000;
    const success = probe.successThreshold ?? 1;
    const failure = probe.failureThreshold ?? 3;
    const child = c.process;
    let inFlight = false;
    let successes = 0;
    let failures = 0;
    const run = async (): Promise<void> => {
      if (done || inFlight || rp.stopping || !c.state.startedAt || c.process !== child) return;
      inFlight = true;
      const pid = child?.pid;
      const plan = c.plan;
      let reason = '';
      const ok = await runProbe(
        probe,
        c.spec,
        rp.net.ip,
        (argv, timeoutMs) => (pid === undefined || plan === undefined ? Promise.resolve(undefined) : execInContainer(pid, plan, argv, timeoutMs)),
        (why) => (reason = why),
      );
      inFlight = false;
      if (rp.stopping || c.process !== child) return;
      if (ok) {
        failures = 0;
        if (kind === 'startup') {
          // Passed once, the startup probe is done; a sidecar's start lets the pod go on.
          done = true;
          if (c.sidecar) this.sidecarStarted(rp, c);
          return;
        }
        if (++successes >= success && kind === 'readiness' && !c.state.ready) {
          c.state.ready = true;
          this.markDirty(rp);
        }
        return;
      }
      successes = 0;
      if (++failures < failure) return;
      if (kind === 'readiness' && c.state.ready) {
        c.state.ready = false;
        this.markDirty(rp);
      }
      if (kind === 'liveness' && child?.pid !== undefined) {
        this.opts.log(`${rp.pod.metadata.namespace}/${rp.pod.metadata.name} container ${c.spec.name} failed its liveness probe (${reason}); killing it`);
        failures = 0;
        const pgid = child.pid;
        const signal = (sig: NodeJS.Signals): void => {
          try {
            process.kill(-pgid, sig);
          } catch {
            // gone
          }
        };
        signal('SIGTERM');
        setTimeout(() => signal('SIGKILL'), 2000);
      }
    };
    const delay = (probe.initialDelaySeconds ?? 0) * 1000;
    const timers = { delay: setTimeout(() => {
      void run();
      timers.every = setInterval(() => void run(), period);
    }, delay), every: undefined as NodeJS.Timeout | undefined };
    c.probeTimers.push(() => {
      clearTimeout(timers.delay);
      clearInterval(timers.every);
    });
  }

  /** A container's termination message as the kubelet reads it (see terminationMessage). */
  private terminationMessage(c: RunningContainer, exitCode: number, logFile: string, terminationLog: string): string | undefined {
    let log = '';
    if (c.spec.terminationMessagePolicy === 'FallbackToLogsOnError' && exitCode !== 0) {
      try {
        log = readFileSync(logFile, 'utf8');
      } catch {
        // no output
      }
    }
    return terminationMessage(readFileHead(terminationLog, 4096), c.spec.terminationMessagePolicy, exitCode, log);
  }

  private containerExited(rp: RunningPod, c: RunningContainer, exitCode: number, logFile: string, terminationLog: string): void {
    for (const stopProbe of c.probeTimers.splice(0)) stopProbe();
    c.process = undefined;
    if (rp.stopping) return;
    const terminated: Terminated = { exitCode, startedAt: c.state.startedAt ?? now(), finishedAt: now(), reason: exitCode === 0 ? 'Completed' : 'Error' };
    const message = this.terminationMessage(c, exitCode, logFile, terminationLog);
    if (message) terminated.message = message;
    this.opts.log(`${rp.pod.metadata.namespace}/${rp.pod.metadata.name} container ${c.spec.name} exited ${exitCode}`);
    c.state.ready = false;
    c.state.startedAt = undefined;
    const policy = rp.pod.spec.restartPolicy ?? 'Always';
    // An init container that completed is done; one that failed is run again unless the pod's policy is Never.
    const restart = rp.failure
      ? false
      : c.sidecar
        ? true
        : c.init
          ? exitCode !== 0 && policy !== 'Never'
          : policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0);
    if (restart) {
      c.state.lastTerminated = terminated;
      c.state.waiting = { reason: 'CrashLoopBackOff', message: `back-off 1s restarting failed container=${c.spec.name} pod=${rp.pod.metadata.name}_${rp.pod.metadata.namespace}(${rp.pod.metadata.uid})` };
      c.restartTimer = setTimeout(() => {
        if (rp.stopping) return;
        c.state.restartCount++;
        void this.spawnContainer(rp, c);
      }, 1000);
    } else {
      c.state.terminated = terminated;
      // A completed init container is reported ready, as the kubelet does.
      if (c.init && exitCode === 0) {
        c.state.ready = true;
        this.startNext(rp);
      }
    }
    this.markDirty(rp);
  }

  /** Rewrites the running pods' Secret, ConfigMap and downward API volumes from their sources (the kubelet's volume resync). */
  private async refreshAll(): Promise<void> {
    for (const rp of this.running.values()) {
      if (rp.stopping || rp.refreshing) continue;
      rp.refreshing = true;
      try {
        const changed = await refreshVolumes(this.api, rp.pod, rp.dir, { podIP: rp.net.ip, hostIP: this.opts.hostIP, allocatable: this.opts.allocatable });
        if (changed.length > 0) this.opts.log(`${rp.pod.metadata.namespace}/${rp.pod.metadata.name}: volumes updated: ${changed.join(', ')}`);
      } catch (err) {
        this.opts.log(`${rp.pod.metadata.namespace}/${rp.pod.metadata.name}: refreshing volumes: ${String(err)}`);
      } finally {
        rp.refreshing = false;
      }
    }
  }

  private markDirty(rp: RunningPod): void {
    if (rp.flushTimer || rp.stopping) return;
    rp.flushTimer = setTimeout(() => {
      rp.flushTimer = undefined;
      void this.flushStatus(rp);
    }, 50);
  }

  /**
   * The terminal status of a pod the runner stopped for its deletion (phase Succeeded when every
   * container ended with 0, else Failed), written before the pod is deleted, as the kubelet does:
   * controllers that wait for a terminal phase (the Job controller's podReplacementPolicy Failed)
   * see it while the pod's finalizers keep it.
   */
  private async writeFinalStatus(rp: RunningPod): Promise<void> {
    // A write still in flight must not land after the terminal status.
    await rp.statusWrite;
    for (let attempt = 0; attempt < 5; attempt++) {
      const status = buildPodStatus(rp.pod, { ...this.podState(rp), terminal: true }, now());
      const res = await this.patchStatus(rp, status).catch(() => undefined);
      if (res?.status === 409 && (await this.refreshPod(rp))) continue;
      if (res && res.status !== 200 && res.status !== 404) this.opts.log(`final status of ${rp.pod.metadata.namespace}/${rp.pod.metadata.name}: HTTP ${res.status}`);
      return;
    }
  }

  /**
   * A status merge patch made against the pod version the runner knows (its resourceVersion a
   * precondition): the patch replaces `conditions` whole, keeping the others' conditions (the
   * DisruptionTarget of an eviction) only as that version had them, so a newer version answers 409
   * and the status is made again from it.
   */
  private patchStatus(rp: RunningPod, status: unknown): Promise<ApiResponse> {
    return this.api.mergePatch(podPath(rp.pod, '/status'), { metadata: { resourceVersion: rp.pod.metadata.resourceVersion }, status });
  }

  /** Reads the pod again after a 409; false when it is gone or cannot be read. */
  private async refreshPod(rp: RunningPod): Promise<boolean> {
    const res = await this.api.get(podPath(rp.pod)).catch(() => undefined);
    if (res?.status !== 200) return false;
    rp.pod = res.body;
    return true;
  }

  private podState(rp: RunningPod): PodState {
    return {
      podIP: rp.net.ip,
      hostIP: this.opts.hostIP,
      startTime: rp.startTime,
      initContainers: rp.initContainers.map((c) => c.state),
      containers: rp.containers.map((c) => c.state),
      generation: rp.pod.metadata.generation,
      failure: rp.failure,
    };
  }

  /**
   * Writes the pod's status if it changed since the last write that succeeded. Writes go one at a
   * time: two in flight could land in either order (on another connection, another worker), and an
   * older status landing last would stay, as the newer one counts as written.
   */
  private async flushStatus(rp: RunningPod): Promise<void> {
    if (rp.statusWrite !== undefined) {
      rp.flushAgain = true;
      return;
    }
    rp.statusWrite = this.writeStatus(rp);
    await rp.statusWrite;
    rp.statusWrite = undefined;
    if (rp.flushAgain) {
      rp.flushAgain = false;
      await this.flushStatus(rp);
    }
  }

  private async writeStatus(rp: RunningPod): Promise<void> {
    if (rp.stopping) return;
    const state = this.podState(rp);
    const key = JSON.stringify(state);
    if (key === rp.lastStatus) return;
    const status = buildPodStatus(rp.pod, state, now());
    const res = await this.patchStatus(rp, status).catch((err: unknown) => {
      this.opts.log(`status of ${rp.pod.metadata.name}: ${String(err)}`);
      return undefined;
    });
    if (res?.status === 200) {
      rp.lastStatus = key;
      rp.pod = res.body;
    } else if (res?.status === 409) {
      // Another writer changed the pod since: make the status again from its newer version.
      if (await this.refreshPod(rp)) this.markDirty(rp);
    } else if (res && res.status !== 404) {
      this.opts.log(`status of ${rp.pod.metadata.namespace}/${rp.pod.metadata.name}: HTTP ${res.status} ${res.body?.message ?? ''}`);
      this.markDirty(rp);
    }
  }

  /**
   * Runs the preStop hooks of the running containers (within `graceSeconds`), kills the pod's
   * processes (SIGTERM, SIGKILL after 2 s), removes its namespace, volumes and container roots (logs stay).
   */
  private async stop(rp: RunningPod, graceSeconds = 0): Promise<void> {
    if (rp.stopping) return;
    rp.stopping = true;
    clearTimeout(rp.flushTimer);
    this.running.delete(rp.pod.metadata.uid);
    // The containers first (their preStop hooks may use the sidecars), then the init containers and sidecars.
    for (const group of [rp.containers, rp.initContainers]) await Promise.all(
      group.map(async (c) => {
        for (const stopProbe of c.probeTimers.splice(0)) stopProbe();
        clearTimeout(c.restartTimer);
        const child = c.process;
        if (!child?.pid || child.exitCode !== null) return;
        const preStop = c.spec.lifecycle?.preStop;
        if (preStop && graceSeconds > 0) {
          const ok = await this.runHook(rp, c, preStop, graceSeconds * 1000);
          this.opts.log(`${rp.pod.metadata.namespace}/${rp.pod.metadata.name} container ${c.spec.name}: preStop hook ${ok ? 'ran' : 'failed'}`);
        }
        const exited = new Promise<number>((resolve) => child.once('exit', (code, sig) => resolve(code ?? 128 + (sig === 'SIGKILL' ? 9 : 15))));
        const signal = (sig: NodeJS.Signals): void => {
          try {
            process.kill(-child.pid!, sig);
          } catch {
            // gone
          }
        };
        signal('SIGTERM');
        const timer = setTimeout(() => signal('SIGKILL'), 2000);
        const exitCode = await exited;
        clearTimeout(timer);
        // The end the final status reports (see writeFinalStatus).
        c.state.terminated = { exitCode, startedAt: c.state.startedAt ?? now(), finishedAt: now(), reason: exitCode === 0 ? 'Completed' : 'Error' };
        c.state.startedAt = undefined;
        c.state.waiting = undefined;
        c.state.ready = false;
      }),
    );
    this.networks.remove(rp.net);
    releaseVolumes(rp.volumes);
    rmSync(rp.dir, { recursive: true, force: true });
    this.opts.log(`stopped ${rp.pod.metadata.namespace}/${rp.pod.metadata.name}`);
  }

  /** A container's log file in the CRI format (its log before the last restart with `previous`). */
  private logFile(namespace: string, pod: string, container: string, previous: boolean): string {
    return join(this.opts.workDir, 'logs', `${namespace}_${pod}_${container}${previous ? '.previous' : ''}.log`);
  }

  /** The log of a container of a pod this runner runs, for the kubelet API; undefined for another. */
  containerLogs(namespace: string, pod: string, container: string, previous: boolean): { file: string; running: () => boolean } | undefined {
    for (const rp of this.running.values()) {
      if (rp.pod.metadata.namespace !== namespace || rp.pod.metadata.name !== pod) continue;
      const c = [...rp.initContainers, ...rp.containers].find((x) => x.spec.name === container);
      if (c === undefined) return undefined;
      return { file: this.logFile(namespace, pod, container, previous), running: () => !previous && c.process !== undefined && !rp.stopping };
    }
    return undefined;
  }

  /** Starts `argv` in a running container of a pod this runner runs, for the kubelet API's exec; or why not (HTTP status, message). */
  execInPod(namespace: string, pod: string, container: string, argv: string[]): ChildProcess | { status: number; message: string } {
    for (const rp of this.running.values()) {
      if (rp.pod.metadata.namespace !== namespace || rp.pod.metadata.name !== pod) continue;
      const c = [...rp.initContainers, ...rp.containers].find((x) => x.spec.name === container);
      if (c === undefined) return { status: 404, message: `container ${container} of pod ${namespace}/${pod} not found` };
      const pid = c.process?.pid;
      if (pid === undefined || c.plan === undefined || !c.state.startedAt) return { status: 500, message: `container ${container} is not running` };
      if (argv.length === 0) return { status: 400, message: 'no command given' };
      return spawnInContainer(pid, c.plan, argv, 'pipe');
    }
    return { status: 404, message: `pod ${namespace}/${pod} not found` };
  }

  /** Stops polling and every pod. */
  async shutDown(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.refreshTimer);
    await Promise.all([...this.running.values()].map((rp) => this.stop(rp)));
  }
}
