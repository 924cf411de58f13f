import { isObject, jsonEqual, metadataOf, nowTimestamp, objectKey, stringField, type Obj } from '../api/object-util.js';
import { logger } from '../logging/logger.js';
import { type Storage } from '../storage/storage.js';
import {
  DISRUPTION_ALLOWED,
  PDB_TYPE,
  findCondition,
  intField,
  isPodReady,
  isTerminating,
  labelsOf,
  podPhase,
  selectorMatcher,
  setStatusCondition,
  updateDisruptionAllowedCondition,
} from '../rest/disruption-budget-rules.js';
import { WatchedCollection, type CollectionChange } from '../storage/watched-collection.js';
import { StorageError } from '../api/storage-error.js';

/** kube's DeletionTimeout: how long an approved eviction keeps its pod out of the healthy count. */
export const DELETION_TIMEOUT_MS = 2 * 60 * 1000;

/** kube's stalePodDisruptionTimeout: a DisruptionTarget condition not followed by deletion is reset after this. */
export const STALE_POD_DISRUPTION_TIMEOUT_MS = 2 * 60 * 1000;

/** Delay before a PDB whose status write failed (lost race, storage fault) is synced again. */
const RETRY_MS = 200;

const WORKLOAD_TYPES = {
  rc: 'replicationcontrollers',
  rs: 'replicasets.apps',
  deploy: 'deployments.apps',
  ss: 'statefulsets.apps',
} as const;

/** Options of the controller (tests shorten the timeouts). */
export interface DisruptionControllerOptions {
  deletionTimeoutMs?: number;
  stalePodDisruptionTimeoutMs?: number;
}

/** Why a PDB's status could not be computed; its message becomes the SyncFailed condition's. */
class SyncError extends Error {}

interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

function controllerOf(obj: Obj): OwnerRef | undefined {
  const refs = metadataOf(obj).ownerReferences;
  if (!Array.isArray(refs)) return undefined;
  for (const r of refs) {
    if (isObject(r) && r.controller === true) {
      return { apiVersion: stringField(r, 'apiVersion'), kind: stringField(r, 'kind'), name: stringField(r, 'name'), uid: stringField(r, 'uid') };
    }
  }
  return undefined;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

function replicasOf(obj: Obj): number {
  const spec = isObject(obj.spec) ? obj.spec : {};
  return typeof spec.replicas === 'number' ? spec.replicas : 1;
}

/** intstr.GetScaledValueFromIntOrPercent rounding up, with kube's error for a non-percentage string. */
function scaledValue(value: unknown, total: number): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^-?\d+%$/.test(value)) return Math.ceil((Number.parseInt(value, 10) * total) / 100);
  throw new SyncError(`invalid value for IntOrString: invalid type: string is not a percentage`);
}

/**
 * kube-controller-manager's disruption controller, run by Capstan itself so that evictions work
 * without kcm: keeps every PodDisruptionBudget's status (currentHealthy, desiredHealthy,
 * expectedPods, disruptionsAllowed, observedGeneration, the DisruptionAllowed condition) computed
 * from the pods its selector matches, as kube computes it; drops `disruptedPods` entries once
 * kube's DeletionTimeout has passed; and resets a DisruptionTarget condition the eviction set on a
 * pod that was not deleted after kube's stale timeout. It works from informer-like caches of pods,
 * PDBs and the workload kinds whose scale gives expectedPods, fed by the change streams: an event
 * resyncs only the PDBs it can affect. Status writes are compare-and-swap; a lost race is retried.
 * Run it in one process per storage.
 */
export class DisruptionController {
  private readonly abort = new AbortController();
  private readonly queue = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly staleTimers = new Map<string, NodeJS.Timeout>();
  private draining = false;
  private readonly pods: WatchedCollection;
  private readonly pdbs: WatchedCollection;
  private readonly workloads: Record<keyof typeof WORKLOAD_TYPES, WatchedCollection>;
  private readonly deletionTimeoutMs: number;
  private readonly staleTimeoutMs: number;
  private started = false;

  constructor(
    private readonly storage: Storage,
    options: DisruptionControllerOptions = {},
  ) {
    this.deletionTimeoutMs = options.deletionTimeoutMs ?? DELETION_TIMEOUT_MS;
    this.staleTimeoutMs = options.stalePodDisruptionTimeoutMs ?? STALE_POD_DISRUPTION_TIMEOUT_MS;
    const collection = (type: string): WatchedCollection => new WatchedCollection(storage, type, (c) => this.changed(c), this.abort.signal, this.report);
    this.pods = collection('pods');
    this.pdbs = collection(PDB_TYPE);
    this.workloads = {
      rc: collection(WORKLOAD_TYPES.rc),
      rs: collection(WORKLOAD_TYPES.rs),
      deploy: collection(WORKLOAD_TYPES.deploy),
      ss: collection(WORKLOAD_TYPES.ss),
    };
  }

