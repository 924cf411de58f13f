import { isObject, metadataOf, objectKey, stringField, type Obj } from '../../api/object-util.js';
import { compareResourceVersions } from '../../storage/resource-version.js';
import type { Storage } from '../../storage/storage.js';
import { parsedObject } from '../../storage/parsed-changes.js';
import { isMirrorPod, persistentVolumeSecrets, podReferences } from './pod-references.js';

/** The kinds of object a node may reach through its pods, as kube's node graph names its vertices. */
export type NodeReachable = 'pod' | 'secret' | 'configmap' | 'pvc' | 'pv' | 'serviceaccount' | 'resourceclaim' | 'volumeattachment' | 'resourceslice';

/** Storage types the graph watches. */
const WATCHED = {
  pods: 'pods',
  persistentVolumes: 'persistentvolumes',
  volumeAttachments: 'volumeattachments.storage.k8s.io',
  resourceSlices: 'resourceslices.resource.k8s.io',
} as const;

type WatchedType = (typeof WATCHED)[keyof typeof WATCHED];

/** How long a decision waits for the graph to catch up with writes made before it was asked. */
const CATCH_UP_TIMEOUT_MS = 2000;

function refKey(kind: NodeReachable, namespace: string, name: string): string {
  return `${kind}\u0000${namespace}\u0000${name}`;
}

interface PodEntry {
  node: string;
  refs: string[];
}

interface VolumeEntry {
  claim: string | undefined;
  secrets: string[];
}

/** Counts per node of the pods that reach an object. */
class NodeCounts {
  private readonly counts = new Map<string, Map<string, number>>();

  add(ref: string, node: string, delta: number): void {
    let byNode = this.counts.get(ref);
    if (byNode === undefined) {
      if (delta < 0) return;
      byNode = new Map();
      this.counts.set(ref, byNode);
    }
    const n = (byNode.get(node) ?? 0) + delta;
    if (n > 0) byNode.set(node, n);
    else byNode.delete(node);
    if (byNode.size === 0) this.counts.delete(ref);
  }

  has(ref: string, node: string): boolean {
    return (this.counts.get(ref)?.get(node) ?? 0) > 0;
  }
}

/**
 * kube's node authorizer graph, as relations: which node each bound pod runs on and what it names
 * (service account, secrets, config maps, claims; a mirror pod names nothing), which claim each
 * PersistentVolume is bound to and the secrets its source names, and the node of each
 * VolumeAttachment and ResourceSlice. An object is reachable from a node when kube's graph has a
 * path from it to the node (secret -> pv -> pvc -> pod -> node and the shorter ones).
 *
 * Every process keeps its own graph from the storage's change streams (so writes through any worker
 * or pod reach it). kube's graph is eventually consistent; this one answers "not reachable" only
 * after it has caught up with every pod, volume, attachment and slice written before the question
 * (see `reaches`), so a node may read a secret as soon as the write binding its pod returned.
 */
export class NodeGraph {
  private readonly abort = new AbortController();
  private readonly pods = new Map<string, PodEntry>();
  private readonly volumes = new Map<string, VolumeEntry>();
  private readonly volumeAttachments = new Map<string, string>();
  private readonly resourceSlices = new Map<string, string>();
  /** Pods (per node) naming each object. */
  private readonly podRefs = new NodeCounts();
  /** PersistentVolumes naming each secret. */
  private readonly volumesBySecret = new Map<string, Set<string>>();
  /** The newest resourceVersion applied, per watched type. */
  private readonly applied = new Map<WatchedType, string>();
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly storage: Storage,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Lists the watched types and follows their changes; resolves once the graph holds the listed state. */
  async start(): Promise<void> {
    await Promise.all(Object.values(WATCHED).map((t) => this.follow(t)));
  }

  stop(): void {
    this.abort.abort();
  }

  /**
   * Whether kube's graph has a path from the object to `node`. A negative answer is given only once
   * the graph has applied every change of the watched types made before the call (or after a short
   * timeout, answering from what it has).
   */
  async reaches(node: string, kind: NodeReachable, namespace: string, name: string): Promise<boolean> {
    if (this.reachesNow(node, kind, namespace, name)) return true;
    await this.catchUp();
    return this.reachesNow(node, kind, namespace, name);
  }

  private reachesNow(node: string, kind: NodeReachable, namespace: string, name: string): boolean {
    switch (kind) {
      case 'pod':
        return this.pods.get(objectKey(namespace, name))?.node === node;
      case 'volumeattachment':
        return this.volumeAttachments.get(name) === node;
      case 'resourceslice':
        return this.resourceSlices.get(name) === node;
      case 'pv':
        return this.volumeReaches(name, node);
      case 'secret': {
        if (this.podRefs.has(refKey(kind, namespace, name), node)) return true;
        for (const pv of this.volumesBySecret.get(refKey(kind, namespace, name)) ?? []) if (this.volumeReaches(pv, node)) return true;
        return false;
      }
      default:
        return this.podRefs.has(refKey(kind, namespace, name), node);
    }
  }

  private volumeReaches(pv: string, node: string): boolean {
    const claim = this.volumes.get(pv)?.claim;
    return claim !== undefined && this.podRefs.has(claim, node);
  }

