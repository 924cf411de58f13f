/** A member's place in a {@link MemberList}: what {@link MemberList.remove} takes back. */
export interface MemberNode<T> {
  readonly value: T;
  prev: MemberNode<T> | undefined;
  next: MemberNode<T> | undefined;
}

/**
 * Members that join and leave all the time (a priority level's executing requests), in the order
 * they joined, as a doubly-linked list whose nodes are cleared as they leave.
 *
 * Why not a `Set`: V8 rebuilds a Set's table as members are added and deleted, and a table left
 * behind keeps pointing at the members it held. Once such a table has been promoted to the old
 * generation, every young-generation collection treats those pointers as live, so each request
 * that passed through the set survives to the old generation with everything it reaches, until
 * the next full collection. With 64 requests in flight that was 2 MB promoted per scavenge and
 * scavenges four times as long; a left node here points at nothing but its own member.
 */
export class MemberList<T> implements Iterable<T> {
  private head: MemberNode<T> | undefined;
  private tail: MemberNode<T> | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The earliest member's node, to walk the list through `next` without an iterator. */
  get first(): MemberNode<T> | undefined {
    return this.head;
  }

  /** Adds `value` at the end; its node removes it again. */
  add(value: T): MemberNode<T> {
    const node: MemberNode<T> = { value, prev: this.tail, next: undefined };
    if (this.tail === undefined) this.head = node;
    else this.tail.next = node;
    this.tail = node;
    this.count++;
    return node;
  }

  /** Removes a node this list returned; false (and nothing changes) for a node already removed. */
  remove(node: MemberNode<T>): boolean {
    if (node.prev === undefined && node.next === undefined && this.head !== node) return false;
    if (node.prev === undefined) this.head = node.next;
    else node.prev.next = node.next;
    if (node.next === undefined) this.tail = node.prev;
    else node.next.prev = node.prev;
    node.prev = node.next = undefined;
    this.count--;
    return true;
  }

  *[Symbol.iterator](): Iterator<T> {
    for (let n = this.head; n !== undefined; n = n.next) yield n.value;
  }
}
