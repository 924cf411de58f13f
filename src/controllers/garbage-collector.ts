/**
 * kube's garbage collector, in the server: deletes objects whose owners are all gone (background),
 * holds owners in `foregroundDeletion` until their blocking dependents are gone (deleting those in
 * foreground too), and orphans dependents of owners deleted with `orphan`. Fed by the change streams
 * of every deletable type (list + watch, so a new leader resumes from the current state); every
 * decision re-reads the object and writes conditionally on its uid.
 */
import { logger } from '../logging/logger.js';
import { metadataOf, type Obj } from '../api/object-util.js';
import type { ServerContext } from '../rest/server-context.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../rest/deletion-finalizers.js';
import { AbsentOwnerCache, GraphBuilder } from './garbage-collector-builder.js';
import { deletingWith, finalizersOf, OwnerGraph, ownerRefsOf, type GraphNode, type ObjectIdentity, type OwnerRef } from './garbage-collector-graph.js';
import { Monitors } from './garbage-collector-monitors.js';
import { GarbageCollectorStore, RestMappingError, StaleDecision } from './garbage-collector-store.js';
import { WorkQueue, type WorkOutcome } from './work-queue.js';

/** kube's --concurrent-gc-syncs default. */
const DELETE_WORKERS = 20;
const ORPHAN_WORKERS = 4;
/** How often newly served types (CRDs) are looked for. */
const RESYNC_TYPES_MS = 10_000;

/** A cluster-scoped dependent names a namespaced owner: never valid, never retried. */
class NamespacedOwnerOfClusterScopedObject extends Error {}

type DeleteAttempt = 'done' | 'virtual-deleted' | 'forget';

/** The garbage collector: `run` until its signal aborts (the controller manager owns it). */
export class GarbageCollector {
  private readonly graph = new OwnerGraph();
  private readonly absent = new AbsentOwnerCache();
  private readonly store: GarbageCollectorStore;
  private readonly builder: GraphBuilder;
  private readonly deleteQueue: WorkQueue<GraphNode>;
  private readonly orphanQueue: WorkQueue<GraphNode>;

  constructor(private readonly server: ServerContext) {
    this.store = new GarbageCollectorStore(server);
    this.builder = new GraphBuilder(this.graph, this.absent, {
      attemptToDelete: (n) => this.deleteQueue.add(n),
      attemptToOrphan: (n) => this.orphanQueue.add(n),
      invalidNamespaceOwnerRef: (dependent, message) => {
        this.store
          .recordEvent(dependent, 'Warning', 'OwnerRefInvalidNamespace', message)
          .catch((err: unknown) => this.logError('cannot record an event', dependent, err));
      },
    });
    this.deleteQueue = new WorkQueue(
      (n) => this.attemptToDeleteWorker(n),
      (n, err) => this.logError('garbage collection of an object failed', n.identity, err),
    );
    this.orphanQueue = new WorkQueue(
      (n) => this.attemptToOrphanWorker(n),
      (n, err) => this.logError('orphaning dependents failed', n.identity, err),
    );
  }

  /** Items waiting or in progress in both queues. */
  get pending(): number {
    return this.deleteQueue.length + this.orphanQueue.length;
  }

  /**
   * Lists every deletable type into the graph, then processes work and changes until `signal`
   * aborts. Resolves once everything has stopped.
   */
  async run(signal: AbortSignal): Promise<void> {
    const monitors = new Monitors(this.server.storage, this.server.catalog, this.builder, signal);
    // Workers start once every type has been listed, so no decision is made on half a graph.
    await monitors.sync();
    if (signal.aborted) return;
    const timer = setInterval(() => {
      monitors.sync().catch((err: unknown) => logger.warn('garbage collector type sync failed', { error: err instanceof Error ? err.message : String(err) }));
    }, RESYNC_TYPES_MS);
    try {
      await Promise.all([this.deleteQueue.run(DELETE_WORKERS, signal), this.orphanQueue.run(ORPHAN_WORKERS, signal)]);
    } finally {
      clearInterval(timer);
    }
  }

  private logError(msg: string, identity: ObjectIdentity, err: unknown): void {
    // Retried quietly, as kube does: an owner kind not (yet) served, a decision made on a stale object.
    if (err instanceof RestMappingError || err instanceof StaleDecision) return;
    logger.warn(msg, {
      object: `${identity.apiVersion}/${identity.kind} ${identity.namespace === '' ? '' : `${identity.namespace}/`}${identity.name}`,
      uid: identity.uid,
      error: err instanceof Error ? err.message : String(err),
    });
  }

  private async attemptToDeleteWorker(node: GraphNode): Promise<WorkOutcome> {
    if (node.virtual) {
      const current = this.graph.get(node.identity.uid);
      if (current !== node || !current.virtual) return 'done';
    }
    try {
      await this.attemptToDeleteItem(node);
    } catch (err) {
      // Not resolved by retrying: forgotten, as kube forgets it.
      if (err instanceof NamespacedOwnerOfClusterScopedObject) return 'done';
      throw err;
    }
    return 'done';
  }