  /** Fills the caches and starts following changes; every existing PDB is synced once. */
  async start(): Promise<void> {
    for (const w of Object.values(this.workloads)) await w.start();
    await this.pods.start();
    await this.pdbs.start();
    this.started = true;
    this.kick();
  }

  /** Stops following changes and cancels pending work. */
  stop(): void {
    this.abort.abort();
    for (const t of this.timers.values()) clearTimeout(t);
    for (const t of this.staleTimers.values()) clearTimeout(t);
    this.timers.clear();
    this.staleTimers.clear();
    this.queue.clear();
  }

  private readonly report = (err: unknown): void => {
    if (this.abort.signal.aborted) return;
    logger.warn('disruption controller', { error: err instanceof Error ? err.message : String(err) });
  };

  private changed(c: CollectionChange): void {
    if (c.type === PDB_TYPE) {
      if (c.current !== undefined) this.enqueue(c.key);
      return;
    }
    if (c.type === 'pods') {
      // The PDBs the pod belonged to before and after the change.
      // Read only when a PDB could hold it (the pod is parsed on first read).
      if (this.pdbs.hasNamespace(c.namespace)) {
        for (const pod of [c.previous, c.current]) if (pod !== undefined) for (const key of this.budgetsOf(c.namespace, pod)) this.enqueue(key);
      }
      // A pod with neither a DisruptionTarget condition nor a timer for one needs nothing here.
      if (c.removed) this.clearStaleTimer(c.key);
      else if (this.staleTimers.has(c.key) || c.mentions('"DisruptionTarget"')) this.watchStaleCondition(c.key, c.current ?? {});
      return;
    }
    // A workload's scale feeds expectedPods of the PDBs over its namespace's pods (none: nothing to read).
    if (!this.pdbs.hasNamespace(c.namespace)) return;
    if (c.previous !== undefined && c.current !== undefined && replicasOf(c.previous) === replicasOf(c.current)) return;
    for (const pdb of this.pdbs.inNamespace(c.namespace)) this.enqueue(objectKey(c.namespace, stringField(metadataOf(pdb), 'name')));
  }

  private budgetsOf(namespace: string, pod: Obj): string[] {
    const labels = labelsOf(pod);
    const keys: string[] = [];
    for (const pdb of this.pdbs.inNamespace(namespace)) {
      if (selectorMatcher(isObject(pdb.spec) ? pdb.spec.selector : undefined)(labels)) keys.push(objectKey(namespace, stringField(metadataOf(pdb), 'name')));
    }
    return keys;
  }

  private enqueue(key: string): void {
    if (this.abort.signal.aborted) return;
    this.queue.add(key);
    if (this.started) this.kick();
  }

