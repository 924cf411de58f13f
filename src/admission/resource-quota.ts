import { forbidden, staleConflict } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import { DEVICE_CLASSES, deviceClassIndex, evaluatorFor, needsDeviceClasses, quotaMatches, type QuotaEvaluator } from '../quota/quota-evaluators.js';
import {
  addLists,
  exceededResources,
  listsEqual,
  maskList,
  negativeResources,
  prettyPrint,
  removeZeros,
  resourceListObject,
  resourceListOf,
  subtractNonNegative,
  type ResourceList,
} from '../quota/resource-list.js';
import { type Storage } from '../storage/storage.js';
import { compareResourceVersions } from '../storage/resource-version.js';
import { LazyWatchedCollection } from '../storage/watched-collection.js';
import { asObject } from '../api/values.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { StorageError } from '../api/storage-error.js';

const QUOTAS = 'resourcequotas';
/** How often a lost race on a quota's status is retried before the write fails (kube: 3). */
const RETRIES = 3;
/** How long a live lookup that found a namespace without quotas is trusted (kube's liveTTL). */
const LIVE_LOOKUP_TTL_MS = 30_000;

const sortedNames = (names: Iterable<string>): string => [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(',');

/** One quota as read, with the usage a write would leave it at. */
interface QuotaState {
  quota: Obj;
  resourceVersion: string;
  used: ResourceList;
}

/**
 * kube's ResourceQuota plugin: every namespaced write a quota evaluator charges (creates, and the
 * updates that change usage: pod resizes and Terminating-scope changes, services, claims) is held
 * against the namespace's ResourceQuotas whose `status.hard` limits what it uses and whose scopes
 * it falls in. Over a limit: 403 `exceeded quota: q, requested: pods=1, used: pods=2, limited:
 * pods=2`; pods that leave a constrained resource unsaid: `failed quota: q: must specify ...`; a
 * quota the controller has not counted yet: `status unknown for quota`. Admitted writes (not dry
 * runs) add their usage to `status.used` by compare-and-swap, re-read and retried on a lost race,
 * so concurrent writes on any worker never overspend. The resourcequota controller recounts.
 */
export class ResourceQuotaAdmission implements AdmissionPlugin {
  readonly name = 'ResourceQuota';
  /** The last evaluation queued per namespace: this process charges one write at a time per namespace, as kube does. */
  private readonly inFlight = new Map<string, Promise<void>>();

  /** The quotas, watched (with a signal): read as kube's plugin reads its informer. */
  private readonly cache: LazyWatchedCollection | undefined;
  /** Namespaces a live lookup found without quotas, until when that answer is trusted. */
  private readonly noQuotasUntil = new Map<string, number>();
  /** Quotas this process charged, by key, until the cache has caught up with that write. */
  private readonly charged = new Map<string, QuotaState>();

  constructor(
    private readonly storage: Storage,
    private readonly now: () => number = Date.now,
    signal?: AbortSignal,
  ) {
    // A cache that lost its stream forgets the charges it stood in for.
    this.cache = signal === undefined ? undefined : new LazyWatchedCollection(storage, QUOTAS, signal, () => this.charged.clear());
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.namespace === '' || !a.info.namespaced || a.object === undefined) return;
    const classes = needsDeviceClasses(a.info.group, a.info.resource) ? deviceClassIndex(await listObjects(this.storage, DEVICE_CLASSES)) : undefined;
    const evaluator = evaluatorFor(a.info.group, a.info.resource, classes);
    if (evaluator === undefined || !evaluator.handles(a.operation, a.subresource, a.object, a.oldObject)) return;
    const previous = this.inFlight.get(a.namespace) ?? Promise.resolve();
    const mine = previous.then(() => this.evaluate(a, evaluator));
    const settled = mine.catch(() => undefined);
    this.inFlight.set(a.namespace, settled);
    try {
      await mine;
    } finally {
      if (this.inFlight.get(a.namespace) === settled) this.inFlight.delete(a.namespace);
    }
  }

  private async evaluate(a: AdmissionAttributes, evaluator: QuotaEvaluator): Promise<void> {
    let states = this.cachedQuotas(a.namespace) ?? (await this.quotas(a.namespace));
    for (let attempt = 0; ; attempt++) {
      if (states.length === 0) return;
      const charged = this.charge(a, evaluator, states);
      if (a.dryRun || charged.length === 0) return;
      const failed: QuotaState[] = [];
      for (const state of charged) if (!(await this.write(state))) failed.push(state);
      if (failed.length === 0) return;
      if (attempt >= RETRIES) throw staleConflict({ group: '', resource: QUOTAS }, String(asObject(failed[0]?.quota.metadata).name));
      const names = new Set(failed.map((s) => asObject(s.quota.metadata).name));
      states = (await this.quotas(a.namespace)).filter((s) => names.has(asObject(s.quota.metadata).name));
    }
  }

  /** The namespace's quotas as read live (also after a lost race). */
  private async quotas(namespace: string): Promise<QuotaState[]> {
    const listed = await this.storage.list(QUOTAS, { namespace });
    const states = listed.items.map((item) => {
      const quota = JSON.parse(item.json) as Obj;
      return { quota, resourceVersion: item.resourceVersion, used: resourceListOf(asObject(quota.status).used) };
    });
    if (states.length === 0 && this.cache !== undefined) this.rememberNoQuotas(namespace);
    return states;
  }

  /**
   * The namespace's quotas from the watched cache, each replaced by this process's own later charge
   * while the cache has not caught up with it (kube's updatedQuotas); undefined when they must be
   * read live: no cache yet, or no quota cached and no recent live lookup that found none (a quota
   * created a moment ago may not have reached the cache).
   */
  private cachedQuotas(namespace: string): QuotaState[] | undefined {
    const cache = this.cache?.listed();
    if (cache === undefined) return undefined;
    const states: QuotaState[] = [];
    for (const quota of cache.inNamespace(namespace)) {
      const meta = asObject(quota.metadata);
      const key = `${namespace}/${String(meta.name)}`;
      const resourceVersion = typeof meta.resourceVersion === 'string' ? meta.resourceVersion : '';
      const mine = this.charged.get(key);
      if (mine !== undefined && compareResourceVersions(mine.resourceVersion, resourceVersion) > 0) states.push(mine);
      else {
        if (mine !== undefined) this.charged.delete(key);
        states.push({ quota, resourceVersion, used: resourceListOf(asObject(quota.status).used) });
      }
    }
    if (states.length > 0) return states;
    const until = this.noQuotasUntil.get(namespace);
    if (until !== undefined && until > this.now()) return [];
    this.noQuotasUntil.delete(namespace);
    return undefined;
  }

  /** Trusts for LIVE_LOOKUP_TTL_MS that NAMESPACE has no quota; answers past their time are dropped. */
  private rememberNoQuotas(namespace: string): void {
    const now = this.now();
    for (const [ns, until] of this.noQuotasUntil) if (until <= now) this.noQuotasUntil.delete(ns);
    this.noQuotasUntil.set(namespace, now + LIVE_LOOKUP_TTL_MS);
  }

  /** CheckRequest: the quotas whose usage the write changes, with their new usage; throws when it does not fit. */
  private charge(a: AdmissionAttributes, evaluator: QuotaEvaluator, states: QuotaState[]): QuotaState[] {
    const object = a.object as Obj;
    const interesting: QuotaState[] = [];
    for (const state of states) {
      if (!quotaMatches(evaluator, state.quota, object)) continue;
      const name = String(asObject(state.quota.metadata).name);
      const hard = resourceListOf(asObject(state.quota.status).hard);
      const restricted = evaluator.matchingResources([...hard.keys()]);
      const problem = evaluator.constraints(restricted, object);
      if (problem !== undefined) throw this.refusal(a, `failed quota: ${name}: ${problem}`);
      if (restricted.some((r) => !state.used.has(r))) throw this.refusal(a, `status unknown for quota: ${name}, resources: ${sortedNames(restricted)}`);
      interesting.push(state);
    }
    const usage = evaluator.usage(object, this.now());
    const negative = negativeResources(usage);
    if (negative.length > 0) throw this.refusal(a, `quota usage is negative for resource(s): ${sortedNames(negative)}`);
    const deltas = new Map<QuotaState, ResourceList>();
    for (const state of interesting) {
      let delta = usage;
      const old = a.operation === 'UPDATE' ? a.oldObject : undefined;
      if (old !== undefined && typeof asObject(old.metadata).resourceVersion === 'string' && quotaMatches(evaluator, state.quota, old)) {
        delta = subtractNonNegative(usage, evaluator.usage(old, this.now()));
      }
      delta = removeZeros(delta);
      if (delta.size > 0) deltas.set(state, delta);
    }
    const changed: QuotaState[] = [];
    for (const [state, delta] of deltas) {
      const hard = resourceListOf(asObject(state.quota.status).hard);
      const requested = maskList(delta, hard.keys());
      const used = addLists(state.used, requested);
      if (a.subresource !== 'status') {
        const exceeded = exceededResources(maskList(used, requested.keys()), hard);
        if (exceeded.length > 0) {
          throw this.refusal(
            a,
            `exceeded quota: ${String(asObject(state.quota.metadata).name)}, requested: ${prettyPrint(maskList(requested, exceeded))}, ` +
              `used: ${prettyPrint(maskList(state.used, exceeded))}, limited: ${prettyPrint(maskList(hard, exceeded))}`,
          );
        }
      }
      if (!listsEqual(used, state.used)) changed.push({ ...state, used });
    }
    return changed;
  }

  private refusal(a: AdmissionAttributes, detail: string): Error {
    return forbidden({ group: a.info.group, resource: a.info.resource }, a.name, detail);
  }

  /** Writes the new usage unless the quota changed since it was read; false on a lost race. */
  private async write(state: QuotaState): Promise<boolean> {
    const quota = structuredClone(state.quota);
    quota.status = { ...asObject(quota.status), used: resourceListObject(state.used) };
    const meta = asObject(quota.metadata);
    const key = `${String(meta.namespace)}/${String(meta.name)}`;
    try {
      const stored = await this.storage.update(QUOTAS, key, quota, state.resourceVersion);
      // Entries leave when the cache catches up; one for a quota deleted meanwhile would stay, so the map is bounded.
      if (this.charged.size >= 10_000) this.charged.clear();
      if (this.cache !== undefined) this.charged.set(key, { quota: JSON.parse(stored.json) as Obj, resourceVersion: stored.resourceVersion, used: state.used });
      return true;
    } catch (err) {
      if (err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound')) return false;
      throw err;
    }
  }
}

/** Every object of a storage type. */
async function listObjects(storage: Storage, type: string): Promise<Obj[]> {
  return (await storage.list(type)).items.map((item) => JSON.parse(item.json) as Obj);
}
