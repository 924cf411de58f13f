import { ApiError } from '../api/errors.js';
import { isObject, metadataOf, nowTimestamp, type Obj } from '../api/object-util.js';
import { deleteObject } from '../rest/delete.js';
import type { OpenApiService } from '../openapi/openapi-service.js';
import { apiVersionOf, storageTypeOf, type ResourceInfo } from '../api/resource-info.js';
import { type ChangeEvent } from '../storage/storage.js';
import { makeTarget, type ServerContext } from '../rest/server-context.js';
import { setStatusCondition } from '../crd/crd-status.js';
import { webhookConversionOfCrd } from '../conversion/webhook-conversion.js';
import { StorageServiceResolver, WebhookClient } from '../webhook/webhook-client.js';
import { CLEANUP_FINALIZER, compareKubeVersions, crdModelOf, storageVersionName, type CrdModel } from '../crd/crd-model.js';
import { buildV3Document } from '../openapi/openapi-v3-convert.js';
import type { JsonObject } from '../openapi/json-value.js';
import { crdOpenApiContribution, crdV3KindSchema, definitionName } from '../openapi/crd-openapi.js';
import { resourceInfoOf, servedResources } from '../crd/crd-resources.js';
import {
  acceptedNamesJson,
  acceptedNamesOf,
  computeNames,
  conditionsOf,
  isConditionTrue,
  nonStructuralCondition,
  setCondition,
  type CrdCondition,
} from '../crd/crd-status.js';
import { StorageError } from '../api/storage-error.js';

/** The storage type of CustomResourceDefinitions. */
export const CRD_TYPE = 'customresourcedefinitions.apiextensions.k8s.io';

/** How long a CRD whose work could not finish (write failed, instances still finalizing) waits to be retried. */
const RETRY_MS = 500;
/** How long a lost watch waits before listing again. */
const RELIST_MS = 200;
/** How long OpenAPI v3 rebuilds wait for more CRD changes to arrive. */
const V3_DEBOUNCE_MS = 20;

/** Options of a {@link CrdRegistrar}. */
export interface CrdRegistrarOptions {
  /** The OpenAPI service whose documents show the served custom resources. */
  openapi: OpenApiService;
  /** Reports failures that are retried (a write refused for another reason than a conflict, a lost watch). */
  onError?: (message: string, err: unknown) => void;
}

interface Known {
  obj: Obj;
  resourceVersion: string;
  /** The resources this CRD serves now. */
  served: ResourceInfo[];
  /** The OpenAPI contribution last set for it, as JSON ('' for none). */
  contribution: string;
}

/**
 * The CRD controllers of one server process. It lists and watches CustomResourceDefinitions through
 * the Storage interface (from the change stream, listing again after the stream is lost) and:
 *
 * - serves every served version of each established CRD in the process's catalogue under its accepted
 *   names, with its Table columns, Scale paths and OpenAPI paths, records each version's schema and
 *   the CRD's conversion webhook on the catalogue (`catalog.customResources`), and stops serving what
 *   is no longer there (a CRD's resources stay served until the CRD itself is gone, so its finalizer
 *   can delete them);
 * - writes the status kube's naming and establishing controllers write (`acceptedNames`,
 *   `NamesAccepted`, `Established`) and adds the `customresourcecleanup.apiextensions.k8s.io`
 *   finalizer, with compare-and-swap: processes that race lose with a conflict and converge on the
 *   next event;
 * - finalizes a deleted CRD as kube's finalizer controller does: `Terminating` True, every custom
 *   resource deleted, `Terminating` False, the finalizer removed (and the CRD with it).
 *
 * Work is serialised per process (one CRD at a time); `stop()` ends the watch and every timer.
 */
