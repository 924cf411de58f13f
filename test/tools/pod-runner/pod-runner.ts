/**
 * A kubelet (and scheduler) for one node, for tests only: binds unscheduled pods of the default
 * scheduler to the node (unless `bind` is false: then kube-scheduler binds them), runs bound pods whose containers are all agnhost, pause, sample-apiserver or
 * etcd images as host processes (native binaries, one network and UTS namespace per pod, volumes
 * materialised into a directory),
 * probes readiness, reports status like the kubelet, and on deletion kills the processes, removes
 * the namespace and deletes the pod with gracePeriodSeconds=0. Pods it cannot run stay Pending with
 * a waiting reason `PodRunnerUnsupported` saying why. Poll-based: lists pods every 300 ms.
 * Container output goes to WORKDIR/logs/NAMESPACE_POD_CONTAINER.log in the CRI log format (the
 * kubelet API of kubelet-api.ts serves it to pods/log). Containers get
 * KUBERNETES_SERVICE_HOST/PORT (so in-cluster configuration loads) and their mounts under /run (the
 * service account token) bind-mounted in place; the API server is reachable from pods at the
 * `kubernetes` Service's address when main.ts forwards it (--apiserver).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ApiClient } from './api-client.js';
import { captureOutput } from './container-log.js';
import { containerProgram, rewriteMountPaths, type MountMapping, type Program, type Programs } from './container-command.js';
import type { PodNetwork, PodNetworks } from './pod-network.js';
import { buildPodStatus, type ContainerState } from './pod-status.js';
import { materialiseVolumes, VolumeError } from './pod-volumes.js';
import { probeSupported, runProbe } from './readiness-probe.js';

 

/** Settings of a runner. */
export interface PodRunnerOptions {
  node: string;
  /** Whether the runner binds unscheduled pods itself (false when a real scheduler runs). */
  bind: boolean;
  hostIP: string;
  programs: Programs;
  /** The imageID reported for each kind of image (a digest of the binary standing in for it). */
  imageIDs: Record<Exclude<Program, { unsupported: string }>['image'], string>;
  workDir: string;
  /** What KUBERNETES_SERVICE_HOST/PORT say (the `kubernetes` Service; not reachable from pods). */
  kubernetesService: { host: string; port: number };
  log: (msg: string) => void;
}

interface RunningContainer {
  spec: any;
  binary: string;
  args: string[];
  /** The program's own name as the image would show it (`/agnhost`); the binary's path when undefined. */
  argv0?: string;
  mounts: MountMapping[];
  state: ContainerState;
  process?: ChildProcess;
  probeTimer?: NodeJS.Timeout;
  successes: number;
  failures: number;
}

/**
 * Copies the files of the agnhost image's working directory (porter's `localhost.crt` and
 * `localhost.key`, which scripts/pod-runner/build-agnhost.sh keeps in `AGNHOST-files`) into a pod's
 * directory, where its containers run: `agnhost porter` serves its TLS ports with them.
 */
function copyAgnhostImageFiles(agnhost: string, dir: string): void {
  const files = `${agnhost}-files`;
  if (!existsSync(files)) return;
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(files)) copyFileSync(join(files, name), join(dir, name));
}

