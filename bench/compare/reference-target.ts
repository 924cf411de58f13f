/**
 * The reference kube-apiserver as a compared server: started through `../shared/reference/kube-up.sh`
 * without kube-controller-manager (`KUBE_UP_CONTROLLERS=0`: etcd and kube-apiserver only, HTTPS,
 * static token of a system:masters admin, `--authorization-mode RBAC`, etcd fsyncing its log), or a
 * server someone else started, given by --url. CPU and memory count kube-apiserver and etcd only:
 * the members of kube-up.sh's process group with those command names (for --url: what
 * --server-pids/--server-pgid/--server-comms select). The group is killed when the benchmark exits.
 */
import { execFileSync, spawn } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { urlTargetPids } from '../endpoint.js';
import { HttpClient } from '../http-client.js';
import type { UrlTarget } from '../options.js';
import { cpuMeter, processGroupMembers } from '../proc-cpu.js';
import { treeMemory } from '../proc-memory.js';
import { processAgeMs } from '../proc-start.js';
import { trackProcessGroup, untrackProcessGroup } from '../processes.js';
import { sleep } from '../scenario.js';
import type { LiveTarget } from './live-target.js';

const REFERENCE_COMMS = ['kube-apiserver', 'etcd'];
const START_TIMEOUT_MS = 180_000;

/** Where kube-up.sh looks for the binaries (its REF_BIN default). */
export function referenceBinDir(): string {
  return process.env.REF_BIN ?? join(homedir(), '.cache', 'kube-reference', 'bin');
}

/** Why the reference cannot be started from `referenceDir`, or undefined when it can. */
export function referenceUnavailable(referenceDir: string): string | undefined {
  const script = join(referenceDir, 'kube-up.sh');
  if (!existsSync(script)) return `${script} not found`;
  for (const binary of REFERENCE_COMMS) {
    const path = join(referenceBinDir(), binary);
    try {
      accessSync(path, constants.X_OK);
    } catch {
      return `${path} not built (run ${join(referenceDir, 'build.sh')})`;
    }
  }
  return undefined;
}

/** The server's gitVersion from /version (e.g. v1.36.4), or undefined. */
async function serverVersion(url: string, token: string | undefined): Promise<string | undefined> {
  const client = new HttpClient(url, 1, { ...(token !== undefined ? { token } : {}), insecureTls: true });
  try {
    const res = await client.request('GET', '/version');
    const v = res.status === 200 ? (JSON.parse(res.body) as { gitVersion?: unknown }).gitVersion : undefined;
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  } finally {
    client.close();
  }
}

/** `etcd --version`'s version, or undefined. */
function etcdVersion(): string | undefined {
  try {
    const out = execFileSync(join(referenceBinDir(), 'etcd'), ['--version'], { encoding: 'utf8', timeout: 10_000 });
    return /etcd Version: (\S+)/.exec(out)?.[1];
  } catch {
    return undefined;
  }
}

/** Runs kube-up.sh and resolves with its `URL TOKEN PGID` line and the control plane's start-to-ready time. */
function runKubeUp(referenceDir: string): Promise<{ url: string; token: string; pgid: number; readyMs: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(referenceDir, 'kube-up.sh')], {
      env: { ...process.env, KUBE_UP_CONTROLLERS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let line: { url: string; token: string; pgid: number; readyMs: number | null } | undefined;
    const timer = setTimeout(() => child.kill('SIGKILL'), START_TIMEOUT_MS);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      const m = /^(https:\/\/\S+) (\S+) (\d+)\s*$/m.exec(out);
      if (m && line === undefined) {
        const pgid = Number(m[3]);
        // Ready when the line is printed; started when the earliest of etcd and kube-apiserver started.
        const ages = processGroupMembers(pgid)
          .filter((p) => REFERENCE_COMMS.includes(p.comm))
          .map((p) => processAgeMs(p.pid))
          .filter((a): a is number => a !== undefined);
        line = { url: m[1], token: m[2], pgid, readyMs: ages.length > 0 ? Math.max(...ages) : null };
        trackProcessGroup(pgid);
      }
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString('utf8');
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (line !== undefined && code === 0) resolve(line);
      else reject(new Error(`kube-up.sh exited with ${String(code)}: ${err.trim().slice(-1500)}`));
    });
  });
}

/** Stops process group `pgid`: SIGTERM (kube-up's supervisor stops its components), SIGKILL after 20 s. */
async function stopGroup(pgid: number): Promise<void> {
  const signal = (s: NodeJS.Signals): void => {
    try {
      process.kill(-pgid, s);
    } catch {
      // gone already
    }
  };
  signal('SIGTERM');
  for (let i = 0; i < 200 && processGroupMembers(pgid).length > 0; i++) await sleep(100);
  if (processGroupMembers(pgid).length > 0) signal('SIGKILL');
  untrackProcessGroup(pgid);
}

/** A LiveTarget over the processes of `target` (kube-apiserver and etcd). */
function referenceTarget(
  target: UrlTarget,
  description: string,
  startup: { startedHere: boolean; readyMs: number | null; note: string | undefined },
  stop: () => Promise<void>,
): LiveTarget {
  const pids = (): number[] => urlTargetPids(target);
  const measured = target.pgid !== undefined || target.pids.length > 0;
  const apiserverGone = (): boolean => target.pgid !== undefined && !processGroupMembers(target.pgid).some((p) => p.comm === 'kube-apiserver');
  return {
    label: target.label,
    description,
    url: target.url,
    access: { ...(target.token !== undefined ? { token: target.token } : {}), insecureTls: true },
    cpu: cpuMeter(pids),
    pids,
    cpuScope: measured
      ? `${target.comms?.join(' + ') ?? 'given processes'}${target.pgid !== undefined ? ` of process group ${target.pgid}` : ''}`
      : 'not measured (give --server-pgid or --server-pids)',
    startedHere: startup.startedHere,
    readyFreshMs: startup.readyMs,
    readyExistingCertsMs: null,
    startupNote: startup.note,
    rssBytes: () => (measured ? treeMemory(pids()).rss : null),
    assertAlive: () => {
      if (apiserverGone()) throw new Error(`${target.label}: kube-apiserver is gone`);
    },
    exited: apiserverGone,
    stop,
  };
}

/** Starts kube-apiserver + etcd through kube-up.sh (label `label`). */
export async function startReferenceTarget(referenceDir: string, label: string): Promise<LiveTarget> {
  const up = await runKubeUp(referenceDir);
  const version = (await serverVersion(up.url, up.token)) ?? 'kube-apiserver';
  const etcd = etcdVersion();
  const target: UrlTarget = { url: up.url, token: up.token, label, pids: [], pgid: up.pgid, comms: REFERENCE_COMMS };
  return referenceTarget(
    target,
    `kube-apiserver ${version} + etcd${etcd !== undefined ? ` ${etcd}` : ''} (kube-up.sh, no controllers)`,
    {
      startedHere: true,
      readyMs: up.readyMs,
      note: 'from the earlier of etcd and kube-apiserver starting to kube-up.sh seeing /readyz 200 (it polls every 200 ms)',
    },
    () => stopGroup(up.pgid),
  );
}

/** A server someone else started (--url): measured as it is, never stopped. */
export async function existingServerTarget(target: UrlTarget): Promise<LiveTarget> {
  const version = await serverVersion(target.url, target.token);
  return referenceTarget(
    target,
    `${version ?? 'server'} at ${target.url} (started elsewhere)`,
    { startedHere: false, readyMs: null, note: 'started elsewhere: start-up not measured' },
    async () => undefined,
  );
}
