import { objectKey, type Obj } from '../api/object-util.js';
import { parsedObjects } from '../storage/parsed-changes.js';
import { logger } from '../logging/logger.js';
import { DEVICE_CLASSES, DEVICES_PER_CLASS_SUFFIX, deviceClassIndex, evaluatorFor, needsDeviceClasses, quotaScopes } from '../quota/quota-evaluators.js';
import { addLists, listsEqual, maskList, resourceListObject, resourceListOf, type ResourceList } from '../quota/resource-list.js';
import { type Storage } from '../storage/storage.js';
import { asObject } from '../api/values.js';
import { WatchedCollection, type CollectionChange } from '../storage/watched-collection.js';
import type { ChangeEvent } from '../storage/storage.js';
import { WorkQueue, type WorkOutcome } from './work-queue.js';
import { StorageError } from '../api/storage-error.js';

const QUOTAS = 'resourcequotas';
/** kube-controller-manager's --resource-quota-sync-period: every quota is recounted this often. */
export const FULL_RESYNC_MS = 5 * 60 * 1000;

/** The storage type (and group/resource) whose objects a quota resource counts. */
interface Counted {
  type: string;
  group: string;
  resource: string;
}

const core = (resource: string): Counted => ({ type: resource, group: '', resource });

const RESOURCE_CLAIMS: Counted = { type: 'resourceclaims.resource.k8s.io', group: 'resource.k8s.io', resource: 'resourceclaims' };

/** Which kinds a quota resource name counts (a DeviceClass's implicit extended resource: pods and claims). */
export function countedKinds(name: string): Counted[] {
  if (name.startsWith('count/')) {
    const rest = name.slice('count/'.length);
    const dot = rest.indexOf('.');
    return [dot < 0 ? core(rest) : { type: rest, group: rest.slice(dot + 1), resource: rest.slice(0, dot) }];
  }
  if (['configmaps', 'secrets', 'replicationcontrollers', 'resourcequotas', 'services', 'persistentvolumeclaims'].includes(name)) return [core(name)];
  if (name.startsWith('services.')) return [core('services')];
  if (name === 'requests.storage' || name.includes('.storageclass.storage.k8s.io/')) return [core('persistentvolumeclaims')];
  if (name.endsWith(DEVICES_PER_CLASS_SUFFIX)) return [RESOURCE_CLAIMS];
  // An extended resource: pods request it; claims are charged it when a DeviceClass names it.
  if (evaluatorFor('', 'pods')?.matchingResources([name]).length === 1) return name.startsWith('requests.') ? [core('pods'), RESOURCE_CLAIMS] : [core('pods')];
  return [];
}

/** Scopes an update can move an object into or out of, as kube's replenishment filter checks them. */
const SCOPES_TO_COMPARE = ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'CrossNamespacePodAffinity', 'VolumeAttributesClass'].map(
  (scopeName) => ({
    scopeName,
    operator: 'Exists',
    values: [],
  }),
);

/**
 * Whether a change of a counted object calls for a recount (kube's QuotaMonitor: deletions, and the
 * updates its filter passes: a pod turning terminal or changing its resources or Terminating scope,
 * a service changing type, a claim shrinking). Creations never do: admission charged them already,
 * and a recount between an admitted create's charge and its write would count one object too few,
 * letting the next create overspend the quota. An update counts when it changes the object's usage or
 * the scopes it is in; one without its previous state does too.
 */
export function mayReleaseQuota(type: string, e: ChangeEvent, now: number): boolean {
  if (e.type === 'DELETED') return true;
  if (e.type !== 'MODIFIED') return false;
  if (e.prevJson === undefined) return true;
  const dot = type.indexOf('.');
  const group = dot < 0 ? '' : type.slice(dot + 1);
  const resource = dot < 0 ? type : type.slice(0, dot);
  if (needsDeviceClasses(group, resource)) return true;
  const evaluator = evaluatorFor(group, resource);
  if (evaluator === undefined) return true;
  // The change's shared parse (read only here): watches and collections of the type read the same.
  const shared = parsedObjects(e);
  const before = shared.previous ?? (JSON.parse(e.prevJson) as Obj);
  const after = shared.current ?? (JSON.parse(e.json) as Obj);
  if (!listsEqual(evaluator.usage(before, now), evaluator.usage(after, now))) return true;
  return SCOPES_TO_COMPARE.some((scope) => evaluator.matchesScope(scope, before) !== evaluator.matchesScope(scope, after));
}

