import { ApiError } from '../api/errors.js';
import { makeTarget, type ServerContext } from '../rest/server-context.js';
import { deleteObject } from '../rest/delete.js';
import { isObject, metadataOf, nowTimestamp, type Obj } from '../api/object-util.js';
import type { ResourceInfo } from '../api/resource-info.js';
import { storageTypeOf } from '../api/resource-info.js';
import { StorageError } from '../api/storage-error.js';

/** How often terminating namespaces are re-examined while they wait for content to go. */
const RESYNC_MS = 500;

interface Remaining {
  /** resource -> count of objects left */
  resources: Map<string, number>;
  /** finalizer -> count of objects holding it */
  finalizers: Map<string, number>;
}

/**
 * kube's namespace controller: when a namespace is terminating, deletes everything in it, reports
 * progress in `status.conditions`, then removes the `kubernetes` finalizer and the namespace.
 * Runs in one process per storage (the lead worker in clustered mode).
 */
export class NamespaceController {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly abort = new AbortController();

  constructor(private readonly server: ServerContext) {}

  async start(): Promise<void> {
    const current = await this.server.storage.currentResourceVersion('namespaces');
    await this.server.storage.watch(
      'namespaces',
      current,
      (e) => {
        if (e.type !== 'DELETED' && e.json.includes('"deletionTimestamp"')) this.kick();
      },
      this.abort.signal,
    );
    this.kick();
  }

  stop(): void {
    this.abort.abort();
    clearTimeout(this.timer);
  }