  private async catchUp(): Promise<void> {
    const targets = await Promise.all(Object.values(WATCHED).map(async (t) => [t, await this.storage.currentResourceVersion(t)] as const));
    const caughtUp = (): boolean => targets.every(([t, rv]) => compareResourceVersions(this.applied.get(t) ?? '0', rv) >= 0);
    if (caughtUp()) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const check = (): void => {
        if (caughtUp()) done();
      };
      const timer = setTimeout(done, CATCH_UP_TIMEOUT_MS);
      this.waiters.add(check);
    });
  }

  private async follow(type: WatchedType): Promise<void> {
    const watchAbort = new AbortController();
    const stopWatch = (): void => watchAbort.abort();
    this.abort.signal.addEventListener('abort', stopWatch, { once: true });
    const listed = await this.storage.list(type);
    const seen = new Set<string>();
    for (const item of listed.items) {
      seen.add(item.key);
      this.apply(type, item.key, JSON.parse(item.json) as Obj);
    }
    for (const key of this.keysOf(type)) if (!seen.has(key)) this.apply(type, key, undefined);
    this.advance(type, listed.resourceVersion);
    await this.storage.watch(
      type,
      listed.resourceVersion,
      (e) => {
        // The parse that watch selectors and frames of the same change share; only read here.
        this.apply(type, e.key, e.type === 'DELETED' ? undefined : parsedObject(e));
        this.advance(type, e.resourceVersion);
      },
      watchAbort.signal,
      () => {
        stopWatch();
        this.abort.signal.removeEventListener('abort', stopWatch);
        if (!this.abort.signal.aborted) this.follow(type).catch(this.onError);
      },
    );
  }

  private advance(type: WatchedType, rv: string): void {
    const have = this.applied.get(type);
    if (have === undefined || compareResourceVersions(rv, have) > 0) this.applied.set(type, rv);
    for (const check of [...this.waiters]) check();
  }

  private keysOf(type: WatchedType): string[] {
    switch (type) {
      case WATCHED.pods:
        return [...this.pods.keys()];
      case WATCHED.persistentVolumes:
        return [...this.volumes.keys()];
      case WATCHED.volumeAttachments:
        return [...this.volumeAttachments.keys()];
      default:
        return [...this.resourceSlices.keys()];
    }
  }

  private apply(type: WatchedType, key: string, obj: Obj | undefined): void {
    switch (type) {
      case WATCHED.pods:
        return this.applyPod(key, obj);
      case WATCHED.persistentVolumes:
        return this.applyVolume(key, obj);
      case WATCHED.volumeAttachments:
        return setNode(this.volumeAttachments, key, obj);
      default:
        return setNode(this.resourceSlices, key, obj);
    }
  }

  private applyPod(key: string, pod: Obj | undefined): void {
    const old = this.pods.get(key);
    if (old !== undefined) {
      for (const ref of old.refs) this.podRefs.add(ref, old.node, -1);
      this.pods.delete(key);
    }
    if (pod === undefined) return;
    const spec = isObject(pod.spec) ? pod.spec : {};
    const node = stringField(spec, 'nodeName');
    if (node === '') return;
    const namespace = stringField(metadataOf(pod), 'namespace');
    const refs: string[] = [];
    if (!isMirrorPod(pod)) {
      const r = podReferences(pod);
      if (r.serviceAccount !== '') refs.push(refKey('serviceaccount', namespace, r.serviceAccount));
      for (const n of r.secrets) refs.push(refKey('secret', namespace, n));
      for (const n of r.configMaps) refs.push(refKey('configmap', namespace, n));
      for (const n of r.persistentVolumeClaims) refs.push(refKey('pvc', namespace, n));
      for (const n of r.resourceClaims) refs.push(refKey('resourceclaim', namespace, n));
    }
    const unique = [...new Set(refs)];
    for (const ref of unique) this.podRefs.add(ref, node, 1);
    this.pods.set(key, { node, refs: unique });
  }

  private applyVolume(name: string, pv: Obj | undefined): void {
    const old = this.volumes.get(name);
    if (old !== undefined) {
      for (const s of old.secrets) {
        const set = this.volumesBySecret.get(s);
        set?.delete(name);
        if (set?.size === 0) this.volumesBySecret.delete(s);
      }
      this.volumes.delete(name);
    }
    if (pv === undefined) return;
    const spec = isObject(pv.spec) ? pv.spec : {};
    if (!isObject(spec.claimRef)) return;
    const claim = refKey('pvc', stringField(spec.claimRef, 'namespace'), stringField(spec.claimRef, 'name'));
    const secrets = [...new Set(persistentVolumeSecrets(pv).map((s) => refKey('secret', s.namespace, s.name)))];
    for (const s of secrets) {
      let set = this.volumesBySecret.get(s);
      if (set === undefined) {
        set = new Set();
        this.volumesBySecret.set(s, set);
      }
      set.add(name);
    }
    this.volumes.set(name, { claim, secrets });
  }
}

/** A VolumeAttachment's or ResourceSlice's node (spec.nodeName), or none. */
function setNode(map: Map<string, string>, key: string, obj: Obj | undefined): void {
  const node = obj !== undefined && isObject(obj.spec) ? stringField(obj.spec, 'nodeName') : '';
  if (node === '') map.delete(key);
  else map.set(key, node);
}