/**
 * kube-controller-manager's resourcequota controller: keeps each ResourceQuota's `status.hard`
 * equal to its `spec.hard` and `status.used` equal to what the namespace's objects in the quota's
 * scopes use (every tracked resource present, zeros included, so that admission can charge it).
 * A namespace is recounted when one of its quotas changes, when an object of a kind its quotas
 * count is deleted or changes its usage (mayReleaseQuota), and every five minutes. Status writes are
 * compare-and-swap; a lost race is recounted. Run it in one process per storage.
 */
export class ResourceQuotaController {
  private readonly abort = new AbortController();
  private readonly quotas: WatchedCollection;
  private readonly watchedTypes = new Set<string>();
  /** Keys of every quota, for the periodic recount. */
  private readonly quotaKeys = new Set<string>();
  private readonly queue: WorkQueue<string>;
  private resync: NodeJS.Timeout | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly now: () => number = Date.now,
    private readonly resyncMs = FULL_RESYNC_MS,
  ) {
    this.quotas = new WatchedCollection(storage, QUOTAS, (c) => this.quotaChanged(c), this.abort.signal, this.report);
    this.queue = new WorkQueue(
      (namespace) => this.sync(namespace),
      (namespace, err) => this.report(err, namespace),
    );
  }

  /** Counts every quota once, then follows changes until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    signal.addEventListener('abort', () => this.stop(), { once: true });
    await this.quotas.start();
    this.resync = setInterval(() => this.enqueueAll(), this.resyncMs);
    await this.queue.run(1, this.abort.signal);
  }

  private stop(): void {
    this.abort.abort();
    clearInterval(this.resync);
  }

  private readonly report = (err: unknown, namespace?: string): void => {
    if (this.abort.signal.aborted) return;
    logger.warn('resourcequota controller', { namespace, error: err instanceof Error ? err.message : String(err) });
  };

  private enqueueAll(): void {
    const namespaces = new Set<string>();
    for (const key of this.quotaKeys) namespaces.add(key.slice(0, key.indexOf('/')));
    for (const ns of namespaces) this.queue.add(ns);
  }

  private quotaChanged(c: CollectionChange): void {
    if (c.current === undefined) {
      this.quotaKeys.delete(c.key);
      // Quotas count quotas: the others of the namespace may track `resourcequotas`.
      this.queue.add(c.namespace);
      return;
    }
    this.quotaKeys.add(c.key);
    for (const name of resourceListOf(asObject(c.current.spec).hard).keys()) {
      for (const counted of countedKinds(name)) if (counted.type !== QUOTAS) this.follow(counted.type);
    }
    const spec = resourceListOf(asObject(c.current.spec).hard);
    const status = resourceListOf(asObject(c.current.status).hard);
    const used = resourceListOf(asObject(c.current.status).used);
    if (!listsEqual(spec, status) || [...spec.keys()].some((k) => !used.has(k))) this.queue.add(c.namespace);
    // Quotas count quotas: a quota created or deleted changes its namespace's `resourcequotas` usage.
    if (c.previous === undefined) this.queue.add(c.namespace);
  }

  /** Watches a counted kind from now on: a deletion or a change of usage re-counts the quotas of its namespace. */
  private follow(type: string): void {
    if (this.watchedTypes.has(type)) return;
    this.watchedTypes.add(type);
    const start = async (): Promise<void> => {
      const from = await this.storage.currentResourceVersion(type);
      await this.storage.watch(
        type,
        from,
        (e) => {
          const slash = e.key.indexOf('/');
          if (slash > 0 && mayReleaseQuota(type, e, this.now())) this.queue.add(e.key.slice(0, slash));
        },
        this.abort.signal,
        () => {
          // The stream was lost: recount everything, and follow again.
          this.enqueueAll();
          if (!this.abort.signal.aborted) start().catch((err: unknown) => this.report(err));
        },
      );
    };
    start().catch((err: unknown) => {
      this.watchedTypes.delete(type);
      this.report(err);
    });
  }

  /** Recounts every quota of `namespace` and writes the statuses that changed. */
  private async sync(namespace: string): Promise<WorkOutcome> {
    const listed = await this.storage.list(QUOTAS, { namespace });
    let outcome: WorkOutcome = 'done';
    const cache = new Map<string, Obj[]>();
    const objectsOf = async (type: string): Promise<Obj[]> => {
      let objects = cache.get(type);
      if (objects === undefined) {
        objects = (await this.storage.list(type, type === DEVICE_CLASSES ? {} : { namespace })).items.map((item) => JSON.parse(item.json) as Obj);
        cache.set(type, objects);
      }
      return objects;
    };
    for (const item of listed.items) {
      const quota = JSON.parse(item.json) as Obj;
      const hard = resourceListOf(asObject(quota.spec).hard);
      const used = await this.usage(quota, hard, objectsOf, listed.items.length);
      const status = asObject(quota.status);
      if (listsEqual(resourceListOf(status.hard), hard) && listsEqual(resourceListOf(status.used), used)) continue;
      quota.status = { ...status, hard: resourceListObject(hard), used: resourceListObject(used) };
      try {
        await this.storage.update(QUOTAS, objectKey(namespace, String(asObject(quota.metadata).name)), quota, item.resourceVersion);
      } catch (err) {
        if (!(err instanceof StorageError) || (err.code !== 'Conflict' && err.code !== 'NotFound')) throw err;
        if (err.code === 'Conflict') outcome = 'retry';
      }
    }
    return outcome;
  }

  /**
   * CalculateUsage: the usage, in the quota's scopes, of every resource the quota limits (zeros
   * included). Each kind that tracks one of the quota's resources adds all its usage; the sum is
   * then masked to the resources some kind tracks, so a claim's devices also count under a name
   * only the pod evaluator tracks, as in kube.
   */
  private async usage(quota: Obj, hard: ResourceList, objectsOf: (type: string) => Promise<Obj[]>, quotaCount: number): Promise<ResourceList> {
    const scopes = quotaScopes(quota);
    const names = [...hard.keys()];
    const kinds = new Map<string, Counted>();
    for (const name of names) for (const counted of countedKinds(name)) kinds.set(counted.type, counted);
    let used: ResourceList = new Map();
    const matched = new Set<string>();
    const now = this.now();
    for (const counted of kinds.values()) {
      const classes = needsDeviceClasses(counted.group, counted.resource) ? deviceClassIndex(await objectsOf(DEVICE_CLASSES)) : undefined;
      const evaluator = evaluatorFor(counted.group, counted.resource, classes);
      if (evaluator === undefined) continue;
      const tracked = evaluator.matchingResources(names);
      if (tracked.length === 0) continue;
      for (const n of tracked) matched.add(n);
      used = addLists(used, new Map(tracked.map((n) => [n, '0'])));
      if (counted.type === QUOTAS) {
        // Quotas are listed already; their scopes never match (quotas have no scopes).
        if (scopes.length === 0) used = addLists(used, new Map(tracked.map((n) => [n, String(quotaCount)])));
        continue;
      }
      for (const object of await objectsOf(counted.type)) {
        if (!scopes.every((scope) => evaluator.matchesScope(scope, object))) continue;
        used = addLists(used, evaluator.usage(object, now));
      }
    }
    return maskList(used, matched);
  }
}
