/**
 * kube's GraphBuilder: turns observed changes into graph updates and queues work. Synchronous (no
 * I/O besides Events), so the graph is only ever changed here, one change at a time.
 */
import { metadataOf, type Obj } from '../api/object-util.js';
import type { ResourceInfo } from '../api/resource-info.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../rest/deletion-finalizers.js';
import {
  deletingWith,
  finalizersOf,
  GraphNode,
  groupOf,
  identityOf,
  identityString,
  ownerRefsOf,
  refMatches,
  referencesDiffs,
  type ObjectIdentity,
  type OwnerGraph,
  type OwnerRef,
} from './garbage-collector-graph.js';
import { uidOf, type ChangeSink, type ObservedChange } from './garbage-collector-monitors.js';
import { parsedObjects } from '../storage/parsed-changes.js';

/** Identities confirmed absent, as kube's absentOwnerCache (bounded, least recently used out first). */
export class AbsentOwnerCache {
  private readonly keys = new Map<string, true>();
  constructor(private readonly max = 500) {}

  private static key(i: { apiVersion: string; kind: string; name: string; uid: string }, namespace: string): string {
    return `${groupOf(i.apiVersion)}|${i.kind}|${namespace}|${i.name}|${i.uid}`;
  }

  add(i: { apiVersion: string; kind: string; name: string; uid: string }, namespace: string): void {
    const k = AbsentOwnerCache.key(i, namespace);
    this.keys.delete(k);
    this.keys.set(k, true);
    if (this.keys.size > this.max) {
      const first = this.keys.keys().next();
      if (first.done !== true) this.keys.delete(first.value);
    }
  }

  has(i: { apiVersion: string; kind: string; name: string; uid: string }, namespace: string): boolean {
    const k = AbsentOwnerCache.key(i, namespace);
    if (!this.keys.has(k)) return false;
    this.keys.delete(k);
    this.keys.set(k, true);
    return true;
  }
}

/**
 * Coordinates of observed objects by uid, kept compact (one string per object, the kind as an index)
 * because the collector's leader holds one entry for every object without owners.
 */
class KnownObjects {
  private readonly kinds: Array<{ apiVersion: string; kind: string }> = [];
  private readonly kindIndex = new Map<string, number>();
  private readonly entries = new Map<string, string>();

  set(uid: string, i: { apiVersion: string; kind: string; namespace: string; name: string }): void {
    const kindKey = `${i.apiVersion}/${i.kind}`;
    let index = this.kindIndex.get(kindKey);
    if (index === undefined) {
      index = this.kinds.length;
      this.kinds.push({ apiVersion: i.apiVersion, kind: i.kind });
      this.kindIndex.set(kindKey, index);
    }
    // Names and namespaces never contain '/'.
    this.entries.set(uid, `${index}/${i.namespace}/${i.name}`);
  }

  get(uid: string): ObjectIdentity | undefined {
    const e = this.entries.get(uid);
    if (e === undefined) return undefined;
    const [index, namespace, name] = e.split('/');
    const kind = this.kinds[Number(index)];
    if (kind === undefined || namespace === undefined || name === undefined) return undefined;
    return { ...kind, namespace, name, uid };
  }

  delete(uid: string): void {
    this.entries.delete(uid);
  }

  /** Drops entries of `group`/`kind` whose uid is not in `present` (after a relist). */
  retainOfKind(group: string, kind: string, present: Set<string>): void {
    const indexes = new Set(this.kinds.flatMap((k, i) => (k.kind === kind && groupOf(k.apiVersion) === group ? [String(i)] : [])));
    for (const [uid, e] of this.entries) if (indexes.has(e.slice(0, e.indexOf('/'))) && !present.has(uid)) this.entries.delete(uid);
  }
}

/** Where the builder sends work and Events. */
export interface BuilderOutputs {
  attemptToDelete(node: GraphNode): void;
  attemptToOrphan(node: GraphNode): void;
  /** Warning Event `OwnerRefInvalidNamespace` on the dependent. */
  invalidNamespaceOwnerRef(dependent: ObjectIdentity, message: string): void;
}

