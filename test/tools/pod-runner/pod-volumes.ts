/**
 * A pod's volumes on the host, as the kubelet's volume plugins make them, one directory per volume
 * under the pod's work directory (containers bind-mount them, container-root.ts):
 * - Secret, ConfigMap, downward API and projected volumes are written as kubelet's atomic writer
 *   does: the files in a timestamped directory `..YYYY_MM_DD_HH_MM_SS.N`, `..data` linking to it and
 *   each top-level name linking through `..data`; file modes from `mode` or `defaultMode` (0644 when
 *   unset); with the pod's fsGroup, files and directories belong to that group and gain its read
 *   bits (directories also setgid). Rewriting one (refreshVolumes) swaps `..data` at once, so a
 *   container sees a ConfigMap's or a label's change as the kubelet's resync shows it.
 * - emptyDir is a directory of mode 0777 (with fsGroup: its group, setgid); `medium: Memory` mounts a
 *   tmpfs there (sizeLimit honoured), which releaseVolumes unmounts.
 * - hostPath stays the host's path (made for DirectoryOrCreate).
 * A missing Secret or ConfigMap that is not optional makes the pod wait (as the kubelet does); other
 * volume types are unsupported.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, lchownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { ApiClient } from './api-client.js';
import { podFieldValue, quantityValue, resourceFieldValue, type Allocatable } from './container-env.js';

/** Why the volumes are not ready yet (retry later) or cannot be provided at all. */
export class VolumeError extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
  ) {
    super(message);
  }
}

/** One file of an atomic-writer volume: its content and mode. */
interface VolumeFile {
  data: Buffer;
  mode: number;
}

interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

/** What the volume writers read besides the API: the pod's addresses and the node's allocatable. */
export interface VolumeContext {
  podIP?: string;
  hostIP: string;
  allocatable: Allocatable;
}