  private kick(): void {
    if (this.abort.signal.aborted) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.sync(), 10);
  }

  /** One pass over all terminating namespaces; reschedules itself while any remain. */
  private async sync(): Promise<void> {
    if (this.running) return;
    this.running = true;
    let pending = false;
    try {
      const listed = await this.server.storage.list('namespaces');
      for (const item of listed.items) {
        const ns = JSON.parse(item.json) as Obj;
        if (metadataOf(ns).deletionTimestamp === undefined) continue;
        pending = true;
        try {
          await this.finalize(item.key, ns);
        } catch (err) {
          console.error(
            JSON.stringify({ level: 'error', msg: 'namespace cleanup failed', namespace: item.key, error: err instanceof Error ? err.message : String(err) }),
          );
        }
      }
    } catch (err) {
      console.error(JSON.stringify({ level: 'error', msg: 'namespace controller list failed', error: err instanceof Error ? err.message : String(err) }));
      pending = true;
    } finally {
      this.running = false;
    }
    if (pending && !this.abort.signal.aborted) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.sync(), RESYNC_MS);
    }
  }

  /** One representative served version per namespaced storage type. */
  private namespacedTypes(): ResourceInfo[] {
    const seen = new Map<string, ResourceInfo>();
    for (const info of this.server.catalog.all()) {
      if (!info.namespaced || !info.verbs.includes('delete') || !info.verbs.includes('list')) continue;
      const type = storageTypeOf(info);
      if (!seen.has(type)) seen.set(type, info);
    }
    return [...seen.values()];
  }

  private async finalize(name: string, _ns: Obj): Promise<void> {
    const remaining: Remaining = { resources: new Map(), finalizers: new Map() };
    for (const info of this.namespacedTypes()) {
      const type = storageTypeOf(info);
      const listed = await this.server.storage.list(type, { namespace: name });
      for (const item of listed.items) {
        const obj = JSON.parse(item.json) as Obj;
        const meta = metadataOf(obj);
        const objName = typeof meta.name === 'string' ? meta.name : '';
        const qualified = info.group ? `${info.resource}.${info.group}` : info.resource;
        try {
          const outcome = await deleteObject(makeTarget(this.server, info, name, objName), objName, {
            dryRun: false,
            gracePeriodSeconds: 0,
            propagationPolicy: 'Background',
          });
          if (outcome.removed) continue;
        } catch (err) {
          if (err instanceof ApiError && err.code === 404) continue;
          throw err;
        }
        remaining.resources.set(qualified, (remaining.resources.get(qualified) ?? 0) + 1);
        for (const f of Array.isArray(meta.finalizers) ? meta.finalizers : []) {
          remaining.finalizers.set(String(f), (remaining.finalizers.get(String(f)) ?? 0) + 1);
        }
      }
    }
    const stored = await this.server.storage.get('namespaces', name);
    if (!stored) return;
    const current = JSON.parse(stored.json) as Obj;
    if (remaining.resources.size > 0) {
      const status = isObject(current.status) ? current.status : {};
      const conditions = buildConditions(remaining);
      if (JSON.stringify(stripTimes(status.conditions)) === JSON.stringify(stripTimes(conditions))) return;
      current.status = { ...status, phase: 'Terminating', conditions };
      await this.tryUpdate(name, current, stored.resourceVersion);
      return;
    }
    // Content gone: drop the `kubernetes` finalizer, then remove the namespace if nothing else holds it.
    const spec = isObject(current.spec) ? current.spec : {};
    const specFinalizers = Array.isArray(spec.finalizers) ? spec.finalizers.filter((f) => f !== 'kubernetes') : [];
    const metaFinalizers = metadataOf(current).finalizers;
    if (specFinalizers.length === 0 && (!Array.isArray(metaFinalizers) || metaFinalizers.length === 0)) {
      try {
        await this.server.storage.delete('namespaces', name, stored.resourceVersion);
      } catch (err) {
        if (!(err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound'))) throw err;
      }
      return;
    }
    current.spec = { ...spec, finalizers: specFinalizers };
    const status = isObject(current.status) ? current.status : {};
    current.status = { ...status, phase: 'Terminating', conditions: buildConditions(remaining) };
    await this.tryUpdate(name, current, stored.resourceVersion);
  }

  private async tryUpdate(name: string, obj: Obj, rv: string): Promise<void> {
    try {
      await this.server.storage.update('namespaces', name, obj, rv);
    } catch (err) {
      if (!(err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound'))) throw err;
    }
  }
}

function stripTimes(conditions: unknown): unknown {
  if (!Array.isArray(conditions)) return conditions;
  return (conditions as unknown[]).map((c) => (isObject(c) ? { ...c, lastTransitionTime: undefined } : c));
}

/** The five conditions kube's namespace controller maintains while deleting content. */
function buildConditions(remaining: Remaining): Obj[] {
  const now = nowTimestamp();
  const cond = (type: string, ok: boolean, reason: string, message: string): Obj => ({
    type,
    status: ok ? 'False' : 'True',
    lastTransitionTime: now,
    reason,
    message,
  });
  const resources = [...remaining.resources.entries()].sort(([a], [b]) => a.localeCompare(b));
  const finalizers = [...remaining.finalizers.entries()].sort(([a], [b]) => a.localeCompare(b));
  return [
    cond('NamespaceDeletionDiscoveryFailure', true, 'ResourcesDiscovered', 'All resources successfully discovered'),
    cond('NamespaceDeletionGroupVersionParsingFailure', true, 'ParsedGroupVersions', 'All legacy kube types successfully parsed'),
    cond('NamespaceDeletionContentFailure', true, 'ContentDeleted', 'All content successfully deleted, may be waiting on finalization'),
    resources.length > 0
      ? cond(
          'NamespaceContentRemaining',
          false,
          'SomeResourcesRemain',
          `Some resources are remaining: ${resources.map(([r, n]) => `${r} has ${n} resource instances`).join(', ')}`,
        )
      : cond('NamespaceContentRemaining', true, 'ContentRemoved', 'All content successfully removed'),
    finalizers.length > 0
      ? cond(
          'NamespaceFinalizersRemaining',
          false,
          'SomeFinalizersRemain',
          `Some content in the namespace has finalizers remaining: ${finalizers.map(([f, n]) => `${f} in ${n} resource instances`).join(', ')}`,
        )
      : cond('NamespaceFinalizersRemaining', true, 'ContentHasNoFinalizers', 'All content-preserving finalizers have been removed'),
  ];
}