interface RunningPod {
  pod: any;
  net: PodNetwork;
  dir: string;
  startTime: string;
  containers: RunningContainer[];
  stopping: boolean;
  lastStatus?: string;
  flushTimer?: NodeJS.Timeout;
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

/** The runner: call tick() periodically (start() does) and shutDown() at the end. */
export class PodRunner {
  private readonly running = new Map<string, RunningPod>();
  private readonly bound = new Set<string>();
  private readonly deleting = new Set<string>();
  private readonly unsupported = new Map<string, string>();
  private readonly createdMountPoints = new Set<string>();
  private ticking = false;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly api: ApiClient,
    private readonly networks: PodNetworks,
    private readonly opts: PodRunnerOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), 300);
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
    if (rp) rp.pod = pod;
    if (pod.metadata.deletionTimestamp) {
      if (this.deleting.has(uid)) return;
      this.deleting.add(uid);
      if (rp) await this.stop(rp);
      const res = await this.api.request('DELETE', podPath(pod), {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        gracePeriodSeconds: 0,
        preconditions: { uid },
      });
      this.opts.log(`deleted ${pod.metadata.namespace}/${pod.metadata.name}: HTTP ${res.status}`);
      return;
    }
    if (rp || this.unsupported.has(uid)) return;
    if (['Succeeded', 'Failed'].includes(pod.status?.phase)) return;
    await this.startPod(pod);
  }

  /** Why the runner cannot run this pod, or undefined. */
  private cannotRun(pod: any): string | undefined {
    if ((pod.spec.initContainers ?? []).length > 0) return 'init containers are not supported by the pod runner';
    for (const c of pod.spec.containers) {
      const a = containerProgram(c, this.opts.programs);
      if ('unsupported' in a) return a.unsupported;
      if (c.readinessProbe && !probeSupported(c.readinessProbe)) return `container ${c.name}: only httpGet and tcpSocket readiness probes are supported`;
    }
    return undefined;
  }

  private async markUnsupported(pod: any, message: string): Promise<void> {
    this.unsupported.set(pod.metadata.uid, message);
    this.opts.log(`${pod.metadata.namespace}/${pod.metadata.name} stays Pending: ${message}`);
    const containers: ContainerState[] = pod.spec.containers.map((c: any) => ({
      name: c.name,
      image: c.image,
      imageID: '',
      containerID: '',
      restartCount: 0,
      ready: false,
      waiting: { reason: 'PodRunnerUnsupported', message },
    }));
    const status = buildPodStatus(pod, { hostIP: this.opts.hostIP, startTime: now(), containers }, now());
    status.phase = 'Pending';
    await this.api.mergePatch(podPath(pod, '/status'), { status });
  }

  private async startPod(pod: any): Promise<void> {
    const reason = this.cannotRun(pod);
    if (reason) return this.markUnsupported(pod, reason);
    const uid = pod.metadata.uid as string;
    const dir = join(this.opts.workDir, uid);
    let mounts: Map<string, MountMapping[]>;
    try {
      mounts = await materialiseVolumes(this.api, pod, dir);
    } catch (err) {
      if (err instanceof VolumeError && !err.retry) return this.markUnsupported(pod, err.message);
      this.opts.log(`${pod.metadata.namespace}/${pod.metadata.name}: volumes not ready: ${String(err)}`);
      return;
    }
    copyAgnhostImageFiles(this.opts.programs.agnhost, dir);
    const net = this.networks.create();
    const rp: RunningPod = { pod, net, dir, startTime: now(), containers: [], stopping: false };
    for (const spec of pod.spec.containers) {
      const program = containerProgram(spec, this.opts.programs) as Exclude<Program, { unsupported: string }>;
      rp.containers.push({
        spec,
        binary: program.binary,
        args: program.args,
        argv0: program.argv0,
        mounts: mounts.get(spec.name) ?? [],
        successes: 0,
        failures: 0,
        state: {
          name: spec.name,
          image: spec.image,
          imageID: this.opts.imageIDs[program.image],
          containerID: '',
          restartCount: 0,
          ready: false,
        },
      });
    }
    this.running.set(uid, rp);
    this.opts.log(`starting ${pod.metadata.namespace}/${pod.metadata.name} at ${net.ip} (${net.namespace})`);
    for (const c of rp.containers) this.spawnContainer(rp, c);
    this.markDirty(rp);
  }

  private containerEnv(rp: RunningPod, c: RunningContainer): Record<string, string> {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOSTNAME: rp.pod.metadata.name,
      KUBERNETES_SERVICE_HOST: this.opts.kubernetesService.host,
      KUBERNETES_SERVICE_PORT: String(this.opts.kubernetesService.port),
    };
    for (const e of c.spec.env ?? []) {
      let value: string | undefined = e.value;
      const field = e.valueFrom?.fieldRef?.fieldPath as string | undefined;
      if (field === 'metadata.name') value = rp.pod.metadata.name;
      else if (field === 'metadata.namespace') value = rp.pod.metadata.namespace;
      else if (field === 'metadata.uid') value = rp.pod.metadata.uid;
      else if (field === 'spec.nodeName') value = this.opts.node;
      else if (field === 'status.podIP') value = rp.net.ip;
      else if (field === 'status.hostIP') value = this.opts.hostIP;
      if (value !== undefined) env[e.name] = rewriteMountPaths(value, c.mounts);
    }
    return env;
  }

  private spawnContainer(rp: RunningPod, c: RunningContainer): void {
    const args = c.args.map((a) => rewriteMountPaths(a, c.mounts));
    const logFile = this.logFile(rp.pod.metadata.namespace, rp.pod.metadata.name, c.spec.name, false);
    mkdirSync(dirname(logFile), { recursive: true });
    // A restarted container's earlier log is what `previous=true` reads.
    if (c.state.restartCount > 0 && existsSync(logFile)) renameSync(logFile, this.logFile(rp.pod.metadata.namespace, rp.pod.metadata.name, c.spec.name, true));
    // Mounts under /run are also bind-mounted at their mountPath (in the mount namespace `ip netns
    // exec` makes), for paths programs read without being told: the service account's token.
    const bound = c.mounts.filter((m) => /^\/(var\/)?run\//.test(m.mountPath));
    for (const m of bound) for (let d = m.mountPath; !existsSync(d); d = dirname(d)) this.createdMountPoints.add(d);
    const binds = bound.flatMap((m) => [m.mountPath, m.hostPath]);
    // bash's `exec -a` runs the binary under the name the image would give it (what it sees as argv[0]).
    const bindThenExec = 'hostname "$0" && while [ "$1" != -- ]; do mkdir -p "$1" && mount --bind "$2" "$1" || exit 1; shift 2; done; shift; argv0=$1; shift; exec -a "$argv0" "$@"';
    // Its own UTS namespace gives the container the pod's hostname, as the kubelet does (agnhost
    // serve-hostname answers with it).
    const child = spawn('ip', ['netns', 'exec', rp.net.namespace, 'unshare', '--uts', 'bash', '-c', bindThenExec, podHostname(rp.pod), ...binds, '--', c.argv0 ?? c.binary, c.binary, ...args], {
      cwd: rp.dir,
      env: this.containerEnv(rp, c),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    captureOutput(logFile, [
      [child.stdout, 'stdout'],
      [child.stderr, 'stderr'],
    ]);
    c.process = child;
    c.state.startedAt = now();
    c.state.containerID = `capstan://${rp.pod.metadata.uid}-${c.spec.name}-${c.state.restartCount}`;
    c.state.terminated = undefined;
    c.state.ready = !c.spec.readinessProbe;
    c.successes = 0;
    c.failures = 0;
    // A failed spawn (the pod's directory removed by a concurrent stop) emits 'error' without 'exit':
    // the container then ends with code 128 instead of taking the runner down. Either event ends it once.
    let ended = false;
    const end = (code: number): void => {
      if (ended) return;
      ended = true;
      this.containerExited(rp, c, code);
    };
    child.on('exit', (code, signal) => end(code ?? (signal ? 137 : 1)));
    child.on('error', (err) => {
      this.opts.log(`${rp.pod.metadata.namespace}/${rp.pod.metadata.name} container ${c.spec.name}: ${err.message}`);
      end(128);
    });
    if (c.spec.readinessProbe) this.startProbe(rp, c);
  }

  private startProbe(rp: RunningPod, c: RunningContainer): void {
    const probe = c.spec.readinessProbe;
    const period = Math.max(1, probe.periodSeconds ?? 10) * 1000;
    const success = probe.successThreshold ?? 1;
    const failure = probe.failureThreshold ?? 3;
    let inFlight = false;
    const run = async (): Promise<void> => {
      if (inFlight || rp.stopping || !c.state.startedAt) return;
      inFlight = true;
      const ok = await runProbe(probe, c.spec, rp.net.ip);
      inFlight = false;
      if (ok) {
        c.failures = 0;
        if (++c.successes >= success && !c.state.ready) {
          c.state.ready = true;
          this.markDirty(rp);
        }
      } else {
        c.successes = 0;
        if (++c.failures >= failure && c.state.ready) {
          c.state.ready = false;
          this.markDirty(rp);
        }
      }
    };
    const delay = (probe.initialDelaySeconds ?? 0) * 1000;
    c.probeTimer = setTimeout(() => {
      void run();
      c.probeTimer = setInterval(() => void run(), period);
    }, delay);
  }

  private containerExited(rp: RunningPod, c: RunningContainer, exitCode: number): void {
    clearTimeout(c.probeTimer);
    clearInterval(c.probeTimer);
    c.process = undefined;
    if (rp.stopping) return;
    const terminated = { exitCode, startedAt: c.state.startedAt ?? now(), finishedAt: now(), reason: exitCode === 0 ? 'Completed' : 'Error' };
    this.opts.log(`${rp.pod.metadata.namespace}/${rp.pod.metadata.name} container ${c.spec.name} exited ${exitCode}`);
    c.state.ready = false;
    c.state.startedAt = undefined;
    const policy = rp.pod.spec.restartPolicy ?? 'Always';
    if (policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0)) {
      c.state.lastTerminated = terminated;
      c.state.waiting = { reason: 'CrashLoopBackOff', message: `back-off restarting container ${c.spec.name}` };
      setTimeout(() => {
        if (rp.stopping) return;
        c.state.restartCount++;
        c.state.waiting = undefined;
        this.spawnContainer(rp, c);
        this.markDirty(rp);
      }, 1000);
    } else c.state.terminated = terminated;
    this.markDirty(rp);
  }

  private markDirty(rp: RunningPod): void {
    if (rp.flushTimer || rp.stopping) return;
    rp.flushTimer = setTimeout(() => {
      rp.flushTimer = undefined;
      void this.flushStatus(rp);
    }, 50);
  }

  private async flushStatus(rp: RunningPod): Promise<void> {
    if (rp.stopping) return;
    const state = { podIP: rp.net.ip, hostIP: this.opts.hostIP, startTime: rp.startTime, containers: rp.containers.map((c) => c.state) };
    const key = JSON.stringify(state);
    if (key === rp.lastStatus) return;
    const status = buildPodStatus(rp.pod, state, now());
    const res = await this.api.mergePatch(podPath(rp.pod, '/status'), { status }).catch((err: unknown) => {
      this.opts.log(`status of ${rp.pod.metadata.name}: ${String(err)}`);
      return undefined;
    });
    if (res?.status === 200) {
      rp.lastStatus = key;
      rp.pod = res.body;
    } else if (res && res.status !== 404) {
      this.opts.log(`status of ${rp.pod.metadata.namespace}/${rp.pod.metadata.name}: HTTP ${res.status} ${res.body?.message ?? ''}`);
      this.markDirty(rp);
    }
  }

  /** Kills the pod's processes (SIGTERM, SIGKILL after 2 s), removes its namespace and volumes (logs stay). */
  private async stop(rp: RunningPod): Promise<void> {
    if (rp.stopping) return;
    rp.stopping = true;
    clearTimeout(rp.flushTimer);
    this.running.delete(rp.pod.metadata.uid);
    await Promise.all(
      rp.containers.map(async (c) => {
        clearTimeout(c.probeTimer);
        clearInterval(c.probeTimer);
        const child = c.process;
        if (!child?.pid || child.exitCode !== null) return;
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        const signal = (sig: NodeJS.Signals): void => {
          try {
            process.kill(-child.pid!, sig);
          } catch {
            // gone
          }
        };
        signal('SIGTERM');
        const timer = setTimeout(() => signal('SIGKILL'), 2000);
        await exited;
        clearTimeout(timer);
      }),
    );
    this.networks.remove(rp.net);
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
      const c = rp.containers.find((x) => x.spec.name === container);
      if (c === undefined) return undefined;
      return { file: this.logFile(namespace, pod, container, previous), running: () => !previous && c.process !== undefined && !rp.stopping };
    }
    return undefined;
  }

  /** Stops polling and every pod. */
  async shutDown(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...this.running.values()].map((rp) => this.stop(rp)));
    // The (empty) mount points the bind mounts created on the host, deepest first.
    for (const d of [...this.createdMountPoints].sort((a, b) => b.length - a.length)) {
      try {
        rmdirSync(d);
      } catch {
        // not empty or gone
      }
    }
  }
}