export class CrdRegistrar {
  private readonly known = new Map<string, Known>();
  private readonly dirty = new Set<string>();
  private readonly abort = new AbortController();
  private watchAbort: AbortController | undefined;
  private running = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** The v3 keys (`apis/GROUP/VERSION`) this registrar serves explicit documents for. */
  private readonly v3Keys = new Set<string>();
  /** Groups whose v3 documents wait for the debounced rebuild. */
  private readonly pendingV3 = new Set<string>();
  /** Calls the conversion webhooks of this process's CRDs (created with the first such CRD). */
  private conversionClient: WebhookClient | undefined;

  constructor(
    private readonly server: ServerContext,
    private readonly options: CrdRegistrarOptions,
  ) {}

  /** Lists the CRDs, serves the established ones, and starts watching. Resolves once the first list is applied. */
  async start(): Promise<void> {
    await this.resync();
  }

  /** Ends the watch and every pending retry. Served resources stay in the registry. */
  stop(): void {
    this.abort.abort();
    this.watchAbort?.abort();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private later(ms: number, fn: () => void): void {
    if (this.abort.signal.aborted) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  private report(message: string, err: unknown): void {
    this.options.onError?.(message, err);
  }

  /** Lists every CRD, applies the list (forgetting CRDs that are gone), and watches from the list's version. */
  private async resync(): Promise<void> {
    if (this.abort.signal.aborted) return;
    this.watchAbort?.abort();
    const watchAbort = new AbortController();
    this.watchAbort = watchAbort;
    try {
      const listed = await this.server.storage.list(CRD_TYPE);
      const present = new Set<string>();
      for (const item of listed.items) {
        present.add(item.key);
        try {
          this.observe(item.key, item.json, item.resourceVersion);
        } catch (err) {
          this.report(`CRD ${item.key}: cannot apply it`, err);
        }
      }
      for (const name of [...this.known.keys()]) if (!present.has(name)) this.forget(name);
      await this.server.storage.watch(
        CRD_TYPE,
        listed.resourceVersion,
        (e) => this.onEvent(e),
        watchAbort.signal,
        (err) => {
          this.report('CRD watch lost; listing again', err);
          this.later(RELIST_MS, () => void this.resync());
        },
      );
    } catch (err) {
      this.report('CRD list or watch failed; retrying', err);
      this.later(RELIST_MS, () => void this.resync());
    }
  }

  private onEvent(e: ChangeEvent): void {
    try {
      if (e.type === 'DELETED') this.forget(e.key);
      else this.observe(e.key, e.json, e.resourceVersion);
    } catch (err) {
      // One unreadable CRD must not end the watch every other CRD depends on.
      this.report(`CRD ${e.key}: cannot apply ${e.type}`, err);
    }
  }

  /** Records the stored state of CRD NAME, serves it accordingly and queues its status work. */
  private observe(name: string, json: string, resourceVersion: string): void {
    const parsed: unknown = JSON.parse(json);
    if (!isObject(parsed)) return;
    const previous = this.known.get(name);
    if (previous !== undefined && compareVersions(previous.resourceVersion, resourceVersion) >= 0) return;
    const known: Known = { obj: parsed, resourceVersion, served: previous?.served ?? [], contribution: previous?.contribution ?? '' };
    this.known.set(name, known);
    this.serve(known);
    this.enqueue(name);
    // A CRD's accepted names free or claim names of the others in its group.
    const group = crdModelOf(parsed).group;
    for (const [other, k] of this.known)
      if (other !== name && crdModelOf(k.obj).group === group && !isConditionTrue(k.obj, 'NamesAccepted')) this.enqueue(other);
  }

  private forget(name: string): void {
    const known = this.known.get(name);
    if (known === undefined) return;
    this.known.delete(name);
    this.unserve(known, []);
    this.options.openapi.removeContribution(`crd:${name}`);
    const group = crdModelOf(known.obj).group;
    this.scheduleV3(group);
    for (const [other, k] of this.known) if (crdModelOf(k.obj).group === group) this.enqueue(other);
  }

  /** Makes the catalogue (with its custom resource facts), printers, scales and OpenAPI show exactly what the stored CRD serves. */
  private serve(known: Known): void {
    const crd = crdModelOf(known.obj);
    const names = acceptedNamesOf(known.obj);
    const established = isConditionTrue(known.obj, 'Established') && names.plural !== '' && names.kind !== '';
    const desired = established ? servedResources(crd, names) : [];
    this.unserve(known, desired);
    const catalog = this.server.catalog;
    for (const info of desired) {
      const current = catalog.get(info.group, info.version, info.resource);
      if (current === undefined || JSON.stringify(current) !== JSON.stringify(info)) catalog.add(info);
      const apiVersion = apiVersionOf(info.group, info.version);
      const version = crd.versions.find((v) => v.name === info.version);
      catalog.customResources.setSchema(apiVersion, info.kind, { cacheKey: `${crd.uid}/${known.resourceVersion}/${info.version}`, schema: version?.schema });
    }
    if (desired.length > 0) {
      this.conversionClient ??= new WebhookClient(new StorageServiceResolver(this.server.storage));
      catalog.customResources.setConversion(crd.group, names.kind, webhookConversionOfCrd(known.obj, this.conversionClient));
    }
    if (desired.length > 0) catalog.sortVersions(crd.group, compareKubeVersions);
    known.served = desired;
    // OpenAPI documents are rebuilt on every contribution change: status-only updates leave them alone.
    const contribution = desired.length > 0 ? crdOpenApiContribution(crd, names) : undefined;
    const text = contribution === undefined ? '' : JSON.stringify(contribution);
    if (text !== known.contribution) {
      if (contribution !== undefined) this.options.openapi.setContribution(`crd:${crd.name}`, contribution);
      else this.options.openapi.removeContribution(`crd:${crd.name}`);
      known.contribution = text;
      this.scheduleV3(crd.group);
    }
  }

  /**
   * Rebuilds GROUP's v3 documents shortly, once for a burst of changes (a start with many CRDs
   * rebuilds the merged v2 document once, not once per CRD).
   */
  private scheduleV3(group: string): void {
    const first = this.pendingV3.size === 0;
    this.pendingV3.add(group);
    if (!first) return;
    this.later(V3_DEBOUNCE_MS, () => {
      const groups = [...this.pendingV3];
      this.pendingV3.clear();
      for (const g of groups) {
        try {
          this.refreshV3(g);
        } catch (err) {
          this.report(`OpenAPI v3 documents of ${g} could not be built`, err);
        }
      }
    });
  }

  /**
   * Serves /openapi/v3/apis/GROUP/VERSION for every version of GROUP as kube does: the document derived
   * from the v2 contributions, with each custom kind's schema in its v3 form (nullable, anyOf, defaults
   * and embedded resources kept). Versions no CRD serves any more fall back to the derived document.
   * The documents are built when first asked for: merging the v2 document takes about 100 ms, which a
   * CRD's create (a test suite installing its CRDs, then creating objects) need not wait behind.
   */
  private refreshV3(group: string): void {
    const openapi = this.options.openapi;
    const prefix = `apis/${group}/`;
    const versions = new Set(this.crdsOfGroup(group).flatMap((k) => k.served.map((i) => i.version)));
    for (const key of this.v3Keys) {
      if (key.startsWith(prefix) && !versions.has(key.slice(prefix.length))) {
        openapi.removeV3Document(key);
        this.v3Keys.delete(key);
      }
    }
    for (const version of versions) {
      const key = `${prefix}${version}`;
      openapi.setV3Document(key, () => this.v3Document(group, version));
      this.v3Keys.add(key);
    }
  }

  private crdsOfGroup(group: string): Known[] {
    return [...this.known.values()].filter((k) => k.served.length > 0 && crdModelOf(k.obj).group === group);
  }

  /** The v3 document of GROUP/VERSION from the CRDs known now; undefined serves the derived one. */
  private v3Document(group: string, version: string): JsonObject | undefined {
    try {
      const openapi = this.options.openapi;
      const paths = openapi.derivedPaths(`apis/${group}/${version}`);
      if (paths === undefined) return undefined;
      const doc = buildV3Document(openapi.v2Document(), paths);
      const components = isObject(doc.components) ? doc.components : {};
      const schemas = isObject(components.schemas) ? components.schemas : {};
      for (const k of this.crdsOfGroup(group)) {
        const crd = crdModelOf(k.obj);
        const names = acceptedNamesOf(k.obj);
        const schema = crdV3KindSchema(crd, names, version);
        if (schema !== undefined) schemas[definitionName(group, version, names.kind)] = schema;
      }
      return doc;
    } catch (err) {
      this.report(`OpenAPI v3 document of ${group}/${version} could not be built`, err);
      return undefined;
    }
  }

  /** Stops serving what KNOWN served and DESIRED no longer has. */
  private unserve(known: Known, desired: readonly ResourceInfo[]): void {
    const keep = new Set(desired.map((i) => `${i.group}/${i.version}/${i.resource}`));
    for (const info of known.served) {
      if (keep.has(`${info.group}/${info.version}/${info.resource}`)) continue;
      const current = this.server.catalog.get(info.group, info.version, info.resource);
      // Another CRD may have taken the path over; only what this one added is removed.
      if (current !== undefined && current.kind === info.kind && current.custom === true) this.server.catalog.remove(info.group, info.version, info.resource);
      const facts = this.server.catalog.customResources;
      facts.setSchema(apiVersionOf(info.group, info.version), info.kind, undefined);
      if (desired.length === 0) facts.setConversion(info.group, info.kind, undefined);
    }
  }

  private enqueue(name: string): void {
    this.dirty.add(name);
    if (!this.running) queueMicrotask(() => void this.drain());
  }

  /** Works through the dirty CRDs one at a time. */
  private async drain(): Promise<void> {
    if (this.running || this.abort.signal.aborted) return;
    this.running = true;
    try {
      while (this.dirty.size > 0 && !this.abort.signal.aborted) {
        const name = this.dirty.values().next().value;
        if (name === undefined) break;
        this.dirty.delete(name);
        try {
          const retry = await this.reconcile(name);
          if (retry) this.later(RETRY_MS, () => this.enqueue(name));
        } catch (err) {
          this.report(`CRD ${name}: status or cleanup failed; retrying`, err);
          this.later(RETRY_MS, () => this.enqueue(name));
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** One pass of the controllers over CRD NAME; true when it must be looked at again later. */
  private async reconcile(name: string): Promise<boolean> {
    const known = this.known.get(name);
    if (known === undefined) return false;
    const crd = crdModelOf(known.obj);
    if (crd.deleting) return this.finalize(name, known, crd);
    const next = structuredClone(known.obj);
    const others = [...this.known.entries()].filter(([n, k]) => n !== name && crdModelOf(k.obj).group === crd.group).map(([, k]) => k.obj);
    const { names, namesAccepted, established } = computeNames(known.obj, others);
    const now = nowTimestamp();
    let conditions = setCondition(conditionsOf(known.obj), namesAccepted, now);
    conditions = setCondition(conditions, established, now);
    const nonStructural = nonStructuralCondition(known.obj);
    conditions = nonStructural === undefined ? conditions.filter((c) => c.type !== 'NonStructuralSchema') : setCondition(conditions, nonStructural, now);
    const status = isObject(next.status) ? next.status : {};
    const stored: unknown[] = Array.isArray(status.storedVersions) ? (status.storedVersions as unknown[]) : [];
    const storage = storageVersionName(crd);
    next.status = {
      ...(conditions.length > 0 ? { conditions } : {}),
      acceptedNames: acceptedNamesJson(names),
      storedVersions: storage === '' || stored.includes(storage) ? stored : [...stored, storage],
    };
    if (JSON.stringify(next) === JSON.stringify(known.obj)) return false;
    return !(await this.write(name, next, known.resourceVersion));
  }

  /** Compare-and-swap write of CRD NAME; false when it failed for a reason a retry may fix. A conflict is settled by the next event. */
  private async write(name: string, obj: Obj, resourceVersion: string): Promise<boolean> {
    try {
      const written = await this.server.storage.update(CRD_TYPE, name, obj, resourceVersion);
      this.observe(name, written.json, written.resourceVersion);
      return true;
    } catch (err) {
      if (err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound')) return true;
      throw err;
    }
  }

  /** kube's finalizer controller for a CRD being deleted. */
  private async finalize(name: string, known: Known, crd: CrdModel): Promise<boolean> {
    if (!crd.finalizers.includes(CLEANUP_FINALIZER)) return false;
    let obj = structuredClone(known.obj);
    let rv = known.resourceVersion;
    const progress: CrdCondition = {
      type: 'Terminating',
      status: 'True',
      reason: 'InstanceDeletionInProgress',
      message: 'CustomResource deletion is in progress',
    };
    const current = conditionsOf(obj).find((c) => c.type === 'Terminating');
    if (current?.reason !== progress.reason) {
      setStatusCondition(obj, progress);
      const written = await this.writeAndRead(name, obj, rv);
      if (written === undefined) return false;
      [obj, rv] = written;
    }
    let done: CrdCondition;
    if (isConditionTrue(obj, 'Established')) {
      const remaining = await this.deleteInstances(known);
      if (remaining > 0) return true;
      done = { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' };
    } else {
      done = { type: 'Terminating', status: 'False', reason: 'NeverEstablished', message: 'resource was never established' };
    }
    setStatusCondition(obj, done);
    const meta = metadataOf(obj);
    // The finalizers as last written (another actor may have changed them since the CRD was read).
    const finalizers = crdModelOf(obj).finalizers.filter((f) => f !== CLEANUP_FINALIZER);
    try {
      if (finalizers.length === 0) await this.server.storage.delete(CRD_TYPE, name, rv);
      else {
        meta.finalizers = finalizers;
        await this.server.storage.update(CRD_TYPE, name, obj, rv);
      }
    } catch (err) {
      if (err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound')) return false;
      throw err;
    }
    return false;
  }

  private async writeAndRead(name: string, obj: Obj, rv: string): Promise<[Obj, string] | undefined> {
    try {
      const written = await this.server.storage.update(CRD_TYPE, name, obj, rv);
      const parsed: unknown = JSON.parse(written.json);
      return isObject(parsed) ? [parsed, written.resourceVersion] : undefined;
    } catch (err) {
      if (err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound')) return undefined;
      throw err;
    }
  }

  /** Deletes every custom resource of the CRD (as the API would); the number still present afterwards. */
  private async deleteInstances(known: Known): Promise<number> {
    // With no version served any more, the instances are still reachable through the storage version.
    const crd = crdModelOf(known.obj);
    const storage = crd.versions.find((v) => v.storage);
    const info = known.served[0] ?? (storage === undefined ? undefined : resourceInfoOf(crd, acceptedNamesOf(known.obj), storage));
    if (info === undefined || info.resource === '') return 0;
    const type = storageTypeOf(info);
    const listed = await this.server.storage.list(type);
    let remaining = 0;
    for (const item of listed.items) {
      const slash = item.key.indexOf('/');
      const namespace = info.namespaced && slash >= 0 ? item.key.slice(0, slash) : '';
      const objName = info.namespaced && slash >= 0 ? item.key.slice(slash + 1) : item.key;
      try {
        const outcome = await deleteObject(makeTarget(this.server, info, namespace, objName), objName, { dryRun: false, gracePeriodSeconds: 0 });
        if (!outcome.removed) remaining++;
      } catch (err) {
        if (err instanceof ApiError && err.code === 404) continue;
        throw err;
      }
    }
    return remaining;
  }
}

/** resourceVersion order: by length, then lexically. */
function compareVersions(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}