  /** kube's attemptToDeleteItem. */
  private async attemptToDeleteItem(item: GraphNode): Promise<DeleteAttempt> {
    if (item.beingDeleted && !item.deletingDependents) return 'done';
    const latest = await this.store.latest(item.identity);
    if (latest === undefined || metadataOf(latest).uid !== item.identity.uid) {
      this.builder.virtualDelete(item.identity);
      return 'virtual-deleted';
    }
    if (item.virtual) {
      // The owner exists. Objects without owners are not kept in the graph until they are named
      // as one, so its own change may never come: what was read stands for it. Later changes of
      // this uid are all applied (the graph has it now).
      if (this.graph.get(item.identity.uid) === item) this.builder.change({ type: 'ADDED', json: JSON.stringify(latest) });
      return 'done';
    }
    if (item.deletingDependents) return this.processDeletingDependents(item);
    const meta = metadataOf(latest);
    const rv = typeof meta.resourceVersion === 'string' ? meta.resourceVersion : '';
    const refs = ownerRefsOf(meta);
    if (refs.length === 0) return 'done';
    const { solid, dangling, waiting } = await this.classifyReferences(item, refs);
    if (solid.length > 0) {
      if (dangling.length === 0 && waiting.length === 0) return 'done';
      // Waiting owners would stay in foregroundDeletion for ever: the references to them go too.
      const drop = new Set([...dangling, ...waiting].map((r) => r.uid));
      return this.written(item, await this.store.editMetadata(item.identity, (m) => removeOwnerRefs(m, drop)));
    }
    if (waiting.length > 0 && item.dependents.size > 0) {
      for (const dep of item.dependents) {
        if (!dep.deletingDependents) continue;
        // A dependent is itself waiting: a possible cycle, so this item stops blocking its owners.
        const r = await this.store.editMetadata(item.identity, unblockOwnerRefs);
        if (r === 'gone') return this.written(item, r);
        break;
      }
      return this.written(item, await this.store.delete(item.identity, 'Foreground', rv, meta.ownerReferences));
    }
    const finalizers = finalizersOf(meta);
    const policy = finalizers.includes(ORPHAN_FINALIZER) ? 'Orphan' : finalizers.includes(FOREGROUND_FINALIZER) ? 'Foreground' : 'Background';
    return this.written(item, await this.store.delete(item.identity, policy, rv, meta.ownerReferences));
  }

  private written(item: GraphNode, result: 'ok' | 'gone'): DeleteAttempt {
    if (result === 'ok') return 'done';
    this.builder.virtualDelete(item.identity);
    return 'virtual-deleted';
  }

  /** An owner in foregroundDeletion: done once no dependent blocks it; otherwise its blockers are deleted. */
  private async processDeletingDependents(item: GraphNode): Promise<DeleteAttempt> {
    const blocking = item.blockingDependents();
    if (blocking.length === 0) {
      return this.written(item, await this.store.editMetadata(item.identity, (m) => removeFinalizer(m, FOREGROUND_FINALIZER)));
    }
    for (const dep of blocking) if (!dep.deletingDependents) this.deleteQueue.add(dep);
    return 'done';
  }

  /** kube's isDangling: whether the owner a reference names is absent (or another object now), else the owner. */
  private async isDangling(ref: OwnerRef, item: GraphNode): Promise<{ dangling: boolean; owner?: Obj }> {
    if (this.absent.has(ref, '') || this.absent.has(ref, item.identity.namespace)) return { dangling: true };
    const info = this.store.resolve(ref.apiVersion, ref.kind);
    if (item.identity.namespace === '' && info.namespaced) throw new NamespacedOwnerOfClusterScopedObject();
    const namespace = info.namespaced ? item.identity.namespace : '';
    const owner = await this.store.get(info, namespace, ref.name);
    if (owner === undefined || metadataOf(owner).uid !== ref.uid) {
      this.absent.add(ref, namespace);
      return { dangling: true };
    }
    return { dangling: false, owner };
  }

  private async classifyReferences(item: GraphNode, refs: OwnerRef[]): Promise<{ solid: OwnerRef[]; dangling: OwnerRef[]; waiting: OwnerRef[] }> {
    const solid: OwnerRef[] = [];
    const dangling: OwnerRef[] = [];
    const waiting: OwnerRef[] = [];
    for (const ref of refs) {
      const { dangling: isDangling, owner } = await this.isDangling(ref, item);
      if (isDangling || owner === undefined) dangling.push(ref);
      else if (deletingWith(metadataOf(owner), FOREGROUND_FINALIZER)) waiting.push(ref);
      else solid.push(ref);
    }
    return { solid, dangling, waiting };
  }

  /** Removes the owner from every dependent's references, then its `orphan` finalizer. */
  private async attemptToOrphanWorker(owner: GraphNode): Promise<WorkOutcome> {
    const dependents = [...owner.dependents];
    const uid = new Set([owner.identity.uid]);
    await Promise.all(dependents.map((dep) => this.store.editMetadata(dep.identity, (m) => removeOwnerRefs(m, uid))));
    await this.store.editMetadata(owner.identity, (m) => removeFinalizer(m, ORPHAN_FINALIZER));
    return 'done';
  }
}

function removeOwnerRefs(meta: Obj, uids: Set<string>): boolean {
  if (!Array.isArray(meta.ownerReferences)) return false;
  const refs = meta.ownerReferences as unknown[];
  const kept = refs.filter((r) => !(typeof r === 'object' && r !== null && uids.has(String((r as Obj).uid))));
  if (kept.length === refs.length) return false;
  meta.ownerReferences = kept;
  return true;
}

function unblockOwnerRefs(meta: Obj): boolean {
  if (!Array.isArray(meta.ownerReferences)) return false;
  let changed = false;
  for (const r of meta.ownerReferences as unknown[]) {
    if (typeof r === 'object' && r !== null && (r as Obj).blockOwnerDeletion === true) {
      (r as Obj).blockOwnerDeletion = false;
      changed = true;
    }
  }
  return changed;
}

function removeFinalizer(meta: Obj, finalizer: string): boolean {
  const finalizers = finalizersOf(meta);
  if (!finalizers.includes(finalizer)) return false;
  meta.finalizers = finalizers.filter((f) => f !== finalizer);
  return true;
}