function startsDeletionWith(old: Obj | undefined, meta: Obj, finalizer: typeof ORPHAN_FINALIZER | typeof FOREGROUND_FINALIZER): boolean {
  if (!deletingWith(meta, finalizer)) return false;
  return old === undefined || !deletingWith(metadataOf(old), finalizer);
}

/** kube's partitionDependents: dependents whose reference to `owner` matches its coordinates, and those whose does not. */
function partitionDependents(dependents: Iterable<GraphNode>, owner: ObjectIdentity): { matching: GraphNode[]; nonmatching: GraphNode[] } {
  const matching: GraphNode[] = [];
  const nonmatching: GraphNode[] = [];
  for (const dep of dependents) {
    let match = false;
    let mismatch = false;
    if (owner.namespace !== '' && owner.namespace !== dep.identity.namespace) mismatch = true;
    else {
      for (const ref of dep.owners) {
        if (ref.uid !== owner.uid) continue;
        if (refMatches(ref, owner)) match = true;
        else mismatch = true;
      }
    }
    if (match) matching.push(dep);
    if (mismatch) nonmatching.push(dep);
  }
  return { matching, nonmatching };
}

/** Coordinates of canonical stored JSON (kind, apiVersion, then metadata name, namespace, uid) without a full parse. */
function shallowIdentity(json: string): ObjectIdentity {
  const head = /^\{"kind":"([^"]*)","apiVersion":"([^"]*)","metadata":\{"name":"([^"]*)"/.exec(json);
  const uidAt = json.indexOf('"uid":"');
  if (head === null || uidAt < 0) return identityOf(JSON.parse(json) as Obj);
  const ns = /"namespace":"([^"]*)"/.exec(json.slice(head[0].length, uidAt));
  return { kind: head[1], apiVersion: head[2], name: head[3], namespace: ns?.[1] ?? '', uid: '' };
}

function sameCoordinates(a: ObjectIdentity, b: ObjectIdentity): boolean {
  return a.namespace === b.namespace && a.name === b.name && a.kind === b.kind && groupOf(a.apiVersion) === groupOf(b.apiVersion);
}

/** Applies observed changes to the graph (kube's processGraphChanges). */
export class GraphBuilder implements ChangeSink {
  /** uid -> coordinates of observed objects that are not graph nodes (they have no owners). */
  private readonly known = new KnownObjects();

  constructor(
    readonly graph: OwnerGraph,
    readonly absent: AbsentOwnerCache,
    private readonly out: BuilderOutputs,
  ) {}

  /**
   * Applies one change. Only objects that have owners, are being deleted with a collector
   * finalizer, or are already in the graph (as owners) are parsed and kept: the rest cost a lookup.
   */
  change(c: ObservedChange): void {
    const uid = uidOf(c.json);
    if (uid === '') return;
    let existing = this.graph.get(uid);
    if (existing === undefined && (c.type === 'DELETED' || (!c.json.includes('"ownerReferences"') && !c.json.includes('"deletionTimestamp"')))) {
      this.remember(uid, c);
      return;
    }
    // A streamed change's objects are the process's shared parse (read only, never mutated here).
    const shared = c.event !== undefined ? parsedObjects(c.event) : undefined;
    const obj = shared?.current ?? (JSON.parse(c.json) as Obj);
    const old = c.prevJson === undefined ? undefined : (shared?.previous ?? (JSON.parse(c.prevJson) as Obj));
    const meta = metadataOf(obj);
    const identity = identityOf(obj);
    if (existing === undefined && ownerRefsOf(meta).length === 0 && !deletingWith(meta, ORPHAN_FINALIZER) && !deletingWith(meta, FOREGROUND_FINALIZER)) {
      this.remember(uid, c, identity);
      return;
    }
    this.known.delete(uid);
    if (existing !== undefined && existing.virtual && c.type !== 'DELETED') {
      this.observe(existing, identity);
    }
    if (c.type === 'DELETED') {
      if (existing === undefined) return;
      this.removeObserved(existing, identity);
      return;
    }
    const beingDeleted = meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null;
    if (existing === undefined) {
      existing = new GraphNode(identity, false);
      existing.owners = ownerRefsOf(meta);
      existing.beingDeleted = beingDeleted;
      existing.deletingDependents = beingDeleted && finalizersOf(meta).includes(FOREGROUND_FINALIZER);
      this.graph.set(existing);
      this.addDependentToOwners(existing, existing.owners);
    } else {
      const owners = ownerRefsOf(meta);
      const { added, removed, changed } = referencesDiffs(existing.owners, owners);
      if (added.length > 0 || removed.length > 0 || changed.length > 0) {
        this.addUnblockedOwnersToDeleteQueue(removed, changed);
        existing.owners = owners;
        this.addDependentToOwners(existing, added);
        this.graph.unlinkFromOwners(existing, removed);
      }
      if (beingDeleted) existing.beingDeleted = true;
    }
    this.processTransitions(old, meta, existing);
  }