function keyFiles(out: Map<string, VolumeFile>, data: Record<string, Buffer>, items: KeyToPath[] | undefined, defaultMode: number, what: string, optional: boolean): void {
  if (!items) {
    for (const [k, v] of Object.entries(data)) out.set(k, { data: v, mode: defaultMode });
    return;
  }
  for (const it of items) {
    const value = data[it.key];
    if (value === undefined) {
      if (optional) continue;
      throw new VolumeError(`${what}: key ${it.key} not found`, true);
    }
    out.set(it.path, { data: value, mode: it.mode ?? defaultMode });
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

function downwardApiFiles(out: Map<string, VolumeFile>, pod: any, items: any[], defaultMode: number, ctx: VolumeContext): void {
  for (const it of items) {
    let value: string;
    try {
      if (it.fieldRef) value = podFieldValue(pod, it.fieldRef.fieldPath, ctx);
      else if (it.resourceFieldRef) {
        const container = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].find((c: any) => c.name === it.resourceFieldRef.containerName);
        value = resourceFieldValue(container, it.resourceFieldRef, ctx.allocatable);
      } else throw new Error(`downward API item ${it.path}: no fieldRef or resourceFieldRef`);
    } catch (err) {
      throw new VolumeError(String((err as Error).message), false);
    }
    out.set(it.path, { data: Buffer.from(value), mode: it.mode ?? defaultMode });
  }
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

/** The files of an atomic-writer volume (Secret, ConfigMap, downward API, projected), or undefined for another type. */
async function volumeFiles(api: ApiClient, pod: any, volume: any, ctx: VolumeContext, previousToken?: Buffer): Promise<Map<string, VolumeFile> | undefined> {
  const ns = pod.metadata.namespace;
  const out = new Map<string, VolumeFile>();
  if (volume.secret) {
    const s = volume.secret;
    const data = await secretData(api, ns, s.secretName, s.optional === true);
    if (data) keyFiles(out, data, s.items, s.defaultMode ?? 0o644, `secret ${s.secretName}`, s.optional === true);
    return out;
  }
  if (volume.configMap) {
    const c = volume.configMap;
    const data = await configMapData(api, ns, c.name, c.optional === true);
    if (data) keyFiles(out, data, c.items, c.defaultMode ?? 0o644, `configmap ${c.name}`, c.optional === true);
    return out;
  }
  if (volume.downwardAPI) {
    downwardApiFiles(out, pod, volume.downwardAPI.items ?? [], volume.downwardAPI.defaultMode ?? 0o644, ctx);
    return out;
  }
  if (volume.projected) {
    const mode = volume.projected.defaultMode ?? 0o644;
    for (const source of volume.projected.sources ?? []) {
      if (source.secret) {
        const data = await secretData(api, ns, source.secret.name, source.secret.optional === true);
        if (data) keyFiles(out, data, source.secret.items, mode, `secret ${source.secret.name}`, source.secret.optional === true);
      } else if (source.configMap) {
        const data = await configMapData(api, ns, source.configMap.name, source.configMap.optional === true);
        if (data) keyFiles(out, data, source.configMap.items, mode, `configmap ${source.configMap.name}`, source.configMap.optional === true);
      } else if (source.downwardAPI) {
        downwardApiFiles(out, pod, source.downwardAPI.items ?? [], mode, ctx);
      } else if (source.serviceAccountToken) {
        const token = previousToken ?? (await serviceAccountToken(api, pod, source.serviceAccountToken));
        out.set(source.serviceAccountToken.path, { data: token, mode: source.serviceAccountToken.mode ?? mode });
      } else {
        throw new VolumeError(`volume ${volume.name}: projected source ${Object.keys(source).join(',')} is not supported by the pod runner`, false);
      }
    }
    return out;
  }
  return undefined;
}

/** Gives `path` (not following links) group `gid` and the fsGroup bits: read for files (write too unless readOnly), setgid and search for directories. */
function applyFsGroup(path: string, gid: number, readOnly: boolean): void {
  const st = lstatSync(path);
  lchownSync(path, -1, gid);
  if (st.isSymbolicLink()) return;
  let mode = (st.mode & 0o7777) | (readOnly ? 0o440 : 0o660);
  if (st.isDirectory()) {
    mode |= 0o2000 | 0o110;
    chmodSync(path, mode);
    for (const name of readdirSync(path)) applyFsGroup(join(path, name), gid, readOnly);
  } else chmodSync(path, mode);
}

const stamp = (): string => {
  const d = new Date();
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `..${d.getUTCFullYear()}_${p(d.getUTCMonth() + 1)}_${p(d.getUTCDate())}_${p(d.getUTCHours())}_${p(d.getUTCMinutes())}_${p(d.getUTCSeconds())}.`;
};

/** Where the fingerprint of what `dir` shows is kept (beside it, out of the containers' sight). */
const fingerprintFile = (dir: string): string => join(dirname(dir), `.${basename(dir)}.fingerprint`);

/** The fingerprint of the files `dir` shows now, to tell whether a rewrite changes anything. */
function currentFiles(dir: string): string | undefined {
  try {
    return readFileSync(fingerprintFile(dir), 'utf8');
  } catch {
    return undefined;
  }
}

function fingerprint(files: Map<string, VolumeFile>, fsGroup: number | undefined): string {
  const entries = [...files.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([p, f]) => [p, f.mode, f.data.toString('base64')]);
  return JSON.stringify({ entries, fsGroup });
}

/** Writes `files` into `dir` as kubelet's atomic writer does (see the file's comment); returns whether anything changed. */
export function atomicWrite(dir: string, files: Map<string, VolumeFile>, fsGroup?: number): boolean {
  mkdirSync(dir, { recursive: true });
  const print = fingerprint(files, fsGroup);
  if (currentFiles(dir) === print) return false;
  const ts = mkdtempSync(join(dir, stamp()));
  chmodSync(ts, 0o755);
  for (const [path, f] of files) {
    const file = join(ts, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, f.data);
    chmodSync(file, f.mode & 0o7777);
  }
  if (fsGroup !== undefined) applyFsGroup(ts, fsGroup, true);
  const tops = new Set([...files.keys()].map((p) => p.split('/')[0]));
  for (const top of tops) {
    const link = join(dir, top);
    if (!existsSync(link) && !isLink(link)) symlinkSync(join('..data', top), link);
  }
  const tmpLink = join(dir, '..data_tmp');
  rmSync(tmpLink, { force: true });
  symlinkSync(basename(ts), tmpLink);
  const old = isLink(join(dir, '..data')) ? readlinkSync(join(dir, '..data')) : undefined;
  renameSync(tmpLink, join(dir, '..data'));
  if (old) rmSync(join(dir, old), { recursive: true, force: true });
  for (const name of readdirSync(dir)) if (!name.startsWith('..') && !tops.has(name) && isLink(join(dir, name))) unlinkSync(join(dir, name));
  writeFileSync(fingerprintFile(dir), print);
  return true;
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** A pod's volumes on the host, by volume name, and what releaseVolumes must undo. */
export interface PodVolumes {
  paths: Map<string, string>;
  tmpfs: string[];
}

function fsGroupOf(pod: any): number | undefined {
  const g = pod.spec.securityContext?.fsGroup;
  return typeof g === 'number' ? g : undefined;
}

/** Makes every volume of the pod under `podDir/volumes/NAME` (see the file's comment). */
export async function materialiseVolumes(api: ApiClient, pod: any, podDir: string, ctx: VolumeContext): Promise<PodVolumes> {
  const out: PodVolumes = { paths: new Map(), tmpfs: [] };
  const fsGroup = fsGroupOf(pod);
  for (const volume of pod.spec.volumes ?? []) {
    const dir = join(podDir, 'volumes', volume.name);
    if (volume.hostPath) {
      if (volume.hostPath.type === 'DirectoryOrCreate' && !existsSync(volume.hostPath.path)) mkdirSync(volume.hostPath.path, { recursive: true, mode: 0o755 });
      out.paths.set(volume.name, volume.hostPath.path);
      continue;
    }
    if (volume.emptyDir) {
      mkdirSync(dir, { recursive: true });
      if (volume.emptyDir.medium === 'Memory') {
        const size = volume.emptyDir.sizeLimit ? [`size=${Math.ceil(quantityValue(volume.emptyDir.sizeLimit))}`] : [];
        execFileSync('mount', ['-t', 'tmpfs', '-o', ['mode=0777', ...size].join(','), 'tmpfs', dir]);
        out.tmpfs.push(dir);
      }
      chmodSync(dir, 0o777);
      if (fsGroup !== undefined) applyFsGroup(dir, fsGroup, false);
      out.paths.set(volume.name, dir);
      continue;
    }
    const files = await volumeFiles(api, pod, volume, ctx);
    if (files === undefined) {
      const kind = Object.keys(volume).filter((k) => k !== 'name');
      throw new VolumeError(`volume ${volume.name}: ${kind.join(',')} volumes are not supported by the pod runner`, false);
    }
    atomicWrite(dir, files, fsGroup);
    out.paths.set(volume.name, dir);
  }
  return out;
}

/**
 * Rewrites the pod's Secret, ConfigMap, downward API and projected volumes from their sources now
 * (service account tokens are kept); returns the names of the volumes that changed. Sources that
 * went missing leave a volume as it was.
 */
export async function refreshVolumes(api: ApiClient, pod: any, podDir: string, ctx: VolumeContext): Promise<string[]> {
  const changed: string[] = [];
  for (const volume of pod.spec.volumes ?? []) {
    if (!(volume.secret || volume.configMap || volume.downwardAPI || volume.projected)) continue;
    if (volume.projected?.sources?.some((s: any) => s.serviceAccountToken)) continue;
    const dir = join(podDir, 'volumes', volume.name);
    try {
      const files = await volumeFiles(api, pod, volume, ctx);
      if (files && atomicWrite(dir, files, fsGroupOf(pod))) changed.push(volume.name);
    } catch {
      // a source gone or unreadable for now: keep what the volume shows
    }
  }
  return changed;
}

/** Undoes what materialiseVolumes mounted on the host (tmpfs emptyDirs). */
export function releaseVolumes(volumes: PodVolumes | undefined): void {
  for (const dir of volumes?.tmpfs ?? []) {
    try {
      execFileSync('umount', ['-l', dir]);
    } catch {
      // already gone
    }
  }
}

/** The host path a container's volumeMount binds (subPath applied; a missing subPath is made as a directory, as the kubelet does). */
export function mountSource(volumes: PodVolumes, mount: { name: string; subPath?: string }, containerName: string): { source: string; file: boolean } {
  const base = volumes.paths.get(mount.name);
  if (base === undefined) throw new VolumeError(`container ${containerName}: volume ${mount.name} not found`, false);
  const source = mount.subPath ? join(base, mount.subPath) : base;
  if (!existsSync(source)) mkdirSync(source, { recursive: true });
  return { source, file: !statSync(source).isDirectory() };
}