  private enqueueAfter(key: string, ms: number): void {
    if (this.abort.signal.aborted) return;
    clearTimeout(this.timers.get(key));
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.enqueue(key);
      }, ms),
    );
  }

  /** Drains the queue one PDB at a time; keys added meanwhile are picked up by the same drain. */
  private kick(): void {
    if (this.draining) return;
    this.draining = true;
    void (async () => {
      try {
        while (this.queue.size > 0 && !this.abort.signal.aborted) {
          const [key] = this.queue;
          this.queue.delete(key);
          try {
            await this.sync(key);
          } catch (err) {
            this.report(err);
            this.enqueueAfter(key, RETRY_MS);
          }
        }
      } finally {
        this.draining = false;
      }
    })();
  }

  private async sync(key: string): Promise<void> {
    const pdb = this.pdbs.get(key);
    if (pdb === undefined) return;
    const namespace = stringField(metadataOf(pdb), 'namespace');
    const spec = isObject(pdb.spec) ? pdb.spec : {};
    const matches = selectorMatcher(spec.selector);
    const pods = [...this.pods.inNamespace(namespace)].filter((p) => matches(labelsOf(p)));
    let status: Obj;
    try {
      const [expected, desired] = this.expectedCount(spec, pods);
      const now = Date.now();
      const [disrupted, recheckAt] = this.disruptedPods(pdb, pods, now);
      let healthy = 0;
      for (const pod of pods) {
        if (isTerminating(pod)) continue;
        const name = stringField(metadataOf(pod), 'name');
        const since = disrupted[name];
        if (since !== undefined && Date.parse(since) + this.deletionTimeoutMs > now) continue;
        if (isPodReady(pod)) healthy++;
      }
      status = this.computedStatus(pdb, healthy, desired, expected, disrupted);
      if (recheckAt !== undefined) this.enqueueAfter(key, Math.max(0, recheckAt - now) + 10);
    } catch (err) {
      if (!(err instanceof SyncError)) throw err;
      status = this.failSafeStatus(pdb, err.message);
    }
    await this.writeStatus(key, pdb, status);
  }

  /** getExpectedPodCount: [expectedPods, desiredHealthy] for the PDB's spec over `pods`. */
  private expectedCount(spec: Obj, pods: Obj[]): [number, number] {
    if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
      const expected = this.expectedScale(pods);
      return [expected, Math.max(0, expected - scaledValue(spec.maxUnavailable, expected))];
    }
    if (spec.minAvailable !== undefined && spec.minAvailable !== null) {
      if (typeof spec.minAvailable === 'number') return [pods.length, spec.minAvailable];
      const expected = this.expectedScale(pods);
      return [expected, scaledValue(spec.minAvailable, expected)];
    }
    return [0, 0];
  }

  /** getExpectedScale: the sum of the scales of the pods' controllers (pods without one are skipped). */
  private expectedScale(pods: Obj[]): number {
    const scales = new Map<string, number>();
    for (const pod of pods) {
      const ref = controllerOf(pod);
      if (ref === undefined || scales.has(ref.uid)) continue;
      const found = this.controllerScale(ref, stringField(metadataOf(pod), 'namespace'));
      if (found === undefined) throw new SyncError(`found no controllers for pod "${stringField(metadataOf(pod), 'name')}"`);
      scales.set(found[0], found[1]);
    }
    let total = 0;
    for (const n of scales.values()) total += n;
    return total;
  }

  /** kube's finders, in order: RC, Deployment (through its ReplicaSet), ReplicaSet, StatefulSet, then any scalable kind. */
  private controllerScale(ref: OwnerRef, namespace: string): [string, number] | undefined {
    const group = groupOf(ref.apiVersion);
    const lookup = (c: WatchedCollection, name: string, uid: string): Obj | undefined => {
      const obj = c.get(objectKey(namespace, name));
      return obj !== undefined && metadataOf(obj).uid === uid ? obj : undefined;
    };
    const scaled = (obj: Obj | undefined): [string, number] | undefined => (obj === undefined ? undefined : [String(metadataOf(obj).uid), replicasOf(obj)]);
    if (ref.kind === 'ReplicationController' && group === '') {
      const rc = lookup(this.workloads.rc, ref.name, ref.uid);
      if (rc !== undefined) return scaled(rc);
    }
    if (ref.kind === 'ReplicaSet' && (group === 'apps' || group === 'extensions')) {
      const rs = lookup(this.workloads.rs, ref.name, ref.uid);
      if (rs !== undefined) {
        const owner = controllerOf(rs);
        if (owner !== undefined && owner.kind === 'Deployment') {
          const ownerGroup = groupOf(owner.apiVersion);
          const deploy = ownerGroup === 'apps' || ownerGroup === 'extensions' ? lookup(this.workloads.deploy, owner.name, owner.uid) : undefined;
          if (deploy !== undefined) return scaled(deploy);
        } else {
          return scaled(rs);
        }
      }
    }
    if (ref.kind === 'StatefulSet' && group === 'apps') {
      const ss = lookup(this.workloads.ss, ref.name, ref.uid);
      if (ss !== undefined) return scaled(ss);
    }
    // The scale subresource of the controller's kind (every built-in kind with one is cached here).
    const byKind: Record<string, [string, WatchedCollection]> = {
      ReplicationController: ['', this.workloads.rc],
      ReplicaSet: ['apps', this.workloads.rs],
      Deployment: ['apps', this.workloads.deploy],
      StatefulSet: ['apps', this.workloads.ss],
    };
    const scalable = byKind[ref.kind];
    if (scalable !== undefined && scalable[0] === group) return scaled(lookup(scalable[1], ref.name, ref.uid));
    throw new SyncError(`no matches for kind "${ref.kind}" in version "${ref.apiVersion}"`);
  }

  /** buildDisruptedPodMap: entries of pods still present, not terminating, younger than the timeout. */
  private disruptedPods(pdb: Obj, pods: Obj[], now: number): [Record<string, string>, number | undefined] {
    const status = isObject(pdb.status) ? pdb.status : {};
    const recorded = isObject(status.disruptedPods) ? status.disruptedPods : {};
    const out: Record<string, string> = {};
    let recheckAt: number | undefined;
    for (const pod of pods) {
      if (isTerminating(pod)) continue;
      const name = stringField(metadataOf(pod), 'name');
      const since = recorded[name];
      if (typeof since !== 'string') continue;
      const expires = Date.parse(since) + this.deletionTimeoutMs;
      if (expires < now) continue;
      out[name] = since;
      if (recheckAt === undefined || expires < recheckAt) recheckAt = expires;
    }
    return [out, recheckAt];
  }

  /** updatePdbStatus: the status kube writes, or the current one when nothing changed. */
  private computedStatus(pdb: Obj, currentHealthy: number, desiredHealthy: number, expectedPods: number, disruptedPods: Record<string, string>): Obj {
    const generation = intField(metadataOf(pdb), 'generation');
    const old = isObject(pdb.status) ? pdb.status : {};
    const allowed = expectedPods <= 0 || currentHealthy - desiredHealthy <= 0 ? 0 : currentHealthy - desiredHealthy;
    const status: Obj = { observedGeneration: generation };
    if (Object.keys(disruptedPods).length > 0) status.disruptedPods = disruptedPods;
    Object.assign(status, { disruptionsAllowed: allowed, currentHealthy, desiredHealthy, expectedPods });
    if (old.conditions !== undefined) status.conditions = old.conditions;
    updateDisruptionAllowedCondition(status);
    return status;
  }

  /** failSafe: no disruption allowed, and the DisruptionAllowed condition says why the sync failed. */
  private failSafeStatus(pdb: Obj, message: string): Obj {
    const old = isObject(pdb.status) ? pdb.status : {};
    const status: Obj = { ...old, disruptionsAllowed: 0 };
    status.conditions = setStatusCondition(old.conditions, DISRUPTION_ALLOWED, 'False', 'SyncFailed', message, intField(old, 'observedGeneration'));
    return status;
  }

  private async writeStatus(key: string, pdb: Obj, status: Obj): Promise<void> {
    const old = isObject(pdb.status) ? pdb.status : {};
    if (jsonEqual(old, status)) return;
    const version = stringField(metadataOf(pdb), 'resourceVersion');
    try {
      await this.storage.update(PDB_TYPE, key, { ...pdb, status }, version);
    } catch (err) {
      // A newer PDB is on its way through the watch, and will sync again; a vanished one needs nothing.
      if (err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound')) return;
      throw err;
    }
  }

  /** Schedules the reset of a DisruptionTarget condition the eviction set on a pod that is still not deleted. */
  private clearStaleTimer(key: string): void {
    clearTimeout(this.staleTimers.get(key));
    this.staleTimers.delete(key);
  }

  private watchStaleCondition(key: string, pod: Obj): void {
    this.clearStaleTimer(key);
    const since = staleSince(pod);
    if (since === undefined) return;
    const wait = Math.max(0, Date.parse(since) + this.staleTimeoutMs - Date.now());
    this.staleTimers.set(
      key,
      setTimeout(() => {
        this.staleTimers.delete(key);
        this.resetStaleCondition(key).catch(this.report);
      }, wait),
    );
  }

  private async resetStaleCondition(key: string): Promise<void> {
    const stored = await this.storage.get('pods', key);
    if (!stored) return;
    const pod = JSON.parse(stored.json) as Obj;
    if (staleSince(pod) === undefined) return;
    const status = isObject(pod.status) ? pod.status : {};
    const conditions: unknown[] = Array.isArray(status.conditions) ? status.conditions : [];
    status.conditions = conditions.map((c) =>
      isObject(c) && c.type === 'DisruptionTarget' ? { type: 'DisruptionTarget', status: 'False', lastProbeTime: null, lastTransitionTime: nowTimestamp() } : c,
    );
    pod.status = status;
    try {
      await this.storage.update('pods', key, pod, stored.resourceVersion);
    } catch (err) {
      if (err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound')) return;
      throw err;
    }
  }
}

/**
 * When the pod's DisruptionTarget=True condition (not the kubelet's) was set, if the pod is neither
 * terminating nor finished: kube's nonTerminatingPodHasStaleDisruptionCondition.
 */
function staleSince(pod: Obj): string | undefined {
  if (isTerminating(pod)) return undefined;
  const phase = podPhase(pod);
  if (phase === 'Succeeded' || phase === 'Failed') return undefined;
  const status = isObject(pod.status) ? pod.status : {};
  const cond = findCondition(status.conditions, 'DisruptionTarget');
  if (cond === undefined || cond.status !== 'True' || cond.reason === 'TerminationByKubelet') return undefined;
  // Go's zero time when unset: stale at once.
  return typeof cond.lastTransitionTime === 'string' ? cond.lastTransitionTime : '0001-01-01T00:00:00Z';
}
