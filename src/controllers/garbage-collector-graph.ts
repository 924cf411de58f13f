/**
 * The garbage collector's owner/dependent graph: one node per object uid seen on the change streams
 * (or named as an owner), with the owner references the object holds and the nodes that name it.
 * Pure data, no I/O: the graph builder changes it and the workers read it.
 */
import { isObject, metadataOf, stringField, type Obj } from '../api/object-util.js';
import { type FOREGROUND_FINALIZER, type ORPHAN_FINALIZER } from '../rest/deletion-finalizers.js';

/** Coordinates of an object: what an owner reference names, plus the namespace. */
export interface ObjectIdentity {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
}

/** One entry of `metadata.ownerReferences`, narrowed. */
export interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
  blockOwnerDeletion: boolean;
}

/** A graph node. `virtual` until the object itself is observed on a change stream. */
export class GraphNode {
  readonly dependents = new Set<GraphNode>();
  owners: OwnerRef[] = [];
  beingDeleted = false;
  deletingDependents = false;

  constructor(
    public identity: ObjectIdentity,
    public virtual: boolean,
  ) {}

  /** Dependents whose reference to this node blocks its foreground deletion. */
  blockingDependents(): GraphNode[] {
    const out: GraphNode[] = [];
    for (const dep of this.dependents) {
      if (dep.owners.some((o) => o.uid === this.identity.uid && o.blockOwnerDeletion)) out.push(dep);
    }
    return out;
  }
}

/** kube's objectReference string, used in event messages. */
export function identityString(i: ObjectIdentity): string {
  return `[${i.apiVersion}/${i.kind}, namespace: ${i.namespace}, name: ${i.name}, uid: ${i.uid}]`;
}

/** The owner references of an object; malformed entries (no uid) are skipped. */
export function ownerRefsOf(meta: Obj): OwnerRef[] {
  const refs = Array.isArray(meta.ownerReferences) ? (meta.ownerReferences as unknown[]) : [];
  const out: OwnerRef[] = [];
  for (const r of refs) {
    if (!isObject(r)) continue;
    const uid = stringField(r, 'uid');
    if (uid === '') continue;
    out.push({
      apiVersion: stringField(r, 'apiVersion'),
      kind: stringField(r, 'kind'),
      name: stringField(r, 'name'),
      uid,
      controller: r.controller === true,
      blockOwnerDeletion: r.blockOwnerDeletion === true,
    });
  }
  return out;
}

/** The identity of a stored object. */
export function identityOf(obj: Obj): ObjectIdentity {
  const meta = metadataOf(obj);
  return {
    apiVersion: typeof obj.apiVersion === 'string' ? obj.apiVersion : '',
    kind: typeof obj.kind === 'string' ? obj.kind : '',
    namespace: stringField(meta, 'namespace'),
    name: stringField(meta, 'name'),
    uid: stringField(meta, 'uid'),
  };
}

/** The finalizers of an object's metadata. */
export function finalizersOf(meta: Obj): string[] {
  return Array.isArray(meta.finalizers) ? meta.finalizers.filter((f): f is string => typeof f === 'string') : [];
}

/** Whether the object is terminating and holds `finalizer`. */
export function deletingWith(meta: Obj | undefined, finalizer: typeof ORPHAN_FINALIZER | typeof FOREGROUND_FINALIZER): boolean {
  if (meta === undefined) return false;
  return meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null && finalizersOf(meta).includes(finalizer);
}

/** The group of an apiVersion (`''` for the core group). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

function sameRef(a: OwnerRef, b: OwnerRef): boolean {
  return (
    a.apiVersion === b.apiVersion &&
    a.kind === b.kind &&
    a.name === b.name &&
    a.uid === b.uid &&
    a.controller === b.controller &&
    a.blockOwnerDeletion === b.blockOwnerDeletion
  );
}

/** kube's referencesDiffs: references added, removed and changed (same uid, other fields) between two lists. */
export function referencesDiffs(
  oldRefs: OwnerRef[],
  newRefs: OwnerRef[],
): { added: OwnerRef[]; removed: OwnerRef[]; changed: Array<{ oldRef: OwnerRef; newRef: OwnerRef }> } {
  const old = new Map(oldRefs.map((r) => [r.uid, r]));
  const added: OwnerRef[] = [];
  const changed: Array<{ oldRef: OwnerRef; newRef: OwnerRef }> = [];
  for (const r of newRefs) {
    const before = old.get(r.uid);
    if (before === undefined) added.push(r);
    else {
      if (!sameRef(before, r)) changed.push({ oldRef: before, newRef: r });
      old.delete(r.uid);
    }
  }
  return { added, removed: [...old.values()], changed };
}

/** Whether an owner reference names the node's coordinates (group, kind, name). */
export function refMatches(ref: OwnerRef, identity: ObjectIdentity): boolean {
  return groupOf(ref.apiVersion) === groupOf(identity.apiVersion) && ref.kind === identity.kind && ref.name === identity.name;
}

/** The uid-indexed graph. */
export class OwnerGraph {
  private readonly nodes = new Map<string, GraphNode>();

  get(uid: string): GraphNode | undefined {
    return this.nodes.get(uid);
  }

  set(node: GraphNode): void {
    this.nodes.set(node.identity.uid, node);
  }

  /** Removes the node and unlinks it from its owners' dependents. */
  remove(node: GraphNode): void {
    if (this.nodes.get(node.identity.uid) === node) this.nodes.delete(node.identity.uid);
    this.unlinkFromOwners(node, node.owners);
  }

  unlinkFromOwners(node: GraphNode, owners: OwnerRef[]): void {
    for (const o of owners) this.nodes.get(o.uid)?.dependents.delete(node);
  }

  /** Every observed node whose object has `apiVersion`'s group and `kind` (relists compare against them). */
  observedOfKind(group: string, kind: string): GraphNode[] {
    const out: GraphNode[] = [];
    for (const n of this.nodes.values()) if (!n.virtual && n.identity.kind === kind && groupOf(n.identity.apiVersion) === group) out.push(n);
    return out;
  }

  get size(): number {
    return this.nodes.size;
  }
}