  relisted(info: ResourceInfo, present: Set<string>): void {
    for (const node of this.graph.observedOfKind(info.group, info.kind)) {
      if (!present.has(node.identity.uid)) this.removeObserved(node, node.identity);
    }
    this.known.retainOfKind(info.group, info.kind, present);
  }

  /**
   * Keeps the coordinates of an object that is not in the graph (no owners), so that a dependent
   * naming it later finds it observed, as kube's graph (which holds every object) would.
   */
  private remember(uid: string, c: ObservedChange, identity?: ObjectIdentity): void {
    if (c.type === 'DELETED') {
      this.known.delete(uid);
      return;
    }
    const i = identity ?? shallowIdentity(c.json);
    this.known.set(uid, i);
  }

  /** A virtual node's object has been seen: take its real coordinates, recheck dependents that named others. */
  private observe(node: GraphNode, observed: ObjectIdentity): void {
    if (!sameCoordinates(node.identity, observed)) {
      const { nonmatching } = partitionDependents(node.dependents, observed);
      for (const dep of nonmatching) {
        if (observed.namespace !== '' && dep.identity.namespace !== observed.namespace) this.reportInvalidNamespaceOwnerRef(dep, observed.uid);
        this.out.attemptToDelete(dep);
      }
    }
    node.identity = observed;
    node.virtual = false;
  }

  private removeObserved(node: GraphNode, deleted: ObjectIdentity): void {
    this.graph.remove(node);
    if (node.dependents.size > 0) this.absent.add(deleted, deleted.namespace);
    for (const dep of node.dependents) this.out.attemptToDelete(dep);
    for (const o of node.owners) {
      const owner = this.graph.get(o.uid);
      if (owner !== undefined && owner.deletingDependents) this.out.attemptToDelete(owner);
    }
  }

  /** A worker confirmed that `deleted` does not exist (kube's virtual delete event). */
  virtualDelete(deleted: ObjectIdentity): void {
    const existing = this.graph.get(deleted.uid);
    if (existing === undefined) return;
    if (existing.virtual) {
      const { matching, nonmatching } = partitionDependents(existing.dependents, deleted);
      if (nonmatching.length > 0) {
        // Dependents disagree on the owner's coordinates: only those that named these are rechecked.
        if (matching.length > 0) {
          this.absent.add(deleted, deleted.namespace);
          for (const dep of matching) this.out.attemptToDelete(dep);
        }
        if (sameCoordinates(existing.identity, deleted)) {
          const alt = alternateIdentity(nonmatching, deleted);
          if (alt !== undefined) {
            existing.identity = alt;
            this.out.attemptToDelete(existing);
          }
        }
        return;
      }
    } else if (!sameCoordinates(existing.identity, deleted)) {
      const { matching } = partitionDependents(existing.dependents, deleted);
      if (matching.length > 0) {
        this.absent.add(deleted, deleted.namespace);
        for (const dep of matching) this.out.attemptToDelete(dep);
      }
      return;
    }
    this.removeObserved(existing, deleted);
  }

  private addDependentToOwners(node: GraphNode, owners: OwnerRef[]): void {
    let potentiallyInvalid = false;
    for (const ref of owners) {
      let owner = this.graph.get(ref.uid);
      const known = owner === undefined ? this.known.get(ref.uid) : undefined;
      if (known !== undefined) {
        owner = new GraphNode(known, false);
        this.graph.set(owner);
        this.known.delete(ref.uid);
      }
      if (owner === undefined) {
        owner = new GraphNode({ apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, namespace: node.identity.namespace }, true);
        this.graph.set(owner);
        owner.dependents.add(node);
        // A worker asks storage whether this owner exists.
        this.out.attemptToDelete(owner);
        continue;
      }
      owner.dependents.add(node);
      if (potentiallyInvalid) continue;
      const ownerNamespaced = owner.identity.namespace !== '';
      if (ownerNamespaced && owner.identity.namespace !== node.identity.namespace) {
        if (!owner.virtual) this.reportInvalidNamespaceOwnerRef(node, ref.uid);
        potentiallyInvalid = true;
      } else if (!refMatches(ref, owner.identity)) {
        potentiallyInvalid = true;
      } else if (!ownerNamespaced && owner.identity.namespace !== node.identity.namespace && owner.virtual) {
        potentiallyInvalid = true;
      }
    }
    if (potentiallyInvalid) this.out.attemptToDelete(node);
  }

  private addUnblockedOwnersToDeleteQueue(removed: OwnerRef[], changed: Array<{ oldRef: OwnerRef; newRef: OwnerRef }>): void {
    for (const ref of removed) {
      const owner = ref.blockOwnerDeletion ? this.graph.get(ref.uid) : undefined;
      if (owner !== undefined) this.out.attemptToDelete(owner);
    }
    for (const { oldRef, newRef } of changed) {
      const owner = oldRef.blockOwnerDeletion && !newRef.blockOwnerDeletion ? this.graph.get(newRef.uid) : undefined;
      if (owner !== undefined) this.out.attemptToDelete(owner);
    }
  }

  private processTransitions(old: Obj | undefined, meta: Obj, node: GraphNode): void {
    if (startsDeletionWith(old, meta, ORPHAN_FINALIZER)) {
      this.out.attemptToOrphan(node);
      return;
    }
    if (startsDeletionWith(old, meta, FOREGROUND_FINALIZER)) {
      node.deletingDependents = true;
      for (const dep of node.dependents) this.out.attemptToDelete(dep);
      this.out.attemptToDelete(node);
    }
  }

  private reportInvalidNamespaceOwnerRef(dependent: GraphNode, ownerUid: string): void {
    const ref = dependent.owners.find((o) => o.uid === ownerUid);
    if (ref === undefined) return;
    const invalid = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, namespace: dependent.identity.namespace };
    this.out.invalidNamespaceOwnerRef(
      dependent.identity,
      `ownerRef ${identityString(invalid)} does not exist in namespace ${JSON.stringify(dependent.identity.namespace)}`,
    );
  }
}

/** kube's getAlternateOwnerIdentity: another coordinate set dependents use for the owner uid (the lowest). */
function alternateIdentity(deps: GraphNode[], absent: ObjectIdentity): ObjectIdentity | undefined {
  const candidates: ObjectIdentity[] = [];
  for (const dep of deps) {
    for (const ref of dep.owners) {
      if (ref.uid !== absent.uid) continue;
      const c = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, namespace: dep.identity.namespace };
      if (c.namespace === absent.namespace && refMatches(ref, absent)) continue;
      candidates.push(c);
    }
  }
  candidates.sort((a, b) => (a.apiVersion + a.kind + a.namespace + a.name).localeCompare(b.apiVersion + b.kind + b.namespace + b.name));
  return candidates[0];
}
